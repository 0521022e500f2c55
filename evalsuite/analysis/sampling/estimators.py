"""Sampled runs (`evalsuite run --samples N`): avg@N, pass@k, maj@N, and paired comparisons of
two sampled runs item by item on their success *rates*. Pure functions over records; the
estimators and tests are in docs/sampling.md.

A sampled run holds N records per item (field `sample`, 0..N-1). Items, not samples, are the
unit of every interval and test: the N answers to one question are not N independent questions.
scipy is imported only by the permutation test (never on `evalsuite --help`, nor in a run's summary:
the t and normal quantiles are ../stats.py's, checked against scipy by the tests).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

from ...store import SAMPLE_FIELD
from ..stats import normal_quantile, t_quantile, wilson

MAX_VOTE_TEXT = 300   # an extracted answer longer than this is voted on as is, not normalised
CORRECT_VOTE = "\x00correct"   # every answer the grader judged equal to the gold: one class
NO_ANSWER = "\x00none"         # no answer extracted: a class of its own, never right


# ---------------------------------------------------------------------------- records


def samples_of(manifest: Mapping[str, Any]) -> int:
    """Answers per item the run was made with (manifest `samples`; absent: 1)."""
    value = manifest.get("samples")
    return int(value) if isinstance(value, int) and value > 1 else 1


def is_sampled(manifest: Mapping[str, Any], records: Iterable[Mapping[str, Any]] = ()) -> bool:
    return samples_of(manifest) > 1 or any(SAMPLE_FIELD in r for r in records)


def by_item(records: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Records grouped by item id (first-seen order), each item's samples by index."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        groups.setdefault(r["id"], []).append(r)
    for rs in groups.values():
        rs.sort(key=lambda r: r.get(SAMPLE_FIELD) or 0)
    return groups


def vote_key(record: Mapping[str, Any]) -> str | None:
    """The canonical answer a sample votes for: one class for every answer the grader judged
    equal to the gold (the grader's equivalence: 1/2 and 0.5), otherwise the extracted answer
    normalised as the graders do (spaces dropped); a sample with no extracted answer votes for
    "no answer" (never right), as lm-eval's "[invalid]" does. None: no vote (an error)."""
    if record.get("outcome") == "error":
        return None
    if record.get("outcome") == "correct":
        return CORRECT_VOTE
    extracted = record.get("extracted")
    if not isinstance(extracted, str) or not extracted.strip():
        return NO_ANSWER
    if len(extracted) > MAX_VOTE_TEXT:
        return extracted
    return _canonical(extracted)


@lru_cache(maxsize=8192)
def _canonical(extracted: str) -> str:
    # N samples of an item repeat their answers: each distinct text is normalised once (~75 µs)
    try:
        from ...graders.normalise import normalise, plain_key

        return plain_key(normalise(extracted).text)
    except Exception:   # a normaliser failure must not lose the vote
        return extracted.strip()


@dataclass(frozen=True)
class ItemSamples:
    """One item's N answers, reduced: how many were answered (not errors), how many correct,
    and the majority vote."""

    id: str
    subset: str
    n: int                    # answered samples (errors excluded)
    c: int                    # correct samples
    errors: int
    maj_correct: bool | None  # None: every sample errored
    tie: bool                 # the majority was a tie (broken by the earliest sample)

    @property
    def rate(self) -> float | None:
        return self.c / self.n if self.n else None


def majority(keys: Sequence[str | None]) -> tuple[str | None, bool]:
    """(the answer with the most votes, whether it tied with another). Ties go to the answer
    whose first vote came earliest (the lowest sample index): deterministic, and what
    `collections.Counter.most_common` gives (lm-eval's majority vote)."""
    counts: dict[str, int] = {}
    for k in keys:
        if k is not None:
            counts[k] = counts.get(k, 0) + 1   # dicts keep first-seen order
    if not counts:
        return None, False
    top = max(counts.values())
    winners = [k for k, v in counts.items() if v == top]
    return winners[0], len(winners) > 1


def item_samples(item_id: str, records: Sequence[Mapping[str, Any]]) -> ItemSamples:
    errors = sum(r.get("outcome") == "error" for r in records)
    correct = sum(r.get("outcome") == "correct" for r in records)
    answered = len(records) - errors
    winner, tie = majority([vote_key(r) for r in records])
    maj = None if not answered else winner == CORRECT_VOTE
    return ItemSamples(item_id, str(records[0].get("subset") or ""), answered, correct, errors, maj, tie)


def items_of(records: Iterable[Mapping[str, Any]]) -> list[ItemSamples]:
    return [item_samples(i, rs) for i, rs in by_item(records).items()]


# ---------------------------------------------------------------------------- estimators


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one item with c correct of n samples: 1 - C(n-c, k) / C(n, k)
    (Chen et al. 2021), as the product 1 - prod_{i=n-c+1}^{n} (1 - k/i), which never forms the
    binomials."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 < k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def ks_for(n: int) -> list[int]:
    """k = 1, 2, 4, ... up to n, and n itself."""
    ks, k = [], 1
    while k <= n:
        ks.append(k)
        k *= 2
    if n >= 1 and ks[-1] != n:
        ks.append(n)
    return ks


def mean_interval(values: Sequence[float], level: float = 0.95, clamp: tuple[float, float] | None = (0.0, 1.0)
                  ) -> tuple[float | None, float | None, float | None]:
    """(mean, low, high): Student-t interval of a mean over items (the unit). One value has no
    spread: (value, None, None)."""
    n = len(values)
    if n == 0:
        return None, None, None
    m = sum(values) / n
    if n == 1:
        return m, None, None
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    if sd == 0 and clamp == (0.0, 1.0) and m in (0.0, 1.0):
        # every item at 0 (or 1): no spread to measure, but n items are not certainty; the
        # Wilson interval of 0 (n) of n items, as if each item were one right/wrong answer
        lo, hi = wilson(round(m * n), n)
        return m, lo, hi
    half = t_quantile(n - 1, 0.5 + level / 2) * sd / math.sqrt(n)
    lo, hi = m - half, m + half
    if clamp is not None:
        lo, hi = max(clamp[0], lo), min(clamp[1], hi)
    return m, lo, hi


def interval_method(values: Sequence[float], clamp: tuple[float, float] | None = (0.0, 1.0)) -> str | None:
    """The name of the interval mean_interval gives these values (None: it gives none)."""
    if len(values) < 2:
        return None
    m = sum(values) / len(values)
    if clamp == (0.0, 1.0) and m in (0.0, 1.0) and all(v == m for v in values):
        return "Wilson 95% (every item at 0 or every item at 1: no spread over items)"
    return "Student-t 95% over items"


def figures(items: Sequence[ItemSamples], ks: Sequence[int]) -> dict[str, Any]:
    """avg@N, pass@k, maj@N and the all/some/none shares over these items."""
    graded = [it for it in items if it.n > 0]
    rates = [it.c / it.n for it in graded]
    avg, lo, hi = mean_interval(rates)
    out: dict[str, Any] = {
        "n_items": len(items), "n_items_graded": len(graded),
        "n_answers": sum(it.n + it.errors for it in items), "n_answer_errors": sum(it.errors for it in items),
        "avg": avg, "avg_ci95": [lo, hi], "avg_ci_method": interval_method(rates),
    }
    pass_k = {}
    for k in ks:
        usable = [it for it in graded if it.n >= k]
        est, plo, phi = mean_interval([pass_at_k(it.n, it.c, k) for it in usable])
        pass_k[str(k)] = {"estimate": est, "ci95": [plo, phi], "n_items": len(usable)}
    out["pass_at_k"] = pass_k
    voted = [it for it in graded if it.maj_correct is not None]
    n_maj = sum(bool(it.maj_correct) for it in voted)
    mlo, mhi = wilson(n_maj, len(voted)) if voted else (None, None)
    out["maj"] = {"estimate": n_maj / len(voted) if voted else None, "ci95": [mlo, mhi], "n_items": len(voted),
                  "ties": sum(it.tie for it in voted)}
    n = len(graded)
    out["all_correct"] = sum(it.c == it.n for it in graded) / n if n else None
    out["some_correct"] = sum(0 < it.c < it.n for it in graded) / n if n else None
    out["none_correct"] = sum(it.c == 0 for it in graded) / n if n else None
    return out


def sampling_summary(manifest: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """summary.json's `sampling` section of a sampled run."""
    items = items_of(records)
    n = samples_of(manifest)
    if n <= 1:   # records carry `sample` but the manifest does not say N: the most any item has
        n = max((it.n + it.errors for it in items), default=1)
    ks = ks_for(n)
    decoding = manifest.get("decoding") or {}
    out = {"samples": n, "temperature": decoding.get("temperature"), "top_p": decoding.get("top_p"),
           "seed": decoding.get("seed"), "ks": ks, **figures(items, ks),
           "ties_rule": "a tied majority goes to the answer voted for first (lowest sample index)"}
    subsets: dict[str, list[ItemSamples]] = {}
    for it in items:
        subsets.setdefault(it.subset, []).append(it)
    out["subsets"] = [dict(subset=s, **figures(its, ks)) for s, its in sorted(subsets.items())]
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _ci(ci: Sequence[float | None]) -> str:
    lo, hi = ci
    return "" if lo is None else f" [{100 * lo:.1f}, {100 * hi:.1f}]"


def format_sampling(s: Mapping[str, Any]) -> str:
    """The lines `evalsuite show` adds for a sampled run."""
    seeds = ("no seed sent (the server's own randomness: a rerun does not reproduce)" if s.get("seed") is None
             else f"seeds {s['seed']}..{s['seed'] + s['samples'] - 1}")
    lines = [f"sampled: {s['samples']} answers per item at temperature {s.get('temperature')}, top_p {s.get('top_p')}, "
             f"{seeds}; {s['n_items_graded']} items graded, "
             f"{s['n_answers']} answers ({s['n_answer_errors']} errors)",
             f"avg@{s['samples']} {_pct(s['avg'])}{_ci(s['avg_ci95'])} (mean per-item accuracy; "
             f"{s.get('avg_ci_method') or 'no interval: one item'})",
             "pass@k " + ", ".join(f"k={k} {_pct(v['estimate'])}{_ci(v['ci95'])}" for k, v in s["pass_at_k"].items())
             + " (unbiased estimator)",
             f"maj@{s['samples']} {_pct(s['maj']['estimate'])}{_ci(s['maj']['ci95'])} (Wilson 95%; {s['maj']['ties']} "
             f"tied majorities, {s['ties_rule']})",
             f"items right in all samples {_pct(s['all_correct'])}, in some {_pct(s['some_correct'])}, "
             f"in none {_pct(s['none_correct'])}"]
    subsets = s.get("subsets") or []
    if len(subsets) > 1:
        width = max(len("subset"), *(len(x["subset"]) for x in subsets))
        k_top = str(s["ks"][-1])
        lines.append(f"{'subset'.ljust(width)}  {'items':>5}  {'avg@N':>6}  {'pass@' + k_top:>8}  {'maj@N':>6}")
        for x in subsets:
            lines.append(f"{x['subset'].ljust(width)}  {x['n_items']:>5}  {_pct(x['avg']):>6}  "
                         f"{_pct(x['pass_at_k'][k_top]['estimate']):>8}  {_pct(x['maj']['estimate']):>6}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- paired rates


@dataclass(frozen=True)
class RatePair:
    """Two sampled runs, paired per item on their success rates (candidate minus baseline)."""

    n_items: int                      # items with an answered sample in both runs
    mean_a: float | None
    mean_b: float | None
    delta_pp: float | None            # mean per-item rate difference, percentage points
    ci95_pp: tuple[float | None, float | None]
    p: float                          # paired permutation test (sign flips over items), two-sided
    n_moved: int                      # items whose rate differs at all
    sd_pp: float | None               # spread of the per-item differences
    mde_pp: float | None              # smallest drop detectable with 80 % power at alpha (normal approx.)
    min_p: float                      # the smallest p these items could ever give
    moved: tuple[dict[str, Any], ...] = ()
    errors_excluded: int = 0          # items left out: every sample errored in either run
    notes: tuple[str, ...] = field(default_factory=tuple)
    se_pp: float | None = None        # the standard error the interval and the power use
    floor_sd_pp: float | None = None  # the per-item sampling spread it never goes below (Agresti-Caffo)
    within_var: float | None = None   # per-item variance of d from the samples alone (unbiased), rate units
    samples: int = 1                  # answers per item (the smaller side's, at most): a rate moves by 1/samples

    def to_dict(self) -> dict[str, Any]:
        return {"n_items": self.n_items, "mean_baseline": self.mean_a, "mean_candidate": self.mean_b,
                "delta_pp": self.delta_pp, "ci95_pp": list(self.ci95_pp), "p": self.p, "n_moved": self.n_moved,
                "sd_pp": self.sd_pp, "min_detectable_drop_pp": self.mde_pp, "smallest_possible_p": self.min_p,
                "moved_most": list(self.moved), "errors_excluded": self.errors_excluded, "notes": list(self.notes),
                "se_pp": self.se_pp, "sampling_floor_sd_pp": self.floor_sd_pp, "samples": self.samples,
                "ci95_method": RATE_CI_METHOD,
                "test": "paired permutation test over items (sign flips of per-item rate differences)"}


# the interval of the mean per-item rate difference (docs/gate.md, "Sampled runs")
RATE_CI_METHOD = ("Student-t over items with the standard error max(observed spread of the per-item differences, "
                  "Agresti-Caffo sampling spread of each item's two rates) / sqrt(items)")


def rate_spread(a: ItemSamples, b: ItemSamples) -> tuple[float, float]:
    """(the Agresti-Caffo variance of one item's rate difference, the unbiased sampling variance
    from its answers). Agresti-Caffo adds one success and one failure to each side,
    p~ = (c + 1) / (n + 2), variance p~(1 - p~) / (n + 2): never 0, even at 0 or n of n correct,
    so an item whose two rates happen to be equal (or both 0 or 1) still says how little n
    answers can tell. The unbiased one, r(1 - r) / (n - 1) per side, is what the spread over
    items holds of sampling noise (0 for one answer)."""
    ta, tb = (a.c + 1) / (a.n + 2), (b.c + 1) / (b.n + 2)
    adjusted = ta * (1 - ta) / (a.n + 2) + tb * (1 - tb) / (b.n + 2)
    ra, rb = a.c / a.n, b.c / b.n
    unbiased = (ra * (1 - ra) / (a.n - 1) if a.n > 1 else 0.0) + (rb * (1 - rb) / (b.n - 1) if b.n > 1 else 0.0)
    return adjusted, unbiased


def permutation_p(diffs: Sequence[float], n_resamples: int = 19_999) -> float:
    """Two-sided p of the mean per-item difference under sign flips (each item's two rates
    swapped or not): exact below 2**14 items' worth of flips, else Monte Carlo, seeded."""
    import numpy as np
    from scipy.stats import permutation_test

    d = np.asarray([x for x in diffs if x != 0.0], dtype=float)
    if d.size <= 1:
        return 1.0   # one item moved: its sign flipped gives the same |mean| (scipy needs two)
    res = permutation_test((d, np.zeros_like(d)), lambda x, y, axis: np.mean(x - y, axis=axis),
                           permutation_type="samples", vectorized=True, n_resamples=n_resamples,
                           alternative="two-sided", random_state=0)
    return float(min(1.0, res.pvalue))


def paired_rates(a: Mapping[str, ItemSamples], b: Mapping[str, ItemSamples], ids: Sequence[str],
                 alpha: float = 0.05, top: int = 10) -> RatePair:
    """The two runs paired per item on their success rates. The interval of the mean difference
    is a Student-t interval over items whose standard error never drops below the sampling
    spread of each item's rates (RATE_CI_METHOD): items whose rates happen to agree, or sit at
    0 or 1, do not make a point of it. The drop detectable with 80% power uses the same error."""
    usable = [i for i in ids if i in a and i in b and a[i].n and b[i].n]
    excluded = len([i for i in ids if i in a and i in b]) - len(usable)
    ra = [a[i].c / a[i].n for i in usable]
    rb = [b[i].c / b[i].n for i in usable]
    d = [y - x for x, y in zip(ra, rb)]
    n = len(d)
    mean_d = sum(d) / n if n else None
    sd = math.sqrt(sum((x - mean_d) ** 2 for x in d) / (n - 1)) if n > 1 else None
    lo = hi = se = floor_sd = within = None
    if n:
        spreads = [rate_spread(a[i], b[i]) for i in usable]
        floor_var = sum(x for x, _ in spreads) / n
        within = sum(u for _, u in spreads) / n
        var = max(sd ** 2 if sd is not None else 0.0, floor_var)
        se, floor_sd = math.sqrt(var / n), math.sqrt(floor_var)
        half = t_quantile(max(n - 1, 1), 0.975) * se
        lo, hi = max(-1.0, mean_d - half), min(1.0, mean_d + half)
    mde = None
    if se is not None and alpha < 1:
        mde = 100 * (normal_quantile(1 - alpha / 2) + normal_quantile(0.8)) * se
    moved = sorted((i for i in usable), key=lambda i: -abs(b[i].c / b[i].n - a[i].c / a[i].n))[:top]
    moved_rows = tuple({"id": i, "subset": a[i].subset, "baseline": f"{a[i].c}/{a[i].n}", "candidate": f"{b[i].c}/{b[i].n}",
                        "delta_pp": 100 * (b[i].c / b[i].n - a[i].c / a[i].n)}
                       for i in moved if b[i].c / b[i].n != a[i].c / a[i].n)
    samples = max((min(a[i].n, b[i].n) for i in usable), default=1)
    return RatePair(
        n_items=n, mean_a=sum(ra) / n if n else None, mean_b=sum(rb) / n if n else None,
        delta_pp=None if mean_d is None else 100 * mean_d,
        ci95_pp=(None if lo is None else 100 * lo, None if hi is None else 100 * hi),
        p=permutation_p(d), n_moved=sum(x != 0 for x in d), sd_pp=None if sd is None else 100 * sd,
        mde_pp=mde, min_p=min(1.0, 2.0 / 2 ** n) if n < 1100 else 0.0, moved=moved_rows, errors_excluded=excluded,
        se_pp=None if se is None else 100 * se, floor_sd_pp=None if floor_sd is None else 100 * floor_sd,
        within_var=within, samples=samples)


def refuse_mixed(name_a: str, manifest_a: Mapping[str, Any], records_a, name_b: str, manifest_b: Mapping[str, Any],
                 records_b) -> str | None:
    """Why a sampled run and a greedy one cannot be compared (None when both are the same kind)."""
    sa, sb = is_sampled(manifest_a, records_a), is_sampled(manifest_b, records_b)
    if sa == sb:
        return None
    sampled_name, sampled_manifest = (name_a, manifest_a) if sa else (name_b, manifest_b)
    greedy_name, greedy_manifest = (name_b, manifest_b) if sa else (name_a, manifest_a)
    t = (greedy_manifest.get("decoding") or {}).get("temperature")
    return (f"{sampled_name} is sampled ({describe_run(sampled_manifest)}) and {greedy_name} has one answer per "
            f"item (temperature {t}): a success rate over N samples and a single answer are different measures, "
            f"and pairing them would measure the sampling, not the server. Run both with the same --samples and "
            f"--temperature")


def describe_run(manifest: Mapping[str, Any]) -> str:
    d = manifest.get("decoding") or {}
    return f"{samples_of(manifest)} samples at temperature {d.get('temperature')}, top_p {d.get('top_p')}"


def setting_notes(manifest_a: Mapping[str, Any], manifest_b: Mapping[str, Any], name_a: str, name_b: str) -> list[str]:
    """What a different N changes in what the rates mean (the other settings' differences are
    gate_settings.settings_differences', as for greedy runs)."""
    notes = []
    if samples_of(manifest_a) != samples_of(manifest_b):
        notes.append(f"{name_a} has {samples_of(manifest_a)} samples per item, {name_b} {samples_of(manifest_b)}: "
                     f"per-item rates are compared, pass@k only up to the smaller N")
    return notes
