"""Packs from other packages (entry-point group `evalsuite.packs`, tasks/plugins.py): a tiny
package pip-installed into a temporary venv adds a pack that `evalsuite tasks` lists (with where
it comes from) and `evalsuite run` runs against a real server; a plugin that raises on import is
named and skipped, and breaks neither the other packs nor --help."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from conftest import requires_llama

GOOD = '''
from evalsuite.graders import grade
from evalsuite.tasks import Item, Pack


def load(opts):
    return [Item(id=f"sums/{n}", subset="sums", question=f"What is {n} + {n}?", gold=str(2 * n)) for n in range(3)]


PACK = Pack(name="tinysums", version="1", description="three sums from a plugin package",
            template="Q: {question}", load=load,
            prompt=lambda item: [{"role": "user", "content": "Q: " + item.question}],
            grade=lambda item, answer: grade(item.gold, answer, kind="numeric"),
            source="built in code", count=3, max_tokens=8)
'''


def make_package(root: Path, name: str, module_code: str, packs: dict[str, str]) -> Path:
    folder = root / name
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text(module_code, encoding="utf-8")
    eps = "\n".join(f'{k} = "{v}"' for k, v in packs.items())
    (folder / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{name.replace('_', '-')}"
        version = "0.0.1"

        [project.entry-points."evalsuite.packs"]
        """) + eps + "\n\n[tool.setuptools]\npackages = [\"" + name + "\"]\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def plugin_venv(tmp_path_factory):
    root = tmp_path_factory.mktemp("plugins")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    # this interpreter's site-packages (where evalsuite is installed, editable) seen from the venv too
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "zz_evalsuite_under_test.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n", encoding="utf-8")
    good = make_package(root, "tinysums_pack", GOOD, {"tinysums": "tinysums_pack:PACK"})
    broken = make_package(root, "broken_pack", "raise ImportError('this plugin is broken on purpose')\n",
                          {"brokenpack": "broken_pack:PACK"})
    for package in (good, broken):
        r = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                            "--no-index", str(package)], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
    return python


def cli(python: Path, *args, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "evalsuite.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, PYTHONUNBUFFERED="1"))


def test_tasks_lists_the_plugin_with_its_source_and_names_the_broken_one(plugin_venv):
    r = cli(plugin_venv, "tasks")
    assert r.returncode == 0, r.stderr
    assert "tinysums" in r.stdout and "three sums from a plugin package" in r.stdout
    assert "package tinysums-pack 0.0.1 (entry point tinysums = tinysums_pack:PACK)" in r.stdout
    assert "gsm8k" in r.stdout and "math500" in r.stdout                 # the built-ins are all there
    assert "skipped: pack plugin 'brokenpack' from broken-pack 0.0.1 (broken_pack:PACK) failed to load: " \
           "ImportError: this plugin is broken on purpose" in r.stderr
    assert "brokenpack" not in r.stdout
    help_ = cli(plugin_venv, "--help")
    assert help_.returncode == 0 and "run" in help_.stdout


def test_running_the_broken_plugin_names_it(plugin_venv, tmp_path):
    r = cli(plugin_venv, "run", "brokenpack", "--endpoint", "http://127.0.0.1:9/v1", "--run-dir", tmp_path / "r")
    assert r.returncode == 2
    assert "pack plugin 'brokenpack'" in r.stderr and "broken on purpose" in r.stderr


@requires_llama
@pytest.mark.llama
def test_run_runs_the_plugin_pack(plugin_venv, llama_server, tmp_path):
    r = cli(plugin_venv, "run", "tinysums", "--endpoint", llama_server.url, "--run-dir", tmp_path / "r",
            "--concurrency", "1", "--quiet")
    assert r.returncode in (0, 1), r.stderr
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["pack"] == "tinysums" and manifest["status"] == "finished"
    records = [json.loads(line) for line in (tmp_path / "r" / "records.jsonl").read_text().splitlines()]
    assert [x["id"] for x in records] == ["sums/0", "sums/1", "sums/2"]
    assert all(x["messages"][-1]["content"].startswith("Q: What is") for x in records)
