"""Words for a comparison: the plain-text tables, `evalsuite compare`'s printout and its --plots/--json.

The comparison itself (alignment, per-run statistics, paired tests, sweeps) is computed in
compare.py, which knows nothing of how it is shown; this module and plots.py draw it.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Sequence, TextIO

from ..store import RunFolderError, load_run
from .compare import (
    CompareError,
    Comparison,
    Paired,
    Sweep,
    compare_runs,
    fmt_num,
    fmt_p,
    fmt_pct,
    fmt_ratio,
    sweep,
)

def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table: first column left-aligned, the rest right-aligned."""
    cells = [list(map(str, headers))] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()

    return "\n".join([line(cells[0]), line(["-" * w for w in widths])] + [line(r) for r in cells[1:]])


def accuracy_rows(cmp: Comparison) -> tuple[list[str], list[list[str]]]:
    headers = ["run", "items", "correct", "wrong", "unextr.", "trunc.", "errors", "accuracy", "95% CI (Wilson)",
               "Δ vs first", "b: first only", "c: this only", "McNemar p", "paired", "errors excl."]
    rows = []
    for i, r in enumerate(cmp.runs):
        lo, hi = r.ci95
        row = [r.name, r.n, r.n_correct, r.n_wrong, r.n_unextracted, r.n_truncated, r.n_errors,
               fmt_pct(r.accuracy), f"[{100 * lo:.1f}, {100 * hi:.1f}]" if r.graded else "n/a"]
        if i == 0:
            row += ["(first)", "", "", "", "", ""]
        else:
            p = cmp.pairs[i - 1]
            row += ["n/a" if p.delta_pp is None else f"{p.delta_pp:+.1f} pp", p.mcnemar.b, p.mcnemar.c,
                    fmt_p(p.mcnemar.p), p.mcnemar.n_pairs, p.errors_excluded]
        rows.append(row)
    return headers, rows


def subset_rows(cmp: Comparison) -> tuple[list[str], list[list[str]]]:
    first = cmp.runs[0]
    headers = ["subset", "items"] + [r.name for r in cmp.runs] + [f"Δ {r.name}" for r in cmp.runs[1:]]
    rows = []
    for s in cmp.subset_names:
        base = first.subset(s)
        accs = [(r.subset(s).accuracy if r.subset(s) else None) for r in cmp.runs]
        deltas = ["n/a" if a is None or accs[0] is None else f"{100 * (a - accs[0]):+.1f} pp" for a in accs[1:]]
        rows.append([s, base.n if base else 0] + [fmt_pct(a) for a in accs] + deltas)
    return headers, rows


def reasoning_rows(cmp: Comparison) -> tuple[list[str], list[list[str]]]:
    headers = ["run", "out tok mean", "median", "p90", "reasoning tok", "thinking share", "truncated",
               "TTFT med (s)", "decode tok/s", "time/item med (s)", "total (s)", "time vs first",
               "correct/1k tok", "tok B/A (both right)"]
    first = cmp.runs[0].tokens
    rows = []
    for i, r in enumerate(cmp.runs):
        t = r.tokens
        share = fmt_pct(t.thinking_share, 0)
        if t.reasoning_source in ("derived", "mixed") and t.thinking_share is not None:
            share += " (derived)"
        time_vs = ("(first)" if i == 0 else
                   fmt_ratio(t.tts_mean / first.tts_mean) if t.tts_mean is not None and first.tts_mean else "n/a")
        ratio = "" if i == 0 else _pair_ratio_words(cmp.pairs[i - 1])
        rows.append([r.name, fmt_num(t.out_mean), fmt_num(t.out_median), fmt_num(t.out_p90),
                     fmt_num(t.reasoning_mean), share, fmt_pct(t.truncation_rate), fmt_num(t.ttft_median, 2),
                     fmt_num(t.decode_tps), fmt_num(t.tts_median, 2), fmt_num(t.tts_total, 1), time_vs,
                     fmt_num(t.correct_per_1k, 2), ratio])
    return headers, rows


def _pair_ratio_words(p: Paired) -> str:
    if p.token_ratio_total is None:
        return "n/a"
    return f"{fmt_ratio(p.token_ratio_total)} (median {fmt_ratio(p.token_ratio_median)}, n={p.both_correct_with_tokens})"


def reasoning_notes(cmp: Comparison) -> list[str]:
    """The footnotes under the reasoning-length table: how reasoning tokens were counted,
    and how many records had no usage (their figures are left out, never estimated)."""
    notes = []
    for r in cmp.runs:
        t = r.tokens
        notes.append(f"{r.name}: reasoning tokens: {t.reasoning_how}"
                     + (f"; {t.usage_missing} records without usage left out of token figures" if t.usage_missing else ""))
    notes.append("decode tok/s = Σ completion_tokens ÷ Σ (total_s − ttft_s); time/item = timing.total_s "
                 "(request sent to last token); correct/1k tok = correct answers per 1,000 output tokens")
    by_server = [r.name for r in cmp.runs if r.tokens.tts_source == "server"]
    if by_server:
        notes.append("time/item for " + ", ".join(by_server) + ": the server's own timings (prompt_ms + "
                     "predicted_ms), which do not depend on the run's concurrency")
    return notes


