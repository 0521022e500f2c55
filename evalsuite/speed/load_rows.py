"""Load by arrival rate, as typed values: the SLO (`--slo ttft=1s,tpot=60ms`), what one rate
measured (`RatePoint`), and the sweep (`LoadSweep`) with its knee. Pure: built from per-request
figures, read back from the profile's JSON (rows.py's Profile holds it), no endpoint.

Per request (vLLM's `bench serve` definitions): TTFT from the request sent to the first token;
TPOT = (end - TTFT) / (tokens - 1); ITL the gaps between successive content chunks (a chunk
with several drafted tokens is one gap, as vLLM counts it); e2e from sent to the last byte.
Goodput: the requests that met every SLO, as a share of those sent and per second of the
rate's wall time (first send to last end); a failed request meets none. The knee: the highest
rate whose share within the SLO is at least `share` (default 0.9). The client's lag: when each
request was written less when the schedule said to send it; its p50 / p99 / max are reported
per rate, and a rate whose lag p99 passes LAG_NOTE_S (or a quarter of the mean gap between
arrivals, at least LAG_FLOOR_S) says the client fell behind its schedule: its arrivals came in a burst, and the
server saw another load than the one asked.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .quantile import percentile

LAG_NOTE_S = 0.050      # a lag past this (or a quarter of the mean gap, not under LAG_FLOOR_S) is said
LAG_FLOOR_S = 0.010
SLO_KEYS = ("ttft", "tpot", "itl", "e2e")


@dataclass(frozen=True)
class Slo:
    """Limits in seconds (None: no limit on that figure) and the share of requests within them
    that makes a rate "within the SLO"."""
    ttft: float | None = None
    tpot: float | None = None
    itl: float | None = None       # every gap of the request (its worst) at most this
    e2e: float | None = None
    share: float = 0.9

    @property
    def given(self) -> bool:
        return any(getattr(self, k) is not None for k in SLO_KEYS)

    def met(self, ttft: float | None, tpot: float | None, itl_max: float | None, e2e: float | None) -> bool:
        for limit, value in ((self.ttft, ttft), (self.tpot, tpot), (self.itl, itl_max), (self.e2e, e2e)):
            if limit is not None and (value is None or value > limit):
                return False
        return True

    def text(self) -> str:
        parts = [f"{k} ≤ {_fmt_s(getattr(self, k))}" for k in SLO_KEYS if getattr(self, k) is not None]
        return ", ".join(parts) + f" for {100 * self.share:g}% of the requests"

    def to_dict(self) -> dict[str, Any]:
        return {"ttft": self.ttft, "tpot": self.tpot, "itl": self.itl, "e2e": self.e2e, "share": self.share}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "Slo":
        d = d or {}
        return cls(*(None if d.get(k) is None else float(d[k]) for k in SLO_KEYS), share=float(d.get("share") or 0.9))


def _fmt_s(x: float) -> str:
    return f"{1000 * x:g} ms" if x < 1 else f"{x:g} s"


def poisson_arrivals(rate: float, n: int, seed: int) -> list[float]:
    """Seconds from the start of each of n arrivals: exponential gaps from one seeded generator
    (the same seed, the same schedule), rescaled so that the n arrivals span exactly (n - 1) /
    rate: a Poisson process conditioned on its count, as `vllm bench serve` rescales its own.
    Unscaled, a 60-request schedule's own rate strays 13% (one sd) from the one asked, and the
    TTFT at "2.2 requests/s" with it. All at 0 for an infinite rate."""
    import random

    if math.isinf(rate):
        return [0.0] * n
    rng = random.Random(f"evalsuite-rate-{seed}-{rate!r}")
    t, out = 0.0, []
    for _ in range(n):
        out.append(t)
        t += rng.expovariate(rate)
    if n > 1 and out[-1] > 0:
        scale = (n - 1) / rate / out[-1]
        out = [x * scale for x in out]
    return out


@dataclass(frozen=True)
class Sent:
    """One request of a rate: when it was due and sent, and what it measured (None: failed)."""
    due: float                 # seconds from the rate's start, by the schedule
    lag: float                 # written less due (seconds): the client behind its schedule
    ok: bool
    ttft: float | None = None
    tpot: float | None = None
    e2e: float | None = None
    tokens: int | None = None
    itls: tuple[float, ...] = ()
    endpoint: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"due": round(self.due, 6), "lag": round(self.lag, 6), "ok": self.ok, "ttft": self.ttft,
                "tpot": self.tpot, "e2e": self.e2e, "tokens": self.tokens, "endpoint": self.endpoint,
                "itl_max": max(self.itls) if self.itls else None}


def _p(values: Sequence[float | None], q: float, scale: float = 1000.0) -> float | None:
    x = percentile(values, q)
    return None if x is None else scale * x


@dataclass(frozen=True)
class RatePoint:
    """One rate: per-request figures summed up in ms (p50 / p90 / p99), goodput and the lag."""
    rate: float
    requests: int
    failed: int
    wall_s: float
    achieved_rate: float | None        # requests sent per second, first to last send
    ttft_ms: tuple[float | None, float | None, float | None]
    itl_ms: tuple[float | None, float | None, float | None]
    tpot_ms: tuple[float | None, float | None, float | None]
    e2e_ms: tuple[float | None, float | None, float | None]
    output_tps: float | None           # tokens of every request / wall time
    good: int | None                   # requests within every SLO (None: no SLO given)
    lag_ms: tuple[float | None, float | None, float | None]   # p50, p99, max
    in_flight: float | None = None     # mean requests open at once
    per_endpoint_ttft_p50_ms: tuple[float | None, ...] = ()
    notes: tuple[str, ...] = ()
    sent: tuple[Mapping[str, Any], ...] = ()

    @property
    def good_share(self) -> float | None:
        return None if self.good is None or not self.requests else self.good / self.requests

    @property
    def goodput(self) -> float | None:
        return None if self.good is None or not self.wall_s else self.good / self.wall_s

    def to_dict(self) -> dict[str, Any]:
        return {"rate": "inf" if math.isinf(self.rate) else self.rate, "requests": self.requests, "failed": self.failed,
                "wall_s": self.wall_s, "achieved_rate": self.achieved_rate, "ttft_ms": list(self.ttft_ms),
                "itl_ms": list(self.itl_ms), "tpot_ms": list(self.tpot_ms), "e2e_ms": list(self.e2e_ms),
                "output_tps": self.output_tps, "good": self.good, "good_share": self.good_share,
                "goodput": self.goodput, "lag_ms": list(self.lag_ms), "in_flight": self.in_flight,
                "per_endpoint_ttft_p50_ms": list(self.per_endpoint_ttft_p50_ms), "notes": list(self.notes),
                "sent": [dict(s) for s in self.sent]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RatePoint":
        def three(key: str) -> tuple:
            v = list(d.get(key) or [None, None, None])
            return tuple(None if x is None else float(x) for x in v[:3])

        rate = math.inf if d.get("rate") in ("inf", None) else float(d["rate"])
        return cls(rate, int(d["requests"]), int(d.get("failed") or 0), float(d.get("wall_s") or 0),
                   None if d.get("achieved_rate") is None else float(d["achieved_rate"]), three("ttft_ms"),
                   three("itl_ms"), three("tpot_ms"), three("e2e_ms"),
                   None if d.get("output_tps") is None else float(d["output_tps"]),
                   None if d.get("good") is None else int(d["good"]), three("lag_ms"),
                   None if d.get("in_flight") is None else float(d["in_flight"]),
                   tuple(d.get("per_endpoint_ttft_p50_ms") or ()), tuple(d.get("notes") or ()),
                   tuple(d.get("sent") or ()))


def rate_point(rate: float, sent: Sequence[Sent], wall_s: float, slo: Slo, endpoints: int = 1,
               in_flight: float | None = None, sends: Sequence[float] = ()) -> RatePoint:
    """One rate's figures from its requests (`sends`: the perf_counter instants they were written)."""
    ok = [s for s in sent if s.ok]
    good = sum(1 for s in ok if slo.met(s.ttft, s.tpot, max(s.itls) if s.itls else None, s.e2e)) if slo.given else None
    achieved = None
    if len(sends) > 1 and max(sends) > min(sends):
        achieved = (len(sends) - 1) / (max(sends) - min(sends))
    tokens = sum(s.tokens or 0 for s in ok)
    itls = [g for s in ok for g in s.itls]
    lags = [s.lag for s in sent]
    notes = []
    gap = 1.0 / rate if not math.isinf(rate) else None
    worst = max(lags) if lags else 0.0
    p99 = percentile(lags, 99) or 0.0
    if p99 > max(LAG_FLOOR_S, min(LAG_NOTE_S, 0.25 * gap if gap is not None else LAG_NOTE_S)):
        notes.append(f"the client fell behind its schedule (lag p99 {1000 * p99:.0f} ms, max {1000 * worst:.0f} ms): "
                     "its late requests went out together, a burst the schedule did not ask for")
    if achieved is not None and not math.isinf(rate) and len(sends) > 10 and \
            abs(achieved / rate - 1) > 2.6 / math.sqrt(len(sends) - 1):
        notes.append(f"sent at {achieved:.2f}/s for {rate:g}/s asked: further than {len(sends)} Poisson arrivals "
                     "stray 99 times in 100 (the schedule, or the client keeping it, is off)")
    if ok and not any(s.tokens for s in ok):
        notes.append("the server sent no usage: no token counts, no TPOT or throughput")
    per_endpoint = ()
    if endpoints > 1:
        per_endpoint = tuple(_p([s.ttft for s in ok if s.endpoint == k], 50) for k in range(endpoints))
    return RatePoint(rate, len(sent), len(sent) - len(ok), wall_s, achieved,
                     tuple(_p([s.ttft for s in ok], q) for q in (50, 90, 99)),
                     tuple(_p(itls, q) for q in (50, 90, 99)),
                     tuple(_p([s.tpot for s in ok], q) for q in (50, 90, 99)),
                     tuple(_p([s.e2e for s in ok], q) for q in (50, 90, 99)),
                     tokens / wall_s if wall_s > 0 and tokens else None, good,
                     (_p(lags, 50), _p(lags, 99), None if not lags else 1000 * worst), in_flight, per_endpoint,
                     tuple(notes), tuple(s.to_dict() for s in sent))


