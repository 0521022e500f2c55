"""Words for a comparison: the plain-text tables, `evalsuite compare`'s printout and its --plots/--json.

The comparison itself (alignment, per-run statistics, paired tests, sweeps) is computed in
comparison.py (with ../run_stats.py, ../paired.py, sweep.py), which knows nothing of how it is shown; this module and ../plots.py draw it.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Sequence, TextIO

from ...store import RunFolderError
from ..text_table import render_table
from .comparison import (
    COMPARE_DROP,
    CompareError,
    Comparison,
    compare_runs,
    fmt_num,
    fmt_p,
    fmt_pct,
    fmt_ratio,
    load_runs,
    settings_lines,
)
from .sweep import Sweep, sweep
from ..paired import Paired

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
    headers = ["run", "out tok mean", "median", "p90", "out tok vs first (95% CI)", "reasoning tok", "thinking share",
               "truncated", "TTFT med (s)", "out tok/s (pooled)", "time/item med (s)", "total (s)", "time vs first",
               "correct/1k tok", "tok B/A (both right)"]
    rows = []
    for i, r in enumerate(cmp.runs):
        t = r.tokens
        share = fmt_pct(t.thinking_share, 0)
        if t.reasoning_source in ("derived", "mixed") and t.thinking_share is not None:
            share += " (derived)"
        speed = cmp.speed[i - 1][0] if 0 < i <= len(cmp.speed) else None   # paired by item, as the verdict
        time_vs = "(first)" if i == 0 else "n/a" if speed is None else fmt_ratio(speed.ratio)
        ratio = "" if i == 0 else _pair_ratio_words(cmp.pairs[i - 1])
        tokens = cmp.tokens[i - 1] if 0 < i <= len(cmp.tokens) else None
        tokens_vs = "(first)" if i == 0 else "n/a" if tokens is None else tokens.interval()
        rows.append([r.name, fmt_num(t.out_mean), fmt_num(t.out_median), fmt_num(t.out_p90), tokens_vs,
                     fmt_num(t.reasoning_mean), share, fmt_pct(t.truncation_rate), fmt_num(t.ttft_median, 2),
                     fmt_num(t.decode_tps), fmt_num(t.tts_median, 2), fmt_num(t.tts_total, 1), time_vs,
                     fmt_num(t.correct_per_1k, 2), ratio])
    return headers, rows


def speed_rows(cmp: Comparison) -> tuple[list[str], list[list[str]]]:
    """Speed beside accuracy, per run from its records: TTFT p50, the median per-request decode
    rate, the time per correct answer, and the paired decode and time-per-item ratios against the
    first run with their 95% intervals (the verdict's, run_stats.paired_speed)."""
    headers = ["run", "TTFT p50 (s)", "decode t/s (median)", "time/correct (s)", "decode vs first (95% CI)",
               "time/item vs first (95% CI)"]
    rows = []
    for i, r in enumerate(cmp.runs):
        t = r.tokens
        if i == 0:
            versus = ["(first)", "(first)"]
        else:
            time, decode = cmp.speed[i - 1] if i <= len(cmp.speed) else (None, None)
            versus = ["n/a" if x is None else x.interval() for x in (decode, time)]
        rows.append([r.name, fmt_num(t.ttft_median, 3), fmt_num(t.decode_median), fmt_num(r.time_per_correct, 2),
                     *versus])
    return headers, rows


def speed_notes(cmp: Comparison) -> list[str]:
    """The footnotes under the speed table: each figure's definition, and why one is missing."""
    from ..run_stats import DECODE_PER_REQUEST, PAIRED_RATIO_METHOD

    sources = {r.tokens.decode_source for r in cmp.runs} - {None}
    if sources:
        notes = ["decode t/s = " + "; ".join(DECODE_PER_REQUEST[s] for s in sorted(sources))
                 + " (the median over the run's requests; the same source for every run)"]
    else:
        notes = ["decode t/s: no decode timings in the records (unstreamed, and the server sent no timings): "
                 "no decode figure"]
    notes.append("TTFT p50 = the median timing.ttft_s (request sent to the first token); time/correct = the run's "
                 "total time per item ÷ its correct answers, time per item = " + time_definition(cmp))
    if len(cmp.runs) > 1:
        notes.append(f"vs first = {PAIRED_RATIO_METHOD} (above 1: this run decodes faster / takes longer per item)")
    return notes


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
    notes.append("out tok/s (pooled) = Σ completion_tokens ÷ Σ (total_s − ttft_s), the first token counted inside "
                 "(not the per-request decode t/s of the speed table); correct/1k tok = correct answers "
                 "per 1,000 output tokens")
    notes.append("time/item = " + time_definition(cmp))
    notes.append("time vs first = the geometric mean of the per-item time ratios over the items both runs timed "
                 "(paired; the verdict gives its interval and test)")
    for r in cmp.runs:
        if r.n_looped:
            share = f", {100 * r.looped_tokens / r.tokens.out_total:.0f}% of its output" if r.tokens.out_total else ""
            notes.append(f"{r.name}: {r.n_looped} of its {r.n_truncated} truncated items looped (a repeated tail until "
                         f"max_tokens): {r.looped_tokens:,.0f} completion tokens{share}")
    return notes


def time_definition(cmp: Comparison) -> str:
    """What time/item is in this comparison: one definition for every run (run_stats.token_stats)."""
    if cmp.runs and all(r.tokens.tts_source == "server" for r in cmp.runs):
        return ("the server's own timings (prompt_ms + predicted_ms), for every run: they do not depend on "
                "the run's concurrency or queueing")
    return ("timing.total_s (request sent to last token, so queueing included), for every run; the server's "
            "own timings are used only when every run's answered records have them")


def format_comparison(cmp: Comparison) -> str:
    out = []
    if cmp.alignment.same_items:
        out.append(f"same items: {len(cmp.alignment.ids)} (dataset fingerprints match)")
    else:
        out.append("items: " + "; ".join(cmp.alignment.notes))
    for line in settings_lines([r.name for r in cmp.runs], cmp.settings):
        out.append("settings: " + line)
    out += ["", "Accuracy (correct / (items − errors)); McNemar exact, each run vs the first "
            "(b: first right, this wrong; c: first wrong, this right; items erroring in either left out)"]
    out.append(render_table(*accuracy_rows(cmp)))
    out += ["", "Speed, from the records (errors left out)"]
    out.append(render_table(*speed_rows(cmp)))
    out += ["  " + n for n in speed_notes(cmp)]
    if len(cmp.subset_names) > 1:
        out += ["", "Per subset"]
        out.append(render_table(*subset_rows(cmp)))
    out += ["", "Reasoning length and time to solution (errors left out)"]
    out.append(render_table(*reasoning_rows(cmp)))
    out += ["  " + n for n in reasoning_notes(cmp)]
    out += ["", "Verdict: " + cmp.verdict()]
    return "\n".join(out)


def equivalence_lines(cmp: Comparison, margin_pp: float) -> tuple[list[str], list[dict[str, Any]]]:
    """Each run against the first: the TOST verdict at ±margin_pp (docs/compare.md), as lines
    and as JSON objects."""
    from ..paired import paired_equivalence

    lines, data = [], []
    for pair in cmp.pairs:
        if pair.mcnemar.n_pairs == 0:
            lines.append(f"{pair.b} vs {pair.a}: no paired items")
            continue
        eq = paired_equivalence(pair, cmp.alpha, margin_pp)
        lines.append(f"{pair.b} vs {pair.a}: {eq.words()}")
        data.append({"a": pair.a, "b": pair.b, **eq.to_dict()})
    return lines, data


def first_correct_section(runs: Sequence[Any], cmp: Comparison) -> tuple[list[str], dict[str, Any]]:
    """Tokens to the first correct answer inside the reasoning (analysis/first_correct.py), per
    run over its correct items with reasoning, and each run against the first."""
    from ..first_correct import first_correct_run, pair_first_correct
    from ..stats import median

    lines, data = [], {"runs": [], "pairs": []}
    results = []
    by_path = {str(run.path): run for run in runs}   # a sweep orders cmp.runs by its setting
    for stats in cmp.runs:
        searched = first_correct_run(by_path[stats.path], cmp.alignment.ids)
        found, skipped = searched.found, searched.skipped
        results.append(found)
        if searched.unavailable:
            lines.append(f"{stats.name}: not available: {searched.unavailable}")
            data["runs"].append({"name": stats.name, "unavailable": searched.unavailable})
            continue
        hits = [f for f in found.values() if f.found]
        sources = sorted({f.token_source for f in found.values() if f.found})
        words = f"{stats.name}: answer found in the reasoning of {len(hits)} of {len(found)} correct items with reasoning"
        to_first = median([f.tokens_to_first for f in hits if f.tokens_to_first is not None])
        after = median([f.tokens_after for f in hits if f.tokens_after is not None])
        if to_first is not None and after is not None:
            words += f"; median {to_first:,.0f} tokens to it, {after:,.0f} after"
        if sources:
            words += "; token positions: " + " / ".join(sources)
        bounded = sum(1 for f in found.values() if f.bound)
        if bounded or skipped:
            words += f"; {bounded} searches cut short by the time bound, {skipped} items not searched (run time bound)"
        if searched.not_gradable:
            words += (f"; {searched.not_gradable} items not gradable from their records (recorded by an older "
                      f"evalsuite, without option texts)")
        lines.append(words)
        data["runs"].append({"name": stats.name, "items": [f.to_dict() for f in found.values()],
                             "n_found": len(hits), "n_searched": len(found), "n_skipped": skipped,
                             "n_not_gradable": searched.not_gradable})
    for stats, found in zip(cmp.runs[1:], results[1:]):
        pair = pair_first_correct(cmp.runs[0].name, stats.name, results[0], found)
        lines.append(pair.words())
        data["pairs"].append({**pair.__dict__, "words": pair.words()})
    return lines, data


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
    equivalence_margin: float | None = None,
    first_correct: bool = False,
    use_judge: bool = False,
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
    if equivalence_margin is not None and not (equivalence_margin > 0 and alpha < 0.5):
        print(f"compare: --equivalence-margin must be > 0 points with --alpha below 0.5, got margin "
              f"{equivalence_margin:g}, alpha {alpha:g}", file=err)
        return 2
    from ..outputs import OutputError, check_writable

    try:
        if plots_dir is not None:
            check_writable(plots_dir, "--plots-dir", folder=True)
        if json_path is not None:
            check_writable(json_path, "--json")
    except OutputError as e:
        print(f"compare: {e}", file=err)
        return 2
    try:
        runs = load_runs(paths, drop=COMPARE_DROP)   # as `report` loads them: both time the runs alike
        from ..sampling.compare import compare_sampled_main, handles

        if handles(runs):   # sampled runs: paired on success rates (docs/sampling.md)
            return compare_sampled_main(runs, alpha, json_path, out, err, sweep_key, plots_dir)
        from ..judged import judge_note

        runs, note = judge_note(runs, use_judge)   # rule verdicts unless --use-judge: said either way
        if note:
            print(note, file=out)
        if sweep_key:
            sw, cmp = sweep(runs, sweep_key, alpha=alpha)
        else:
            sw, cmp = None, compare_runs(runs, alpha=alpha)
    except (RunFolderError, CompareError) as e:
        print(f"compare: {e}", file=err)
        return 2
    print(format_comparison(cmp), file=out)
    equivalence_data = None
    if equivalence_margin is not None:
        lines, equivalence_data = equivalence_lines(cmp, equivalence_margin)
        print("", file=out)
        print(f"Equivalence within ±{equivalence_margin:g} pp (two one-sided tests at α={alpha:g}, each run vs the first)",
              file=out)
        for line in lines:
            print("  " + line, file=out)
    first_correct_data = None
    if first_correct:
        lines, first_correct_data = first_correct_section(runs, cmp)
        print("", file=out)
        print("Tokens to the first correct answer inside the reasoning (prefixes at line and sentence ends graded "
              "by the pack's grader; correct items)", file=out)
        for line in lines:
            print("  " + line, file=out)
    if sw is not None:
        print("", file=out)
        print(format_sweep(sw), file=out)
    if plots_dir is not None:
        from ..plots import write_plots   # matplotlib only when plots are asked for

        for path in write_plots(cmp, Path(plots_dir)):
            print(f"plot: {path}", file=out)
    if json_path is not None:
        data = cmp.to_dict()
        if equivalence_data is not None:
            data["equivalence"] = equivalence_data
        if first_correct_data is not None:
            data["first_correct"] = first_correct_data
        if sw is not None:
            data["sweep"] = {"key": sw.key, "order": [r.run.name for r in sw.rows],
                             "values": [r.value for r in sw.rows], "also_differ": list(sw.also_differ)}
        Path(json_path).write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return 0
