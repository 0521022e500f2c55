"""`evalsuite report` for sampled runs (`run --samples N`): the runs, avg@N / pass@k / maj@N with
their intervals, each run paired per item against the first, and the pass@k curves as a PNG.
build_report hands sampled runs here; a sampled run beside a greedy one is refused there.
"""
from __future__ import annotations

import base64
import io
from typing import Any, Sequence

from .compare import compare_sampled


def pass_at_k_curves(data: dict[str, Any]) -> bytes:
    """pass@k against k (log2 axis), one line per run, the t 95% interval as bars."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for run in data["runs"]:
        ks = [int(k) for k, v in run["pass_at_k"].items() if v["estimate"] is not None]
        ys = [100 * run["pass_at_k"][str(k)]["estimate"] for k in ks]
        lows = [y - 100 * (run["pass_at_k"][str(k)]["ci95"][0] if run["pass_at_k"][str(k)]["ci95"][0] is not None
                           else y / 100) for k, y in zip(ks, ys)]
        highs = [100 * (run["pass_at_k"][str(k)]["ci95"][1] if run["pass_at_k"][str(k)]["ci95"][1] is not None
                        else y / 100) - y for k, y in zip(ks, ys)]
        ax.errorbar(ks, ys, yerr=[[max(0.0, v) for v in lows], [max(0.0, v) for v in highs]], marker="o", capsize=3,
                    label=f"{run['name']} (N={run['samples']}, T={run['temperature']})")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("k (samples)")
    ax.set_ylabel("pass@k (%), t 95% over items")
    ax.set_title("pass@k (unbiased estimator)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _ci(ci: Sequence[float | None], scale: float = 100.0, sign: str = "") -> str:
    lo, hi = ci
    return "n/a" if lo is None else f"[{scale * lo:{sign}.1f}, {scale * hi:{sign}.1f}]"


def table(headers: Sequence[Any], rows: Sequence[Sequence[Any]], text_columns: int = 1) -> dict[str, Any]:
    """A table for the page (as report.table: report imports this module, not the reverse)."""
    return {"headers": list(headers), "rows": [list(r) for r in rows],
            "numeric": list(range(text_columns, len(headers)))}


def build_sampled_report(runs: Sequence[Any], runs_rows: dict[str, Any], alpha: float = 0.05,
                         title: str | None = None) -> str:
    """runs_rows: report.runs_table of these runs."""
    from ...pages.page import render

    data = compare_sampled(runs, alpha)
    names = [r["name"] for r in data["runs"]]
    ks = data["ks"]
    rates = table(["run", "items", "N", "temperature", "avg@N", "95% CI"] + [f"pass@{k}" for k in ks]
                  + ["maj@N", "maj ties", "all right", "some", "none"],
                  [[r["name"], r["n_items"], r["samples"], r["temperature"], _pct(r["avg"]), _ci(r["avg_ci95"])]
                   + [_pct(r["pass_at_k"][str(k)]["estimate"]) for k in ks]
                   + [_pct(r["maj"]["estimate"]), r["maj"]["ties"], _pct(r["all_correct"]), _pct(r["some_correct"]),
                      _pct(r["none_correct"])] for r in data["runs"]])
    pairs = table(["run vs first", "paired items", "Δ rate (pp)", "95% CI (pp)", "p (permutation)", "items moved",
                   "80%-power drop (pp)"],
                  [[p["run"], p["n_items"], "n/a" if p["delta_pp"] is None else f"{p['delta_pp']:+.1f}",
                    _ci(p["ci95_pp"], 1.0, "+"), f"{p['p']:.3g}", p["n_moved"],
                    "n/a" if p["min_detectable_drop_pp"] is None else f"{p['min_detectable_drop_pp']:.1f}"]
                   for p in data["pairs"]])
    moved = table(["run", "item", "subset", "first run", "this run", "Δ (pp)"],
                  [[p["run"], m["id"], m["subset"], m["baseline"], m["candidate"], f"{m['delta_pp']:+.1f}"]
                   for p in data["pairs"] for m in p["moved_most"]], text_columns=3)
    verdicts = []
    for p in data["pairs"]:
        if p["p"] < alpha:
            verdicts.append(f"{p['run']}: success rate {'up' if (p['delta_pp'] or 0) > 0 else 'down'} "
                            f"{abs(p['delta_pp'] or 0):.1f} pp (p = {p['p']:.3g})")
        else:
            verdicts.append(f"{p['run']}: no significant change in success rate (p = {p['p']:.3g})")
    curves = base64.b64encode(pass_at_k_curves(data)).decode("ascii")
    return render("sampling.html.j2", title=title or "evalsuite report (sampled): " + " vs ".join(names),
                  verdict="; ".join(verdicts) or "one run", runs=runs_rows, rates=rates,
                  pairs=pairs if data["pairs"] else None, moved=moved if moved["rows"] else None,
                  curves=curves, notes=data["notes"], alpha=alpha)
