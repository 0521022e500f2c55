"""Run B against run A on the items neither errored on: the exact McNemar test, the paired
accuracies and token ratios, and the equivalence verdict (TOST) the gate asks for."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..store import Run
from .run_stats import _usage, is_correct, is_error
from .stats import Equivalence, McNemar, equivalence, mcnemar_exact, median

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
