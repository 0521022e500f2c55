"""One run's figures over the compared items: outcome counts per subset, and the reasoning-length
table's (tokens, thinking share, decode speed, time to solution). Pure functions over records."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..store import Run
from .stats import accuracy, mean, median, percentile, wilson

DERIVED_HOW = "derived: completion_tokens × reasoning chars ÷ (reasoning + answer chars)"


# ---------------------------------------------------------------------------- per run


def _usage(record: Mapping[str, Any], key: str) -> float | None:
    value = (record.get("usage") or {}).get(key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _timing(record: Mapping[str, Any], key: str) -> float | None:
    value = (record.get("timing") or {}).get(key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


# ---------------------------------------------------------------------------- time per item

# The one definition of time per item, for every table, verdict and command (compare, report,
# sweep; `evalsuite speed`): per record, the server's own time when every answered record of
# every run compared has it, else the client's request latency. Its words, for the lines:
TIME_PER_ITEM = {
    "server": "the server's own timings (prompt_ms + predicted_ms) per item",
    "client": "timing.total_s per item (request sent to last token, queueing included)",
}


def time_source(record_lists: Sequence[Sequence[Mapping[str, Any]]]) -> str:
    """"server" when every answered record of every one of these runs carries the server's own
    timings, else "client": runs compared are timed alike."""
    answered = [r for records in record_lists for r in records if not is_error(r)]
    return "server" if answered and all(server_seconds(r) is not None for r in answered) else "client"


def item_seconds(record: Mapping[str, Any], source: str) -> float | None:
    """Time per item (TIME_PER_ITEM[source]); None for an errored record or one without it."""
    if is_error(record):
        return None
    return server_seconds(record) if source == "server" else _timing(record, "total_s")


# Decode speed per request, for every table and verdict of pack runs (compare, report, sweep,
# lossless): from the stream's own clock when every answered record of every run compared was
# streamed, else the server's own timings where it sends them (an unstreamed llama-server run:
# `lossless --no-stream`). Its words, for the lines:
DECODE_PER_REQUEST = {
    "stream": "(completion_tokens − 1) ÷ (total_s − ttft_s) per request: first to last streamed token",
    "server": "the server's own timings: predicted_n ÷ predicted_ms per request",
}


def decode_rate(record: Mapping[str, Any]) -> float | None:
    """One request's decode rate from its stream: (completion_tokens − 1) / (total_s − ttft_s),
    the tokens after the first over the time from the first to the end of the stream (which
    follows the last token at once: the finish and usage chunks). Tokens from usage, never
    characters. None for an errored or unstreamed record or one with fewer than 2 tokens."""
    if is_error(record):
        return None
    completion, ttft, total = _usage(record, "completion_tokens"), _timing(record, "ttft_s"), _timing(record, "total_s")
    if completion is None or ttft is None or total is None or total <= ttft or completion < 2:
        return None
    return (completion - 1) / (total - ttft)


def server_decode_rate(record: Mapping[str, Any]) -> float | None:
    """The server's own decode rate for the request (llama-server `timings`: predicted_n tokens
    in predicted_ms, its `predicted_per_second`); None where it sent none."""
    t = record.get("server_timings")
    if is_error(record) or not isinstance(t, Mapping):
        return None
    n, ms = t.get("predicted_n"), t.get("predicted_ms")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (n, ms)) or n < 1 or ms <= 0:
        return None
    return 1000.0 * n / ms


def decode_source(record_lists: Sequence[Sequence[Mapping[str, Any]]]) -> str | None:
    """"stream" when every answered record (2 tokens or more) of these runs has a streamed decode
    rate, else "server" when every one has the server's own, else "stream" when some have one
    (the others are left out of the pairs), else None: the runs carry no decode timings."""
    return decode_rates(record_lists)[0]


def decode_rates(record_lists: Sequence[Sequence[Mapping[str, Any]]]
                 ) -> tuple[str | None, list[list[float | None]]]:
    """decode_source of these runs, and each run's per-record decode rates by it (None where a
    record has none), each record read once per source (a diff of 11,582 items reads them all)."""
    stream = [[decode_rate(r) for r in records] for records in record_lists]
    answered = [(r, v) for records, rates in zip(record_lists, stream) for r, v in zip(records, rates)
                if v is not None or (not is_error(r) and (_usage(r, "completion_tokens") or 0) >= 2)]
    if not answered:
        return None, [[None] * len(records) for records in record_lists]
    if all(v is not None for _, v in answered):
        return "stream", stream
    server = [[server_decode_rate(r) for r in records] for records in record_lists]
    every_server = all(server_decode_rate(r) is not None for r, _ in answered)
    if every_server or not any(v is not None for _, v in answered):
        has_server = every_server or any(v is not None for rates in server for v in rates)
        return ("server", server) if has_server else (None, server)
    return "stream", stream


def item_decode_rate(record: Mapping[str, Any], source: str | None) -> float | None:
    """Decode t/s of one record by DECODE_PER_REQUEST[source]; None without it."""
    if source == "server":
        return server_decode_rate(record)
    return decode_rate(record) if source == "stream" else None


@dataclass(frozen=True)
class PairedRatio:
    """B against A on the same items, paired: the geometric mean of the per-item ratios b_i / a_i
    with its (1 - alpha) interval (Student-t on the mean log ratio), and the paired t-test on the
    log ratios (two-sided; the interval excludes 1 exactly when p < alpha)."""

    what: str                     # "time per item" or "decode speed"
    n: int                        # items with the figure on both sides
    ratio: float
    low: float
    high: float
    p: float
    alpha: float

    @property
    def significant(self) -> bool:
        return self.p < self.alpha

    def interval(self) -> str:
        return f"×{self.ratio:.2f} [{self.low:.2f}, {self.high:.2f}]"

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "n_items": self.n, "ratio": self.ratio, "ci": [self.low, self.high],
                "confidence": 1 - self.alpha, "p": self.p, "alpha": self.alpha, "significant": self.significant,
                "method": PAIRED_RATIO_METHOD}


PAIRED_RATIO_METHOD = ("geometric mean of the per-item ratios over the paired items, Student-t interval of the mean "
                       "log ratio, paired t-test on the log ratios")


def paired_ratio(what: str, a: Sequence[float | None], b: Sequence[float | None], alpha: float = 0.05
                 ) -> PairedRatio | None:
    """PairedRatio over the items where both values are there and positive; None under 2 items."""
    import math

    from .stats import t_quantile, t_two_sided_p

    logs = [math.log(y / x) for x, y in zip(a, b) if x is not None and y is not None and x > 0 and y > 0]
    n = len(logs)
    if n < 2:
        return None
    m = sum(logs) / n
    sd = math.sqrt(sum((v - m) ** 2 for v in logs) / (n - 1))
    if sd == 0:
        p, half = (1.0 if m == 0 else 0.0), 0.0
    else:
        se = sd / math.sqrt(n)
        p, half = t_two_sided_p(m / se, n - 1), t_quantile(n - 1, 1 - alpha / 2) * se
    return PairedRatio(what, n, math.exp(m), math.exp(m - half), math.exp(m + half), p, alpha)


def paired_speed(a: Mapping[str, Mapping[str, Any]], b: Mapping[str, Mapping[str, Any]], ids: Sequence[str],
                 source: str, alpha: float = 0.05, decode_from: str | None = "stream"
                 ) -> tuple[PairedRatio | None, PairedRatio | None]:
    """(time per item, decode speed) of run b against run a on these items (records by id); the
    decode rate by DECODE_PER_REQUEST[decode_from] (one source for both runs: decode_source)."""
    time = paired_ratio("time per item", [item_seconds(a[i], source) for i in ids],
                        [item_seconds(b[i], source) for i in ids], alpha)
    decode = paired_decode(a, b, ids, decode_from, alpha)
    return time, decode


def paired_tokens(a: Mapping[str, Mapping[str, Any]], b: Mapping[str, Mapping[str, Any]], ids: Sequence[str],
                  alpha: float = 0.05) -> PairedRatio | None:
    """Completion tokens per item of run b against run a, from the servers' `usage`: the paired ratio
    over the items both answered with a count (the reasoning length a quant or a setting changes)."""
    return paired_ratio("completion tokens", [_usage(a[i], "completion_tokens") for i in ids],
                        [_usage(b[i], "completion_tokens") for i in ids], alpha)


def paired_decode(a: Mapping[str, Mapping[str, Any]], b: Mapping[str, Mapping[str, Any]], ids: Sequence[str],
                  decode_from: str | None, alpha: float = 0.05) -> PairedRatio | None:
    """The decode speed-up of run b over run a on the same requests: the paired ratio of the
    per-request decode rates over the items both answered with a rate (None under 2 of them)."""
    if decode_from is None:
        return None
    return paired_ratio("decode speed", [item_decode_rate(a[i], decode_from) for i in ids],
                        [item_decode_rate(b[i], decode_from) for i in ids], alpha)


def server_seconds(record: Mapping[str, Any]) -> float | None:
    """The server's own time for the item (llama-server `timings`: prompt + predicted ms), which
    unlike the client's latency does not grow with the run's concurrency or queueing."""
    t = record.get("server_timings")
    if not isinstance(t, Mapping):
        return None
    parts = [t.get("prompt_ms"), t.get("predicted_ms")]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in parts):
        return None
    return (parts[0] + parts[1]) / 1000.0


def is_error(record: Mapping[str, Any]) -> bool:
    return record.get("outcome") == "error"


def is_correct(record: Mapping[str, Any]) -> bool:
    return record.get("outcome") == "correct"


def reasoning_tokens_of(record: Mapping[str, Any]) -> tuple[float | None, str]:
    """(reasoning tokens, "server" | "derived" | "none") for one record.

    The server's usage.reasoning_tokens when given. Otherwise derived from the text: the
    reasoning's share of the characters of reasoning + answer, applied to completion_tokens
    (characters per token are about the same in both parts). No reasoning text: 0.
    """
    given = _usage(record, "reasoning_tokens")
    if given is not None:
        return float(given), "server"
    completion = _usage(record, "completion_tokens")
    if completion is None:
        return None, "none"
    reasoning_chars = len(record.get("reasoning") or "")
    answer_chars = len(record.get("answer") or "")
    if reasoning_chars == 0:
        return 0.0, "none"
    return completion * reasoning_chars / (reasoning_chars + answer_chars), "derived"


@dataclass(frozen=True)
class SubsetStats:
    subset: str
    n: int
    n_correct: int
    n_errors: int

    @property
    def accuracy(self) -> float | None:
        return accuracy(self.n_correct, self.n, self.n_errors)


@dataclass(frozen=True)
class TokenStats:
    """The reasoning-length figures of one run over the compared items (errors left out)."""

    n_with_usage: int
    usage_missing: int
    out_mean: float | None
    out_median: float | None
    out_p90: float | None
    out_total: float
    reasoning_mean: float | None
    thinking_share: float | None        # reasoning tokens / completion tokens, over items with both
    reasoning_source: str               # "server", "derived", "mixed" or "none"
    reasoning_how: str                  # the sentence the table prints
    truncation_rate: float | None
    ttft_median: float | None
    decode_tps: float | None            # Σ completion_tokens / Σ (total_s − ttft_s)
    tts_median: float | None            # time-to-solution per item: the server's timings when every
    tts_mean: float | None              # answered record has them, else timing.total_s
    tts_total: float | None
    correct_per_1k: float | None        # correct answers per 1,000 output tokens
    completion_tokens: tuple[float, ...] = field(repr=False, default=())
    tts_source: str = "client"          # "server" (server timings) or "client" (request latency)
    decode_median: float | None = None  # median per-request decode t/s (DECODE_PER_REQUEST[decode_source])
    decode_source: str | None = None    # "stream", "server", or None: no decode timings
    n_decode: int = 0                   # requests with a decode rate


def token_stats(records: Sequence[Mapping[str, Any]], server_time: bool = True, decode_from: str | None = "auto"
                ) -> TokenStats:
    """`server_time`: time-to-solution from the server's timings when every answered record has
    them (compare turns it off unless every run has them, so runs are timed alike).
    `decode_from`: the per-request decode rate's source ("auto": decode_source of these records;
    compare gives the one of all its runs)."""
    answered = [r for r in records if not is_error(r)]
    completions = [c for c in (_usage(r, "completion_tokens") for r in answered) if c is not None]
    reasoning_pairs: list[tuple[float, float]] = []   # (reasoning, completion) per item
    sources = {"server": 0, "derived": 0, "none": 0}
    for r in answered:
        tokens, source = reasoning_tokens_of(r)
        completion = _usage(r, "completion_tokens")
        if tokens is None or completion is None:
            continue
        sources[source] += 1
        reasoning_pairs.append((tokens, completion))
    if sources["server"] and sources["derived"]:
        source, how = "mixed", f"server usage for {sources['server']} items, {DERIVED_HOW} for {sources['derived']}"
    elif sources["server"]:
        source, how = "server", "server usage.reasoning_tokens"
    elif sources["derived"]:
        source, how = "derived", DERIVED_HOW
    else:
        source, how = "none", "none: no reasoning in the records"
    reasoning_total = sum(t for t, _ in reasoning_pairs)
    reasoning_completion = sum(c for _, c in reasoning_pairs)
    decode_tokens = decode_seconds = 0.0
    for r in answered:
        completion, ttft, total = _usage(r, "completion_tokens"), _timing(r, "ttft_s"), _timing(r, "total_s")
        if completion is not None and ttft is not None and total is not None and total > ttft:
            decode_tokens += completion
            decode_seconds += total - ttft
    tts_source = time_source([answered]) if server_time else "client"
    totals = [t for t in (item_seconds(r, tts_source) for r in answered) if t is not None]
    ttfts = [t for t in (_timing(r, "ttft_s") for r in answered) if t is not None]
    truncated = sum(1 for r in answered if r.get("outcome") == "truncated" or r.get("finish_reason") == "length")
    correct_with_tokens = sum(1 for r in answered if is_correct(r) and _usage(r, "completion_tokens") is not None)
    out_total = float(sum(completions))
    if decode_from == "auto":
        decode_from = decode_source([answered])
    rates = [v for v in (item_decode_rate(r, decode_from) for r in answered) if v is not None]
    return TokenStats(
        n_with_usage=len(completions),
        usage_missing=len(answered) - len(completions),
        out_mean=mean(completions),
        out_median=median(completions),
        out_p90=percentile(completions, 90),
        out_total=out_total,
        reasoning_mean=reasoning_total / len(reasoning_pairs) if reasoning_pairs else None,
        thinking_share=reasoning_total / reasoning_completion if reasoning_completion else None,
        reasoning_source=source,
        reasoning_how=how,
        truncation_rate=truncated / len(answered) if answered else None,
        ttft_median=median(ttfts),
        decode_tps=decode_tokens / decode_seconds if decode_seconds else None,
        tts_median=median(totals),
        tts_mean=mean(totals),
        tts_total=sum(totals) if totals else None,
        correct_per_1k=1000 * correct_with_tokens / out_total if out_total else None,
        completion_tokens=tuple(completions),
        tts_source=tts_source,
        decode_median=median(rates),
        decode_source=decode_from if rates else None,
        n_decode=len(rates),
    )


@dataclass(frozen=True)
class RunStats:
    name: str
    path: str
    n: int
    n_correct: int
    n_wrong: int
    n_unextracted: int
    n_truncated: int
    n_errors: int
    subsets: tuple[SubsetStats, ...]
    tokens: TokenStats
    n_looped: int = 0                   # truncated records with a repeated tail (analysis/loops.py)
    looped_tokens: float = 0.0          # their completion tokens

    @property
    def graded(self) -> int:
        return self.n - self.n_errors

    @property
    def accuracy(self) -> float | None:
        """correct / (items − errors), as docs/records.md defines it."""
        return accuracy(self.n_correct, self.n, self.n_errors)

    @property
    def ci95(self) -> tuple[float, float]:
        return wilson(self.n_correct, self.graded)

    @property
    def time_per_correct(self) -> float | None:
        """Seconds per correct answer: the run's total time per item (TIME_PER_ITEM, over its
        answered items) ÷ its correct answers; None without timings or correct answers."""
        total = self.tokens.tts_total
        return total / self.n_correct if total is not None and self.n_correct else None

    def subset(self, name: str) -> SubsetStats | None:
        return next((s for s in self.subsets if s.subset == name), None)


def run_stats(run: Run, ids: Sequence[str], name: str | None = None, server_time: bool = True,
              decode_from: str | None = "auto") -> RunStats:
    by_id = run.by_id
    records = [by_id[i] for i in ids]
    outcomes = [r.get("outcome") for r in records]
    counts: dict[str, list[int]] = {}          # subset -> [n, correct, errors], in one pass
    for r in records:
        c = counts.setdefault(str(r.get("subset")), [0, 0, 0])
        c[0] += 1
        c[1] += is_correct(r)
        c[2] += is_error(r)
    subsets = tuple(SubsetStats(subset=s, n=n, n_correct=correct, n_errors=errors)
                    for s, (n, correct, errors) in sorted(counts.items()))
    return RunStats(
        name=name or run.name,
        path=str(run.path),
        n=len(records),
        n_correct=outcomes.count("correct"),
        n_wrong=outcomes.count("wrong"),
        n_unextracted=outcomes.count("unextracted"),
        n_truncated=outcomes.count("truncated"),
        n_errors=outcomes.count("error"),
        subsets=subsets,
        tokens=token_stats(records, server_time, decode_from),
        **_looped_counts(records),
    )


def _looped_counts(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    from .loops import is_looped

    looped = [r for r in records if r.get("outcome") == "truncated" and is_looped(r)]
    return {"n_looped": len(looped), "looped_tokens": float(sum(_usage(r, "completion_tokens") or 0 for r in looped))}
