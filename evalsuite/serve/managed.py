"""One managed server: launch its command in its own process group with its log in the run
folder, wait until it answers (readiness probe), stop the whole group, read its log tail."""
from __future__ import annotations

import asyncio
import atexit
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Mapping

from ..client.endpoint import now_iso
from ..errors import UsageError
from .command import _redact_env, parse_command, redact_argv
from .fingerprint import binary_version, fingerprints
from .process_group import _kill_group, _parent_death_hook, group_alive

LOG_NAME = "server.log"
PID_NAME = "server.pid"
READY_POLL_S = 0.25
PROBE_TIMEOUT_S = 10.0
LOG_TAIL_LINES = 25


class ServerFailed(UsageError):
    """The managed server did not become ready (exit 2 before a run, the message has its log tail)."""



def probe(base: str, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """None when the server at `base` (http://host:port) is ready; else why not."""
    try:
        with urllib.request.urlopen(f"{base}/v1/models", timeout=timeout) as r:
            body = json.loads(r.read(1 << 20))
        if not isinstance(body, dict) or not isinstance(body.get("data"), list):
            return "GET /v1/models answered without a model list"
    except urllib.error.HTTPError as e:
        if e.code != 404:
            return f"GET /v1/models answered HTTP {e.code}"
        try:   # no /v1/models (a proxy?): /health decides
            with urllib.request.urlopen(f"{base}/health", timeout=timeout):
                return None
        except Exception as e2:
            return f"GET /v1/models 404 and GET /health: {e2}"
    except Exception as e:
        return f"GET /v1/models: {getattr(e, 'reason', None) or e}"
    try:   # llama-server answers /v1/models while it loads; /health says 503 until it is ready
        with urllib.request.urlopen(f"{base}/health", timeout=timeout):
            pass
    except urllib.error.HTTPError as e:
        if e.code == 503:
            return "GET /health: 503 (still loading)"
    except Exception:
        pass
    return None


PORT_RACE_TRIES = 3
# what servers print when the port is taken: llama-server, uvicorn (vLLM, SGLang, transformers)
_PORT_TAKEN = ("couldn't bind", "address already in use", "errno 98", "eaddrinuse", "is already in use by another")


def lost_the_port(log_tail: str) -> bool:
    return any(marker in log_tail.lower() for marker in _PORT_TAKEN)


class ManagedServer:
    """One server command: launch, wait until ready, stop its process group, read its log."""

    def __init__(self, command: str, folder: Path, values: Mapping[str, str] | None = None,
                 ready_timeout: float = 600.0, stop_timeout: float = 30.0, secret: str | None = None,
                 quiet: bool = False, log_name: str = LOG_NAME):
        self.command, self.values = command, values
        self.argv, self.env, self.host, self.port = parse_command(command, values)
        # `{port}` filled with a port that was free a moment ago: another process may bind it
        # before the server does (a race seen with loaded test machines), so a first start that
        # lost it moves to another free port; a restart keeps the run's URL
        self.port_chosen = "{port}" in command and "port" not in (values or {})
        self.folder = Path(folder)
        self.log_path = self.folder / log_name
        self.ready_timeout, self.stop_timeout = ready_timeout, stop_timeout
        self.secret, self.quiet = secret, quiet
        self.proc: subprocess.Popen | None = None
        self.pids: list[int] = []          # every process started, in order
        self.launches = 0
        self.ready_seconds: float | None = None
        self._hashing = None
        self._stopped: set[int] = set()

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/v1"

    def describe(self) -> str:
        return shlex.join(redact_argv(self.argv, self.secret))

    def launch(self) -> None:
        """Start the process (call from the main thread: the parent-death signal follows the thread)."""
        self.launches += 1
        if something_listens(self.url, timeout=1.0):
            # another process answers there: its answers would be taken for this server's
            raise ServerFailed(f"port {self.port} on {self.host} is already in use by another process; the server "
                               f"command cannot listen there ({self.describe()}). Stop that process, or use "
                               f"--port {{port}} and let evalsuite choose a free port")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            log = open(self.log_path, "ab")
        except OSError as e:
            raise ServerFailed(f"cannot write the server's log in {self.folder}: {e.strerror or e}") from None
        with log:
            log.write(f"=== evalsuite {now_iso()}: start {self.launches}: {self.describe()}\n".encode())
            log.flush()
            try:
                self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                             start_new_session=True, env=dict(os.environ, **self.env),
                                             preexec_fn=_parent_death_hook())
            except OSError as e:
                raise ServerFailed(f"cannot start the server command {self.describe()}: {e.strerror or e}"
                                   + ("" if shutil.which(self.argv[0]) else f" (no program {self.argv[0]!r} on PATH)")
                                   ) from None
        self.pids.append(self.proc.pid)
        (self.folder / Path(self.log_path.name).with_suffix(".pid").name).write_text(f"{self.proc.pid}\n")
        atexit.register(self.stop)

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(0, self.log_path.stat().st_size - 64 * 1024))
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        tail = text.splitlines()[-lines:]
        if self.secret:
            tail = [ln.replace(self.secret, "***") for ln in tail]
        return "\n".join(tail)

    def exit_code(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    async def wait_ready(self, timeout: float | None = None) -> float:
        """Seconds until ready; ServerFailed (with the log tail) when it exits or the time is up."""
        timeout = self.ready_timeout if timeout is None else timeout
        t0 = time.monotonic()
        why = "no answer yet"
        while True:
            code = self.exit_code()
            if code is not None:
                raise ServerFailed(f"the server exited with code {code} before it was ready "
                                   f"({self.describe()}); last lines of {self.log_path}:\n{self.log_tail()}")
            why = await asyncio.to_thread(probe, self.base, min(PROBE_TIMEOUT_S, max(1.0, timeout)))
            if why is None:
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                self.stop()
                raise ServerFailed(f"the server was not ready within {timeout:g} s (--serve-timeout; last: {why}): "
                                   f"{self.describe()}; last lines of {self.log_path}:\n{self.log_tail()}")
            await asyncio.sleep(READY_POLL_S)

    async def start(self) -> "ManagedServer":
        if not self.quiet:
            print(f"starting the server: {self.describe()} (log {self.log_path})", file=sys.stderr)
        loop = asyncio.get_running_loop()
        self._hashing = loop.run_in_executor(None, fingerprints, self.argv)   # while it loads the same files
        for attempt in range(PORT_RACE_TRIES):
            try:
                self.launch()
                self.ready_seconds = await self.wait_ready()
                break
            except ServerFailed as e:
                self.stop()
                if not (self.port_chosen and attempt + 1 < PORT_RACE_TRIES
                        and (lost_the_port(str(e)) or lost_the_port(self.log_tail()))):
                    raise
                old = self.port
                self.argv, self.env, self.host, self.port = parse_command(self.command, self.values)
                if not self.quiet:
                    print(f"port {old} was taken before the server could listen on it: starting it on {self.port}",
                          file=sys.stderr)
            except BaseException:
                self.stop()
                raise
        if not self.quiet:
            print(f"server ready at {self.url} in {self.ready_seconds:.1f} s (pid {self.proc.pid})", file=sys.stderr)
        return self

    def stop(self) -> None:
        """SIGTERM to the whole group, SIGKILL after stop_timeout; then SIGKILL to anything left in it."""
        proc = self.proc
        if proc is None or proc.pid in self._stopped:
            return
        if proc.poll() is None:
            _kill_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc.pid, signal.SIGKILL)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    pass
        _kill_group(proc.pid, signal.SIGKILL)   # workers it left behind (vLLM's engine core, ...)
        deadline = time.monotonic() + 10.0      # and see them gone (a big process takes a while to die)
        while group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self._stopped.add(proc.pid)   # once only: later the number may belong to another process
        try:
            atexit.unregister(self.stop)
        except Exception:
            pass

    def kill(self) -> None:
        if self.proc is not None:
            _kill_group(self.proc.pid, signal.SIGKILL)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass

    async def entry(self) -> dict[str, Any]:
        """The manifest's engine.managed entry."""
        models = await self._hashing if self._hashing is not None else await asyncio.to_thread(fingerprints, self.argv)
        version = await asyncio.to_thread(binary_version, self.argv, self.env)
        return {"command": self.describe(), "argv": redact_argv(self.argv, self.secret), "env": _redact_env(self.env),
                "url": self.url, "port": self.port, **version, "models": models, "log": self.log_path.name,
                "ready_s": None if self.ready_seconds is None else round(self.ready_seconds, 3),
                "started_at": now_iso()}



def something_listens(url: str, timeout: float = 1.0) -> bool:
    """Whether anything accepts a TCP connection at the URL's host and port."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=timeout):
            return True
    except OSError:
        return False
