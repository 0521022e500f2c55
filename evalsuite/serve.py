"""Managed servers: evalsuite starts the server it evaluates, watches it, restarts it and stops it.

    evalsuite run gsm8k --serve "llama-server -m model.gguf --port {port}"

The command is split like a shell would (shlex; leading NAME=value words set environment
variables; no shell runs it), `{port}` is filled with a free loopback port (or the port named by
`--port N` is used), and `{name}` placeholders are filled from a sweep's values (evalsuite.sweep).
The server runs in its own session and process group, its stdout/stderr appended to
RUN_DIR/server.log, its PID in RUN_DIR/server.pid. It is ready when GET /v1/models lists models
(and /health, where the server has one, does not say 503 "loading"). It is stopped — SIGTERM to
the whole group, SIGKILL after `stop_timeout` — at the end of the run, on Ctrl-C/SIGTERM and on
any error; on Linux the server also gets SIGTERM if the evalsuite process itself dies (SIGKILL).

While the run goes on, `Supervisor` polls the process (every 0.2 s) and its health (every 2 s).
A server that exits, or stops answering for `hang_timeout` seconds, is recorded (time, exit
code, last log lines: manifest `server_restarts`), killed, restarted on the same port after a
back-off (0.5 s, 1 s, 2 s ... at most 30 s), waited for until healthy, and the run goes on. The
runner's workers hold their requests while it is being restarted (Scheduler.restarting), so an
item that was in flight is sent again once, to the restarted server; nothing recorded is touched.
After `max_restarts` restarts in one invocation the run stops (exit 3, resumable), as when an
endpoint is down past --max-downtime.

Nothing here knows an engine: llama-server, vLLM, SGLang and `transformers serve` are command
lines. Engine detection stays in evalsuite.engines.
"""
from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping, Sequence

from .client import now_iso
from .errors import UsageError

LOG_NAME = "server.log"
PID_NAME = "server.pid"
READY_POLL_S = 0.25
WATCH_POLL_S = 0.2
HEALTH_EVERY_S = 2.0
PROBE_TIMEOUT_S = 10.0
LOG_TAIL_LINES = 25
FULL_HASH_MAX = 1 << 30          # files up to 1 GiB are hashed whole
PARTIAL_CHUNK = 16 << 20         # bigger ones: sha256 of the size, the first and the last 16 MiB
PARTIAL_METHOD = "sha256 of the size in bytes, the first 16 MiB and the last 16 MiB"
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class ServerFailed(UsageError):
    """The managed server did not become ready (exit 2 before a run, the message has its log tail)."""


def backoff(restart: int) -> float:
    """Seconds to wait before restart number `restart` (1, 2, ...)."""
    return min(30.0, 0.5 * 2 ** (restart - 1))


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def fill_placeholders(word: str, values: Mapping[str, str]) -> str:
    def one(match: re.Match) -> str:
        name = match.group(1)
        if name not in values:
            known = ", ".join("{" + k + "}" for k in values) or "none"
            raise UsageError(f"the server command has a placeholder {{{name}}} with no value (known: {known}); "
                             f"give it with --set {name}=VALUE (evalsuite sweep), or write the value itself")
        return str(values[name])

    return _PLACEHOLDER.sub(one, word)


def _named_port(argv: Sequence[str]) -> int | None:
    for n, word in enumerate(argv):
        value = None
        if word == "--port" and n + 1 < len(argv):
            value = argv[n + 1]
        elif word.startswith("--port="):
            value = word.split("=", 1)[1]
        if value is not None:
            try:
                return int(value)
            except ValueError:
                raise UsageError(f"the server command's --port {value!r} is not a number") from None
    return None


def _named_host(argv: Sequence[str]) -> str:
    for n, word in enumerate(argv):
        if word == "--host" and n + 1 < len(argv):
            host = argv[n + 1]
        elif word.startswith("--host="):
            host = word.split("=", 1)[1]
        else:
            continue
        return "127.0.0.1" if host in ("0.0.0.0", "::", "[::]", "localhost", "") else host
    return "127.0.0.1"


def parse_command(command: str, values: Mapping[str, str] | None = None,
                  port: int | None = None) -> tuple[list[str], dict[str, str], str, int]:
    """(argv, environment additions, host to ask, port) of a server command as typed."""
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise UsageError(f"the server command cannot be split into words ({e}): {command!r}") from None
    env: dict[str, str] = {}
    while words and _ENV_WORD.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    if not words:
        raise UsageError(f"the server command names no program: {command!r}")
    values = dict(values or {})
    wants_port = any("{port}" in w for w in words)
    if wants_port:
        values["port"] = str(port or free_port())
    argv = [fill_placeholders(w, values) for w in words]
    env = {k: fill_placeholders(v, values) for k, v in env.items()}
    named = _named_port(argv)
    if named is None:
        raise UsageError(f"the server command names no port: add `--port {{port}}` (evalsuite fills in a free one) "
                         f"or `--port N`: {command!r}")
    return argv, env, _named_host(argv), named


