"""Two speed profiles side by side: the speedup of each row the two share, its 95% interval and
whether it is beyond the run-to-run noise (the interval leaves 1.0 out).

    evalsuite compare spec-off.json spec-on.json         # or: evalsuite speed --compare A B
    evalsuite report spec-off.json spec-on.json --html speed.html

Rows pair on (workload, test, pp, tg, depth, concurrency, cached). For t/s the speedup is
B / A (above 1: B is faster); for the TTFT it is A / B (above 1: B answers sooner), so every
speedup reads the same way. The interval is the ratio of the two means on the log scale
(delta method, Welch's degrees of freedom; stats.ratio); with one run on either side the noise
is not known and nothing is said beyond the ratio. An analysis: it reads the two JSON files
only (rows.read_profile), never an endpoint.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, TextIO

from .rows import Profile, ProfileError, Row, Stat, read_profile
from .stats import ratio, summarize


@dataclass(frozen=True)
class Speedup:
    """One figure of one row, A against B."""
    row: str                      # the row's name (pp512 @ d4096 c2)
    workload: str
    figure: str                   # "t/s", "agg decode t/s", "throughput t/s" or "TTFT (ms)"
    a: Stat
    b: Stat
    speedup: float | None
    ci95: tuple[float, float] | None

    @property
    def beyond_noise(self) -> bool | None:
        """True/False: the interval leaves 1.0 out or not; None: no interval (one run)."""
        if self.ci95 is None:
            return None
        return not (self.ci95[0] <= 1.0 <= self.ci95[1])

    @property
    def verdict(self) -> str:
        if self.speedup is None:
            return "n/a"
        if self.beyond_noise is None:
            return "noise unknown (one run)"
        if not self.beyond_noise:
            return "within noise"
        return "faster" if self.speedup > 1 else "slower"

    def to_dict(self) -> dict[str, Any]:
        return {"row": self.row, "workload": self.workload, "figure": self.figure, "a": self.a.mean, "b": self.b.mean,
                "a_runs": self.a.n, "b_runs": self.b.n, "speedup": self.speedup,
                "ci95": list(self.ci95) if self.ci95 else None, "beyond_noise": self.beyond_noise,
                "verdict": self.verdict}


@dataclass(frozen=True)
class ProfileComparison:
    a: Profile
    b: Profile
    speedups: tuple[Speedup, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "evalsuite.speed.compare", "a": self.a.name, "b": self.b.name,
                "speedups": [s.to_dict() for s in self.speedups], "only_a": list(self.only_a),
                "only_b": list(self.only_b)}

    def headline(self) -> str:
        """One line: the decode speedup where there is one ("tg128: 1.92x (1.81-2.04)")."""
        parts = []
        for s in self.speedups:
            if s.figure == "t/s" and s.row.startswith("tg") and s.speedup is not None:
                ci = f" ({s.ci95[0]:.2f}-{s.ci95[1]:.2f})" if s.ci95 else ""
                parts.append(f"{s.workload} {s.row} {s.speedup:.2f}x{ci}")
        return "decode " + "; ".join(parts[:4]) if parts else "no decode row in common"


def _ttft(row: Row) -> Stat:
    return summarize(row.ttft_values_ms or [row.ttft_ms])


def compare_profiles(a: Profile, b: Profile) -> ProfileComparison:
    rows_b = {r.key: r for r in b.rows}
    speedups = []
    for ra in a.rows:
        rb = rows_b.get(ra.key)
        if rb is None:
            continue
        if ra.figure is not None and rb.figure is not None:
            s, ci = ratio(ra.figure, rb.figure)
            speedups.append(Speedup(ra.name, ra.workload, "t/s", ra.figure, rb.figure, s, ci))
        if ra.aggregate_decode is not None and rb.aggregate_decode is not None:
            s, ci = ratio(ra.aggregate_decode, rb.aggregate_decode)
            speedups.append(Speedup(ra.name, ra.workload, "agg decode t/s", ra.aggregate_decode, rb.aggregate_decode,
                                    s, ci))
        if ra.aggregate is not None and rb.aggregate is not None:
            s, ci = ratio(ra.aggregate, rb.aggregate)
            speedups.append(Speedup(ra.name, ra.workload, "throughput t/s", ra.aggregate, rb.aggregate, s, ci))
        if ra.test == "pp" and ra.ttft_ms and rb.ttft_ms:
            ta, tb = _ttft(ra), _ttft(rb)
            s, ci = ratio(tb, ta)    # A / B: above 1, B answers sooner
            speedups.append(Speedup(ra.name, ra.workload, "TTFT (ms)", ta, tb, s, ci))
    keys_a, keys_b = {r.key for r in a.rows}, set(rows_b)
    return ProfileComparison(a, b, tuple(speedups), tuple(f"{r.workload} {r.name}" for r in a.rows if r.key not in keys_b),
                             tuple(f"{r.workload} {r.name}" for r in b.rows if r.key not in keys_a))


def comparison_cells(cmp: ProfileComparison) -> tuple[list[str], list[list[str]]]:
    several = len({s.workload for s in cmp.speedups}) > 1
    headers = (["workload"] if several else []) + ["test", "figure", cmp.a.name, cmp.b.name, "speedup", "95% CI",
                                                   "verdict"]
    rows = []
    for s in cmp.speedups:
        rows.append(([s.workload] if several else []) + [
            s.row, s.figure, _figure(s.a), _figure(s.b), "n/a" if s.speedup is None else f"{s.speedup:.2f}x",
            "n/a" if s.ci95 is None else f"{s.ci95[0]:.2f}-{s.ci95[1]:.2f}", s.verdict])
    return headers, rows


def _figure(s: Stat) -> str:
    if s.mean is None:
        return "n/a"
    return f"{s.mean:.2f}" + (f" ± {s.std:.2f}" if s.std is not None else "")


def comparison_text(cmp: ProfileComparison) -> str:
    from .table import markdown

    head = f"speed: {cmp.b.name} against {cmp.a.name} (speedup above 1: {cmp.b.name} is faster)"
    lines = [head, "", markdown(*comparison_cells(cmp))] if cmp.speedups else [head, "no row in common"]
    if cmp.only_a:
        lines.append(f"only in {cmp.a.name}: {', '.join(cmp.only_a)}")
    if cmp.only_b:
        lines.append(f"only in {cmp.b.name}: {', '.join(cmp.only_b)}")
    for p in (cmp.a, cmp.b):
        if p.status != "finished":
            lines.append(f"note: {p.name} is {p.status}: its rows are those measured before it stopped")
    return "\n".join(lines)


def compare_main(paths: Sequence[str | Path], json_path: str | Path | None = None, out: TextIO | None = None,
                 err: TextIO | None = None) -> int:
    """`evalsuite compare A.json B.json` (and `speed --compare A B`): 0 printed, 2 unusable input.
    More than two profiles: each against the first."""
    out, err = out or sys.stdout, err or sys.stderr
    if len(paths) < 2:
        print("compare: give two speed profiles (JSON from `evalsuite speed --json`)", file=err)
        return 2
    try:
        profiles = [read_profile(p) for p in paths]
    except ProfileError as e:
        print(f"compare: {e}", file=err)
        return 2
    comparisons = [compare_profiles(profiles[0], p) for p in profiles[1:]]
    for n, cmp in enumerate(comparisons):
        if n:
            print("", file=out)
        print(comparison_text(cmp), file=out)
    if json_path is not None:
        Path(json_path).write_text(json.dumps([c.to_dict() for c in comparisons], indent=2) + "\n", encoding="utf-8")
    return 0