@dataclass(frozen=True)
class LoadSweep:
    """`speed --rate`: one RatePoint per rate, the SLO and what the requests were."""
    points: tuple[RatePoint, ...]
    slo: Slo = field(default_factory=Slo)
    seed: int = 0
    workload: str = ""               # "math pp512 tg128" or "replay FILE (16 turns)"
    endpoints: tuple[str, ...] = ()

    @property
    def knee(self) -> float | None:
        """The highest rate whose share within the SLO reaches slo.share (None: no SLO, or none does)."""
        if not self.slo.given:
            return None
        within = [p.rate for p in self.points if p.good_share is not None and p.good_share >= self.slo.share]
        return max(within) if within else None

    def to_dict(self) -> dict[str, Any]:
        knee = self.knee
        return {"points": [p.to_dict() for p in self.points], "slo": self.slo.to_dict() if self.slo.given else None,
                "knee": "inf" if knee is not None and math.isinf(knee) else knee, "seed": self.seed,
                "workload": self.workload, "endpoints": list(self.endpoints)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "LoadSweep | None":
        if not d:
            return None
        return cls(tuple(RatePoint.from_dict(p) for p in d.get("points") or ()), Slo.from_dict(d.get("slo")),
                   int(d.get("seed") or 0), str(d.get("workload") or ""), tuple(d.get("endpoints") or ()))
