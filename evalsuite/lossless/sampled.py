"""Lossless *in distribution*: do a candidate's sampled answers come from the same distribution
as the baseline's? For speculative sampling, which promises exactly that (docs/sampling.md).

Per item, the two runs' N answers each fall into categories (the canonical extracted answer, as
maj@N votes, with "no answer" a category of its own); a chi-square statistic measures how far the
two runs' counts are apart, and its p comes from permuting the run labels among the item's 2N
answers (exact in distribution whatever the counts, no large-sample assumption). Pooled over
items: the sum of the per-item statistics, each item's labels permuted independently, so a small
shift on many items adds up. Where both runs kept logprobs, the same test on the first generated
token. The verdict: "consistent with the same distribution" or "differs (p = ...)", with the
smallest shift these N could detect.

`evalsuite diff` hands two sampled runs here (`sampled_diff_main`); `evalsuite lossless
--samples N --temperature T` runs both servers sampled and then diffs them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..analysis.sampling.estimators import NO_ANSWER, by_item, refuse_mixed, samples_of, vote_key

N_PERMUTATIONS = 2000
POWER = 0.8


@dataclass(frozen=True)
class ItemTest:
    id: str
    n_a: int
    n_b: int
    categories: int
    statistic: float
    p: float
    top_a: str      # the most frequent category in each run, with its count
    top_b: str


@dataclass(frozen=True)
class DistributionTest:
    """One two-sample test per item and pooled, on one kind of category (answers or first tokens)."""

    what: str                       # "extracted answers" / "first generated token"
    items: tuple[ItemTest, ...]
    statistic: float
    p: float
    n_items: int                    # items with answers in both runs
    n_informative: int              # items where the pooled answers fall in more than one category
    min_shift: float | None         # smallest per-item shift of probability mass detectable (80 % power)
    alpha: float

    @property
    def differs(self) -> bool:
        return self.p < self.alpha

    def verdict(self) -> str:
        return f"differs (p = {_p(self.p)})" if self.differs else "consistent with the same distribution"

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "verdict": self.verdict(), "p": self.p, "statistic": self.statistic,
                "n_items": self.n_items, "n_informative": self.n_informative, "alpha": self.alpha,
                "min_detectable_shift": self.min_shift,
                "items": [vars(i) for i in sorted(self.items, key=lambda i: i.p)]}


@dataclass(frozen=True)
class SampledDiff:
    baseline: str
    candidate: str
    samples: tuple[int, int]
    temperature: tuple[Any, Any]
    answers: DistributionTest
    first_tokens: DistributionTest | None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def differs(self) -> bool:
        return self.answers.differs or bool(self.first_tokens and self.first_tokens.differs)

    def to_dict(self) -> dict[str, Any]:
        return {"sampled": True, "baseline": self.baseline, "candidate": self.candidate,
                "samples": list(self.samples), "temperature": list(self.temperature),
                "verdict": self.verdict(), "answers": self.answers.to_dict(),
                "first_tokens": self.first_tokens.to_dict() if self.first_tokens else None, "notes": list(self.notes)}

    def verdict(self) -> str:
        tests = [self.answers] + ([self.first_tokens] if self.first_tokens else [])
        differing = [t for t in tests if t.differs]
        if differing:
            return "differs (p = " + ", ".join(f"{_p(t.p)} on {t.what}" for t in differing) + ")"
        return "consistent with the same distribution"


def _p(p: float) -> str:
    return f"{p:.3g}" if p >= 0.001 else f"{p:.1e}"


# ---------------------------------------------------------------------------- the test


def permutation_chi2(groups: Sequence[tuple[Sequence[str], Sequence[str]]], n_permutations: int = N_PERMUTATIONS,
                     seed: int = 0) -> tuple[list[tuple[float, float]], float, float]:
    """For each (answers of A, answers of B): (chi-square statistic, permutation p); and the
    pooled (sum of statistics, p), every item's run labels permuted independently in each of the
    same `n_permutations` draws. p counts the observed labelling as one draw: (1 + hits) / (1 + P)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    per_item: list[tuple[float, float]] = []
    observed_total = 0.0
    null_total = np.zeros(n_permutations)
    for a, b in groups:
        values = list(a) + list(b)
        cats = {v: n for n, v in enumerate(dict.fromkeys(values))}
        m, na = len(values), len(a)
        if len(cats) < 2 or na == 0 or na == m:
            per_item.append((0.0, 1.0))
            continue
        codes = np.fromiter((cats[v] for v in values), dtype=np.int64, count=m)
        onehot = np.zeros((m, len(cats)))
        onehot[np.arange(m), codes] = 1.0
        totals = onehot.sum(axis=0)
        exp_a, exp_b = na * totals / m, (m - na) * totals / m

        def chi2(count_a):   # count_a: (..., K) counts of run A per category
            count_b = totals - count_a
            return ((count_a - exp_a) ** 2 / exp_a + (count_b - exp_b) ** 2 / exp_b).sum(axis=-1)

        observed = float(chi2(onehot[:na].sum(axis=0)))
        # each row: a random labelling (the first na of a random order are "A")
        order = np.argsort(rng.random((n_permutations, m)), axis=1)[:, :na]
        null = chi2(onehot[order].sum(axis=1))
        per_item.append((observed, float((1 + np.sum(null >= observed - 1e-9)) / (1 + n_permutations))))
        observed_total += observed
        null_total += null
    pooled_p = float((1 + np.sum(null_total >= observed_total - 1e-9)) / (1 + n_permutations))
    return per_item, observed_total, pooled_p if observed_total > 0 else 1.0


