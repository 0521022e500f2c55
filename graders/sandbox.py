"""Run sympy work in separate worker processes under one deadline per grade() call.

SIGALRM only works on the main thread, and a sympy call stuck in C-level big-integer
arithmetic ignores Python-level timeouts anyway. So every sympy step runs in a small pool
of persistent worker processes. A caller checks a worker out, sends one job over a pipe and
waits at most the time left on its deadline; a worker that overruns is killed and a fresh
one is started for the next job. Safe to call from many threads at once.

Workers are plain `python -c` subprocesses, not multiprocessing children: they never import
the caller's `__main__`, so grade() works from a script without an
`if __name__ == "__main__":` guard. They run with PYTHONHASHSEED=0, so sympy's internal
ordering (and with it every symbolic verdict) is the same whatever the caller's hash seed.

The deadline (`deadline()`; grade() opens one per call, default DEFAULT_DEADLINE_S, env
EVALSUITE_GRADER_TIMEOUT) is the sympy time one verdict may use in total, across all its
steps: a 16 x 16 set costs one deadline, not 256. Time spent starting a worker (importing
sympy, once per worker) and waiting for a free worker is not charged to it, so a verdict
does not change with the caller's concurrency; the wait for a free worker is bounded by
QUEUE_TIMEOUT_S. What is charged is the worker's CPU time on the job (read from /proc where
there is one, else wall time), so a verdict does not change with the machine's load either:
on a loaded 2-core machine a 1 s set took 3-6 s of wall time and came back undecided under
a wall-time deadline. A job that neither answers nor uses CPU is given up after
WALL_FACTOR x its limit of wall time.

Only plain tuples built by parse.py travel to the workers, never model text to evaluate.
The fast paths in numeric.py never get here, so the common case costs no process at all.
"""
from __future__ import annotations

import atexit
import contextvars
import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator



class BadGraderSetting(ValueError):
    """An EVALSUITE_GRADER_* environment variable holds no usable value (the CLI checks them at
    start-up and exits 2 with this message)."""


def setting_from_env(name: str, default: float | int, whole: bool = False) -> float | int:
    """A positive number from the environment variable `name` (unset or empty: `default`)."""
    import math

    raw = os.environ.get(name, "")
    if not raw.strip():
        return default
    what = "a whole number of worker processes (e.g. 2)" if whole else "a number of seconds (e.g. 4 or 2.5)"
    try:
        value = int(raw) if whole else float(raw)
    except ValueError:
        raise BadGraderSetting(f"{name}={raw!r} is not {what}") from None
    if not math.isfinite(value) or value <= 0:
        raise BadGraderSetting(f"{name}={raw!r} is not {what} above 0")
    return value


DEFAULT_DEADLINE_S = float(setting_from_env("EVALSUITE_GRADER_TIMEOUT", 4.0))
DEFAULT_TIMEOUT_S = DEFAULT_DEADLINE_S   # the name older callers use
STARTUP_TIMEOUT_S = 120.0      # importing sympy on a loaded machine can be slow
QUEUE_TIMEOUT_S = 120.0        # longest wait for a free worker before giving up with an error
MAX_WORKERS = int(setting_from_env("EVALSUITE_GRADER_WORKERS", 2, whole=True))
WORKER_MEMORY_BYTES = 2 * 1024 ** 3
WALL_FACTOR = 10.0             # a job's wall-time cap, in multiples of its CPU-time limit
POLL_S = 0.05                  # how often a waiting caller reads the worker's CPU time


class SandboxTimeout(Exception):
    """The job ran past the time left on the deadline; the worker was killed."""


class SandboxError(Exception):
    """The worker failed (crashed, or the job raised); the message says how."""


# --- the deadline of one verdict -------------------------------------------------------------

@dataclass
class Budget:
    total: float
    left: float


_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("grader_budget", default=None)


@contextmanager
def deadline(seconds: float | None = None) -> Iterator[Budget]:
    """All sympy steps inside share `seconds` of worker time. A nested call joins the outer one."""
    outer = _BUDGET.get()
    if outer is not None:
        yield outer
        return
    budget = Budget(DEFAULT_DEADLINE_S if seconds is None else seconds,
                    DEFAULT_DEADLINE_S if seconds is None else seconds)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def time_left() -> float | None:
    """Seconds of sympy time left to the current grade() call; None outside one."""
    budget = _BUDGET.get()
    return None if budget is None else budget.left


# --- the worker process ------------------------------------------------------------------------

def _serve(read_fd: int, write_fd: int) -> None:  # runs in the worker process
    from multiprocessing.connection import Connection

    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    except (ImportError, ValueError, OSError):
        pass
    conn_in, conn_out = Connection(read_fd, writable=False), Connection(write_fd, readable=False)
    from . import symbolic  # imports sympy once per worker
    conn_out.send(("ready", None))
    while True:
        try:
            job = conn_in.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        name, args, seconds = job
        try:
            conn_out.send(("ok", symbolic.run_job(name, args, seconds)))
        except MemoryError:
            conn_out.send(("error", "out of memory"))
        except Exception as e:  # report, keep serving
            conn_out.send(("error", f"{type(e).__name__}: {e}"[:300]))


WORKER_CODE = ("import sys; sys.path[:0] = {path!r}; "
               "from evalsuite.graders.sandbox import _serve; _serve({r}, {w})")


@dataclass
class _Worker:
    process: subprocess.Popen
    send_conn: Any
    recv_conn: Any

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        try:
            self.process.kill()
            self.process.wait(timeout=5)
        except Exception:
            pass
        for conn in (self.send_conn, self.recv_conn):
            try:
                conn.close()
            except Exception:
                pass


