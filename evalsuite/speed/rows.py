"""What a speed profile measured, as typed values: a figure over the runs (`Stat`), the acceptance
of speculative decoding (`Acceptance`), one row of the table (`Row`), a soak (`Soak`) and the whole
profile (`Profile`), each frozen, each with `to_dict` / `from_dict`. The JSON file is
`Profile.to_dict()`; `read_profile` / `write_profile` are its only reader and writer, so the
compare of two profiles and the pages read nothing but this (no endpoint, no run machinery).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from .load_rows import LoadSweep
from .quantile import finite, percentile  # noqa: F401  (finite: the room's one, read from here too)
from .replay_rows import Replay

KIND = "evalsuite.speed"
SCHEMA = 1
MAX_PROFILE_BYTES = 64 << 20


class ProfileError(ValueError):
    """A file that is not a readable speed profile; the message names it and says why."""


def _f(x: Any) -> float | None:
    return None if x is None else float(x)


@dataclass(frozen=True)
class Stat:
    """A figure over the runs: mean, sample standard deviation, the Student-t 95% interval of
    the mean (None with fewer than two values), and the values themselves."""
    mean: float | None
    std: float | None
    ci95: tuple[float, float] | None
    values: tuple[float, ...] = ()

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def min(self) -> float | None:
        return min(self.values) if self.values else None

    @property
    def max(self) -> float | None:
        return max(self.values) if self.values else None

    @property
    def median(self) -> float | None:
        return percentile(self.values, 50)

    @property
    def p10(self) -> float | None:
        return percentile(self.values, 10)

    @property
    def p90(self) -> float | None:
        return percentile(self.values, 90)

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "std": self.std, "ci95": list(self.ci95) if self.ci95 else None,
                "median": self.median, "p10": self.p10, "p90": self.p90,
                "min": self.min, "max": self.max, "values": list(self.values)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "Stat | None":
        if not d:
            return None
        ci = d.get("ci95")
        return cls(_f(d.get("mean")), _f(d.get("std")), (float(ci[0]), float(ci[1])) if ci else None,
                   tuple(float(v) for v in d.get("values") or ()))


@dataclass(frozen=True)
class Acceptance:
    """Speculative decoding during one test, every figure from one source: the engine's /metrics
    counters before and after the test ("metrics") or its per-response timings ("timings").
    rate: accepted / drafted tokens. mean_length: tokens generated per step of the target model:
    1 + accepted / drafting steps where the engine counts the steps (vLLM's num_drafts: its own
    "mean acceptance length"), else tokens / (tokens - accepted) with the tokens counted by the same
    source (the engine's generated-token counter, or the timings' predicted_n); None when that
    source does not count them. Never the client's usage against server-wide counters: a ratio of
    two sources blows up when other traffic moves one of them."""
    drafted: float
    accepted: float
    tokens: float | None        # tokens generated, counted by the same source; None: it does not count them
    source: str                 # "metrics" (the /metrics counters before and after) or "timings" (per response)
    drafts: float | None = None     # drafting steps (vLLM's spec_decode_num_drafts), same source

    @property
    def rate(self) -> float | None:
        return self.accepted / self.drafted if self.drafted > 0 else None

    @property
    def mean_length(self) -> float | None:
        if self.drafted <= 0:
            return None
        if self.drafts:
            return 1 + self.accepted / self.drafts
        if self.tokens is None:
            return None
        steps = self.tokens - self.accepted
        return self.tokens / steps if steps > 0 else None

    def to_dict(self) -> dict[str, Any]:
        return {"rate": self.rate, "mean_length": self.mean_length, "drafted": self.drafted,
                "accepted": self.accepted, "tokens": self.tokens, "drafts": self.drafts, "source": self.source}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "Acceptance | None":
        if not d:
            return None
        return cls(float(d["drafted"]), float(d["accepted"]), _f(d.get("tokens")), str(d.get("source", "metrics")),
                   _f(d.get("drafts")))


@dataclass(frozen=True)
class Row:
    """One line of the table: the prefill ("pp") or decode ("tg") figure of one test, or the
    context load ("ctx") of a --prefix-cache test. A test is one (workload, pp, tg, depth,
    concurrency): `runs` requests per stream through `concurrency` streams kept full."""
    test: str                    # "pp", "tg" or "ctx"
    workload: str
    pp: int
    tg: int
    depth: int
    concurrency: int
    runs: int                    # requests measured (answered); failures are counted apart
    figure: Stat | None          # t/s: prefill (pp, ctx) or per-request decode (tg)
    unit: str = "t/s"
    cached_mode: bool = False    # --prefix-cache: the prompt over a context loaded before
    prompt_tokens: float | None = None     # mean usage.prompt_tokens (None: the server sent no usage)
    cached_tokens: float | None = None     # mean usage.prompt_tokens_details.cached_tokens, where reported
    ttfr_ms: float | None = None           # to the first chunk, whatever it holds
    ttft_ms: float | None = None           # to the first content or reasoning token
    prefill_ms: float | None = None        # TTFT less the measured round trip
    ttft_p50_ms: float | None = None
    ttft_p99_ms: float | None = None
    ttft_values_ms: tuple[float, ...] = ()  # each request's TTFT (for comparing two profiles)
    aggregate: Stat | None = None          # tg at c > 1: throughput with prefill, all streams' tokens / wall time
    aggregate_decode: Stat | None = None   # tg at c > 1: tokens after each first, summed over the streams while they decode
    failed: int = 0
    acceptance: Acceptance | None = None
    acceptance_note: str | None = None     # why there is none ("the server exposes no counters")
    server: Stat | None = None             # the same figure from the server's own per-response timings
    client_cpu_us_per_token: float | None = None
    client_busy: float | None = None       # share of the wall time the client's loop wanted a CPU
    client_bound: bool = False
    partial: bool = False                  # the server went away during the test
    error: str | None = None               # why the test has no figure (a 400 past the context, ...)
    notes: tuple[str, ...] = ()
    below_floor: int = 0                   # requests whose span was below the floor: flagged, left out of `figure`
    ttft_parts: Mapping[str, Any] | None = None   # the TTFT broken down (analysis/ttft_parts.py), means in ms

    @property
    def name(self) -> str:
        """The test as llama-bench / llama-benchy write it: pp512 @ d4096, tg128 @ d4096 c4."""
        if self.test == "ctx":
            head = f"ctx_load @ d{self.depth}"
        else:
            head = f"{self.test}{self.pp if self.test == 'pp' else self.tg}" + (f" @ d{self.depth}" if self.depth else "")
        if self.cached_mode and self.test != "ctx":
            head += " (cached)"
        return head + (f" c{self.concurrency}" if self.concurrency > 1 else "")

    @property
    def key(self) -> tuple:
        """What pairs a row of one profile with the same row of another."""
        return (self.workload, self.test, self.pp, self.tg, self.depth, self.concurrency, self.cached_mode)

    @property
    def mean(self) -> float | None:
        return self.figure.mean if self.figure else None

    def to_dict(self) -> dict[str, Any]:
        f = self.figure
        out: dict[str, Any] = {
            "test": self.test, "name": self.name, "workload": self.workload, "pp": self.pp, "tg": self.tg,
            "depth": self.depth, "concurrency": self.concurrency, "cached_mode": self.cached_mode, "runs": self.runs,
            "mean": f.mean if f else None, "std": f.std if f else None,
            "ci95": list(f.ci95) if f and f.ci95 else None, "values": list(f.values) if f else [],
            "unit": self.unit, "prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens,
            "ttfr_ms": self.ttfr_ms, "ttft_ms": self.ttft_ms, "prefill_ms": self.prefill_ms,
            "ttft_p50_ms": self.ttft_p50_ms, "ttft_p99_ms": self.ttft_p99_ms,
            "ttft_values_ms": list(self.ttft_values_ms),
            "aggregate": self.aggregate.to_dict() if self.aggregate else None,
            "aggregate_decode": self.aggregate_decode.to_dict() if self.aggregate_decode else None,
            "median": f.median if f else None, "p10": f.p10 if f else None, "p90": f.p90 if f else None,
            "below_floor": self.below_floor, "ttft_parts": dict(self.ttft_parts) if self.ttft_parts else None,
            "failed": self.failed,
            "acceptance": self.acceptance.to_dict() if self.acceptance else None,
            "acceptance_note": self.acceptance_note,
            "server": self.server.to_dict() if self.server else None,
            "client": {"cpu_us_per_token": self.client_cpu_us_per_token, "busy": self.client_busy,
                       "bound": self.client_bound},
            "partial": self.partial, "error": self.error, "notes": list(self.notes),
        }
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Row":
        ci = d.get("ci95")
        figure = None
        if d.get("mean") is not None or d.get("values"):
            figure = Stat(_f(d.get("mean")), _f(d.get("std")), (float(ci[0]), float(ci[1])) if ci else None,
                          tuple(float(v) for v in d.get("values") or ()))
        client = d.get("client") or {}
        return cls(
            test=str(d["test"]), workload=str(d.get("workload", "math")), pp=int(d["pp"]), tg=int(d["tg"]),
            depth=int(d["depth"]), concurrency=int(d["concurrency"]), runs=int(d.get("runs") or 0), figure=figure,
            unit=str(d.get("unit", "t/s")), cached_mode=bool(d.get("cached_mode")),
            prompt_tokens=_f(d.get("prompt_tokens")), cached_tokens=_f(d.get("cached_tokens")),
            ttfr_ms=_f(d.get("ttfr_ms")), ttft_ms=_f(d.get("ttft_ms")), prefill_ms=_f(d.get("prefill_ms")),
            ttft_p50_ms=_f(d.get("ttft_p50_ms")), ttft_p99_ms=_f(d.get("ttft_p99_ms")),
            ttft_values_ms=tuple(float(v) for v in d.get("ttft_values_ms") or ()),
            aggregate=Stat.from_dict(d.get("aggregate")), aggregate_decode=Stat.from_dict(d.get("aggregate_decode")),
            below_floor=int(d.get("below_floor") or 0), ttft_parts=d.get("ttft_parts") or None,
            failed=int(d.get("failed") or 0),
            acceptance=Acceptance.from_dict(d.get("acceptance")), acceptance_note=d.get("acceptance_note"),
            server=Stat.from_dict(d.get("server")), client_cpu_us_per_token=_f(client.get("cpu_us_per_token")),
            client_busy=_f(client.get("busy")), client_bound=bool(client.get("bound")),
            partial=bool(d.get("partial")), error=d.get("error"), notes=tuple(str(n) for n in d.get("notes") or ()),
        )


@dataclass(frozen=True)
class Soak:
    """`--duration`: one concurrency held for that long on pack prompts. A window in which the
    server was down (requests failed and no token came) is a gap (None), never a zero averaged
    in; a request cut at the end counts the tokens it had streamed."""
    duration_s: float
    concurrency: int
    tg: int
    requests: int
    failed: int
    restarts: int
    window_s: float
    series: tuple[tuple[float, float | None], ...]   # (seconds from the start, t/s in the window ending there; None: down)
    tokens: int
    cut: int = 0                     # requests still running at the end: cut, their streamed tokens counted
    notes: tuple[str, ...] = ()

    @property
    def aggregate(self) -> Stat:
        """The windows' aggregate t/s while the server was up: mean, min and max over time (no
        interval: windows follow each other)."""
        values = tuple(v for _, v in self.series if v is not None)
        return Stat(sum(values) / len(values) if values else None, None, None, values)

    @property
    def down_windows(self) -> int:
        return sum(1 for _, v in self.series if v is None)

    def to_dict(self) -> dict[str, Any]:
        agg = self.aggregate
        return {"duration_s": self.duration_s, "concurrency": self.concurrency, "tg": self.tg,
                "requests": self.requests, "failed": self.failed, "restarts": self.restarts, "tokens": self.tokens,
                "cut": self.cut, "window_s": self.window_s,
                "aggregate": {"mean": agg.mean, "median": agg.median, "p10": agg.p10, "p90": agg.p90, "min": agg.min,
                              "max": agg.max},
                "down_windows": self.down_windows, "series": [list(p) for p in self.series], "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "Soak | None":
        if not d:
            return None
        return cls(float(d["duration_s"]), int(d["concurrency"]), int(d.get("tg") or 0), int(d["requests"]),
                   int(d["failed"]), int(d.get("restarts") or 0), float(d.get("window_s") or 0),
                   tuple((float(t), _f(v)) for t, v in d.get("series") or ()), int(d.get("tokens") or 0),
                   int(d.get("cut") or 0), tuple(str(n) for n in d.get("notes") or ()))


@dataclass(frozen=True)
class Profile:
    """A whole `evalsuite speed` profile of one endpoint."""
    model: str
    endpoint: str
    rows: tuple[Row, ...]
    status: str = "finished"            # "finished", "partial" (the server went away) or "interrupted"
    engine: str | None = None
    label: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    latency_ms: float | None = None     # the round trip subtracted from each TTFT
    token_counts: str | None = None     # how prompts were sized: "/tokenize" or "usage"
    settings: Mapping[str, Any] = field(default_factory=dict)
    soak: Soak | None = None
    server_restarts: tuple[Mapping[str, Any], ...] = ()
    notes: tuple[str, ...] = ()
    argv: tuple[str, ...] = ()
    load: LoadSweep | None = None       # `--rate`: one point per arrival rate
    replay: Replay | None = None        # `--replay`, `--session`: a session's turns

    def with_rows(self, rows: Iterable[Row]) -> "Profile":
        return replace(self, rows=tuple(rows))

    @property
    def workloads(self) -> list[str]:
        return list(dict.fromkeys(r.workload for r in self.rows))

    def to_dict(self) -> dict[str, Any]:
        from .. import __version__

        return {"kind": KIND, "schema": SCHEMA, "suite_version": __version__, "model": self.model,
                "endpoint": self.endpoint, "engine": self.engine, "label": self.label, "status": self.status,
                "started_at": self.started_at, "ended_at": self.ended_at, "latency_ms": self.latency_ms,
                "token_counts": self.token_counts, "settings": dict(self.settings),
                "rows": [r.to_dict() for r in self.rows], "soak": self.soak.to_dict() if self.soak else None,
                "server_restarts": [dict(e) for e in self.server_restarts], "notes": list(self.notes),
                "argv": list(self.argv), "load": self.load.to_dict() if self.load else None,
                "replay": self.replay.to_dict() if self.replay else None}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Profile":
        return cls(model=str(d.get("model") or "?"), endpoint=str(d.get("endpoint") or "?"),
                   rows=tuple(Row.from_dict(r) for r in d.get("rows") or ()), status=str(d.get("status") or "finished"),
                   engine=d.get("engine"), label=d.get("label"), started_at=d.get("started_at"),
                   ended_at=d.get("ended_at"), latency_ms=_f(d.get("latency_ms")), token_counts=d.get("token_counts"),
                   settings=dict(d.get("settings") or {}), soak=Soak.from_dict(d.get("soak")),
                   server_restarts=tuple(d.get("server_restarts") or ()), notes=tuple(d.get("notes") or ()),
                   argv=tuple(d.get("argv") or ()), load=LoadSweep.from_dict(d.get("load")),
                   replay=Replay.from_dict(d.get("replay")))

    @property
    def name(self) -> str:
        return self.label or self.model


def is_profile_file(path: str | Path) -> bool:
    """Whether `path` is a speed profile's JSON (cheap: reads its first bytes)."""
    p = Path(path)
    if p.suffix.lower() != ".json" or not p.is_file():
        return False
    try:
        with open(p, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return f'"kind": "{KIND}"'.encode() in head or f'"kind":"{KIND}"'.encode() in head


def read_profile(path: str | Path) -> Profile:
    p = Path(path)
    try:
        if p.stat().st_size > MAX_PROFILE_BYTES:
            raise ProfileError(f"{p}: {p.stat().st_size:,} bytes, more than a speed profile holds")
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise ProfileError(f"{p}: {e.strerror or e}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ProfileError(f"{p} is not JSON ({e})") from None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise ProfileError(f"{p} is not a speed profile (no \"kind\": \"{KIND}\"; `evalsuite speed --json FILE` writes one)")
    if int(data.get("schema") or 0) > SCHEMA:
        raise ProfileError(f"{p} has schema {data.get('schema')}, newer than this evalsuite reads ({SCHEMA})")
    try:
        return Profile.from_dict(data)
    except (KeyError, TypeError, ValueError) as e:
        raise ProfileError(f"{p}: a row or field cannot be read ({type(e).__name__}: {e})") from None


def write_profile(path: str | Path, profile: Profile) -> None:
    from ..store import write_json_atomic

    write_json_atomic(Path(path), profile.to_dict())