def format_comparison(cmp: Comparison) -> str:
    out = []
    if cmp.alignment.same_items:
        out.append(f"same items: {len(cmp.alignment.ids)} (dataset fingerprints match)")
    else:
        out.append("items: " + "; ".join(cmp.alignment.notes))
    out += ["", "Accuracy (correct / (items − errors)); McNemar exact, each run vs the first "
            "(b: first right, this wrong; c: first wrong, this right; items erroring in either left out)"]
    out.append(render_table(*accuracy_rows(cmp)))
    if len(cmp.subset_names) > 1:
        out += ["", "Per subset"]
        out.append(render_table(*subset_rows(cmp)))
    out += ["", "Reasoning length and time to solution (errors left out)"]
    out.append(render_table(*reasoning_rows(cmp)))
    out += ["  " + n for n in reasoning_notes(cmp)]
    out += ["", "Verdict: " + cmp.verdict()]
    return "\n".join(out)


def sweep_rows(sw: Sweep) -> tuple[list[str], list[list[str]]]:
    headers = [sw.key, "run", "items", "accuracy", "95% CI", "Δ vs first", "McNemar p", "out tok mean",
               "thinking share", "truncated", "time/item mean (s)", "time/item med (s)"]
    rows = []
    for row in sw.rows:
        r, t, p = row.run, row.run.tokens, row.paired_vs_first
        lo, hi = r.ci95
        rows.append([json.dumps(row.value) if not isinstance(row.value, str) else row.value, r.name, r.n,
                     fmt_pct(r.accuracy), f"[{100 * lo:.1f}, {100 * hi:.1f}]",
                     "(first)" if p is None else ("n/a" if p.delta_pp is None else f"{p.delta_pp:+.1f} pp"),
                     "" if p is None else fmt_p(p.mcnemar.p), fmt_num(t.out_mean), fmt_pct(t.thinking_share, 0),
                     fmt_pct(t.truncation_rate), fmt_num(t.tts_mean, 2), fmt_num(t.tts_median, 2)])
    return headers, rows


def format_sweep(sw: Sweep) -> str:
    out = [f"Sweep over {sw.key} ({len(sw.rows)} runs, in the setting's order)", render_table(*sweep_rows(sw))]
    if sw.also_differ:
        out.append(f"  note: the runs also differ in {', '.join(sw.also_differ)}; the sweep is not a clean one-setting change")
    return "\n".join(out)


# ---------------------------------------------------------------------------- command


def compare_main(
    paths: Sequence[str | Path],
    *,
    sweep_key: str | None = None,
    alpha: float = 0.05,
    plots_dir: str | Path | None = None,
    json_path: str | Path | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """The `evalsuite compare` command: 0 printed, 2 unusable input (message on stderr)."""
    out = out or sys.stdout
    err = err or sys.stderr
    if not paths:
        print("compare: give at least one run folder", file=err)
        return 2
    if not 0 < alpha <= 1:
        print(f"compare: --alpha must be in (0, 1], got {alpha}", file=err)
        return 2
    from .outputs import OutputError, check_writable

    try:
        if plots_dir is not None:
            check_writable(plots_dir, "--plots", folder=True)
        if json_path is not None:
            check_writable(json_path, "--json")
    except OutputError as e:
        print(f"compare: {e}", file=err)
        return 2
    try:
        runs = [load_run(p, drop=("messages", "prompt", "server_timings")) for p in paths]
        from .sampling_compare import compare_sampled_main, handles

        if handles(runs):   # sampled runs: paired on success rates (docs/sampling.md)
            return compare_sampled_main(runs, alpha, json_path, out, err, sweep_key, plots_dir)
        if sweep_key:
            sw, cmp = sweep(runs, sweep_key, alpha=alpha)
        else:
            sw, cmp = None, compare_runs(runs, alpha=alpha)
    except (RunFolderError, CompareError) as e:
        print(f"compare: {e}", file=err)
        return 2
    print(format_comparison(cmp), file=out)
    if sw is not None:
        print("", file=out)
        print(format_sweep(sw), file=out)
    if plots_dir is not None:
        from .plots import write_plots   # matplotlib only when plots are asked for

        for path in write_plots(cmp, Path(plots_dir)):
            print(f"plot: {path}", file=out)
    if json_path is not None:
        data = cmp.to_dict()
        if sw is not None:
            data["sweep"] = {"key": sw.key, "order": [r.run.name for r in sw.rows],
                             "values": [r.value for r in sw.rows], "also_differ": list(sw.also_differ)}
        Path(json_path).write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return 0
