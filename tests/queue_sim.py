"""The ground truth of a rate sweep on the paced server (tests/paced_server.py) with a slot
limit: a first-come queue of `slots` servers, each request's service programmed, the arrivals
the same seeded schedule the client keeps.

    ttfts = simulate(arrivals, slots=2, latency=0.01, prefill=[0.128] * n, service=[0.4] * n)

The paced server sleeps its round trip (`latency`) before a request joins the queue, waits for
a slot, sends the first token after the prefill and the last one (tg - 1) / decode rate later,
then frees the slot: TTFT = latency + wait + prefill. `percentiles_of_runs` repeats it over
seeds: the spread of the p50 a 60-request run can read (the issue's "90% of runs between").
"""
from __future__ import annotations

import heapq
import statistics
from typing import Sequence


def simulate(arrivals: Sequence[float], slots: int, latency: float, prefill: Sequence[float],
             service: Sequence[float]) -> list[float]:
    """Each request's TTFT (seconds), in the order of `arrivals` (sorted)."""
    free = [0.0] * slots                   # when each slot is free again
    heapq.heapify(free)
    out = []
    for a, p, s in zip(arrivals, prefill, service):
        at_server = a + latency
        start = max(at_server, heapq.heappop(free))
        heapq.heappush(free, start + s)
        out.append(start - a + p)
    return out


def service_of(prompt_tokens: int, tg: int, prefill_rate: float, decode_rate: float) -> tuple[float, float]:
    """(prefill, slot time) of one request on the paced server (no prefix cache hit, one speed)."""
    prefill = prompt_tokens / prefill_rate
    return prefill, prefill + (tg - 1) / decode_rate


def p50_over_runs(rate: float, n: int, slots: int, latency: float, prefill: float, service: float,
                  runs: int = 2000) -> tuple[float, float, float]:
    """The median TTFT of one run of n Poisson arrivals: its median over `runs` seeds, and the
    5th and 95th percentiles (90% of runs read between them)."""
    from evalsuite.speed.load_rows import poisson_arrivals

    medians = sorted(statistics.median(simulate(poisson_arrivals(rate, n, seed), slots, latency, [prefill] * n,
                                                [service] * n)) for seed in range(runs))
    return medians[len(medians) // 2], medians[int(0.05 * runs)], medians[int(0.95 * runs)]
