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
- drift: the per-item mean KL over the common prefix, A/B minus A/A on the same items; a
  bootstrap over items (scipy.stats.bootstrap, 2,000 resamples, percentile 95% interval, seed 0)
  of the mean difference. Beyond the noise when the interval lies above 0.
Beyond when either test is at alpha (0.05 each); the verdict names which.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ALPHA = 0.05
BOOTSTRAP_RESAMPLES = 2000


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

    def to_dict(self) -> dict[str, Any]:
        return {"items": self.items, "aa_divergent": self.aa_divergent, "ab_divergent": self.ab_divergent,
                "only_ab": self.only_ab, "only_aa": self.only_aa, "test": self.test, "p_value": self.p_value,
                "kl_items": self.kl_items, "kl_aa_mean": self.kl_aa_mean, "kl_ab_mean": self.kl_ab_mean,
                "kl_diff_ci95": None if self.kl_diff_ci is None else list(self.kl_diff_ci),
                "alpha": ALPHA, "verdict": self.verdict, "summary": self.sentence}


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
    kl_ci = kl_aa = kl_ab = None
    if kl:
        a = np.array(kl, dtype=np.float64)
        kl_aa, kl_ab = float(a[:, 0].mean()), float(a[:, 1].mean())
        diff = a[:, 1] - a[:, 0]
        if len(diff) >= 2 and np.ptp(diff) > 0:
            res = stats.bootstrap((diff,), np.mean, n_resamples=BOOTSTRAP_RESAMPLES, confidence_level=0.95,
                                  method="percentile", random_state=np.random.default_rng(0))
            kl_ci = (float(res.confidence_interval.low), float(res.confidence_interval.high))
        else:
            kl_ci = (float(diff.mean()), float(diff.mean()))
    count_beyond = p is not None and p < alpha
    kl_beyond = kl_ci is not None and kl_ci[0] > 0 and len(kl) >= 2
    verdict = "beyond" if count_beyond or kl_beyond else "within"
    p_text = "-" if p is None else f"{p:.3g}"
    if verdict == "within":
        sentence = (f"within the engine's own noise: {d_ab} of {n} items diverge where A/A diverges on {d_aa} "
                    f"(p = {p_text}, {test})")
    else:
        why = []
        if count_beyond:
            why.append(f"{d_ab} items diverge where A/A diverges on {d_aa} (p = {p_text}, {test})")
        if kl_beyond:
            why.append(f"mean KL {kl_ab:.3g} vs A/A {kl_aa:.3g} nats per token, difference 95% CI "
                       f"[{kl_ci[0]:.3g}, {kl_ci[1]:.3g}] (bootstrap over {len(kl)} items)")
        sentence = "beyond it: " + "; ".join(why)
    if kl and verdict == "within":
        sentence += (f"; mean KL {kl_ab:.3g} vs A/A {kl_aa:.3g} nats per token"
                     + (f", difference 95% CI [{kl_ci[0]:.3g}, {kl_ci[1]:.3g}]" if kl_ci else ""))
    return NoiseFloor(n, d_aa, d_ab, only_ab, only_aa, test, p, len(kl), kl_aa, kl_ab, kl_ci, verdict, sentence)
