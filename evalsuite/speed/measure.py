"""The measuring loop of one test, and the rows it makes.

A test is one (workload, pp, tg, depth, concurrency): `runs` requests per stream, through
`concurrency` streams kept full — each stream sends its next request the moment its last one
ends, so the server never waits for a whole batch to finish (a tool that waits leaves it idle
between batches and under-reports). The prompts are made before the clock starts, so the loop
only streams.

From each answered request (endpoint.Sample):
- prefill t/s = (usage.prompt_tokens - cached tokens) / (TTFT - the measured round trip): the
  prefill ends with the first generated token, not the first chunk (a role chunk comes at once);
- decode t/s = (usage.completion_tokens - 1) / (last token - first token) (where a chunk carries
  several tokens, the usage count is shared out by each chunk's characters: the tokens after
  the first chunk over the same span);
- at concurrency > 1 the aggregate: all streams' tokens / wall time, over the time every stream
  was busy (from the first request to the moment the first stream ran out of requests), split
  into `runs` equal windows for its interval; each content chunk counts for its share of the
  request's tokens.
A failed request is counted in `failed`, never averaged in. Speculation: the engine's counters
before and after the test (or llama-server's per-response `timings`, which count our requests
only). The client's own CPU: the loop thread's CPU seconds per streamed token, and the share of
the wall time it wanted a core (ran or waited to run, from /proc/thread-self/schedstat): at
CLIENT_BOUND or more, the client may have slowed the figures, and the row says "client-bound".
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .endpoint import Counters, Sample, SpeedEndpoint, counters_from_timings
from .prompts import Prompt, PromptMaker
from .rows import Acceptance, Row, Stat
from .stats import percentile, summarize

CLIENT_BOUND = 0.8      # the client's loop wanted a core this share of the test's wall time
# kinds of failure that every request of the test would meet again: the test stops there
SAME_FOR_ALL = ("context_length", "bad_request")
DOWN_KINDS = ("connection", "stream_broken", "timeout", "server_error")
NO_COUNTERS = "the server exposes no counters"


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


# ----------------------------------------------------------------------------- rows


def prefill_rate(s: Sample, latency: float) -> float | None:
    if s.prompt_tokens is None or s.ttft is None:
        return None
    seconds = s.ttft - latency
    processed = s.prompt_tokens - (s.cached_tokens or 0)
    return processed / seconds if seconds > 0 and processed > 0 else None


def decode_rate(s: Sample) -> float | None:
    """(tokens - 1) / (last token - first token); where chunks carry several tokens, the tokens
    after the first chunk (Sample.chunk_tokens) over the same span."""
    if s.completion_tokens is None or s.completion_tokens < 2 or s.ttft is None or s.last is None:
        return None
    span = s.last - s.ttft
    shares = s.chunk_tokens()
    after_first = s.completion_tokens - max(1.0, shares[0]) if shares else s.completion_tokens - 1
    return after_first / span if span > 0 and after_first > 0 else None


def aggregate(samples: Sequence[Sample], start: float, end: float, windows: int) -> Stat | None:
    """Tokens of all streams per second of wall time between `start` and `end` (perf_counter
    instants), each window's own rate; None when a request had no usage (no token count)."""
    if end <= start or not samples:
        return None
    windows = max(1, windows)
    width = (end - start) / windows
    tokens = [0.0] * windows
    for s in samples:
        if s.completion_tokens is None or not s.token_times:
            if s.ok:
                return None
            continue
        for t, weight in zip(s.token_times, s.chunk_tokens()):
            at = s.started + t
            if start <= at < end:
                tokens[min(windows - 1, int((at - start) / width))] += weight
    return summarize([n / width for n in tokens])


def acceptance_of(result: Measured, tokens: int) -> tuple[Acceptance | None, str | None]:
    timed = [s.timings for s in result.samples if s.ok and isinstance(s.timings, dict) and "draft_n" in s.timings]
    if timed:
        c = counters_from_timings(timed)
        return Acceptance(c.drafted, c.accepted, tokens, "timings"), None
    if result.before is None or result.after is None:
        return None, NO_COUNTERS
    drafted = result.after.drafted - result.before.drafted
    accepted = result.after.accepted - result.before.accepted
    if drafted < 0 or accepted < 0:
        return None, "the counters went back during the test (the server restarted)"
    return Acceptance(drafted, accepted, tokens, "metrics"), None if drafted > 0 else "no tokens were drafted"


