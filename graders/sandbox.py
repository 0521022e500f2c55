"""Run sympy work in a separate process under a hard time limit.

SIGALRM only works on the main thread, and a sympy call stuck in C-level big-integer
arithmetic ignores Python-level timeouts anyway. So every sympy step runs in a small pool
of persistent worker processes ('spawn' context: no forked locks or threads). A caller
checks a worker out, sends one job over a pipe and waits up to the time limit; a worker
that overruns is killed and a fresh one is started for the next job. Safe to call from
many threads at once: each worker serves one caller at a time.

Only plain tuples built by parse.py travel to the workers, never model text to evaluate.
The fast paths in numeric.py never get here, so the common case costs no process at all.
"""
from __future__ import annotations

import atexit
import os
import threading
from dataclasses import dataclass
from typing import Any

DEFAULT_TIMEOUT_S = float(os.environ.get("EVALSUITE_GRADER_TIMEOUT", "2.0"))
STARTUP_TIMEOUT_S = 120.0      # importing sympy on a loaded machine can be slow
MAX_WORKERS = int(os.environ.get("EVALSUITE_GRADER_WORKERS", "2"))
WORKER_MEMORY_BYTES = 2 * 1024 ** 3


class SandboxTimeout(Exception):
    """The job ran past its time limit; the worker was killed."""


class SandboxError(Exception):
    """The worker failed (crashed, or the job raised); the message says how."""


def _worker_main(conn: Any) -> None:  # runs in the child process
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    except (ImportError, ValueError, OSError):
        pass
    from . import symbolic  # imports sympy once per worker
    conn.send(("ready", None))
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        name, args = job
        try:
            conn.send(("ok", symbolic.JOBS[name](*args)))
        except MemoryError:
            conn.send(("error", "out of memory"))
        except Exception as e:  # report, keep serving
            conn.send(("error", f"{type(e).__name__}: {e}"[:300]))


@dataclass
class _Worker:
    process: Any
    conn: Any

    def kill(self) -> None:
        try:
            self.process.kill()
            self.process.join(timeout=5)
        except Exception:
            pass
        try:
            self.conn.close()
        except Exception:
            pass


class Pool:
    def __init__(self, max_workers: int = MAX_WORKERS):
        self._slots = threading.BoundedSemaphore(max_workers)
        self._idle: list[_Worker] = []
        self._all: set[int] = set()
        self._lock = threading.Lock()
        self.kills = 0

    def _start(self) -> _Worker:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_worker_main, args=(child,), daemon=True, name="evalsuite-grader")
        process.start()
        child.close()
        worker = _Worker(process, parent)
        if not parent.poll(STARTUP_TIMEOUT_S):
            worker.kill()
            raise SandboxError("grader worker did not start")
        try:
            status, _ = parent.recv()
        except (EOFError, OSError):
            worker.kill()
            raise SandboxError("grader worker died while starting") from None
        if status != "ready":
            worker.kill()
            raise SandboxError("grader worker failed to start")
        return worker

    def run(self, name: str, *args: Any, timeout: float | None = None) -> Any:
        """Run symbolic.JOBS[name](*args) in a worker; SandboxTimeout after `timeout` s."""
        timeout = DEFAULT_TIMEOUT_S if timeout is None else timeout
        with self._slots:
            with self._lock:
                worker = self._idle.pop() if self._idle else None
            if worker is None or not worker.process.is_alive():
                if worker is not None:
                    worker.kill()
                worker = self._start()
            try:
                worker.conn.send((name, args))
                ready = worker.conn.poll(timeout)
            except (OSError, BrokenPipeError):
                worker.kill()
                raise SandboxError("grader worker pipe broke") from None
            if not ready:
                worker.kill()
                self.kills += 1
                raise SandboxTimeout(f"sympy step {name!r} ran past {timeout:g} s")
            try:
                status, value = worker.conn.recv()
            except (EOFError, OSError):
                worker.kill()
                raise SandboxError("grader worker died (memory limit or crash)") from None
            with self._lock:
                self._idle.append(worker)
            if status != "ok":
                raise SandboxError(value)
            return value

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            try:
                worker.conn.send(None)
            except Exception:
                pass
            worker.kill()


_POOL: Pool | None = None
_POOL_PID: int | None = None
_POOL_LOCK = threading.Lock()


def pool() -> Pool:
    """The process-wide pool; a forked child gets its own (pipes are not shared)."""
    global _POOL, _POOL_PID
    with _POOL_LOCK:
        if _POOL is None or _POOL_PID != os.getpid():
            _POOL, _POOL_PID = Pool(), os.getpid()
            atexit.register(_POOL.close)
        return _POOL


def run(name: str, *args: Any, timeout: float | None = None) -> Any:
    return pool().run(name, *args, timeout=timeout)
