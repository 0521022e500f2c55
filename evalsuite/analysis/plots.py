"""PNG plots of a comparison: accuracy vs output tokens, token distributions, per-subset bars.

matplotlib is imported inside each function with the Agg backend (no display needed), so
importing this module costs nothing. Every function returns PNG bytes.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .compare.comparison import Comparison


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    _pyplot().close(fig)
    return buffer.getvalue()


def point_labels(points: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """One label per spot: runs whose points (nearly) coincide share one, naming them all
    ("a, b"); otherwise the later label was drawn over the earlier and only one name showed."""
    if not points:
        return []
    xs = [x for x, _, _ in points]
    x_tol = 0.02 * (max(xs) - min(xs) or max(abs(v) for v in xs) or 1.0)
    y_tol = 2.0   # percentage points
    groups: list[list[tuple[float, float, str]]] = []
    for point in points:
        for group in groups:
            gx, gy, _ = group[0]
            if abs(point[0] - gx) <= x_tol and abs(point[1] - gy) <= y_tol:
                group.append(point)
                break
        else:
            groups.append([point])
    return [(g[0][0], g[0][1], ", ".join(name for _, _, name in g)) for g in groups]


def accuracy_vs_tokens(cmp: "Comparison") -> bytes:
    return _png(accuracy_vs_tokens_figure(cmp))


def accuracy_vs_tokens_figure(cmp: "Comparison") -> Any:
    """One point per run: mean output tokens (x) against accuracy with its Wilson 95% bar (y)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    points = []
    for run in cmp.runs:
        x = run.tokens.out_mean
        if x is None or run.accuracy is None:
            continue
        lo, hi = run.ci95
        y = 100 * run.accuracy
        # max(0, ...): at 0 % or 100 % the Wilson bound can land a rounding error past the point
        ax.errorbar([x], [y], yerr=[[max(0.0, y - 100 * lo)], [max(0.0, 100 * hi - y)]], fmt="o", capsize=4,
                    label=run.name)
        points.append((x, y, run.name))
    for x, y, text in point_labels(points):
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(6, 6), fontsize=8)
    ax.set_xlabel("mean output tokens per item")
    ax.set_ylabel("accuracy (%), Wilson 95%")
    ax.set_title("Accuracy vs output tokens")
    ax.grid(alpha=0.3)
    return fig


def token_distribution(cmp: "Comparison") -> bytes:
    """Box plot of completion tokens per item, one box per run (errors and missing usage left out)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 1.4 * len(cmp.runs) + 2), 4.2))
    data = [list(run.tokens.completion_tokens) or [0] for run in cmp.runs]
    ax.boxplot(data, showmeans=True)
    ax.set_xticks(range(1, len(cmp.runs) + 1), [run.name for run in cmp.runs], rotation=20, ha="right")
    ax.set_ylabel("output tokens per item")
    ax.set_title("Output-token distribution")
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def subset_accuracy(cmp: "Comparison") -> bytes:
    return _png(subset_accuracy_figure(cmp))


def subset_accuracy_figure(cmp: "Comparison") -> Any:
    """Grouped bars: accuracy per subset, one bar per run, each with its value written on it
    (a 0 % bar has no height: without its label the frame looked empty)."""
    plt = _pyplot()
    subsets = cmp.subset_names
    width = 0.8 / max(1, len(cmp.runs))
    fig, ax = plt.subplots(figsize=(max(5.0, 0.6 * len(subsets) * len(cmp.runs) + 2), 4.2))
    all_zero = True
    for n, run in enumerate(cmp.runs):
        values = []
        for s in subsets:
            stats = run.subset(s)
            values.append(100 * stats.accuracy if stats and stats.accuracy is not None else 0.0)
        all_zero = all_zero and not any(values)
        bars = ax.bar([i + n * width for i in range(len(subsets))], values, width=width, label=run.name)
        ax.bar_label(bars, labels=[f"{v:.0f}%" for v in values], fontsize=7, padding=1)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(subsets))], subsets, rotation=30, ha="right")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Accuracy per subset" + (" (every bar 0%)" if all_zero else ""))
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return fig


PLOTS = {
    "accuracy_vs_tokens.png": accuracy_vs_tokens,
    "token_distribution.png": token_distribution,
    "subset_accuracy.png": subset_accuracy,
}


def all_plots(cmp: "Comparison") -> dict[str, bytes]:
    return {name: make(cmp) for name, make in PLOTS.items()}


def write_plots(cmp: "Comparison", folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, png in all_plots(cmp).items():
        path = folder / name
        path.write_bytes(png)
        written.append(path)
    return written
