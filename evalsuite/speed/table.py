"""A profile as a person reads it in a terminal: llama-bench's table (model | test | t/s | ...),
one line per row, and the soak's summary; CSV for spreadsheets. Reads a Profile only."""
from __future__ import annotations

import csv
import io
from typing import Sequence

from .rows import Profile, Row, Stat


def fmt(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def fmt_stat(s: Stat | None) -> str:
    if s is None or s.mean is None:
        return "n/a"
    return f"{s.mean:.2f}" + (f" ± {s.std:.2f}" if s.std is not None else "")


def fmt_spread(s: Stat | None) -> str:
    """The median with the 10th and 90th percentiles: what a skewed or clumped set of rates hides
    from mean ± std."""
    if s is None or s.median is None:
        return ""
    if s.n < 3:
        return f"{s.median:.2f}"
    return f"{s.median:.2f} [{s.p10:.2f}, {s.p90:.2f}]"


def acceptance_text(row: Row) -> str:
    a = row.acceptance
    if row.test != "tg":
        return ""
    if a is None or a.rate is None:
        return row.acceptance_note or "n/a"
    return f"{a.rate:.2f} (len {a.mean_length:.2f})" if a.mean_length is not None else f"{a.rate:.2f}"


def notes_text(row: Row) -> str:
    out = []
    if row.error:
        out.append(f"error: {row.error[:160]}")
    if row.failed:
        out.append(f"{row.failed} failed")
    if row.partial:
        out.append("partial")
    if row.client_bound:
        out.append("client-bound")
    if row.concurrency > 1 and row.test != "ctx" and row.ttft_p99_ms is not None:
        out.append(f"TTFT p50 {row.ttft_p50_ms:.1f} / p99 {row.ttft_p99_ms:.1f} ms")
    if row.cached_tokens:
        out.append(f"{row.cached_tokens:.0f} cached")
    if row.below_floor:
        out.append(f"{row.below_floor} below the floor (left out)")
    if row.test == "pp" and row.ttft_parts and row.ttft_parts.get("text"):
        out.append(str(row.ttft_parts["text"]))
    if row.prompt_tokens is None and not row.error and row.runs:
        out.append("no usage")
    # the row's own notes, each by its head (the whole sentence is in the JSON and on the page)
    out += [n.split(":")[0] for n in row.notes if not n.startswith(("partial", "the server sent no usage"))
            and "below the floor" not in n]
    return "; ".join(out)


def profile_headers(profile: Profile) -> list[str]:
    several = len(profile.workloads) > 1
    return (["model"] + (["workload"] if several else []) + ["test", "t/s", "median [p10, p90]", "agg decode t/s",
                                                              "throughput t/s", "TTFR (ms)", "TTFT (ms)", "prefill (ms)",
                                                              "acceptance", "notes"])


def profile_cells(profile: Profile) -> list[list[str]]:
    several = len(profile.workloads) > 1
    rows = []
    for r in profile.rows:
        rows.append([profile.name] + ([r.workload] if several else []) + [
            r.name, fmt_stat(r.figure), fmt_spread(r.figure), fmt_stat(r.aggregate_decode) if r.aggregate_decode else "",
            fmt_stat(r.aggregate) if r.aggregate else "", fmt(r.ttfr_ms), fmt(r.ttft_ms), fmt(r.prefill_ms),
            acceptance_text(r), notes_text(r)])
    return rows


def markdown(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """llama-bench's table: pipes, a header rule, figures right-aligned."""
    cells = [list(headers)] + [list(map(str, r)) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [i for i, h in enumerate(headers) if "t/s" in h or "(ms)" in h or h in ("speedup", "95% CI",
                                                                                        "median [p10, p90]")]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.rjust(w) if i in numeric else c.ljust(w)
                                 for i, (c, w) in enumerate(zip(row, widths))) + " |"

    rule = "| " + " | ".join(("-" * (w - 1) + ":") if i in numeric else "-" * w for i, w in enumerate(widths)) + " |"
    return "\n".join([line(cells[0]), rule] + [line(r) for r in cells[1:]])


def profile_table(profile: Profile) -> str:
    parts = []
    if profile.rows:
        parts.append(markdown(profile_headers(profile), profile_cells(profile)))
    if profile.soak is not None:
        parts.append(soak_text(profile))
    if profile.replay is not None:
        parts.append(replay_text(profile))
    if profile.load is not None:
        parts.append(load_text(profile))
    head = (f"{profile.name} at {profile.endpoint}" + (f" ({profile.engine})" if profile.engine else "")
            + f": {profile.status}" + (f", round trip {profile.latency_ms:.2f} ms" if profile.latency_ms is not None else "")
            + (f", prompts sized by {profile.token_counts}" if profile.token_counts else ""))
    return head + "\n\n" + "\n\n".join(parts) if parts else head + "\n(no rows measured)"


def soak_text(profile: Profile) -> str:
    s = profile.soak
    agg = s.aggregate
    down = f", {s.down_windows} with the server down (gaps)" if s.down_windows else ""
    cut = f", {s.cut} cut at the end" if s.cut else ""
    return (f"soak: {s.duration_s:g} s at concurrency {s.concurrency}, tg {s.tg}: {s.requests} requests{cut}, {s.failed} "
            f"failed, {s.restarts} server restarts; throughput t/s over {s.window_s:g}-s windows: mean {fmt(agg.mean)}, "
            f"median {fmt(agg.median)}, min {fmt(agg.min)}, max {fmt(agg.max)} ({len(s.series)} windows{down}, "
            f"{s.tokens} tokens)" + "".join(f"; {n}" for n in s.notes))


def replay_cells(profile: Profile) -> tuple[list[str], list[list[str]]]:
    r = profile.replay
    several = len({t.session for t in r.turns}) > 1
    headers = (["session"] if several else []) + ["turn", "context", "cached", "TTFT (ms)", "prefill t/s", "decode t/s",
                                                  "tokens", "where the TTFT went / error"]
    rows = [([str(t.session)] if several else []) + [
        str(t.index), _n(t.context_tokens), _n(t.cached_tokens), fmt(t.ttft_ms, 1), fmt(t.prefill_tps, 1),
        fmt(t.decode_tps, 2), _n(t.tokens), t.error or t.ttft_parts or ""] for t in r.turns]
    return headers, rows


def _n(x: int | None) -> str:
    return "n/a" if x is None else f"{x:,}"


def replay_summary(profile: Profile) -> str:
    s = profile.replay.summary()
    pct = "n/a" if s["decode_cv"] is None else f"{100 * s['decode_cv']:.1f}%"
    return (f"replay {profile.replay.source}: {s['turns']} turns, {s['failed']} failed; decode mean "
            f"{fmt(s['decode_mean'])}, median {fmt(s['decode_median'])} t/s, jitter (CV) {pct}, worst turn "
            f"{s['worst_turn'] or 'n/a'} at {fmt(s['worst_decode'])} t/s, retention first to last "
            f"{fmt(s['retention'], 3)}, cache hit share "
            + ("n/a (the server reported no cached tokens)" if s["cache_hit_share"] is None
               else f"{100 * s['cache_hit_share']:.1f}%"))


def replay_text(profile: Profile) -> str:
    return replay_summary(profile) + "\n\n" + markdown(*replay_cells(profile))


def load_cells(profile: Profile) -> tuple[list[str], list[list[str]]]:
    load = profile.load
    headers = ["rate (req/s)", "sent/s", "requests", "failed", "TTFT p50/p90/p99 (ms)", "ITL p50/p90/p99 (ms)",
               "TPOT p50 (ms)", "output t/s", "within SLO", "goodput (req/s)", "client lag p50/p99 (ms)", "notes"]

    def three(xs) -> str:
        return " / ".join(fmt(x, 1) for x in xs)

    rows = []
    for p in load.points:
        rows.append(["inf" if p.rate == float("inf") else f"{p.rate:g}", fmt(p.achieved_rate), str(p.requests),
                     str(p.failed), three(p.ttft_ms), three(p.itl_ms), fmt(p.tpot_ms[0], 1), fmt(p.output_tps, 1),
                     "" if p.good_share is None else f"{100 * p.good_share:.0f}% ({p.good})", fmt(p.goodput),
                     three(p.lag_ms[:2]), "; ".join(n.split(":")[0] for n in p.notes)])
    return headers, rows


def load_text(profile: Profile) -> str:
    load = profile.load
    head = f"load by arrival rate: {load.workload}, Poisson arrivals (seed {load.seed})" + (
        f", over {len(load.endpoints)} endpoints" if len(load.endpoints) > 1 else "")
    lines = [head, "", markdown(*load_cells(profile))]
    if load.slo.given:
        knee = load.knee
        lines.append(f"knee: {'none of the rates' if knee is None else ('inf' if knee == float('inf') else f'{knee:g} req/s')}"
                     f" (the highest rate with {load.slo.text()})")
    for p in load.points:
        lines += [f"rate {p.rate:g}: {n}" for n in p.notes]
    return "\n".join(lines)


def profile_csv(profile: Profile) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    if profile.load is not None or profile.replay is not None:
        headers, rows = load_cells(profile) if profile.load is not None else replay_cells(profile)
        w.writerow(["model"] + headers)
        for r in rows:
            w.writerow([profile.name] + r)
        return out.getvalue()
    w.writerow(["model", "workload", "test", "pp", "tg", "depth", "concurrency", "runs", "mean", "std", "ci95_low",
                "ci95_high", "unit", "aggregate", "prompt_tokens", "cached_tokens", "ttfr_ms", "ttft_ms", "prefill_ms",
                "ttft_p50_ms", "ttft_p99_ms", "failed", "acceptance_rate", "acceptance_mean_length", "client_bound",
                "partial", "error", "median", "p10", "p90", "below_floor", "aggregate_decode"])
    for r in profile.rows:
        f, a = r.figure, r.acceptance
        w.writerow([profile.name, r.workload, r.name, r.pp, r.tg, r.depth, r.concurrency, r.runs,
                    f.mean if f else "", f.std if f and f.std is not None else "",
                    f.ci95[0] if f and f.ci95 else "", f.ci95[1] if f and f.ci95 else "", r.unit,
                    r.aggregate.mean if r.aggregate else "", r.prompt_tokens, r.cached_tokens, r.ttfr_ms, r.ttft_ms,
                    r.prefill_ms, r.ttft_p50_ms, r.ttft_p99_ms, r.failed, a.rate if a else "",
                    a.mean_length if a else "", r.client_bound, r.partial, r.error or "",
                    f.median if f else "", f.p10 if f else "", f.p90 if f else "", r.below_floor,
                    r.aggregate_decode.mean if r.aggregate_decode else ""])
    return out.getvalue()


def headline(profile: Profile) -> dict:
    """A profile's main figures, for one row of `sweep --speed`'s table: tg t/s at the first depth
    and concurrency (mean over its requests, with the 95% interval), pp t/s of the same test, TTFT
    (ms, mean), the acceptance rate or why there is none, and what went wrong, if anything."""
    plain = [r for r in profile.rows if not r.cached_mode]
    first = plain[0] if plain else None
    same = [r for r in plain if first is not None and (r.workload, r.pp, r.tg, r.depth, r.concurrency)
            == (first.workload, first.pp, first.tg, first.depth, first.concurrency)]
    tg = next((r for r in same if r.test == "tg"), None)
    pp = next((r for r in same if r.test == "pp"), None)
    problems = [f"{r.name}: {r.error}" for r in profile.rows if r.error]
    problems += [f"{r.name}: {r.failed} failed requests" for r in profile.rows if r.failed and not r.error]
    if profile.status != "finished":
        problems.append(f"profile {profile.status}")
    acceptance = None
    if tg is not None:
        a = tg.acceptance
        acceptance = a.rate if a is not None and a.rate is not None else (tg.acceptance_note or "n/a")
    def figure(r: Row | None) -> float | None:
        return r.figure.mean if r is not None and r.figure is not None else None

    return {"test": tg.name if tg is not None else None, "tg": figure(tg),
            "tg_ci95": list(tg.figure.ci95) if tg is not None and tg.figure is not None and tg.figure.ci95 else None,
            "pp": figure(pp), "ttft_ms": tg.ttft_ms if tg is not None else None, "acceptance": acceptance,
            "failed": "; ".join(problems) or None}
