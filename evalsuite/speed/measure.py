"""The measuring loop of one test.

A test is one (workload, pp, tg, depth, concurrency): `runs` requests per stream, through
`concurrency` streams kept full — each stream sends its next request the moment its last one
ends, so the server never waits for a whole batch to finish (a tool that waits leaves it idle
between batches and under-reports). The prompts are made before the clock starts, so the loop
only streams.

Its figures and rows are figures.py's. The client's own CPU: the loop thread's CPU seconds per
streamed token, and the share of the wall time it wanted a core (ran or waited to run, from
/proc/thread-self/schedstat): at CLIENT_BOUND or more, the client may have slowed the figures,
and the row says "client-bound".
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .endpoint import Counters, Sample, SpeedEndpoint
from .prompts import Prompt, PromptMaker

CLIENT_BOUND = 0.8      # the client's loop wanted a core this share of the test's wall time
# kinds of failure that every request of the test would meet again: the test stops there
SAME_FOR_ALL = ("context_length", "bad_request")
DOWN_KINDS = ("connection", "stream_broken", "timeout", "server_error")


@dataclass(frozen=True)
class BenchTest:
    workload: str
    pp: int
    tg: int
    depth: int
    concurrency: int
    runs: int
    cached_mode: bool = False

    @property
    def requests(self) -> int:
        return self.runs * self.concurrency


@dataclass(frozen=True)
class CpuUse:
    cpu_s: float            # the loop thread's CPU time during the test
    busy: float | None      # (ran + waited to run) / wall, None where the kernel does not say
    wall_s: float


class CpuMeter:
    """The calling thread's CPU and run-queue time over an interval."""

    def __init__(self) -> None:
        self.t0 = self.cpu0 = 0.0
        self.sched0: tuple[int, int] | None = None

    @staticmethod
    def _sched() -> tuple[int, int] | None:
        try:
            with open("/proc/thread-self/schedstat", "rb") as f:
                ran, waited = f.read().split()[:2]
            return int(ran), int(waited)
        except (OSError, ValueError):
            return None

    def start(self) -> "CpuMeter":
        self.t0, self.cpu0, self.sched0 = time.perf_counter(), time.thread_time(), self._sched()
        return self

    def stop(self) -> CpuUse:
        wall = time.perf_counter() - self.t0
        cpu = time.thread_time() - self.cpu0
        sched = self._sched()
        busy = None
        if self.sched0 is not None and sched is not None and wall > 0:
            busy = ((sched[0] - self.sched0[0]) + (sched[1] - self.sched0[1])) / 1e9 / wall
        elif wall > 0:
            busy = cpu / wall
        return CpuUse(cpu, busy, wall)


@dataclass
class Measured:
    test: BenchTest
    samples: list[Sample] = field(default_factory=list)
    loads: list[Sample] = field(default_factory=list)       # --prefix-cache: the context loads
    started: float = 0.0
    stream_ends: list[float] = field(default_factory=list)  # when each stream ran out of requests
    before: Counters | None = None
    after: Counters | None = None
    cpu: CpuUse | None = None
    stopped: str | None = None        # why the test stopped early (a 400 for every request)
    down: str | None = None           # the server went away during the test


async def run_test(endpoint: SpeedEndpoint, prompts: Sequence[Prompt], test: BenchTest, model: str,
                   ignore_eos: bool = True, extra: Mapping[str, Any] | None = None,
                   hold=None) -> Measured:
    """Measure one test over `prompts` (test.requests of them). `hold`: a managed server's
    watch; a stream that fails while it restarts the server ends the test as down."""
    extra = dict(extra or {})
    result = Measured(test)
    result.before = await endpoint.counters()
    queue = iter(prompts)

    async def failed(sample: Sample) -> bool:
        """Whether the test must stop after this failure."""
        error = sample.error
        if error.kind in SAME_FOR_ALL:
            result.stopped = result.stopped or error.message
            return True
        if error.kind in DOWN_KINDS and (hold is not None and hold.restarting or not await endpoint.alive()):
            result.down = result.down or error.message
            return True
        return False

    async def stream() -> None:
        for prompt in queue:
            if result.stopped or result.down:
                break
            if test.cached_mode:
                load = await endpoint.stream(endpoint.body(model, prompt.context, 1, False, extra))
                result.loads.append(load)
                if not load.ok and await failed(load):
                    break
            sample = await endpoint.stream(endpoint.body(model, prompt.content, test.tg, ignore_eos, extra))
            result.samples.append(sample)
            if not sample.ok and await failed(sample):
                break
        result.stream_ends.append(time.perf_counter())

    meter = CpuMeter().start()
    result.started = time.perf_counter()
    await asyncio.gather(*(stream() for _ in range(test.concurrency)))
    result.cpu = meter.stop()
    result.after = await endpoint.counters()
    return result


async def make_prompts(maker: PromptMaker, test: BenchTest) -> list[Prompt]:
    return [await maker.next(test.depth, test.pp) for _ in range(test.requests)]
