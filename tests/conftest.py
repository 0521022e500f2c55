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
