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


# The machine has setuptools 65 but no `wheel` package, which setuptools needs to build any wheel
# (editable ones too). The tiny packages bring their own PEP 517 backend (in-tree, `backend-path`),
# which writes the wheel with zipfile: pip installs the local package folder as it would any other.
BACKEND = '''
import base64, hashlib, os, zipfile

NAME, VERSION, MODULE, ENTRY_POINTS = {name!r}, "0.0.1", {module!r}, {entry_points!r}


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    dist = NAME.replace("-", "_")
    info = f"{{dist}}-{{VERSION}}.dist-info"
    files = {{f"{{MODULE}}/__init__.py": open(os.path.join(MODULE, "__init__.py"), "rb").read(),
             f"{{info}}/METADATA": f"Metadata-Version: 2.1\\nName: {{NAME}}\\nVersion: {{VERSION}}\\n".encode(),
             f"{{info}}/WHEEL": b"Wheel-Version: 1.0\\nGenerator: tiny\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
             f"{{info}}/entry_points.txt": ("[evalsuite.packs]\\n" + ENTRY_POINTS).encode()}}
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{{path}},sha256={{digest}},{{len(data)}}")
    files[f"{{info}}/RECORD"] = ("\\n".join(record + [f"{{info}}/RECORD,,"]) + "\\n").encode()
    wheel = f"{{dist}}-{{VERSION}}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
    return wheel
'''


def make_package(root: Path, name: str, module_code: str, packs: dict[str, str]) -> Path:
    folder = root / name
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text(module_code, encoding="utf-8")
    entry_points = "".join(f"{k} = {v}\n" for k, v in packs.items())
    (folder / "tiny_backend.py").write_text(
        BACKEND.format(name=name.replace("_", "-"), module=name, entry_points=entry_points), encoding="utf-8")
    (folder / "pyproject.toml").write_text(textwrap.dedent("""\
        [build-system]
        requires = []
        build-backend = "tiny_backend"
        backend-path = ["."]
        """), encoding="utf-8")
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