def _ms(values: Sequence[float | None]) -> float | None:
    xs = [1000 * v for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


def _server_figure(samples: Sequence[Sample], n_key: str, ms_key: str) -> Stat | None:
    values = []
    for s in samples:
        t = s.timings
        if isinstance(t, dict) and t.get(n_key) and t.get(ms_key):
            try:
                values.append(float(t[n_key]) / float(t[ms_key]) * 1000)
            except (TypeError, ValueError, ZeroDivisionError):
                continue
    return summarize(values) if values else None


def rows_of(result: Measured, latency: float) -> list[Row]:
    """The rows of one measured test: ctx (with --prefix-cache), pp and tg."""
    test = result.test
    answered = [s for s in result.samples if s.ok]
    failed = len(result.samples) - len(answered) + sum(1 for s in result.loads if not s.ok)
    cpu = result.cpu
    tokens = sum(s.completion_tokens or 0 for s in answered)
    common: dict[str, Any] = dict(workload=test.workload, pp=test.pp, tg=test.tg, depth=test.depth,
                                  concurrency=test.concurrency, cached_mode=test.cached_mode)
    client: dict[str, Any] = {}
    if cpu is not None:
        streamed = sum(s.chunks for s in result.samples) + sum(s.chunks for s in result.loads)
        client = dict(client_cpu_us_per_token=1e6 * cpu.cpu_s / tokens if tokens else None,
                      client_busy=cpu.busy, client_bound=bool(cpu.busy is not None and cpu.busy >= CLIENT_BOUND
                                                              and streamed > 0))
    notes = []
    error = result.stopped
    partial = result.down is not None
    if partial:
        notes.append(f"partial: the server went away during the test ({result.down})")
    failures = [s.error for s in (*result.loads, *result.samples) if not s.ok and s.error is not None]
    if failures and not error:   # a failure counted is also said: the first one's kind and message
        first = failures[0]
        notes.append(f"first failure: {first.kind}: {str(first.message)[:200]}")
    no_usage = answered and all(s.prompt_tokens is None for s in answered)
    if no_usage:
        notes.append("the server sent no usage: no token counts, so no rates (never estimated from characters)")
    counted = [s for s in answered if s.completion_tokens]
    if counted:
        per_chunk = sum(s.completion_tokens for s in counted) / max(1, sum(s.chunks for s in counted))
        if per_chunk >= 1.5:
            notes.append(f"tokens came in bursts ({per_chunk:.1f} a chunk): decode shares each chunk's tokens out "
                         "by its characters")
    clumped = sum(1 for s in counted if len(s.token_times) >= 4 and len(set(s.token_times)) < len(s.token_times) / 2)
    if clumped:
        notes.append(f"{clumped} request(s) read in clumps (most chunks arrived in the same read): their decode "
                     "figures are the client's view, not the server's pace")
    untimed = sum(1 for s in counted if s.completion_tokens >= 2 and decode_rate(s) is None)
    if untimed:
        notes.append(f"{untimed} request(s) without a decode time: their tokens arrived together (read in one "
                     "block: a busy client or machine)")
    ttfts = [s.ttft for s in answered]
    times = dict(ttfr_ms=_ms([s.ttfr for s in answered]), ttft_ms=_ms(ttfts),
                 prefill_ms=_ms([None if s.ttft is None else s.ttft - latency for s in answered]),
                 ttft_p50_ms=None if not answered else 1000 * (percentile(ttfts, 50) or 0),
                 ttft_p99_ms=None if not answered else 1000 * (percentile(ttfts, 99) or 0),
                 ttft_values_ms=tuple(1000 * t for t in ttfts if t is not None))
    prompt_tokens = [s.prompt_tokens for s in answered if s.prompt_tokens is not None]
    cached = [s.cached_tokens for s in answered if s.cached_tokens is not None]
    rows = []
    if test.cached_mode:
        loads = [s for s in result.loads if s.ok]
        lp = [s.prompt_tokens for s in loads if s.prompt_tokens is not None]
        lc = [s.cached_tokens for s in loads if s.cached_tokens is not None]
        rows.append(Row(test="ctx", runs=len(loads), figure=summarize([prefill_rate(s, latency) for s in loads]),
                        prompt_tokens=sum(lp) / len(lp) if lp else None, cached_tokens=sum(lc) / len(lc) if lc else None,
                        ttfr_ms=_ms([s.ttfr for s in loads]), ttft_ms=_ms([s.ttft for s in loads]),
                        prefill_ms=_ms([None if s.ttft is None else s.ttft - latency for s in loads]),
                        failed=sum(1 for s in result.loads if not s.ok), error=error, partial=partial,
                        server=_server_figure(loads, "prompt_n", "prompt_ms"), notes=tuple(notes), **common,
                        **client))
    rows.append(Row(test="pp", runs=len(answered), figure=summarize([prefill_rate(s, latency) for s in answered]),
                    prompt_tokens=sum(prompt_tokens) / len(prompt_tokens) if prompt_tokens else None,
                    cached_tokens=sum(cached) / len(cached) if cached else None, failed=failed, error=error,
                    partial=partial, server=_server_figure(answered, "prompt_n", "prompt_ms"), notes=tuple(notes),
                    **times, **common, **client))
    acceptance, why = acceptance_of(result, tokens) if answered else (None, None)
    agg = None
    if test.concurrency > 1 and result.stream_ends:
        agg = aggregate(result.samples, result.started, min(result.stream_ends), test.runs)
    rows.append(Row(test="tg", runs=len(answered), figure=summarize([decode_rate(s) for s in answered]),
                    prompt_tokens=sum(prompt_tokens) / len(prompt_tokens) if prompt_tokens else None,
                    cached_tokens=sum(cached) / len(cached) if cached else None, failed=failed, error=error,
                    partial=partial, aggregate=agg, acceptance=acceptance, acceptance_note=why,
                    server=_server_figure(answered, "predicted_n", "predicted_ms"), notes=tuple(notes),
                    **times, **common, **client))
    return rows


def error_rows(test: BenchTest, message: str) -> list[Row]:
    """A test that could not be measured at all (its prompts could not be made, ...)."""
    common = dict(workload=test.workload, pp=test.pp, tg=test.tg, depth=test.depth, concurrency=test.concurrency,
                  cached_mode=test.cached_mode, runs=0, figure=None, error=message)
    return ([Row(test="ctx", **common)] if test.cached_mode else []) + [Row(test="pp", **common), Row(test="tg", **common)]


async def make_prompts(maker: PromptMaker, test: BenchTest) -> list[Prompt]:
    return [await maker.next(test.depth, test.pp) for _ in range(test.requests)]