def min_detectable_shift(groups: Sequence[tuple[Sequence[str], Sequence[str]]], alpha: float,
                         power: float = POWER) -> float | None:
    """The smallest δ such that moving δ of every item's probability from its most frequent
    answer to its second most frequent one (to a new answer where it gave only one) would be
    found with `power` at `alpha`. The pooled statistic is then about noncentral chi-square with
    the pooled degrees of freedom and noncentrality Σ_i n_a n_b/(n_a+n_b) · Σ_k Δ_k²/p̄_k
    = Σ_i w_i (δ²/(p1_i − δ/2) + δ²/(p2_i + δ/2)), p1, p2 the two shares pooled over both runs.
    A large-sample approximation, said as such; None when no item has answers on both sides, or
    when even moving all of the modal answer would not be seen."""
    from scipy.optimize import brentq
    from scipy.stats import chi2, ncx2

    terms, df = [], 0
    for a, b in groups:
        if not a or not b:
            continue
        values = list(a) + list(b)
        counts: dict[str, int] = {}
        for v in values:
            counts[v] = counts.get(v, 0) + 1
        shares = sorted((c / len(values) for c in counts.values()), reverse=True) + [0.0]
        terms.append((len(a) * len(b) / len(values), shares[0], shares[1]))
        df += max(1, len(counts) - 1)
    if not terms:
        return None
    critical = chi2.ppf(1 - alpha, df)

    def power_at(delta: float) -> float:
        lam = sum(w * (delta * delta / max(p1 - delta / 2, 1e-9) + delta * delta / (p2 + delta / 2))
                  for w, p1, p2 in terms)
        return float(ncx2.sf(critical, df, lam))

    upper = min(1.0, max(p1 for _, p1, _ in terms))
    if power_at(upper) < power:
        return None
    return float(brentq(lambda d: power_at(d) - power, 1e-6, upper))


def _top(values: Sequence[str]) -> str:
    if not values:
        return "-"
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    best = max(counts, key=counts.get)
    shown = "correct" if best == "\x00correct" else "no answer" if best == NO_ANSWER else best[:40]
    return f"{shown} ×{counts[best]}"


def distribution_test(what: str, groups: dict[str, tuple[list[str], list[str]]], alpha: float,
                      n_permutations: int = N_PERMUTATIONS) -> DistributionTest:
    ids = [i for i, (a, b) in groups.items() if a and b]
    pairs = [groups[i] for i in ids]
    per_item, total, p = permutation_chi2(pairs, n_permutations)
    items = tuple(ItemTest(i, len(a), len(b), len(set(a) | set(b)), round(stat, 6), pi, _top(a), _top(b))
                  for i, (a, b), (stat, pi) in zip(ids, pairs, per_item))
    return DistributionTest(what, items, total, p, len(ids), sum(it.categories > 1 for it in items),
                            min_detectable_shift(pairs, alpha), alpha)


