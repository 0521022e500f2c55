"""Compare finished runs on the same items: accuracy, paired tests, reasoning length, sweeps.

`evalsuite compare RUN_A RUN_B [RUN_C ...]` prints, in order: the item check, accuracy with
Wilson intervals and an exact McNemar test of each run against the first, per-subset
deltas, the reasoning-length table (tokens, thinking share, speed, time-to-solution) and a
one-line verdict. `--sweep KEY` adds one table of all runs in the order of a setting.

Reads run folders only (docs/records.md); never calls an endpoint. See docs/compare.md.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..store import Run, bulky, load_run
from .stats import McNemar, accuracy, mcnemar_exact, mean, median, percentile, wilson
from .stats import Equivalence, equivalence

DERIVED_HOW = "derived: completion_tokens × reasoning chars ÷ (reasoning + answer chars)"


class CompareError(ValueError):
    """Runs that cannot be compared (no items in common, a sweep key a run lacks, ...)."""


# ---------------------------------------------------------------------------- items


@dataclass(frozen=True)
class Alignment:
    """Which items the comparison uses, and why not all of them."""

    ids: tuple[str, ...]            # compared ids, in the first run's order
    same_items: bool                # one fingerprint and every run has a record for every item
    notes: tuple[str, ...] = ()     # sentences saying what was left out and why


def _fingerprint(run: Run) -> str | None:
    return (run.manifest.get("dataset") or {}).get("fingerprint")


def align(runs: Sequence[Run]) -> Alignment:
    """The ids every run has a record for. Different fingerprints (different item sets)
    give their intersection, and a note says so; so do missing records (an unfinished run)
    and ids whose gold answer differs between runs (not the same question after all)."""
    if not runs:
        raise CompareError("no runs to compare")
    notes: list[str] = []
    fingerprints = [_fingerprint(r) for r in runs]
    same_fingerprint = None not in fingerprints and len(set(fingerprints)) == 1
    if not same_fingerprint:
        described = ", ".join(f"{r.name}: {(f or 'none')[:12]} ({len(r.records)} records)"
                              for r, f in zip(runs, fingerprints))
        notes.append(f"different item sets (fingerprints {described})")
    by_id = [r.by_id for r in runs]
    common = [i for i in by_id[0] if all(i in ids for ids in by_id[1:])]
    if same_fingerprint:
        for run, ids in zip(runs, by_id):
            expected = run.manifest.get("item_ids") or list(ids)
            missing = sum(1 for i in expected if i not in ids)
            if missing:
                notes.append(f"{run.name} has no record for {missing} of its {len(expected)} items "
                             f"(status {run.manifest.get('status', '?')})")
    gold_differs = [i for i in common if len({str(b[i].get("gold")) for b in by_id}) > 1]
    if gold_differs:
        notes.append(f"{len(gold_differs)} shared ids have different gold answers and are left out "
                     f"(e.g. {gold_differs[0]})")
        skip = set(gold_differs)
        common = [i for i in common if i not in skip]
    if not common:
        raise CompareError("the runs have no items in common: " + "; ".join(notes or ["no records"]))
    if notes and (not same_fingerprint or len(common) < max(len(b) for b in by_id)):
        notes.append(f"comparing the {len(common)} items all runs share")
    return Alignment(ids=tuple(common), same_items=same_fingerprint and not notes, notes=tuple(notes))


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


# ---------------------------------------------------------------------------- pairs


@dataclass(frozen=True)
class Paired:
    """Run B against run A (the first run) on the items neither errored on."""

    a: str
    b: str
    mcnemar: McNemar
    errors_excluded: int                # items that errored in A or B
    acc_a: float | None                 # accuracy of each run on the paired items
    acc_b: float | None
    both_correct_with_tokens: int
    token_ratio_total: float | None     # Σ tokens B / Σ tokens A on items both got right
    token_ratio_median: float | None    # median per-item B/A on those items

    @property
    def delta_pp(self) -> float | None:
        if self.acc_a is None or self.acc_b is None:
            return None
        return 100 * (self.acc_b - self.acc_a)


def paired(run_a: Run, run_b: Run, ids: Sequence[str], name_a: str, name_b: str) -> Paired:
    a_by_id, b_by_id = run_a.by_id, run_b.by_id
    usable = [i for i in ids if not is_error(a_by_id[i]) and not is_error(b_by_id[i])]
    a_ok = [is_correct(a_by_id[i]) for i in usable]
    b_ok = [is_correct(b_by_id[i]) for i in usable]
    ratios: list[float] = []
    sum_a = sum_b = 0.0
    for i, x, y in zip(usable, a_ok, b_ok):
        ta, tb = _usage(a_by_id[i], "completion_tokens"), _usage(b_by_id[i], "completion_tokens")
        if x and y and ta and tb is not None:
            ratios.append(tb / ta)
            sum_a += ta
            sum_b += tb
    n = len(usable)
    return Paired(
        a=name_a, b=name_b,
        mcnemar=mcnemar_exact(a_ok, b_ok),
        errors_excluded=len(ids) - n,
        acc_a=sum(a_ok) / n if n else None,
        acc_b=sum(b_ok) / n if n else None,
        both_correct_with_tokens=len(ratios),
        token_ratio_total=sum_b / sum_a if sum_a else None,
        token_ratio_median=median(ratios),
    )


def paired_equivalence(pair: Paired, alpha: float, margin_pp: float) -> Equivalence:
    """The equivalence verdict (TOST at alpha, margin ±margin_pp points) of run B against run A
    on their paired items; the 2×2 counts are recovered from the paired accuracies."""
    n = pair.mcnemar.n_pairs
    b, c = pair.mcnemar.b, pair.mcnemar.c
    both_right = round((pair.acc_a or 0.0) * n) - b
    return equivalence(both_right, b, c, n - both_right - b - c, margin_pp, alpha)


# ---------------------------------------------------------------------------- the comparison


@dataclass(frozen=True)
class Comparison:
    alignment: Alignment
    runs: tuple[RunStats, ...]
    pairs: tuple[Paired, ...]           # runs[1:] each against runs[0]
    alpha: float

    @property
    def subset_names(self) -> list[str]:
        return sorted({s.subset for r in self.runs for s in r.subsets})

    def verdict(self) -> str:
        return verdict_line(self)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for run, data in zip(self.runs, out["runs"]):
            data.update(accuracy=run.accuracy, ci95=list(run.ci95))
            data["tokens"].pop("completion_tokens", None)
        for pair, data in zip(self.pairs, out["pairs"]):
            data["delta_pp"] = pair.delta_pp
        out["verdict"] = self.verdict()
        return out


def unique_names(runs: Sequence[Run]) -> list[str]:
    """Run names: the label, else the folder name. Runs that would share a name are told apart by
    the end of their folder paths, as far back as they differ (`lossless1/candidate` and
    `lossless2/candidate`: `lossless` labels its two runs only "baseline" and "candidate"),
    after the label when the label is not the folder name."""
    names = [run.name for run in runs]
    out = list(names)
    for name in set(names):
        group = [i for i, n in enumerate(names) if n == name]
        if len(group) < 2:
            continue
        parts = [Path(runs[i].path).resolve().parts for i in group]
        depth = 1
        while depth < max(map(len, parts)) and len({p[-depth:] for p in parts}) < len(parts):
            depth += 1
        for i, p in zip(group, parts):
            where = "/".join(p[-depth:])
            out[i] = where if name == Path(runs[i].path).name else f"{name} ({where})"
    for i, name in enumerate(out):   # the same folder given twice
        if out.index(name) != i:
            out[i] = f"{name} #{i + 1}"
    return out


def compare_runs(runs: Sequence[Run], alpha: float = 0.05) -> Comparison:
    alignment = align(runs)
    names = unique_names(runs)
    stats = tuple(run_stats(r, alignment.ids, n) for r, n in zip(runs, names))
    if len({s.tokens.tts_source for s in stats}) > 1:
        # one run timed by its server, another by the client: time them all by the client
        stats = tuple(run_stats(r, alignment.ids, n, server_time=False) for r, n in zip(runs, names))
    pairs = tuple(paired(runs[0], r, alignment.ids, names[0], n) for r, n in zip(runs[1:], names[1:]))
    return Comparison(alignment=alignment, runs=stats, pairs=pairs, alpha=alpha)


# What a comparison never reads; `server_timings` is kept: time/item comes from it (token_stats).
COMPARE_DROP = bulky(keep=("answer", "reasoning", "server_timings"))


def load_runs(paths: Sequence[str | Path], drop: Sequence[str] = ()) -> list[Run]:
    """The runs `compare` and `report` read, loaded alike so that both time them alike
    (`drop`: bulky fields the caller does not show, never `server_timings`)."""
    return [load_run(p, drop=tuple(drop)) if drop else load_run(p) for p in paths]


# ---------------------------------------------------------------------------- words


def fmt_pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{100 * x:.{digits}f}%"


def fmt_num(x: float | None, digits: int = 1) -> str:
    if x is None:
        return "n/a"
    return f"{x:,.{digits}f}"


def fmt_p(p: float) -> str:
    return f"{p:.3g}" if p >= 0.001 else f"{p:.1e}"


def fmt_ratio(x: float | None) -> str:
    return "n/a" if x is None else f"×{x:.2f}"


def speed_words(a: RunStats, b: RunStats) -> str | None:
    """"B decodes 23% faster but writes ×2.70 the tokens: ×2.20 the time to solve" — the
    decode rate alone misleads, so it is never said without the time to solution."""
    ta, tb = a.tokens, b.tokens
    if not (ta.tts_total and tb.tts_total):
        return None
    time_ratio = (tb.tts_mean or 0) / ta.tts_mean if ta.tts_mean else None
    if time_ratio is None:
        return None
    token_ratio = tb.out_mean / ta.out_mean if ta.out_mean and tb.out_mean is not None else None
    decode_ratio = tb.decode_tps / ta.decode_tps if ta.decode_tps and tb.decode_tps else None
    if all(x is None or abs(x - 1) < 0.01 for x in (time_ratio, token_ratio, decode_ratio)):
        return None   # same speed, same length: nothing worth a word
    parts = []
    decode_differs = decode_ratio is not None and abs(decode_ratio - 1) >= 0.01
    if decode_differs:
        change = decode_ratio - 1
        parts.append(f"decodes {abs(change) * 100:.0f}% {'faster' if change >= 0 else 'slower'}")
    if token_ratio is not None:
        parts.append(f"writes {fmt_ratio(token_ratio)} the tokens")
    pace = "slower" if time_ratio > 1 else "faster"
    # "but" when the decode rate points one way and the time to solve the other
    conflict = decode_differs and (decode_ratio > 1) == (time_ratio > 1)
    head = f"{b.name} " + ((" but " if conflict else " and ").join(parts) if parts else "")
    return f"{head}: {fmt_ratio(time_ratio)} the time per item ({pace} to solve)".replace(" :", ":")


def verdict_line(cmp: Comparison) -> str:
    """One line in words: for each run against the first, better / worse / no detectable
    difference (exact McNemar at alpha), plus time-to-solution when timings exist."""
    if not cmp.pairs:
        run = cmp.runs[0]
        return f"{run.name}: {fmt_pct(run.accuracy)} on {run.graded} items (one run, nothing to compare)"
    parts = []
    for pair, b in zip(cmp.pairs, cmp.runs[1:]):
        m = pair.mcnemar
        delta = pair.delta_pp
        if m.n_pairs == 0:
            parts.append(f"{pair.b} vs {pair.a}: nothing to compare (every item errored in one run or the other)")
            continue
        stats = (f"{delta:+.1f} pp on {m.n_pairs} paired items, only {pair.a} right {m.b}, only {pair.b} right {m.c}, "
                 f"p={fmt_p(m.p)}" if delta is not None else "no paired items")
        if delta is not None and m.significant(cmp.alpha) and m.b != m.c:
            word = "worse than" if m.b > m.c else "better than"
            sentence = f"{pair.b} is {word} {pair.a} ({stats}; significant at α={cmp.alpha:g})"
        else:
            sentence = f"{pair.b} vs {pair.a}: no detectable difference ({stats}; not significant at α={cmp.alpha:g})"
        speed = speed_words(cmp.runs[0], b)
        if speed:
            sentence += f"; {speed}"
        parts.append(sentence)
    return "; ".join(parts)


# ---------------------------------------------------------------------------- sweeps


_MISSING = object()


def lookup(manifest: Mapping[str, Any], key: str) -> Any:
    """A setting by dotted key: tried in the manifest itself, then in `decoding`, then in
    `decoding.extra_body` (so `thinking_budget`, `max_tokens` and `label` all work)."""
    for root in (manifest, manifest.get("decoding") or {}, (manifest.get("decoding") or {}).get("extra_body") or {}):
        node: Any = root
        for part in key.split("."):
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            else:
                node = _MISSING
                break
        if node is not _MISSING:
            return node
    return _MISSING


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, Mapping):
        flat: dict[str, Any] = {}
        for k, v in data.items():
            flat.update(_flatten(v, f"{prefix}{k}."))
        return flat
    return {prefix.rstrip("."): json.dumps(data, sort_keys=True, default=str)}


def sweep_order_key(value: Any) -> tuple:
    """Numbers by value; text in natural order ("IQ2" < "IQ3_S" < "Q4_K_M", "d2" < "d10")."""
    if isinstance(value, bool):
        return (1, [(0, int(value), "")])
    if isinstance(value, (int, float)):
        return (0, float(value))
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    return (1, [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text) if p])


@dataclass(frozen=True)
class SweepRow:
    value: Any
    run: RunStats
    paired_vs_first: Paired | None


@dataclass(frozen=True)
class Sweep:
    key: str
    rows: tuple[SweepRow, ...]
    also_differ: tuple[str, ...]        # other settings that are not the same in every run


def sweep(runs: Sequence[Run], key: str, alpha: float = 0.05) -> tuple[Sweep, Comparison]:
    values = [lookup(r.manifest, key) for r in runs]
    lacking = [r.name for r, v in zip(runs, values) if v is _MISSING]
    if lacking:
        raise CompareError(f"sweep key {key!r} is not in the manifest (nor in decoding / decoding.extra_body) "
                           f"of: {', '.join(lacking)}")
    mixed_types = {isinstance(v, (int, float)) and not isinstance(v, bool) for v in values}
    order = sorted(range(len(runs)),
                   key=(lambda i: sweep_order_key(str(values[i]))) if len(mixed_types) > 1 else (lambda i: sweep_order_key(values[i])))
    ordered = [runs[i] for i in order]
    cmp = compare_runs(ordered, alpha=alpha)
    settings = [_flatten({"decoding": r.manifest.get("decoding") or {}, "model": r.manifest.get("model"),
                          "label": r.manifest.get("label")}) for r in ordered]
    swept = {key, f"decoding.{key}", f"decoding.extra_body.{key}"}
    names = sorted({k for s in settings for k in s})
    also = tuple(k for k in names if k not in swept and k != "label" and len({s.get(k) for s in settings}) > 1)
    rows = tuple(SweepRow(values[i], stats, cmp.pairs[n - 1] if n else None)
                 for n, (i, stats) in enumerate(zip(order, cmp.runs)))
    return Sweep(key=key, rows=rows, also_differ=also), cmp
