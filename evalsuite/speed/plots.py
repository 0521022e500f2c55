"""PNG plots of speed profiles, as analysis/plots.py draws: matplotlib imported inside each
function with the Agg backend, every function returns PNG bytes (None when the profiles hold
nothing to draw). One line or bar set per profile, so a comparison overlays them."""
from __future__ import annotations

from typing import Sequence

from ..analysis.plots import _png, _pyplot   # one Agg set-up and one PNG writer for every page
from .rows import Profile, Row


def _err(row_stat) -> tuple[float, float]:
    if row_stat.ci95 is None:
        return 0.0, 0.0
    return max(0.0, row_stat.mean - row_stat.ci95[0]), max(0.0, row_stat.ci95[1] - row_stat.mean)


def _label(profile: Profile, several: bool, *parts: str) -> str:
    bits = [profile.name] if several else []
    return " ".join(bits + [p for p in parts if p]) or profile.name


def _tg(profile: Profile) -> list[Row]:
    return [r for r in profile.rows if r.test == "tg" and not r.cached_mode and r.figure and r.figure.mean is not None]


def tg_vs_depth(profiles: Sequence[Profile]) -> bytes | None:
    """Per-request decode t/s against the context depth, a line per profile, workload, tg and concurrency."""
    lines: dict[tuple, list[Row]] = {}
    for p in profiles:
        for r in _tg(p):
            lines.setdefault((p.name, r.workload, r.tg, r.concurrency), []).append(r)
    if not any(len({r.depth for r in rows}) > 1 for rows in lines.values()):
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    several = len(profiles) > 1
    for (name, workload, tg, c), rows in lines.items():
        rows = sorted(rows, key=lambda r: r.depth)
        profile = next(p for p in profiles if p.name == name)
        errs = [_err(r.figure) for r in rows]
        ax.errorbar([r.depth for r in rows], [r.figure.mean for r in rows], yerr=[[e[0] for e in errs], [e[1] for e in errs]],
                    marker="o", capsize=3, label=_label(profile, several, workload, f"tg{tg}", f"c{c}"))
    ax.set_xlabel("context depth (tokens)")
    ax.set_ylabel("decode t/s per request, 95% CI")
    ax.set_title("Decode speed vs context depth")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


def by_concurrency(profiles: Sequence[Profile]) -> bytes | None:
    """Per-request decode, the aggregate decode (the streams' rates summed while they decode) and the
    throughput with prefill against the concurrency, at each profile's first depth."""
    plt = _pyplot()
    drawn = False
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    several = len(profiles) > 1
    for p in profiles:
        rows = _tg(p)
        if not rows:
            continue
        depth = min(r.depth for r in rows)
        for (workload, tg) in dict.fromkeys((r.workload, r.tg) for r in rows):
            line = sorted((r for r in rows if r.depth == depth and r.workload == workload and r.tg == tg),
                          key=lambda r: r.concurrency)
            if len({r.concurrency for r in line}) < 2:
                continue
            drawn = True
            xs = [r.concurrency for r in line]
            ax.plot(xs, [r.figure.mean for r in line], marker="o", label=_label(p, several, workload, f"tg{tg}", "per request"))
            single = [(r.concurrency, r.figure.mean) for r in line if r.concurrency == 1]
            for what, name, style in (("aggregate_decode", "aggregate decode", "--"),
                                      ("aggregate", "throughput with prefill", ":")):
                points = sorted(single + [(r.concurrency, getattr(r, what).mean) for r in line
                                          if getattr(r, what) is not None and getattr(r, what).mean is not None])
                if len(points) > len(single):
                    ax.plot([x for x, _ in points], [y for _, y in points], marker="s", linestyle=style,
                            label=_label(p, several, workload, f"tg{tg}", name))
    if not drawn:
        _pyplot().close(fig)
        return None
    ax.set_xlabel("concurrency (streams kept full)")
    ax.set_ylabel("t/s")
    ax.set_title("Per-request decode, aggregate decode and throughput vs concurrency")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


