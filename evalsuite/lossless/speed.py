"""Speed beside the lossless verdict: the candidate's decode speed-up over the baseline, measured
on the same requests, and its speculation's acceptance.

Per request, the decode rate is the record's own (analysis/run_stats.py DECODE_PER_REQUEST: first
to last streamed token, tokens from usage; the server's own timings for an unstreamed run), one
source for both runs; the speed-up is the paired ratio over the items both runs answered
(run_stats.paired_ratio: geometric mean of the per-item ratios, Student-t 95% interval of the
mean log ratio). The acceptance is accepted ÷ drafted tokens of the candidate's run, from its
manifest's speculation counters, else its records' llama-server timings (speculation.py).
Pure: reads the two loaded runs only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..analysis.run_stats import DECODE_PER_REQUEST, PairedRatio, decode_rates, paired_ratio
from ..analysis.stats import median
from ..speculation import SpecCounters, run_acceptance

NO_TIMINGS = "no decode timings in the records (unstreamed, and the server sent no timings)"


@dataclass(frozen=True)
class SpeedBeside:
    n_items: int                          # items both runs have a record for
    decode: PairedRatio | None            # candidate ÷ baseline, paired by item
    source: str | None                    # DECODE_PER_REQUEST key, None: no decode timings
    baseline_median: float | None         # median per-request decode t/s of each run
    candidate_median: float | None
    acceptance: SpecCounters | None       # the candidate's drafted / accepted tokens

    @property
    def acceptance_rate(self) -> float | None:
        a = self.acceptance
        return a.accepted / a.drafted if a is not None and a.drafted > 0 else None

    def acceptance_words(self) -> str:
        a = self.acceptance
        if a is None:
            return "acceptance: none recorded (no draft counters, no per-response timings)"
        if a.drafted <= 0:
            return "acceptance: none (no tokens were drafted)"
        where = "/metrics counters" if a.source == "metrics" else "per-response timings"
        return f"acceptance {self.acceptance_rate:.2f} ({a.accepted:.0f} of {a.drafted:.0f} drafted, {where})"

    def line(self) -> str:
        """"speed: decode 1.92x (1.85–2.00) on the 200 items both answered …, acceptance 0.71 (…)";
        without timings one line that says so, no number."""
        if self.source is None:
            return f"speed: {NO_TIMINGS}: no speed-up; {self.acceptance_words()}"
        d = self.decode
        if d is None:
            return (f"speed: decode timings on fewer than 2 items both runs answered: no speed-up; "
                    f"{self.acceptance_words()}")
        return (f"speed: decode {d.ratio:.2f}x ({d.low:.2f}–{d.high:.2f}, 95%) candidate vs baseline on the {d.n} "
                f"items both answered (per request {_tps(self.baseline_median)} → {_tps(self.candidate_median)} t/s, "
                f"medians); {self.acceptance_words()}")

    def to_dict(self) -> dict[str, Any]:
        a = self.acceptance
        return {"summary": self.line(), "n_items": self.n_items,
                "decode_speedup": None if self.decode is None else self.decode.to_dict(),
                "decode_source": self.source,
                "decode_definition": DECODE_PER_REQUEST.get(self.source) if self.source else NO_TIMINGS,
                "baseline_decode_median": self.baseline_median, "candidate_decode_median": self.candidate_median,
                "acceptance": None if a is None else {**a.to_dict(), "rate": self.acceptance_rate}}


def _tps(x: float | None) -> str:
    return "n/a" if x is None else f"{x:,.1f}"


def speed_beside(baseline: Mapping[str, Mapping[str, Any]], candidate: Mapping[str, Mapping[str, Any]],
                 candidate_manifest: Mapping[str, Any] | None, ids: Sequence[str] | None = None) -> SpeedBeside:
    """The candidate against the baseline on the items both have (records by id; `ids` in order)."""
    ids = [i for i in (ids if ids is not None else baseline) if i in baseline and i in candidate]
    cand = [candidate[i] for i in ids]
    source, (rates_b, rates_c) = decode_rates([[baseline[i] for i in ids], cand])
    return SpeedBeside(
        n_items=len(ids), decode=paired_ratio("decode speed", rates_b, rates_c) if source else None, source=source,
        baseline_median=median([v for v in rates_b if v is not None]),
        candidate_median=median([v for v in rates_c if v is not None]),
        acceptance=run_acceptance(dict(candidate_manifest or {}), (r.get("server_timings") for r in cand)))