def _start_worker() -> _Worker:
    from multiprocessing.connection import Connection

    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    env = dict(os.environ, PYTHONHASHSEED="0")
    path = [p for p in sys.path if p]
    code = WORKER_CODE.format(path=path, r=to_child_r, w=from_child_w)
    try:
        process = subprocess.Popen([sys.executable, "-c", code], pass_fds=(to_child_r, from_child_w),
                                   stdin=subprocess.DEVNULL, env=env, close_fds=True)
    finally:
        os.close(to_child_r)
        os.close(from_child_w)
    worker = _Worker(process, Connection(to_child_w, readable=False), Connection(from_child_r, writable=False))
    if not worker.recv_conn.poll(STARTUP_TIMEOUT_S):
        worker.kill()
        raise SandboxError(f"grader worker did not start within {STARTUP_TIMEOUT_S:g} s")
    try:
        status, _ = worker.recv_conn.recv()
    except (EOFError, OSError):
        worker.kill()
        raise SandboxError(f"grader worker died while starting (exit code {process.poll()}); "
                           f"run `{sys.executable} -c 'import sympy'` to see why") from None
    if status != "ready":
        worker.kill()
        raise SandboxError("grader worker failed to start")
    return worker


def _cpu_seconds(pid: int) -> float | None:
    """The process's CPU time so far: schedstat's nanoseconds (its one thread: the workers
    are single-threaded), else stat's clock ticks; None where /proc has neither (not Linux)."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class _JobClock:
    """What one job costs on the deadline: the worker's CPU time, else wall time."""

    def __init__(self, pid: int):
        self.pid = pid
        self.started = time.monotonic()
        self.cpu0 = _cpu_seconds(pid)

    def spent(self) -> float:
        if self.cpu0 is not None:
            cpu = _cpu_seconds(self.pid)
            if cpu is not None:
                return max(cpu - self.cpu0, 0.0)
        return time.monotonic() - self.started

    def wait(self, conn: Any, limit: float) -> tuple[bool, float]:
        """(answered, seconds spent): waits until the worker answers, has used `limit` of CPU
        time, or WALL_FACTOR x limit of wall time has passed."""
        if self.cpu0 is None:
            return conn.poll(limit), time.monotonic() - self.started
        wall_cap = self.started + WALL_FACTOR * limit
        while True:
            spent = self.spent()
            now = time.monotonic()
            if spent >= limit or now >= wall_cap:
                return conn.poll(0), spent
            if conn.poll(min(POLL_S, limit - spent, wall_cap - now)):
                return True, self.spent()


class Pool:
    def __init__(self, max_workers: int = MAX_WORKERS):
        self.max_workers = max_workers
        self._slots = threading.BoundedSemaphore(max_workers)
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self.kills = 0

    def run(self, name: str, *args: Any, timeout: float | None = None) -> Any:
        """symbolic.run_job(name, args) in a worker, charged to the current deadline.

        Waits at most `timeout` seconds (default: the time left on the current grade()
        call's deadline, else DEFAULT_DEADLINE_S); SandboxTimeout past it.
        """
        budget = _BUDGET.get()
        limit = DEFAULT_DEADLINE_S if timeout is None else timeout
        if budget is not None:
            limit = min(limit, budget.left) if timeout is not None else budget.left
        if limit <= 0:
            raise SandboxTimeout(f"the grading deadline of {budget.total if budget else limit:g} s is spent")
        if not self._slots.acquire(timeout=QUEUE_TIMEOUT_S):
            raise SandboxError(f"all {self.max_workers} grader workers stayed busy for {QUEUE_TIMEOUT_S:g} s")
        try:
            with self._lock:
                worker = self._idle.pop() if self._idle else None
            if worker is None or not worker.alive():
                if worker is not None:
                    worker.kill()
                worker = _start_worker()
            spent = 0.0
            try:
                clock = _JobClock(worker.process.pid)
                worker.send_conn.send((name, args, limit))
                ready, spent = clock.wait(worker.recv_conn, limit)
            except (OSError, BrokenPipeError):
                worker.kill()
                raise SandboxError("grader worker pipe broke") from None
            finally:
                if budget is not None:
                    budget.left -= spent
            if not ready:
                worker.kill()
                self.kills += 1
                raise SandboxTimeout(f"sympy step {name!r} ran past the {limit:.2g} s (CPU time) left on the deadline")
            try:
                status, value = worker.recv_conn.recv()
            except (EOFError, OSError):
                worker.kill()
                raise SandboxError("grader worker died (memory limit or crash)") from None
            with self._lock:
                self._idle.append(worker)
            if status != "ok":
                raise SandboxError(value)
            return value
        finally:
            self._slots.release()

    def prestart(self, n: int = 1) -> None:
        """Start up to n idle workers now (blocking); errors are left for the first real job."""
        for _ in range(n):
            with self._lock:
                if len(self._idle) >= min(n, self.max_workers):
                    return
            try:
                worker = _start_worker()
            except SandboxError:
                return
            with self._lock:
                self._idle.append(worker)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            try:
                worker.send_conn.send(None)
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


def prestart(block: bool = False) -> threading.Thread | None:
    """Start a sympy worker ahead of the first symbolic grade (it takes ~1-2 s to import sympy).

    Non-blocking by default: the worker starts on a daemon thread, which is returned; call
    this when a run begins for a pack whose `Pack.needs_sympy` is true. Idempotent.
    """
    if block:
        pool().prestart()
        return None
    thread = threading.Thread(target=pool().prestart, name="evalsuite-grader-prestart", daemon=True)
    thread.start()
    return thread


warm_up = prestart
