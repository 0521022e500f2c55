"""The figures of one measured test (measure.py's Measured) and its rows.

From each answered request (endpoint.Sample):
- prefill t/s = the prompt tokens the server processed / (TTFT - the measured round trip); the
  processed tokens are usage's prompt_tokens less its cached_tokens, or llama-server's own
  prompt_n where only its timings say what was cached (both sides of the count from one source).
  The prefill ends with the first generated token, not the first chunk (a role chunk comes at once);
- decode t/s = (usage.completion_tokens - 1) / (last token - first token) (where a chunk carries
  several tokens, the usage count is shared out by each chunk's characters: the tokens after
  the first chunk over the same span; the row says how many requests that was);
- at concurrency > 1, two figures named for what they are: the aggregate decode rate (every
  stream's tokens after its first, over the time some stream was decoding: the streams' decode
  rates summed while they decode, llama-benchy's concurrent tg) and the throughput with prefill
  (every stream's tokens over the wall time every stream was busy), each over `runs` windows.

A rate from a span below a floor is flagged, counted in the row (`below_floor`) and left out of
the figure: a prefill shorter than the round trip subtracted from it (or than PREFILL_FLOOR_S),
a decode whose tokens arrived within a few tokens' time (FEW_TOKENS times the test's median
interval: read in one clump by a late client) or within SPAN_FLOOR_S (the clock and the event
loop's wake-ups). A failed request is counted in `failed`, never averaged in. Speculation: the
engine's counters before and after the test, or llama-server's per-response `timings` (which
count our requests only), every figure of the ratio from the same one.
"""
from __future__ import annotations

import statistics
from typing import Any, Sequence

from ..analysis.ttft_parts import combine, of_request, with_server_means
from .endpoint import Sample
from .measure import CLIENT_BOUND, BenchTest, Measured
from .quantile import percentile
from .rows import Acceptance, Row, Stat
from .stats import summarize

NO_COUNTERS = "the server exposes no counters"
PREFILL_FLOOR_S = 0.002   # below this a prefill time is the clock's and the loop's, not the server's
SPAN_FLOOR_S = 0.010      # a decode span shorter than this is a few of a loaded machine's wake-ups
FEW_TOKENS = 3            # a decode span shorter than this many tokens' time: the tokens came in one clump


def prefill_span(s: Sample, latency: float) -> float | None:
    return None if s.ttft is None else s.ttft - latency


def prefill_floor(latency: float) -> float:
    """A prefill must last longer than the round trip subtracted from it (whose own noise is of
    its size) and than the clock's floor."""
    return max(PREFILL_FLOOR_S, latency)


def prefill_rate(s: Sample, latency: float) -> float | None:
    """Processed prompt tokens / (TTFT - round trip); None below the floor, without usage, or with
    nothing processed."""
    seconds, processed = prefill_span(s, latency), s.processed_tokens()
    if seconds is None or processed is None or processed <= 0 or seconds < prefill_floor(latency):
        return None
    return processed / seconds


def _after_first(s: Sample) -> float | None:
    if s.completion_tokens is None or s.completion_tokens < 2 or s.ttft is None or s.last is None:
        return None
    shares = s.chunk_tokens()
    after = s.completion_tokens - max(1.0, shares[0]) if shares else s.completion_tokens - 1
    return after if after > 0 else None


def decode_span(s: Sample) -> float | None:
    return None if s.ttft is None or s.last is None else s.last - s.ttft


def token_interval(samples: Sequence[Sample]) -> float | None:
    """The test's median time per token after the first (the floor's "a token's time")."""
    xs = [span / after for s in samples if (after := _after_first(s)) and (span := decode_span(s)) and span > 0]
    return statistics.median(xs) if xs else None


def decode_floor(s: Sample, interval: float | None) -> float:
    after = _after_first(s) or 0.0
    few = min(FEW_TOKENS, after / 2) * interval if interval else 0.0
    return max(SPAN_FLOOR_S, few)


def decode_rate(s: Sample, interval: float | None = None) -> float | None:
    """(tokens - 1) / (last token - first token); where chunks carry several tokens, the tokens
    after the first chunk (Sample.chunk_tokens) over the same span. None below the floor."""
    after, span = _after_first(s), decode_span(s)
    if after is None or span is None or span <= 0 or span < decode_floor(s, interval):
        return None
    return after / span


def aggregate(samples: Sequence[Sample], start: float, end: float, windows: int) -> Stat | None:
    """Throughput with prefill: tokens of all streams per second of wall time between `start`
    and `end` (perf_counter instants), each window's own rate; None when a request had no usage."""
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


