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


def profile_csv(profile: Profile) -> str:
    out = io.StringIO()
    w = csv.writer(out)
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
