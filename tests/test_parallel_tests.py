"""Issue 25 (CI time): `python -m pytest` runs the test files on several workers (pytest-xdist);
the real-engine tests stay in one group (one engine at a time), a module with a module-scoped
fixture stays on one worker, and `-n 0` / `-p no:xdist` still run everything in one process."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PROBE = '''
import json, os

def pytest_collection_finish(session):
    groups = {item.nodeid: [m.args[0] for m in item.iter_markers("xdist_group")] for item in session.items}
    with open(os.environ["GROUPS_OUT"], "w") as f:
        json.dump(groups, f)
'''


def pytest_run(*args, tmp_path: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", **(env or {}))
    full_env.pop("PYTEST_ADDOPTS", None)
    full_env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=REPO, env=full_env,
                          capture_output=True, text=True, timeout=300)


def test_engine_tests_share_one_group_and_module_fixtures_stay_on_one_worker(tmp_path):
    import xdist  # noqa: F401  (the test extra declares it: a broken install fails here, not skips)
    (tmp_path / "groups_probe.py").write_text(PROBE)
    out = tmp_path / "groups.json"
    r = pytest_run("--collect-only", "-q", "-p", "groups_probe", "tests/engines/test_vllm.py",
                   "tests/engines/test_llamacpp_server.py", "tests/engines/test_transformers_serve.py",
                   "tests/test_plugins.py", "tests/test_ci_script.py", tmp_path=tmp_path, env={"GROUPS_OUT": str(out)})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    groups = json.loads(out.read_text())
    engine = {k: v for k, v in groups.items() if k.startswith("tests/engines/")}
    assert len(engine) > 5 and all(v == ["engines"] for v in engine.values()), engine
    # plugin_venv (a venv made per module) is module-scoped: its users stay together
    venv_users = [k for k in groups if k.startswith("tests/test_plugins.py::test_run")]
    assert venv_users and all(groups[k] == ["tests/test_plugins.py"] for k in venv_users)
    assert all(v == [] for k, v in groups.items() if k.startswith("tests/test_ci_script.py"))


def test_the_readme_command_runs_workers_and_one_process_still_works(tmp_path):
    import xdist  # noqa: F401  (the test extra declares it: a broken install fails here, not skips)
    parallel = pytest_run("tests/test_ci_script.py", tmp_path=tmp_path, env={"PYTEST_XDIST_AUTO_NUM_WORKERS": "2"})
    assert parallel.returncode == 0, parallel.stdout[-3000:]
    passed = re.search(r"(\d+) passed", parallel.stdout)
    assert "2 workers" in parallel.stdout and passed, parallel.stdout[-3000:]
    for args in (["-n", "0"], ["-p", "no:xdist"]):
        alone = pytest_run(*args, "tests/test_ci_script.py", tmp_path=tmp_path)
        assert alone.returncode == 0, (args, alone.stdout[-3000:], alone.stderr[-3000:])
        assert "workers" not in alone.stdout and f"{passed.group(1)} passed" in alone.stdout, (args, alone.stdout[-2000:])