def aggregate_decode(samples: Sequence[Sample], start: float, end: float, windows: int) -> Stat | None:
    """The aggregate decode rate: in each window, every stream's tokens after its first chunk over
    the time some stream was decoding (the union of the requests' first-to-last-token spans):
    the per-stream decode rates summed while they decode, prefill-only time left out."""
    if end <= start or not samples:
        return None
    windows = max(1, windows)
    width = (end - start) / windows
    tokens = [0.0] * windows
    spans = []
    for s in samples:
        if not s.ok:
            continue
        if s.completion_tokens is None or not s.token_times:
            return None
        shares = s.chunk_tokens()
        for t, weight in zip(s.token_times[1:], shares[1:]):
            at = s.started + t
            if start <= at < end:
                tokens[min(windows - 1, int((at - start) / width))] += weight
        if s.ttft is not None and s.last is not None and s.last > s.ttft:
            spans.append((s.started + s.ttft, s.started + s.last))
    spans.sort()
    rates = []
    for k in range(windows):
        lo, hi = start + k * width, start + (k + 1) * width
        busy, reach = 0.0, lo
        for a, b in spans:
            a, b = max(a, reach), min(b, hi)
            if b > a:
                busy += b - a
                reach = b
        if busy > 0.2 * width:     # a window almost without decoding says nothing of its rate
            rates.append(tokens[k] / busy)
    return summarize(rates) if rates else None


