"""Issue 33 #3: `evalsuite --version`, the version in every run's manifest, and `show` saying
which version wrote a run when it is not the one reading it."""
from __future__ import annotations

import importlib.metadata
import json
import re

from runfactory import make_run, rec

import evalsuite


def test_version_option_prints_the_installed_version(run_cli, tmp_path):
    done = run_cli("--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"evalsuite {evalsuite.__version__}\n"
    # one version: the one pip installed is the one the package says (pyproject reads __version__)
    assert importlib.metadata.version("evalsuite") == evalsuite.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", evalsuite.__version__)


def test_every_run_manifest_names_the_version_that_wrote_it(run_cli, tmp_path):
    from fault_server import FaultServer

    with FaultServer(default_answer="no svg here") as server:
        done = run_cli("run", "svg", "--endpoint", server.url, "--limit", "1", "--run-dir", tmp_path / "run",
                       "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["suite_version"] == evalsuite.__version__


def test_show_names_the_version_that_wrote_a_run_only_when_it_differs(run_cli, tmp_path):
    same = make_run(tmp_path / "same", "gsm8k", records=[rec("main/0")])
    older = make_run(tmp_path / "older", "gsm8k", records=[rec("main/0")], extra_manifest={"suite_version": "0.0.7"})
    shown = run_cli("show", same)
    assert shown.returncode == 0, shown.stderr
    assert "written by evalsuite" not in shown.stdout
    shown = run_cli("show", older)
    assert shown.returncode == 0, shown.stderr
    assert f"written by evalsuite 0.0.7, read by {evalsuite.__version__}" in shown.stdout.splitlines()
    as_json = json.loads(run_cli("show", older, "--format", "json").stdout)
    assert as_json["suite_version"] == "0.0.7"
