"""Is the difference beyond the engine's own noise? A repeat of the baseline (A/A: the same
server, run twice, maybe at another concurrency) shows how often the engine diverges from
itself; the candidate (A/B) is classified against that floor.

Two stated tests, on the items both diffs compared (paired: the same items, the same baseline):
- divergent items: an item diverges when its generated text differs from the baseline's
  (any verdict but identical; error records left out). Exact one-sided McNemar test on the
  discordant items: b = items divergent in A/B only, c = in A/A only; under "the candidate
  diverges no more often than the engine's own noise", b ~ Binomial(b + c, 1/2), and
  p = P(X >= b) (scipy.stats.binomtest). When the two diffs do not share their items, a
  one-sided Fisher exact test on the two counts instead.
- drift: per item d = its mean KL over the common prefix in A/B minus in A/A. A difference
  below KL_FLOOR (the numerical floor of the logprobs a server returns: float32 rounding) is
  0. One-sided paired sign-flip permutation test of the mean d (scipy.stats.permutation_test,
  exact up to 2**14 flips, else 19,999 seeded draws); the 95% interval of the mean d from a
  bootstrap over items (scipy.stats.bootstrap, 2,000 resamples, percentile, seed 0) is shown.
Beyond when either test rejects at alpha / 2 (Bonferroni: the verdict at alpha); the sentence
and the JSON name both tests and their p, and say so when they disagree.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ALPHA = 0.05
BOOTSTRAP_RESAMPLES = 2000
# KL differences below this many nats per token are float noise, not drift: a server computes
# and returns logprobs in float32 (and the token store keeps them so); the KL between the same
# distribution rounded to float32 and one float32 step off stays below 1e-7 nats
# (tests/test_noise_floor.py), and kernels that reduce in another order move it by about that.
KL_FLOOR = 1e-6
KL_TEST = "one-sided paired sign-flip permutation test of the mean per-item KL difference (A/B − A/A)"


@dataclass(frozen=True)
class NoiseFloor:
    items: int                      # items both diffs compared
    aa_divergent: int
    ab_divergent: int
    only_ab: int                    # discordant items (paired test)
    only_aa: int
    test: str                       # which exact test was used
    p_value: float | None
    kl_items: int                   # items with drift on both sides
    kl_aa_mean: float | None
    kl_ab_mean: float | None
    kl_diff_ci: tuple[float, float] | None
    verdict: str                    # "within" / "beyond"
    sentence: str
    kl_p_value: float | None = None     # KL_TEST's p (None: no item had drift on both sides)
    kl_nonzero: int = 0                 # items whose KL difference is at or above KL_FLOOR
    alpha: float = ALPHA

    def to_dict(self) -> dict[str, Any]:
        return {"items": self.items, "aa_divergent": self.aa_divergent, "ab_divergent": self.ab_divergent,
                "only_ab": self.only_ab, "only_aa": self.only_aa, "test": self.test, "p_value": self.p_value,
                "kl_items": self.kl_items, "kl_aa_mean": self.kl_aa_mean, "kl_ab_mean": self.kl_ab_mean,
                "kl_diff_ci95": None if self.kl_diff_ci is None else list(self.kl_diff_ci),
                "kl_floor": KL_FLOOR,
                "kl_test": {"name": KL_TEST, "p_value": self.kl_p_value, "items": self.kl_items,
                            "items_above_floor": self.kl_nonzero},
                "alpha": self.alpha, "alpha_each_test": self.alpha / 2,
                "verdict": self.verdict, "summary": self.sentence}


def kl_test_p(diffs: Any, n_resamples: int = 19_999) -> float:
    """KL_TEST's one-sided p of the mean of `diffs` > 0 under sign flips of each item's
    difference (zeros flip to themselves)."""
    import numpy as np
    from scipy.stats import permutation_test

    d = np.asarray([x for x in diffs if x != 0.0], dtype=float)
    if d.size == 0:
        return 1.0
    if d.size == 1:   # two flips, the observed one the larger when positive (scipy needs two values)
        return 0.5 if d[0] > 0 else 1.0
    res = permutation_test((d,), np.mean, permutation_type="samples", vectorized=True, n_resamples=n_resamples,
                           alternative="greater", random_state=0)
    return float(min(1.0, res.pvalue))


def _divergent(item: Any) -> bool | None:
    """Did the item's text differ from the baseline's? None for an error record (no evidence)."""
    if item.verdict == "undetermined" and "record is an error" in item.reason:
        return None
    return item.verdict != "identical"


def noise_floor(aa: Any, ab: Any, alpha: float = ALPHA) -> NoiseFloor:
    """Classify the candidate diff `ab` (DiffResult, baseline vs candidate) against the A/A diff
    `aa` (the same baseline vs its repeat)."""
    import numpy as np
    from scipy import stats

    by_aa = {i.id: i for i in aa.items}
    by_ab = {i.id: i for i in ab.items}
    common = [i for i in by_ab if i in by_aa]
    pairs = [(_divergent(by_aa[i]), _divergent(by_ab[i])) for i in common]
    pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
    if pairs:
        only_ab = sum(1 for x, y in pairs if y and not x)
        only_aa = sum(1 for x, y in pairs if x and not y)
        d_aa, d_ab = sum(x for x, _ in pairs), sum(y for _, y in pairs)
        n = len(pairs)
        test = "exact McNemar (one-sided binomial on the discordant items)"
        p = float(stats.binomtest(only_ab, only_ab + only_aa, 0.5, alternative="greater").pvalue) \
            if only_ab + only_aa else 1.0
    else:       # no shared items: two independent counts
        flags_aa = [f for f in (_divergent(i) for i in aa.items) if f is not None]
        flags_ab = [f for f in (_divergent(i) for i in ab.items) if f is not None]
        d_aa, d_ab, n = sum(flags_aa), sum(flags_ab), len(flags_ab)
        only_ab = only_aa = 0
        test = "Fisher exact (one-sided, the runs share no item)"
        p = (float(stats.fisher_exact([[d_ab, len(flags_ab) - d_ab], [d_aa, len(flags_aa) - d_aa]],
                                      alternative="greater")[1]) if flags_aa and flags_ab else None)
    kl = [(by_aa[i].drift.kl_mean, by_ab[i].drift.kl_mean) for i in common
          if by_aa[i].drift is not None and by_ab[i].drift is not None
          and by_aa[i].drift.kl_mean is not None and by_ab[i].drift.kl_mean is not None]
    kl_ci = kl_aa = kl_ab = kl_p = None
    nonzero = 0
    if kl:
        a = np.array(kl, dtype=np.float64)
        kl_aa, kl_ab = float(a[:, 0].mean()), float(a[:, 1].mean())
        diff = a[:, 1] - a[:, 0]
        diff[np.abs(diff) < KL_FLOOR] = 0.0     # float noise of the logprobs, not drift
        nonzero = int(np.count_nonzero(diff))
        kl_p = kl_test_p(diff)
        if len(diff) >= 2 and np.ptp(diff) > 0:
            res = stats.bootstrap((diff,), np.mean, n_resamples=BOOTSTRAP_RESAMPLES, confidence_level=0.95,
                                  method="percentile", random_state=np.random.default_rng(0))
            kl_ci = (float(res.confidence_interval.low), float(res.confidence_interval.high))
        else:
            kl_ci = (float(diff.mean()), float(diff.mean()))
    each = alpha / 2   # Bonferroni over the two tests: "beyond" rejects at alpha
    count_beyond = p is not None and p < each
    kl_beyond = kl_p is not None and kl_p < each
    verdict = "beyond" if count_beyond or kl_beyond else "within"
    p_text = "-" if p is None else f"{p:.3g}"
    count_words = f"{d_ab} of {n} items diverge where A/A diverges on {d_aa} (p = {p_text}, {test})" if verdict == \
        "within" else f"{d_ab} items diverge where A/A diverges on {d_aa} (p = {p_text}, {test})"
    kl_words = None
    if kl and not nonzero:
        kl_words = (f"mean KL {kl_ab:.3g} vs A/A {kl_aa:.3g} nats per token, every per-item difference below the "
                    f"numerical floor of {KL_FLOOR:g} nats (float32 rounding of the logprobs), so taken as 0 "
                    f"({KL_TEST} p = 1)")
    elif kl:
        kl_words = (f"mean KL {kl_ab:.3g} vs A/A {kl_aa:.3g} nats per token, difference 95% CI "
                    f"[{kl_ci[0]:.3g}, {kl_ci[1]:.3g}] (bootstrap over {len(kl)} items; {nonzero} above the floor "
                    f"of {KL_FLOOR:g} nats), {KL_TEST} p = {kl_p:.3g}")
    levels = f"each test at α/2 = {each:g} (Bonferroni), the verdict at α = {alpha:g}"
    if verdict == "within":
        sentence = "within the engine's own noise: " + "; ".join(w for w in (count_words, kl_words) if w)
    else:
        first = [w for w, hit in ((count_words, count_beyond), (kl_words, kl_beyond)) if w and hit]
        rest = [w for w, hit in ((count_words, count_beyond), (kl_words, kl_beyond)) if w and not hit]
        sentence = "beyond it: " + "; ".join(first + rest)
        if kl_words and count_beyond != kl_beyond:
            sentence += ("; the two tests disagree: " + (
                "the numbers drifted beyond the engine's own noise on the same tokens, but no more items diverge "
                "than in A/A" if kl_beyond else
                "more items diverge than in A/A, but where the texts agree the numbers did not drift beyond it"))
    sentence += f" ({levels})"
    return NoiseFloor(n, d_aa, d_ab, only_ab, only_aa, test, p, len(kl), kl_aa, kl_ab, kl_ci, verdict, sentence,
                      kl_p_value=kl_p, kl_nonzero=nonzero, alpha=alpha)
