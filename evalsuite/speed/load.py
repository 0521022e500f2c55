"""Load by arrival rate (`speed --rate 0.5,1,2,inf`): requests (or whole replayed sessions) sent
on a seeded Poisson schedule, open loop: each goes out when the schedule says, whether or not
the earlier ones have finished, as users arrive. Per rate: TTFT, ITL, TPOT and e2e
percentiles, goodput against `--slo`, the throughput, and the client's own lag behind the
schedule (load_rows.py has the definitions).

The schedule is kept by one dispatcher task that sleeps until each arrival and starts its job
then; the prompts (or sessions) are made before the clock starts. Each request's TTFT runs from
the moment it was sent, never from when the schedule said to send it, and the lag between the
two is measured on every request (the moment its body was written, client/phases.py) and
reported per rate: a client that falls behind sends its late requests in a burst, and the
server then sees another load than the one asked (what GuideLLM's 4.3 s TTFT at 2.2 requests/s
was, docs/speed.md). Several endpoints (`-e URL1,URL2`): arrival i goes to endpoint i mod k.
"""
from __future__ import annotations

import asyncio
import math
import time
from typing import Awaitable, Callable, Sequence

from .endpoint import Sample, SpeedEndpoint
from .load_rows import RatePoint, Sent, Slo, poisson_arrivals, rate_point

# one job per arrival: given the endpoint's index, the requests it sent (one, or a session's turns)
Job = Callable[[int], Awaitable[list[Sample]]]
LEAD_S = 0.05        # the schedule starts this long after the dispatcher, so the first arrival is not late already


def sent_of(sample: Sample, due: float, t0: float, endpoint: int) -> Sent:
    """One request's figures for the rate: its lag (written less due), TTFT, TPOT, ITL gaps, e2e."""
    written = sample.started + float((sample.phases or {}).get("written_s") or 0.0)
    lag = max(0.0, written - (t0 + due))
    if not sample.ok or sample.ttft is None:
        return Sent(due, lag, False, endpoint=endpoint)
    tokens = sample.completion_tokens
    tpot = None
    if tokens is not None and tokens > 1 and sample.total > sample.ttft:
        tpot = (sample.total - sample.ttft) / (tokens - 1)
    times = sorted(set(sample.token_times))
    gaps = tuple(b - a for a, b in zip(times, times[1:]))
    return Sent(due, lag, True, sample.ttft, tpot, sample.total, tokens, gaps, endpoint)


def in_flight_mean(samples: Sequence[Sample], start: float, end: float) -> float | None:
    if end <= start:
        return None
    return sum(max(0.0, min(end, s.ended) - max(start, s.started)) for s in samples) / (end - start)


async def run_rate(rate: float, jobs: Sequence[Job], endpoints: int, slo: Slo, seed: int,
                   duration_s: float | None = None) -> RatePoint:
    """Send `jobs` at `rate` (Poisson, seeded), wait for all, and sum them up. `duration_s`: no
    arrival after that many seconds (the jobs left are not sent)."""
    due = poisson_arrivals(rate, len(jobs), seed)
    if duration_s is not None:
        due = [d for d in due if d <= duration_s] or due[:1]
    results: list[tuple[float, int, list[Sample]]] = []

    async def one(k: int, at: float) -> None:
        results.append((at, k % endpoints, await jobs[k](k % endpoints)))

    t0 = time.perf_counter() + LEAD_S
    tasks = []
    for k, at in enumerate(due):
        wait = t0 + at - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        tasks.append(asyncio.create_task(one(k, at)))
    await asyncio.gather(*tasks)
    sent: list[Sent] = []
    samples: list[Sample] = []
    firsts: list[float] = []
    for at, endpoint, done in sorted(results, key=lambda r: r[0]):
        for n, sample in enumerate(done):
            samples.append(sample)
            # a session's later turns follow its earlier ones, not the schedule: only its first is due
            s = sent_of(sample, at if n == 0 else sample.started - t0, t0, endpoint)
            sent.append(s)
            if n == 0:
                firsts.append(sample.started + float((sample.phases or {}).get("written_s") or 0.0))
    start = min((s.started for s in samples), default=t0)
    end = max((s.ended for s in samples), default=t0)
    return rate_point(rate, sent, end - start, slo, endpoints, in_flight_mean(samples, start, end), firsts)


def single_request_jobs(endpoints: Sequence[SpeedEndpoint], models: Sequence[str], bodies: Sequence[dict]) -> list[Job]:
    """A job per prompt: one streamed request to the endpoint the dispatcher names."""
    def job(body: dict) -> Job:
        async def send(k: int) -> list[Sample]:
            return [await endpoints[k].stream({**body, "model": models[k]})]
        return send
    return [job(b) for b in bodies]


def describe_rate(rate: float) -> str:
    return "inf" if math.isinf(rate) else f"{rate:g}"