def answer_categories(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each answered sample's category: its canonical answer, or "no answer"."""
    return [vote_key(r) or NO_ANSWER for r in records if r.get("outcome") != "error"]


def first_token(run: Any, record: Mapping[str, Any]) -> str | None:
    if not record.get("logprob_tokens"):
        return None
    from ..store import record_key

    table = run.tokens.table(record_key(record))
    if table is None or table.num_rows == 0:
        return None
    row = table.slice(0, 1).to_pylist()[0]
    return str(row["id"]) if row.get("id") is not None else repr(row.get("token"))


def sampled_diff(base: Any, cand: Any, alpha: float = 0.05, n_permutations: int = N_PERMUTATIONS) -> SampledDiff:
    """Raises ValueError when the runs cannot be tested against each other."""
    from ..analysis.sampling.compare import check_pair

    notes = check_pair(base, cand)
    ga, gb = by_item(base.records), by_item(cand.records)
    order = [i for i in (base.manifest.get("item_ids") or ga) if i in ga and i in gb]
    answers = {i: (answer_categories(ga[i]), answer_categories(gb[i])) for i in order}
    first = None
    if (base.manifest.get("decoding") or {}).get("logprobs") is not None and \
            (cand.manifest.get("decoding") or {}).get("logprobs") is not None:
        tokens = {}
        for i in order:
            ta = [t for t in (first_token(base, r) for r in ga[i] if r.get("outcome") != "error") if t is not None]
            tb = [t for t in (first_token(cand, r) for r in gb[i] if r.get("outcome") != "error") if t is not None]
            tokens[i] = (ta, tb)
        if any(a and b for a, b in tokens.values()):
            first = distribution_test("first generated token", tokens, alpha, n_permutations)
    da, db = base.manifest.get("decoding") or {}, cand.manifest.get("decoding") or {}
    if da.get("temperature") == 0 or db.get("temperature") == 0:
        notes.append("a run is greedy (temperature 0): its samples are one answer repeated, which this test "
                     "reads as a distribution with no spread")
    return SampledDiff(base.name, cand.name, (samples_of(base.manifest), samples_of(cand.manifest)),
                       (da.get("temperature"), db.get("temperature")),
                       distribution_test("extracted answers", answers, alpha, n_permutations), first, tuple(notes))


def format_sampled_diff(d: SampledDiff, shown: int = 10) -> str:
    lines = [f"{d.baseline} vs {d.candidate}: sampled ({d.samples[0]} and {d.samples[1]} answers per item, "
             f"temperature {d.temperature[0]} and {d.temperature[1]})"]
    for t in (d.answers, d.first_tokens):
        if t is None:
            continue
        shift = ("n/a (too few answers)" if t.min_shift is None else
                 f"{100 * t.min_shift:.0f} points of each item's probability moved to another answer")
        lines.append(f"{t.what}: {t.verdict()} — permutation chi-square pooled over {t.n_items} items "
                     f"({t.n_informative} with more than one distinct value), statistic {t.statistic:.1f}; "
                     f"smallest shift these samples detect with 80% power at α={t.alpha:g}: {shift}")
        worst = [i for i in sorted(t.items, key=lambda i: i.p) if i.p < 0.05][:shown]
        for i in worst:
            lines.append(f"  {i.id}: p={_p(i.p)} (per item, uncorrected)  baseline {i.top_a}  candidate {i.top_b}")
    if d.first_tokens is None:
        lines.append("first generated token: not tested (a run kept no logprobs: run with --logprobs K)")
    for note in d.notes:
        lines.append(f"note: {note}")
    lines.append(f"verdict: {d.verdict()}")
    return "\n".join(lines)


def sampled_diff_main(baseline: Any, candidate: Any, *, json_path: Any = None, html_path: Any = None,
                      fail_on: str | None = None, echo: Callable[[str], None] = print,
                      quiet: bool = False) -> int | None:
    """`evalsuite diff` of two runs when either is sampled: the exit code; None when neither is
    (the greedy diff goes on). Exit 1 when they differ and --fail-on is given, 2 when refused."""
    import sys

    from ..store import RunFolderError, load_run, read_manifest

    try:   # the manifests say whether a run is sampled: a greedy diff reads no record twice
        if not any(samples_of(read_manifest(Path(p))) > 1 for p in (baseline, candidate)):
            return None
        base = load_run(baseline, drop=("messages", "prompt", "answer", "reasoning", "server_timings"))
        cand = load_run(candidate, drop=("messages", "prompt", "answer", "reasoning", "server_timings"))
    except RunFolderError:
        return None   # the greedy path says what is wrong with the folder
    try:
        mixed = refuse_mixed(f"the baseline ({base.path})", base.manifest, base.records,
                             f"the candidate ({cand.path})", cand.manifest, cand.records)
        if mixed:
            raise ValueError(mixed)
        if html_path:
            raise ValueError("--html is not available for sampled runs yet (use --json)")
        result = sampled_diff(base, cand)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if quiet:   # diff -q: the verdicts alone
        echo("; ".join(f"{t.what}: {t.verdict()}" for t in (result.answers, result.first_tokens) if t is not None))
    else:
        echo(format_sampled_diff(result))
    if json_path:
        Path(json_path).write_text(json.dumps(result.to_dict(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 1 if (fail_on and result.differs) else 0
