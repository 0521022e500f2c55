"""Grading off the event loop: the runner's responses are graded in worker threads, and what
finished comes back to the loop in batches.

`asyncio.to_thread` per answer cost ~30 us of the loop's CPU each (a task, a future, an executor
work item, one cross-thread wake-up per answer); a sampled run grades N x items answers. Here
the loop only puts a job on a queue, and a thread that finishes a grade wakes the loop only
when no wake-up is already on its way: one wake-up returns every grade finished meanwhile.
One warm thread while grades are fast (under the GIL more threads grade no faster, and taking
turns they cost CPU and context switches); another starts only while every thread has been on
its current grade for SPARE_AFTER_S, up to as many as asyncio's default executor would have, so
a slow grade (sympy in its sandbox, up to its deadline) holds one thread, not the others. Each grade runs in a copy of
the submitting context, as `to_thread` ran it.
"""
from __future__ import annotations

import asyncio
import collections
import contextvars
import os
import queue
import threading
import time
from typing import Any, Callable


SPARE_AFTER_S = 0.05   # a job waiting this long for a thread starts another one


def default_threads() -> int:
    return min(32, (os.cpu_count() or 1) + 4)   # ThreadPoolExecutor's default


class GradePool:
    """`submit(job, func, *args)`: func(*args) runs in a worker thread; then, on the loop,
    `on_done(job, result, error)` (error: the exception func raised, else None). Results that
    finish after `close()` are dropped (their items are asked again on resume)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_done: Callable[[Any, Any, BaseException | None], None],
                 threads: int | None = None):
        self._loop = loop
        self._on_done = on_done
        self._n_threads = threads or default_threads()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._finished: collections.deque = collections.deque()
        self._wake_pending = False
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._idle = 0            # threads waiting for a job that no submitted job has claimed yet
        self._unclaimed = 0       # jobs queued with no thread to take them yet
        self._busy_since: list[float | None] = []   # per thread: when its current job started
        self._check: asyncio.TimerHandle | None = None
        self._closed = False
        self.outstanding = 0      # submitted, not yet handed to on_done
        self._drained: asyncio.Event | None = None

    def submit(self, job: Any, func: Callable[..., Any], *args: Any) -> None:
        self.outstanding += 1
        self._jobs.put((job, contextvars.copy_context(), func, args))
        # Each job claims an idle thread, else waits for the busy one(s) to take it; another
        # thread starts only while every thread has been on its current job for SPARE_AFTER_S (a
        # grade holding its thread: sympy in its sandbox). While grades are fast one warm thread
        # does them all (six taking turns woke another cold thread per job: ~7 % more CPU,
        # twice the context switches; under the GIL more threads grade no faster).
        with self._lock:
            if self._idle > 0:
                self._idle -= 1
                return
            self._unclaimed += 1
            first = not self._threads
        if first:
            self._add_thread()
        elif self._check is None:
            self._check = self._loop.call_later(SPARE_AFTER_S, self._add_spare)

    def _add_thread(self) -> None:
        with self._lock:
            if not self._unclaimed or len(self._threads) >= self._n_threads:
                return
            self._unclaimed -= 1
            n = len(self._threads)
            thread = threading.Thread(target=self._work, args=(n,), name=f"grade-{n}", daemon=True)
            self._threads.append(thread)
            self._busy_since.append(None)
        thread.start()

    def _add_spare(self) -> None:
        self._check = None
        if self._closed:
            return
        now = time.monotonic()
        if all(started is not None and now - started >= SPARE_AFTER_S for started in self._busy_since):
            self._add_thread()
        if self._unclaimed and len(self._threads) < self._n_threads:
            self._check = self._loop.call_later(SPARE_AFTER_S, self._add_spare)

    def _work(self, n: int) -> None:
        while True:
            task = self._jobs.get()
            if task is None:
                return
            job, context, func, args = task
            self._busy_since[n] = time.monotonic()
            try:
                result, error = context.run(func, *args), None
            except BaseException as e:   # handed to on_done: a grader bug must not lose the response
                result, error = None, e
            self._busy_since[n] = None
            self._finished.append((job, result, error))
            with self._lock:   # free again: take a waiting job, or wait for the next one
                if self._unclaimed:
                    self._unclaimed -= 1
                else:
                    self._idle += 1
            if not self._wake_pending:
                self._wake_pending = True
                try:
                    self._loop.call_soon_threadsafe(self._drain)
                except RuntimeError:   # the loop is closed: the run is over, nothing to record into
                    return

    def _drain(self) -> None:
        # the flag is cleared before the deque is emptied: a result appended after this line
        # either is popped below or sees the flag down and wakes the loop again
        self._wake_pending = False
        while self._finished:
            job, result, error = self._finished.popleft()
            if self._closed:
                continue
            self.outstanding -= 1
            try:
                self._on_done(job, result, error)
            except Exception as e:   # said, as an exception in a task would be; the others still come back
                self._loop.call_exception_handler({"message": "recording a graded response failed", "exception": e})
        if self.outstanding == 0 and self._drained is not None:
            self._drained.set()

    async def wait(self, timeout: float) -> int:
        """Wait up to `timeout` s for every submitted job to be handed back; returns how many
        were not."""
        if self.outstanding:
            self._drained = asyncio.Event()
            try:
                await asyncio.wait_for(self._drained.wait(), timeout)
            except asyncio.TimeoutError:
                pass
        return self.outstanding

    def close(self) -> None:
        """Drop what has not come back yet and let the threads end (a hung grade's thread is a
        daemon: it does not hold the process)."""
        self._closed = True
        if self._check is not None:
            self._check.cancel()
            self._check = None
        with self._lock:
            threads = list(self._threads)
        for _ in threads:
            self._jobs.put(None)
