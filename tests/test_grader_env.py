"""Issue 33 #5: the graders' environment variables (EVALSUITE_GRADER_TIMEOUT, the seconds of
sympy time one verdict may use; EVALSUITE_GRADER_WORKERS, the sympy worker processes) are read
when the graders' sandbox is first imported, which a run does after it has asked the server. A
bad value ended there in a raw ValueError traceback (exit 1); a value that parsed but makes no
sense (0 s, nan, 0 workers) ran on. Now a bad value is a clear error before anything starts."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from runfactory import make_run, rec

QUESTIONS = Path(__file__).parent / "data" / "own_questions.jsonl"

BAD = [("EVALSUITE_GRADER_TIMEOUT", "4s"), ("EVALSUITE_GRADER_TIMEOUT", "0"), ("EVALSUITE_GRADER_TIMEOUT", "nan"),
       ("EVALSUITE_GRADER_TIMEOUT", "-1"), ("EVALSUITE_GRADER_WORKERS", "two"), ("EVALSUITE_GRADER_WORKERS", "0"),
       ("EVALSUITE_GRADER_WORKERS", "1.5")]


@pytest.fixture(scope="module")
def server():
    from fault_server import FaultServer

    with FaultServer(default_answer="The answer is 51") as s:
        yield s


@pytest.mark.parametrize("name,value", BAD)
def test_a_bad_grader_setting_stops_the_run_at_start_up_with_exit_2(run_cli, tmp_path, server, name, value):
    asked = server.completions
    done = run_cli("run", QUESTIONS, "--endpoint", server.url, "--limit", "2", "--run-dir", tmp_path / "run",
                   "--quiet", env={name: value})
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: {name}={value!r} "), last
    assert server.completions == asked, "the server was asked before the setting was checked"
    assert not (tmp_path / "run").exists()


def test_a_bad_grader_setting_stops_regrade_too(run_cli, tmp_path):
    folder = make_run(tmp_path / "a", "gsm8k", records=[rec("main/0")])
    done = run_cli("regrade", folder, env={"EVALSUITE_GRADER_WORKERS": "many"})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "error: EVALSUITE_GRADER_WORKERS='many' is not a whole number of worker processes" in done.stderr


def test_good_grader_settings_are_used(run_cli, tmp_path, server):
    env = {"EVALSUITE_GRADER_TIMEOUT": "2.5", "EVALSUITE_GRADER_WORKERS": "3", "PYTHONPATH": str(Path.cwd())}
    probe = subprocess.run([sys.executable, "-c", "from evalsuite.graders import sandbox; "
                            "print(sandbox.DEFAULT_DEADLINE_S, sandbox.MAX_WORKERS)"],
                           capture_output=True, text=True, env={**_base_env(), **env}, timeout=120)
    assert probe.stdout.split() == ["2.5", "3"], probe.stderr
    # an empty value is no value: the defaults
    probe = subprocess.run([sys.executable, "-c", "from evalsuite.graders import sandbox; "
                            "print(sandbox.DEFAULT_DEADLINE_S, sandbox.MAX_WORKERS)"],
                           capture_output=True, text=True, timeout=120,
                           env={**_base_env(), "EVALSUITE_GRADER_TIMEOUT": "", "EVALSUITE_GRADER_WORKERS": " "})
    assert probe.stdout.split() == ["4.0", "2"], probe.stderr
    done = run_cli("run", QUESTIONS, "--endpoint", server.url, "--limit", "2", "--run-dir", tmp_path / "run",
                   "--quiet", env=env)
    assert done.returncode == 0, done.stderr[-2000:]


def test_from_python_the_import_says_which_variable_is_wrong():
    probe = subprocess.run([sys.executable, "-c", "from evalsuite.graders import sandbox"], capture_output=True,
                           text=True, env={**_base_env(), "EVALSUITE_GRADER_TIMEOUT": "4s"}, timeout=120)
    assert probe.returncode == 1
    assert probe.stderr.strip().splitlines()[-1].startswith(
        "evalsuite.graders.sandbox.BadGraderSetting: EVALSUITE_GRADER_TIMEOUT='4s' is not a number of seconds"), probe.stderr


def _base_env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("EVALSUITE_GRADER_")}
