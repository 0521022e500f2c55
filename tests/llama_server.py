"""A real llama.cpp server (llama-cpp-python) on a tiny generated GGUF, for end-to-end tests.

    server = start_llama_server(model_path, draft=True)   # prompt-lookup speculation on
    server.url  -> "http://127.0.0.1:PORT/v1"
    server.kill(); server.restart(); server.stop()

One thread (`--n_threads 1`): with two on two cores, stalls of seconds were seen. The server's
`repeat_penalty` default is 1.1 even at temperature 0; `evalsuite run` recognises the server
and sends 1.0 itself (docs/lossless.md), so tests need not. EXTRA_BODY sets it by hand, for
tests that talk to the server without evalsuite's runner.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

MODEL_ALIAS = "tiny"
EXTRA_BODY = {"repeat_penalty": 1.0}


def llama_cpp_available() -> bool:
    try:
        import llama_cpp  # noqa: F401
        import llama_cpp.server  # noqa: F401
    except Exception:
        return False
    return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    def __init__(self, model_path: Path, draft: bool = False, num_pred_tokens: int = 10, port: int | None = None,
                 extra_args: tuple[str, ...] = ()):
        self.model_path = Path(model_path)
        self.draft = draft
        self.num_pred_tokens = num_pred_tokens
        # picked here: free when picked, maybe taken by the time uvicorn binds it (see start)
        self.port_picked = port is None
        self.port = port or free_port()
        self.extra_args = extra_args
        self.proc: subprocess.Popen | None = None
        self.log = Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path), "--model_alias", MODEL_ALIAS,
               "--host", "127.0.0.1", "--port", str(self.port), "--n_threads", "1", "--n_threads_batch", "1",
               "--n_ctx", "2048", "--logits_all", "true", "--verbose", "false"]
        if self.draft:
            cmd += ["--draft_model", "prompt-lookup-decoding", "--draft_model_num_pred_tokens", str(self.num_pred_tokens)]
        return cmd + list(self.extra_args)

    def start(self, wait: float = 120.0, tries: int = 3) -> "LlamaServer":
        """Start and wait until ready. A port this object picked that another process took before
        the server bound it is replaced by another one, on the first start only (a restart keeps
        its URL: tests/engine_servers.py does the same for the real engines)."""
        for attempt in range(1, tries + 1):
            log_start = self.log.stat().st_size
            try:
                self._start_once(wait)
            except RuntimeError:
                said = self.log.read_bytes()[log_start:].decode(errors="replace").lower()
                if not (self.port_picked and attempt < tries and "address already in use" in said):
                    raise
                print(f"llama server: port {self.port} was taken before it bound it; trying another", file=sys.stderr)
                self.port = free_port()
                continue
            self.port_picked = False
            return self
        raise AssertionError("unreachable: the last try returns or raises")

    def _start_once(self, wait: float) -> "LlamaServer":
        log = open(self.log, "ab")
        self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama server exited with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as r:
                    if r.status == 200 and json.load(r).get("data"):
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama server did not answer within {wait:.0f} s:\n{self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL, as a GPU reset or the OOM killer would."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def restart(self) -> "LlamaServer":
        self.stop()
        return self.start()

    def __enter__(self) -> "LlamaServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def start_llama_server(model_path: Path, **kwargs) -> LlamaServer:
    return LlamaServer(model_path, **kwargs).start()
