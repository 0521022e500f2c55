"""Issue 33 #1-#2: what CI checks about the package a user installs. The wheel smoke test itself
(.ci/wheel_smoke.py: a wheel, fresh venvs, three Pythons) takes minutes and runs in .ci/run;
these check that it is wired in, covers every command, and that the dependency check fails the
way it should."""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CI = REPO / ".ci" / "run"


def smoke_module():
    spec = importlib.util.spec_from_file_location("wheel_smoke", REPO / ".ci" / "wheel_smoke.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["wheel_smoke"] = module   # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_ci_runs_the_wheel_smoke_beside_the_builds_and_deptry_after_the_linter():
    lines = CI.read_text().splitlines()
    code = [line for line in lines if not line.lstrip().startswith("#")]
    project = next(n for n, line in enumerate(code) if line.startswith("python -m pip install -e"))
    smoke = next(n for n, line in enumerate(code) if "python .ci/wheel_smoke.py" in line)
    assert smoke < project and code[smoke].rstrip().endswith("; then"), "the smoke test starts before the project install"
    assert any(re.fullmatch(r"wait \"\$smoke_pid\" \|\| smoke_rc=\$\?", line.strip()) for line in code)
    ruff = next(n for n, line in enumerate(code) if line.strip() == "python -m ruff check .")
    deptry = next(n for n, line in enumerate(code) if line.strip() == "python -m deptry .")
    pytest_at = next(n for n, line in enumerate(code) if "python -m pytest" in line)
    assert ruff < deptry < pytest_at


def test_a_failed_smoke_test_fails_ci_even_when_the_tests_pass():
    text = CI.read_text()
    block = re.search(r"^tests_start=.*?^exit \"\$tests_rc\"$", text, re.S | re.M).group(0)
    stamp = 'ci_start=$(date +%s); stamp() { echo "[ci $(( $(date +%s) - ci_start )) s] $*"; }\n'
    for smoke_rc, pytest_rc, expected in ((1, 0, 1), (0, 0, 0), (1, 3, 3), (0, 3, 3)):
        script = block.replace("python -m pytest -rs --durations=15", f"(exit {pytest_rc})")
        done = subprocess.run(["bash", "-c", f"set -euo pipefail\nsmoke_rc={smoke_rc}\n" + stamp + script],
                              capture_output=True, text=True)
        assert done.returncode == expected, (smoke_rc, pytest_rc, done.stdout, done.stderr)
        assert ("wheel smoke test failed" in done.stdout) == (smoke_rc != 0 and pytest_rc == 0)


def test_the_smoke_test_runs_every_command_on_every_claimed_python():
    import typer

    from evalsuite.cli import app

    smoke = smoke_module()
    assert smoke.claimed_pythons() == ["3.11", "3.12", "3.13"]
    steps = smoke.steps("http://b/v1", "http://c/v1", Path("data"), "serve {port}", "http://p/v1")
    commands = {s.args[0] for s in steps}
    cli = set(typer.main.get_command(app).commands)
    assert cli <= commands, f"commands the wheel smoke test never runs: {sorted(cli - commands)}"
    runs = [" ".join(s.args) for s in steps if s.args[0] == "run"]
    assert any("--samples" in r for r in runs) and any("--logprobs" in r for r in runs)
    assert any("--aa-run" in s.args for s in steps if s.args[0] == "diff")
    # the grammar's new spellings, and one old spelling with its deprecation line (docs/cli.md)
    args = [a for s in steps for a in s.args]
    assert "-o" not in args and "--output" not in args and "--aa" not in [a for s in steps if s.args[0] == "diff" for a in s.args]
    assert any(s.args[:1] == ["show"] and "--json" in s.args and any(x.startswith("deprecated:") for x in s.says)
               for s in steps)
    gates = [" ".join(s.args) for s in steps if s.args[0] == "gate"]
    assert any("s1" in g for g in gates) and any("--equivalence-margin" in g for g in gates)
    # every documented exit code is one of the CLI's: 0 done, 1 failed / found, 2 bad input
    assert {s.expect for s in steps} == {0, 1, 2}


def test_deptry_passes_here_and_fails_when_an_import_is_not_declared(tmp_path):
    done = subprocess.run([sys.executable, "-m", "deptry", "."], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # the same package with scipy taken out of pyproject.toml's dependencies
    for name in ("evalsuite", "tasks", "graders"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    without = re.sub(r'^\s*"scipy[^"]*",.*\n', "", pyproject, flags=re.M)
    assert without != pyproject
    (tmp_path / "pyproject.toml").write_text(without, encoding="utf-8")
    (tmp_path / "README.md").write_text("x")
    done = subprocess.run([sys.executable, "-m", "deptry", ".", "--no-ansi"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"evalsuite/lossless/noise\.py:\d+:\d+: DEP00[134] 'scipy'", done.stdout + done.stderr), \
        done.stdout + done.stderr
