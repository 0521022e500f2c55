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


def token_stats(records: Sequence[Mapping[str, Any]], server_time: bool = True) -> TokenStats:
    """`server_time`: time-to-solution from the server's timings when every answered record has
    them (compare turns it off unless every run has them, so runs are timed alike)."""
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
    server = [server_seconds(r) for r in answered]
    tts_source = "server" if server_time and answered and all(t is not None for t in server) else "client"
    totals = ([t for t in server if t is not None] if tts_source == "server"
              else [t for t in (_timing(r, "total_s") for r in answered) if t is not None])
    ttfts = [t for t in (_timing(r, "ttft_s") for r in answered) if t is not None]
    truncated = sum(1 for r in answered if r.get("outcome") == "truncated" or r.get("finish_reason") == "length")
    correct_with_tokens = sum(1 for r in answered if is_correct(r) and _usage(r, "completion_tokens") is not None)
    out_total = float(sum(completions))
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

    def subset(self, name: str) -> SubsetStats | None:
        return next((s for s in self.subsets if s.subset == name), None)


def run_stats(run: Run, ids: Sequence[str], name: str | None = None, server_time: bool = True) -> RunStats:
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
        tokens=token_stats(records, server_time),
        **_looped_counts(records),
    )


def _looped_counts(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    from .loops import is_looped

    looped = [r for r in records if r.get("outcome") == "truncated" and is_looped(r)]
    return {"n_looped": len(looped), "looped_tokens": float(sum(_usage(r, "completion_tokens") or 0 for r in looped))}