def redact_argv(argv: Sequence[str], secret: str | None = None) -> list[str]:
    """The command as recorded: a value after --api-key (and the run's own key) is never written."""
    out, hide = [], False
    for word in argv:
        if hide:
            out.append("***")
            hide = False
            continue
        if secret and secret in word:
            word = word.replace(secret, "***")
        if word in ("--api-key", "--api_key", "--hf-token"):
            hide = True
        elif word.startswith(("--api-key=", "--api_key=", "--hf-token=")):
            word = word.split("=", 1)[0] + "=***"
        out.append(word)
    return out


def _redact_env(env: Mapping[str, str]) -> dict[str, str]:
    return {k: ("***" if any(w in k.upper() for w in SECRET_WORDS) else v) for k, v in env.items()}


# ----------------------------------------------------------------------------- what is served

def file_fingerprint(path: Path) -> dict[str, Any]:
    """Size and sha256 of a model file; for files over 1 GiB a partial hash, said which."""
    size = path.stat().st_size
    h = hashlib.sha256()
    with open(path, "rb") as f:
        if size <= FULL_HASH_MAX:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
            return {"path": str(path), "size": size, "sha256": h.hexdigest()}
        h.update(f"{size}\n".encode())
        h.update(f.read(PARTIAL_CHUNK))
        f.seek(size - PARTIAL_CHUNK)
        h.update(f.read(PARTIAL_CHUNK))
    return {"path": str(path), "size": size, "sha256_partial": h.hexdigest(), "hash_method": PARTIAL_METHOD}


def folder_fingerprint(path: Path) -> dict[str, Any]:
    """A model folder (HF layout): its files' sizes and a partial hash over names, sizes and first MiB."""
    files = sorted(p for p in path.iterdir() if p.is_file())
    h = hashlib.sha256()
    total = 0
    for p in files:
        size = p.stat().st_size
        total += size
        h.update(f"{p.name}\n{size}\n".encode())
        with open(p, "rb") as f:
            h.update(f.read(1 << 20))
    return {"path": str(path), "kind": "folder", "size": total, "files": len(files), "sha256_partial": h.hexdigest(),
            "hash_method": "sha256 of each top-level file's name, size and first MiB, in name order"}


def model_paths(argv: Sequence[str]) -> list[Path]:
    """Every existing file or model folder the command names (after the program itself)."""
    found: list[Path] = []
    for word in argv[1:]:
        value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
        if not value or value.startswith("-") or len(value) > 4096:
            continue
        p = Path(value)
        try:
            if p.is_file() or (p.is_dir() and any((p / n).exists() for n in ("config.json", "model.safetensors"))):
                if p not in found:
                    found.append(p)
        except OSError:
            continue
    return found


def fingerprints(argv: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for p in model_paths(argv):
        try:
            out.append(file_fingerprint(p) if p.is_file() else folder_fingerprint(p))
        except OSError as e:
            out.append({"path": str(p), "error": str(e)})
    return out


def binary_version(argv: Sequence[str], env: Mapping[str, str], timeout: float = 15.0) -> dict[str, Any]:
    """The program's path and what its --version says; for `python -m MODULE` the module's
    distribution version. Bounded: a program that does not know --version and starts serving
    instead is killed after `timeout`."""
    program = shutil.which(argv[0]) or argv[0]
    out: dict[str, Any] = {"binary": str(Path(program).resolve()) if os.path.exists(program) else program}
    if "-m" in argv[1:-1] and Path(program).name.startswith("python"):
        module = argv[argv.index("-m") + 1].split(".")[0]
        probe = [program, "-c", "import importlib.metadata as m, sys; d = m.packages_distributions().get(sys.argv[1]) "
                 "or [sys.argv[1]]; print(d[0], m.version(d[0]))", module]
        out["module"] = module
    else:
        probe = [program, "--version"]
    try:
        proc = subprocess.Popen(probe, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=dict(os.environ, **env))
    except OSError as e:
        out["version"] = None
        out["version_error"] = str(e)
        return out
    try:
        text, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid, signal.SIGKILL)
        proc.communicate()
        out["version"] = None
        out["version_error"] = f"`{' '.join(probe[:2])}` did not end within {timeout:g} s"
        return out
    lines = [ln.strip() for ln in text.decode("utf-8", "replace").splitlines() if ln.strip()]
    out["version"] = " | ".join(lines[:3])[:400] if proc.returncode == 0 or lines else None
    return out


