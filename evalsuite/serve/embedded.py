"""The newcomer's default: `evalsuite run PACK --model FILE.gguf` with nothing listening starts
llama.cpp's llama-server itself; this finds one and writes its command line."""
from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from ..client.errors import UsageError
from .managed import something_listens

LLAMA_SERVER_HOWTO = (
    "evalsuite can start llama.cpp's llama-server for you, but found none on PATH or in EVALSUITE_LLAMA_SERVER.\n"
    "Get one:\n"
    "  macOS / Linux with Homebrew:  brew install llama.cpp\n"
    "  prebuilt binaries:            https://github.com/ggml-org/llama.cpp/releases (llama-server is in the archive)\n"
    "  from source:                  git clone https://github.com/ggml-org/llama.cpp && cd llama.cpp &&\n"
    "                                cmake -B build && cmake --build build --config Release --target llama-server\n"
    "then put it on PATH or set EVALSUITE_LLAMA_SERVER=/path/to/llama-server. Or start any OpenAI-compatible\n"
    "server yourself and pass --endpoint http://HOST:PORT/v1, or give its command line with --serve \"...\"."
)


def find_llama_server() -> str | None:
    env = os.environ.get("EVALSUITE_LLAMA_SERVER")
    if env:
        return env if os.path.isfile(env) and os.access(env, os.X_OK) else None
    return shutil.which("llama-server")


def embedded_command(model: str, concurrency: int, max_tokens: int) -> str:
    """llama-server for `evalsuite run PACK --model FILE.gguf`: one slot per request in flight, each
    with room for a long prompt plus max_tokens, counters on. Its sampler defaults are neutral
    and the runner checks /props (engines.py), so temperature 0 is greedy."""
    binary = find_llama_server()
    if binary is None:
        raise UsageError(f"--model {model} is a GGUF file and nothing answers at the default endpoint.\n"
                         + LLAMA_SERVER_HOWTO)
    per_slot = max(4096, max_tokens + 3072)
    return shlex.join([binary, "-m", model, "-a", model, "--host", "127.0.0.1", "--port", "{port}",
                       "-np", str(concurrency), "-c", str(per_slot * concurrency), "--metrics", "--no-webui"])


def embedded_server(pack: str, model: str, concurrency: int, max_tokens: int | None, default_endpoint: str) -> str | None:
    """`run PACK --model FILE.gguf` with no endpoint and nothing on the default port: the
    llama-server command evalsuite starts itself (None: ask the default endpoint as before).
    UsageError when the file or the pack is not there, or no llama-server is found."""
    if not model.lower().endswith(".gguf"):
        return None
    if something_listens(default_endpoint):
        return None
    if not Path(model).is_file():
        raise UsageError(f"--model {model}: no such GGUF file (and nothing answers at {default_endpoint})")
    if max_tokens is None:
        from ..tasks import UnknownPackError, get_pack

        try:
            max_tokens = get_pack(pack).max_tokens
        except UnknownPackError as e:
            raise UsageError(str(e)) from None
    return embedded_command(model, concurrency, max_tokens or 1024)