def acceptance(profiles: Sequence[Profile]) -> bytes | None:
    """The acceptance rate per workload (mean over its decode rows), one bar per profile."""
    data: dict[str, dict[str, list[float]]] = {}
    for p in profiles:
        for r in p.rows:
            if r.test == "tg" and r.acceptance is not None and r.acceptance.rate is not None:
                data.setdefault(p.name, {}).setdefault(r.workload, []).append(r.acceptance.rate)
    if not data:
        return None
    workloads = list(dict.fromkeys(w for d in data.values() for w in d))
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.5, 1.3 * len(workloads) * len(data) + 2), 4.2))
    width = 0.8 / len(data)
    for n, (name, by) in enumerate(data.items()):
        values = [100 * sum(by[w]) / len(by[w]) if w in by else 0.0 for w in workloads]
        bars = ax.bar([i + n * width for i in range(len(workloads))], values, width=width, label=name)
        ax.bar_label(bars, labels=[f"{v:.0f}%" for v in values], fontsize=7, padding=1)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(workloads))], workloads)
    ax.set_ylabel("accepted / drafted tokens (%)")
    ax.set_ylim(0, 105)
    ax.set_title("Speculative acceptance per workload")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def soak(profiles: Sequence[Profile]) -> bytes | None:
    series = [(p, p.soak) for p in profiles if p.soak is not None and p.soak.series]
    if not series:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    for p, s in series:
        # a window with the server down is a gap in the line (nan), never a zero
        ax.plot([t for t, _ in s.series], [float("nan") if v is None else v for _, v in s.series], marker=".",
                label=f"{p.name} (c{s.concurrency})")
    ax.set_xlabel("seconds from the start")
    ax.set_ylabel(f"throughput t/s per {series[0][1].window_s:g}-s window")
    ax.set_ylim(bottom=0)
    ax.set_title("Soak: aggregate decode over time")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


def replay(profiles: Sequence[Profile]) -> bytes | None:
    """Decode t/s and TTFT against the context of each replayed turn, a line per profile."""
    sessions = [(p, [t for t in p.replay.turns if t.context_tokens is not None]) for p in profiles if p.replay is not None]
    sessions = [(p, turns) for p, turns in sessions if turns]
    if not sessions:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.8, 4.2))
    ttft_ax = ax.twinx()
    several = len(profiles) > 1
    for p, turns in sessions:
        xs = [t.context_tokens for t in turns]
        ax.plot(xs, [float("nan") if t.decode_tps is None else t.decode_tps for t in turns], marker="o",
                label=_label(p, several, "decode t/s"))
        ttft_ax.plot(xs, [float("nan") if t.ttft_ms is None else t.ttft_ms / 1000 for t in turns], marker="s",
                     linestyle="--", color="tab:red", label=_label(p, several, "TTFT (s)"))
    ax.set_xlabel("context (prompt tokens of the turn)")
    ax.set_ylabel("decode t/s")
    ttft_ax.set_ylabel("TTFT (s)")
    ax.set_title("Replayed session: decode and TTFT vs context")
    ax.grid(alpha=0.3)
    lines = ax.get_legend_handles_labels()
    more = ttft_ax.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8)
    return _png(fig)


def load(profiles: Sequence[Profile]) -> bytes | None:
    """TTFT p50 and p99 and the share within the SLO against the arrival rate (inf drawn last)."""
    sweeps = [(p, p.load) for p in profiles if p.load is not None and p.load.points]
    if not sweeps:
        return None
    import math

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.8, 4.2))
    several = len(profiles) > 1
    finite = sorted({pt.rate for _, sweep in sweeps for pt in sweep.points if not math.isinf(pt.rate)})
    far = (max(finite) * 1.5 if finite else 1.0)

    def x(rate: float) -> float:
        return far if math.isinf(rate) else rate

    for p, sweep in sweeps:
        pts = sorted(sweep.points, key=lambda pt: x(pt.rate))
        xs = [x(pt.rate) for pt in pts]
        for k, name, style in ((0, "TTFT p50", "-"), (2, "TTFT p99", ":")):
            ax.plot(xs, [float("nan") if pt.ttft_ms[k] is None else pt.ttft_ms[k] / 1000 for pt in pts], marker="o",
                    linestyle=style, label=_label(p, several, name))
        if sweep.slo.given and sweep.slo.ttft:
            ax.axhline(sweep.slo.ttft, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xlabel("arrival rate (requests/s; the last point: all at once)" if any(
        math.isinf(pt.rate) for _, s in sweeps for pt in s.points) else "arrival rate (requests/s)")
    ax.set_ylabel("TTFT (s)")
    ax.set_title("Load by arrival rate: time to first token")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


PLOTS = {"tg vs depth": tg_vs_depth, "per-request and aggregate vs concurrency": by_concurrency,
         "acceptance per workload": acceptance, "soak": soak, "replayed session": replay, "load by arrival rate": load}


def all_plots(profiles: Sequence[Profile]) -> list[tuple[str, bytes]]:
    out = []
    for name, make in PLOTS.items():
        png = make(profiles)
        if png is not None:
            out.append((name, png))
    return out