# ----------------------------------------------------------------------------- the process

def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _parent_death_hook():
    """A function for the child to run before exec: SIGTERM to it when the thread that started it
    (the event loop's) ends, as when evalsuite is SIGKILLed (Linux only; None elsewhere). Resolved
    here, in the parent: the child between fork and exec must not import anything."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except Exception:
        return None

    def hook() -> None:
        prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG

    return hook


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


class ManagedServer:
    """One server command: launch, wait until ready, stop its process group, read its log."""

    def __init__(self, command: str, folder: Path, values: Mapping[str, str] | None = None,
                 ready_timeout: float = 600.0, stop_timeout: float = 30.0, secret: str | None = None,
                 quiet: bool = False, log_name: str = LOG_NAME):
        self.command = command
        self.argv, self.env, self.host, self.port = parse_command(command, values)
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
        self.launch()
        try:
            self.ready_seconds = await self.wait_ready()
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


# ----------------------------------------------------------------------------- watching it

class Supervisor:
    """Watches a managed server during a run and restarts it when it dies or hangs."""

    def __init__(self, server: ManagedServer, max_restarts: int = 3, hang_timeout: float = 120.0, quiet: bool = False):
        self.server, self.max_restarts, self.hang_timeout, self.quiet = server, max_restarts, hang_timeout, quiet
        self.events: list[dict[str, Any]] = []
        self.restarts = 0
        self.scheduler = None
        self.task: asyncio.Task | None = None
        self.entry: dict[str, Any] | None = None
        self.session = f"{os.getpid()}-{time.time():.3f}"   # this invocation, beside a resumed run's earlier ones

    def attach(self, scheduler) -> None:
        """From the runner, once its Scheduler exists: watch from now on."""
        self.scheduler = scheduler
        self.task = asyncio.get_running_loop().create_task(self.watch())
        self.task.add_done_callback(self._watch_ended)

    def _watch_ended(self, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:   # a bug here must not pass unseen
            print(f"warning: the managed server is no longer watched ({type(task.exception()).__name__}: "
                  f"{task.exception()}); a crash will not be restarted", file=sys.stderr)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
            self.task = None

    def annotate(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """The manifest with engine.managed and the restarts of this invocation added (a
        resumed run keeps the earlier ones)."""
        engine = dict(manifest.get("engine") or {})
        if self.entry is not None:
            engine["managed"] = self.entry
        manifest = dict(manifest, engine=engine)
        earlier = [e for e in manifest.get("server_restarts") or () if e.get("session") != self.session]
        mine = [dict(e, session=self.session) for e in self.events]
        if earlier or mine:
            manifest["server_restarts"] = earlier + mine
        if mine and manifest.get("speculation"):
            note = "the server restarted during the run: its counters cover only the time since the last restart"
            manifest["speculation"] = {u: dict(v, note=note) for u, v in manifest["speculation"].items()}
        return manifest

    def say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr)

    async def watch(self) -> None:
        server = self.server
        last_ok = last_probe = time.monotonic()
        while True:
            await asyncio.sleep(WATCH_POLL_S)
            code = server.exit_code()
            if code is not None:
                if not await self.restart(f"exited with code {code}" + _signal_name(code), code):
                    return
                last_ok = last_probe = time.monotonic()
                continue
            now = time.monotonic()
            if now - last_probe < HEALTH_EVERY_S:
                continue
            last_probe = now
            why = await asyncio.to_thread(probe, server.base, min(PROBE_TIMEOUT_S, max(1.0, self.hang_timeout)))
            if why is None:
                last_ok = time.monotonic()
            elif time.monotonic() - last_ok > self.hang_timeout:
                server.kill()
                if not await self.restart(f"stopped answering for {time.monotonic() - last_ok:.0f} s ({why}); killed",
                                          server.exit_code()):
                    return
                last_ok = last_probe = time.monotonic()

    async def restart(self, reason: str, code: int | None) -> bool:
        """Record the event and bring the server back; False when it is given up (the run stops)."""
        server, scheduler = self.server, self.scheduler
        event = {"at": now_iso(), "reason": reason, "exit_code": code, "pid": server.proc.pid if server.proc else None,
                 "log_tail": server.log_tail(), "attempts": 0}
        self.events.append(event)
        url = server.url
        scheduler.restarting.add(url)
        self.say(f"\nthe managed server {reason}; last lines of {server.log_path}:\n{event['log_tail']}")
        try:
            while True:
                if self.restarts >= self.max_restarts:
                    event["outcome"] = "given up"
                    scheduler.stopped_reason = scheduler.stopped_reason or (
                        f"the managed server {reason}, and it was restarted {self.restarts} time(s) already "
                        f"(--max-restarts {self.max_restarts}); its log: {server.log_path}")
                    return False
                self.restarts += 1
                event["attempts"] += 1
                wait = backoff(self.restarts)
                self.say(f"restarting it in {wait:g} s (restart {self.restarts} of at most {self.max_restarts})")
                await asyncio.sleep(wait)
                server.stop()   # anything of the old group still alive
                t0 = time.monotonic()
                try:
                    server.launch()
                    await server.wait_ready()
                except ServerFailed as e:
                    event.setdefault("failed_starts", []).append(str(e)[-2000:])
                    self.say(f"the restart failed: {str(e)[-1500:]}")
                    continue
                event.update(outcome="restarted", ready_after_s=round(time.monotonic() - t0, 3), new_pid=server.proc.pid)
                self.say(f"the server is back at {url} (pid {server.proc.pid}, ready in {event['ready_after_s']:.1f} s); "
                         f"the items that were in flight are asked again")
                return True
        finally:
            # mark_up, not down_since alone: it also wakes the items waiting for the endpoint to answer
            # (the watchdog may have marked it down before the exit was seen)
            scheduler.mark_up(url)
            scheduler.restarting.discard(url)


def _signal_name(code: int) -> str:
    if code < 0:
        try:
            return f" ({signal.Signals(-code).name})"
        except ValueError:
            return ""
    return ""


# ----------------------------------------------------------------------------- the runner's entry

async def serve_and_run(settings, run_async: Callable[[Any], Awaitable[int]]) -> int:
    """Start settings.serve, run with its URL as the endpoint under a Supervisor, stop it whatever happens."""
    from .manifest import resume_command
    from .store import RECORDS

    if settings.endpoints:
        raise UsageError("give either --endpoint or --serve, not both: --serve starts the server and asks it")
    # cheap refusals before a server is started (a model load may take minutes)
    from .tasks import UnknownPackError, get_pack

    try:
        get_pack(settings.pack)
    except UnknownPackError as e:
        raise UsageError(str(e)) from None
    records = settings.run_dir / RECORDS
    if not settings.resume and records.exists() and records.stat().st_size > 0:
        raise UsageError(f"{settings.run_dir} already holds records. To continue that run:\n  "
                         f"{resume_command(settings.argv, settings.run_dir)}\nor choose another --run-dir.")
    secret = os.environ.get(settings.api_key_env or "OPENAI_API_KEY")
    server = ManagedServer(settings.serve, settings.run_dir, ready_timeout=settings.serve_timeout, secret=secret,
                           quiet=settings.quiet)
    supervisor = Supervisor(server, max_restarts=settings.max_restarts, hang_timeout=settings.serve_hang_timeout,
                            quiet=settings.quiet)
    try:
        await server.start()
        supervisor.entry = await server.entry()
        return await run_async(replace(settings, endpoints=(server.url,), managed=supervisor))
    finally:
        await supervisor.close()
        server.stop()
        if not settings.quiet and server.proc is not None:
            print(f"server stopped (pid {server.proc.pid}, exit {server.proc.returncode})", file=sys.stderr)


def run_with_server(command: str | None, folder: Path, fn: Callable[[str | None], Any], *, ready_timeout: float = 600.0,
                    quiet: bool = False, log_name: str = LOG_NAME) -> Any:
    """fn(url of the server `command` starts), the server stopped afterwards; fn(None) without a
    command. For steps outside a run (lossless --rescore on a managed baseline)."""
    if command is None:
        return fn(None)
    server = ManagedServer(command, folder, ready_timeout=ready_timeout, quiet=quiet, log_name=log_name)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(server.start())
        return fn(server.url)
    finally:
        server.stop()
        loop.close()


# ----------------------------------------------------------------------------- the newcomer's default

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


def something_listens(url: str, timeout: float = 1.0) -> bool:
    """Whether anything accepts a TCP connection at the URL's host and port."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=timeout):
            return True
    except OSError:
        return False


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
        from .tasks import UnknownPackError, get_pack

        try:
            max_tokens = get_pack(pack).max_tokens
        except UnknownPackError as e:
            raise UsageError(str(e)) from None
    return embedded_command(model, concurrency, max_tokens or 1024)
