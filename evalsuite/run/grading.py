"""Grading off the event loop: the runner's responses are graded in worker threads, and what
finished comes back to the loop in batches.

`asyncio.to_thread` per answer cost ~30 us of the loop's CPU each (a task, a future, an executor
work item, one cross-thread wake-up per answer); a sampled run grades N x items answers. Here
the loop only puts a job on a queue; the thread it wakes waits BATCH_WAIT_S for the answers
behind it (less once `batch_max` wait), grades every queued one, and wakes the loop once for
the batch (every BATCH_WAIT_S in a long one): a wake-up, not the grade, is what a fast answer
costs most.
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
BATCH_WAIT_S = 0.02    # a woken thread waits this long for more answers before grading them all


def default_threads() -> int:
    return min(32, (os.cpu_count() or 1) + 4)   # ThreadPoolExecutor's default


class GradePool:
    """`submit(job, func, *args)`: func(*args) runs in a worker thread; then, on the loop,
    `on_done(job, result, error)` (error: the exception func raised, else None). Results that
    finish after `close()` are dropped (their items are asked again on resume)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_done: Callable[[Any, Any, BaseException | None], None],
                 threads: int | None = None, batch_max: int = 16):
        self._loop = loop
        # a batch is graded as soon as this many answers wait, without waiting out BATCH_WAIT_S:
        # the runner holds at most 2x its request slots ungraded, and a full hold stalls requests
        self._batch_max = max(1, batch_max)
        self._batch_full = threading.Event()
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
        if self._jobs.qsize() + 1 >= self._batch_max and not self._batch_full.is_set():   # + the one that woke a thread
            self._batch_full.set()
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
            task = self._jobs.get()   # blocks while there is nothing to grade
            if task is None:
                return
            # Grades go in batches: the first answer woke this thread; it waits BATCH_WAIT_S for
            # the ones behind it, grades all that are queued, and wakes the loop once. Waking a
            # thread costs more CPU than a fast grade (on a 2-core VM ~50-400 us of CPU each way):
            # one thread wake and one loop wake per answer cost a run at 200 ms latency ~2.5x the
            # bare client's CPU, a grade every 6 ms ~0.35 CPU s per 1,000 answers (~0.08 batched).
            if self._jobs.qsize() + 1 < self._batch_max:
                self._batch_full.wait(BATCH_WAIT_S)
            self._batch_full.clear()   # a hint only: everything queued is graded below anyway
            oldest = None   # when the oldest result the loop has not been woken for was ready
            while task is not None:
                self._grade(n, task)
                oldest = oldest or time.monotonic()
                try:
                    task = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if time.monotonic() - oldest >= BATCH_WAIT_S:   # a long batch still hands back as it goes
                    oldest = None
                    if not self._wake():
                        return
            if not self._wake() or task is None:
                return

    def _grade(self, n: int, task: tuple) -> None:
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

    def _wake(self) -> bool:
        """Have the loop take what is finished (one wake-up on its way at a time); False when the
        loop is closed: the run is over, nothing to record into."""
        if self._finished and not self._wake_pending:
            self._wake_pending = True
            try:
                self._loop.call_soon_threadsafe(self._drain)
            except RuntimeError:
                return False
        return True

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
