"""Shared fixtures: the benchmark data folder, tiny GGUF models, a real llama.cpp server."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/ helpers: tiny_gguf, llama_server, runfactory

from llama_server import EXTRA_BODY, MODEL_ALIAS, LlamaServer, llama_cpp_available  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def shared_data_dir() -> Path | None:
    env = os.environ.get("EVALSUITE_DATA_DIR")
    for candidate in ([Path(env)] if env else []) + [SHARED_DATA]:
        if (candidate / "MANIFEST.md").exists() or (candidate / "gsm8k").is_dir():
            return candidate
    return None


# --- parallel runs (pytest-xdist) -------------------------------------------------------------
# `python -m pytest` runs the test files on min(cores, MAX_WORKERS) worker processes; `-n 0` or
# `-p no:xdist` runs them one at a time in this process, `-n N` picks the count. Tests that start a
# real engine (llama-server, vLLM, transformers serve: tests/engines/) form one group, run one at a
# time on one worker: two of them at once would share two cores and each loads a model. A module
# with a module-scoped fixture (a venv, pages, loaded packs) stays on one worker, so that fixture
# is built once.
MAX_WORKERS = 4
ENGINE_MARKERS = ("llamacpp_server", "vllm", "transformers")
# Files whose tests must not overlap each other: two test_diff_llama.py lossless runs on two
# workers at once lost a candidate server mid-run (3 of 3 times; one at a time they pass; cause
# not found yet), so that file's tests run one at a time on one worker.
ONE_AT_A_TIME_FILES = ("tests/test_diff_llama.py",)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    option = config.option
    if option.numprocesses is None and not option.usepdb and not option.collectonly:
        option.numprocesses = "auto"  # xdist: the cores (PYTEST_XDIST_AUTO_NUM_WORKERS overrides)
        option.maxprocesses = option.maxprocesses or MAX_WORKERS
        if option.dist == "no":
            option.dist = "loadgroup"


def xdist_group_of(item) -> str | None:
    if any(item.get_closest_marker(name) for name in ENGINE_MARKERS):
        return "engines"
    if item.nodeid.split("::")[0] in ONE_AT_A_TIME_FILES:
        return item.nodeid.split("::")[0]
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    if any(d.scope == "module" for fixture_defs in defs.values() for d in fixture_defs):
        return item.nodeid.split("::")[0]
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups
def pytest_collection_modifyitems(config, items):
    for item in items:
        group = xdist_group_of(item)
        if group and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(group))


# --- skips: a run that skips more than the expected few says so at its end (issue 42) -------------
# -rs (README, .ci/run) prints each skip's reason; this line says when there are more of them than
# a machine with every engine and the data has: today the two SGLang tests (tests/engines/
# test_sglang.py: SGLang has no CPU wheels, EVALSUITE_SGLANG_URL names a server). A test that
# starts skipping in CI (an engine not built, the data gone) then shows at the end, not only as an
# "s" among thousands of dots. EVALSUITE_EXPECTED_SKIPS sets another count (a machine without data).
EXPECTED_SKIPS = 2


def too_many_skips(skipped: int, expected: int) -> str | None:
    if skipped <= expected:
        return None
    return (f"{skipped} tests skipped, more than the expected {expected} (EVALSUITE_EXPECTED_SKIPS): "
            f"their reasons are in the short test summary above (-rs)")


@pytest.hookimpl(hookwrapper=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    yield   # after the short test summary (-rs), just before the counts line
    if hasattr(config, "workerinput"):   # an xdist worker: the controller counts every worker's skips
        return
    skipped = sum(1 for r in terminalreporter.stats.get("skipped", []) if getattr(r, "when", "call") != "teardown")
    line = too_many_skips(skipped, int(os.environ.get("EVALSUITE_EXPECTED_SKIPS", EXPECTED_SKIPS)))
    if line:
        terminalreporter.write_sep("!", line, red=True, bold=True)
    ladder = real_model_ladder(config)
    if ladder:   # which bytes the real-model tests ran on (tests/engines/test_real_model.py writes it)
        terminalreporter.write_sep("-", "the real model's quant ladder (name, sha256, size, tensor types)")
        terminalreporter.write(ladder)


def real_model_ladder(config) -> str | None:
    """The ladder file test_real_model.py wrote during this session (None: it did not run)."""
    from engine_servers import engine_cache

    path = engine_cache() / "models" / "real-model-ladder.txt"
    started = getattr(config, "_evalsuite_started", None)
    if started is None or not path.is_file() or path.stat().st_mtime < started:
        return None
    return path.read_text()


def pytest_configure(config):
    import time

    config._evalsuite_started = time.time()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    found = shared_data_dir()
    if found is None:
        pytest.skip(f"benchmark data absent: expected ../shared/data beside the repo ({SHARED_DATA}) or EVALSUITE_DATA_DIR")
    return found


requires_llama = pytest.mark.skipif(
    not llama_cpp_available(),
    reason="llama-cpp-python[server] is not installed: pip install -e '.[test]' (builds llama.cpp, ~4 min)")


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """A function (dtype='f32', perturb=0.0, seed=0) -> path of a tiny random GGUF, written once."""
    from tiny_gguf import write_tiny_gguf

    folder = tmp_path_factory.mktemp("gguf")
    cache: dict = {}

    def model(dtype: str = "f32", perturb: float = 0.0, seed: int = 0) -> Path:
        key = (dtype, perturb, seed)
        if key not in cache:
            cache[key] = write_tiny_gguf(folder / f"tiny-{dtype}-p{perturb}-s{seed}.gguf", dtype=dtype, perturb=perturb, seed=seed)
        return cache[key]

    return model


@pytest.fixture(scope="session")
def llama_server(tiny_models):
    """One real llama.cpp server on the f32 tiny model, shared by the session's tests."""
    if not llama_cpp_available():
        pytest.skip("llama-cpp-python[server] is not installed: pip install -e '.[test]'")
    server = LlamaServer(tiny_models("f32")).start()
    yield server
    server.stop()


@pytest.fixture()
def run_cli():
    """Runs `evalsuite ...` as a separate process; returns CompletedProcess (text)."""
    def run(*args, timeout: float = 300, env: dict | None = None, cwd: Path | None = None):
        full_env = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
        return subprocess.run([sys.executable, "-m", "evalsuite.cli", *map(str, args)], capture_output=True,
                              text=True, timeout=timeout, env=full_env, cwd=cwd)
    return run


__all__ = ["EXTRA_BODY", "MODEL_ALIAS"]


@pytest.fixture()
def paced_servers():
    """A function (**PacedServer's settings) -> a started tests/paced_server.py fake; every one it
    started is stopped after the test."""
    from paced_server import PacedServer

    servers = []

    def start(**kw):
        s = PacedServer(**kw).start()
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()