def acceptance_of(result: Measured) -> tuple[Acceptance | None, str | None]:
    """Every figure of the acceptance from one source: llama-server's per-response timings (our
    requests only: draft_n, draft_n_accepted, predicted_n) or the /metrics counters' moves during
    the test (drafted, accepted, and the drafting steps or generated tokens as the engine counts them)."""
    timed = [s.timings for s in result.samples if s.ok and isinstance(s.timings, dict) and "draft_n" in s.timings]
    if timed:
        def total(key: str) -> float | None:
            try:
                return sum(float(t[key]) for t in timed)
            except (KeyError, TypeError, ValueError):
                return None
        drafted, accepted = total("draft_n") or 0.0, total("draft_n_accepted") or 0.0
        return Acceptance(drafted, accepted, total("predicted_n"), "timings"), None
    before, after = result.before, result.after
    if before is None or after is None or before.drafted is None or after.drafted is None:
        return None, NO_COUNTERS

    def moved(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else b - a

    drafted, accepted = moved(before.drafted, after.drafted), moved(before.accepted, after.accepted) or 0.0
    if drafted < 0 or accepted < 0:
        return None, "the counters went back during the test (the server restarted)"
    acceptance = Acceptance(drafted, accepted, moved(before.generated, after.generated), "metrics",
                            moved(before.drafts, after.drafts))
    return acceptance, None if drafted > 0 else "no tokens were drafted"


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


def ttft_parts(result: Measured, samples: Sequence[Sample]) -> dict[str, Any] | None:
    """The test's mean TTFT broken down: the client's stamps, and the server's queue and prefill
    from its per-response timings or the moves of its /metrics histograms over the test (means
    per request: the histograms count every request the server saw, ours alone when it served
    only us)."""
    parts = [p for s in samples if (p := of_request({"ttft_s": s.ttft, "first_chunk_s": s.ttfr, **(s.phases or {})},
                                                     s.timings))]
    mean = combine(parts, "mean")
    if mean is None:
        return None
    before, after = result.before, result.after
    if mean.prefill is None and before is not None and after is not None:
        def per_request(part: str) -> float | None:
            a, b = before.histograms.get(part), after.histograms.get(part)
            if a is None or b is None or b[1] - a[1] <= 0:
                return None
            return (b[0] - a[0]) / (b[1] - a[1])
        mean = with_server_means(mean, per_request("queue"), per_request("prefill"), "metrics", per_request("ttft"))
    return mean.to_dict()


def _notes(result: Measured, answered: list[Sample], below_pp: int, below_tg: int) -> list[str]:
    notes = []
    if result.down is not None:
        notes.append(f"partial: the server went away during the test ({result.down})")
    failures = [s.error for s in (*result.loads, *result.samples) if not s.ok and s.error is not None]
    if failures and not result.stopped:   # a failure counted is also said: the first one's kind and message
        notes.append(f"first failure: {failures[0].kind}: {str(failures[0].message)[:200]}")
    if answered and all(s.prompt_tokens is None for s in answered):
        notes.append("the server sent no usage: no token counts, so no rates (never estimated from characters)")
    counted = [s for s in answered if s.completion_tokens]
    shared = [s for s in counted if s.chunks < s.completion_tokens]
    if shared:
        per_chunk = sum(s.completion_tokens for s in shared) / max(1, sum(s.chunks for s in shared))
        notes.append(f"tokens came in bursts in {len(shared)} of {len(counted)} request(s) ({per_chunk:.2f} a chunk): "
                     "decode shares each chunk's tokens out by its characters")
    clumped = sum(1 for s in counted if len(s.token_times) >= 4 and len(set(s.token_times)) < len(s.token_times) / 2)
    if clumped:
        notes.append(f"{clumped} request(s) read in clumps (most chunks arrived in the same read): their decode "
                     "figures are the client's view, not the server's pace")
    if below_pp:
        notes.append(f"{below_pp} prefill(s) below the floor (shorter than the round trip or "
                     f"{1000 * PREFILL_FLOOR_S:g} ms): flagged, left out of the mean")
    if below_tg:
        notes.append(f"{below_tg} decode span(s) below the floor ({FEW_TOKENS} tokens' time or "
                     f"{1000 * SPAN_FLOOR_S:g} ms: tokens read in one clump): flagged, left out of the mean")
    return notes


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
    floor = prefill_floor(latency)
    below_pp = sum(1 for s in answered if (x := prefill_span(s, latency)) is not None and x < floor
                   and s.processed_tokens())
    interval = token_interval(answered)
    decode = [decode_rate(s, interval) for s in answered]
    below_tg = sum(1 for s, r in zip(answered, decode) if r is None and _after_first(s) and decode_span(s) is not None)
    notes = _notes(result, answered, below_pp, below_tg)
    error, partial = result.stopped, result.down is not None
    ttfts = [s.ttft for s in answered]
    prefills = [x for s in answered if (x := prefill_span(s, latency)) is not None and x >= floor]
    times = dict(ttfr_ms=_ms([s.ttfr for s in answered]), ttft_ms=_ms(ttfts),
                 prefill_ms=_ms(prefills) if prefills else None,
                 ttft_p50_ms=None if not answered else 1000 * (percentile(ttfts, 50) or 0),
                 ttft_p99_ms=None if not answered else 1000 * (percentile(ttfts, 99) or 0),
                 ttft_values_ms=tuple(1000 * t for t in ttfts if t is not None),
                 ttft_parts=ttft_parts(result, answered))
    prompt_tokens = [s.prompt_tokens for s in answered if s.prompt_tokens is not None]
    cached = [s.cached_tokens for s in answered if s.cached_tokens is not None]
    sizes = dict(prompt_tokens=sum(prompt_tokens) / len(prompt_tokens) if prompt_tokens else None,
                 cached_tokens=sum(cached) / len(cached) if cached else None)
    rows = []
    if test.cached_mode:
        loads = [s for s in result.loads if s.ok]
        lp = [s.prompt_tokens for s in loads if s.prompt_tokens is not None]
        lc = [s.cached_tokens for s in loads if s.cached_tokens is not None]
        load_prefills = [x for s in loads if (x := prefill_span(s, latency)) is not None and x >= floor]
        rows.append(Row(test="ctx", runs=len(loads), figure=summarize([prefill_rate(s, latency) for s in loads]),
                        prompt_tokens=sum(lp) / len(lp) if lp else None, cached_tokens=sum(lc) / len(lc) if lc else None,
                        ttfr_ms=_ms([s.ttfr for s in loads]), ttft_ms=_ms([s.ttft for s in loads]),
                        prefill_ms=_ms(load_prefills) if load_prefills else None,
                        failed=sum(1 for s in result.loads if not s.ok), error=error, partial=partial,
                        server=_server_figure(loads, "prompt_n", "prompt_ms"), notes=tuple(notes), **common,
                        **client))
    rows.append(Row(test="pp", runs=len(answered), figure=summarize([prefill_rate(s, latency) for s in answered]),
                    failed=failed, error=error, partial=partial, server=_server_figure(answered, "prompt_n", "prompt_ms"),
                    notes=tuple(notes), below_floor=below_pp, **sizes, **times, **common, **client))
    acceptance, why = acceptance_of(result) if answered else (None, None)
    agg = agg_decode = None
    if test.concurrency > 1 and result.stream_ends:
        end = min(result.stream_ends)
        agg = aggregate(result.samples, result.started, end, test.runs)
        agg_decode = aggregate_decode(result.samples, result.started, end, test.runs)
    rows.append(Row(test="tg", runs=len(answered), figure=summarize(decode), failed=failed, error=error,
                    partial=partial, aggregate=agg, aggregate_decode=agg_decode, acceptance=acceptance,
                    acceptance_note=why, server=_server_figure(answered, "predicted_n", "predicted_ms"),
                    notes=tuple(notes), below_floor=below_tg, **sizes, **times, **common, **client))
    return rows


def error_rows(test: BenchTest, message: str) -> list[Row]:
    """A test that could not be measured at all (its prompts could not be made, ...)."""
    common = dict(workload=test.workload, pp=test.pp, tg=test.tg, depth=test.depth, concurrency=test.concurrency,
                  cached_mode=test.cached_mode, runs=0, figure=None, error=message)
    return ([Row(test="ctx", **common)] if test.cached_mode else []) + [Row(test="pp", **common), Row(test="tg", **common)]
