"""Issue 21 #12: .ci/run's log named no engine on its `real` lines, and the vLLM / transformers
installs (downloads) waited for the project install instead of running beside it."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

CI = Path(__file__).resolve().parent.parent / ".ci" / "run"
README = CI.parent.parent / "README.md"


def test_engine_installs_start_before_the_project_install():
    lines = CI.read_text().splitlines()
    project = next(n for n, line in enumerate(lines) if line.startswith("python -m pip install -e"))
    for script in ("build_llama_server.sh", "install_vllm.sh", "install_transformers.sh"):
        started = next(n for n, line in enumerate(lines) if script in line and not line.lstrip().startswith("#"))
        assert started < project, f"{script} starts after the project install"


def test_each_real_line_names_its_engine(tmp_path):
    text = CI.read_text()
    loop = re.search(r"^for step in .*?^done$", text, re.S | re.M)
    assert loop, "no loop printing the engines' times"
    times = {"llama-server": "23m49.101s", "vllm": "6m49.002s", "transformers": "3m34.000s"}
    for step, real in times.items():
        (tmp_path / f"evalsuite-ci-{step}.log").write_text(f"building...\n\nreal\t{real}\nuser\t1m0.000s\n")
    script = loop.group(0).replace("/tmp/evalsuite-ci-", f"{tmp_path}/evalsuite-ci-")
    out = subprocess.run(["bash", "-c", "set -euo pipefail\n" + script], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [f"{step}: real {real}" for step, real in times.items()]


def test_each_stage_stamps_its_end_and_the_test_run_its_time_and_exit_code():
    """Issue 25: each set-up stage's time and the test run's in .ci/run's output."""
    text = CI.read_text()
    for stage in ("llama-server built", "vllm installed", "transformers installed", "project installed",
                  "set-up done"):
        assert f'stamp "{stage}' in text, stage
    block = re.search(r"^tests_start=.*?^exit \"\$tests_rc\"$", text, re.S | re.M)
    assert block, "no timed test block"
    script = block.group(0).replace("python -m pytest -rs --durations=15", "(sleep 1; exit 3)")
    stamp = 'ci_start=$(date +%s); stamp() { echo "[ci $(( $(date +%s) - ci_start )) s] $*"; }\n'
    out = subprocess.run(["bash", "-c", "set -euo pipefail\n" + stamp + script], capture_output=True, text=True)
    assert out.returncode == 3, out
    # the 1 s sleep, in whole seconds: at least 1, and more when a loaded machine is slow to fork
    assert re.search(r"^\[ci \d+ s\] tests took [1-9]\d* s \(pytest exit 3\)$", out.stdout, re.M), out.stdout


def test_ci_and_the_readme_print_the_reason_of_every_skip():
    """Issue 42 #4: `pytest -rs` in .ci/run and in the README's test command."""
    code = [line for line in CI.read_text().splitlines() if not line.lstrip().startswith("#")]
    assert any(re.match(r"python -m pytest -rs\b", line.strip()) for line in code), "no `python -m pytest -rs` in .ci/run"
    block = re.search(r"^## Test\n+```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S | re.M)
    assert block and block.group(1).strip() == "python -m pytest -rs", block and block.group(1)


def test_no_test_skips_on_a_declared_dependency():
    """A broken install must fail the tests that need a declared dependency, not skip them."""
    tests = Path(__file__).resolve().parent
    found = [f"{p.relative_to(tests)}:{n}" for p in sorted(tests.rglob("*.py")) if p.name != Path(__file__).name
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "importorskip(" in line]
    assert not found, found


def test_a_run_that_skips_more_than_expected_says_so_at_the_end(tmp_path):
    """The conftest hook, in a pytest of its own: three skips, two expected."""
    (tmp_path / "test_three_skips.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.parametrize('n', range(3))\n"
        "def test_skipped(n):\n    pytest.skip(f'reason {n}')\n\n"
        "def test_run():\n    assert True\n")
    tests = Path(__file__).resolve().parent

    def pytest_run(**env: str) -> str:
        done = subprocess.run([sys.executable, "-m", "pytest", "-rs", "-p", "no:xdist", "-p", "no:cacheprovider",
                               "-p", "conftest", str(tmp_path / "test_three_skips.py")],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(tests), **env})
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return done.stdout

    said = pytest_run(EVALSUITE_EXPECTED_SKIPS="2")
    assert "3 tests skipped, more than the expected 2" in said and "reason 1" in said
    assert "more than the expected" not in pytest_run(EVALSUITE_EXPECTED_SKIPS="3")
