"""Grading off the event loop: the runner's responses are graded in worker threads, and what
finished comes back to the loop in batches.

`asyncio.to_thread` per answer cost ~30 us of the loop's CPU each (a task, a future, an executor
work item, one cross-thread wake-up per answer); a sampled run grades N x items answers. Here
the loop only puts a job on a queue, and a thread that finishes a grade wakes the loop only
when no wake-up is already on its way: one wake-up returns every grade finished meanwhile.
Several threads (as many as asyncio's default executor would have), so a slow grade (sympy in
its sandbox, up to its deadline) holds one thread, not the others. Each grade runs in a copy of
the submitting context, as `to_thread` ran it.
"""
from __future__ import annotations

import asyncio
import collections
import contextvars
import os
import queue
import threading
from typing import Any, Callable


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
        self._closed = False
        self.outstanding = 0      # submitted, not yet handed to on_done
        self._drained: asyncio.Event | None = None

    def submit(self, job: Any, func: Callable[..., Any], *args: Any) -> None:
        self.outstanding += 1
        self._jobs.put((job, contextvars.copy_context(), func, args))
        if not self._threads:   # all at once, on the first job
            for n in range(self._n_threads):
                thread = threading.Thread(target=self._work, name=f"grade-{n}", daemon=True)
                self._threads.append(thread)
                thread.start()

    def _work(self) -> None:
        while True:
            task = self._jobs.get()
            if task is None:
                return
            job, context, func, args = task
            try:
                result, error = context.run(func, *args), None
            except BaseException as e:   # handed to on_done: a grader bug must not lose the response
                result, error = None, e
            self._finished.append((job, result, error))
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
        for _ in self._threads:
            self._jobs.put(None)
