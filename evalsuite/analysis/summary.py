"""The summary of one run: counts, accuracy with a Wilson interval, per-subset rows,
token and timing medians, and the answers a non-exact grader rule accepted ("rescued")."""
from __future__ import annotations

from collections import Counter
from typing import Any

from .loops import loop_of
from .stats import accuracy, median, wilson

OUTCOMES = ("correct", "wrong", "unextracted", "truncated", "error")


def _rates(records: list[dict[str, Any]], looped: Any = ()) -> dict[str, Any]:
    counts = Counter(r.get("outcome") for r in records)
    n = len(records)
    graded = n - counts["error"]
    lo, hi = wilson(counts["correct"], graded) if graded else (None, None)
    rates = {
        "n_items": n, "n_correct": counts["correct"], "n_wrong": counts["wrong"],
        "n_unextracted": counts["unextracted"], "n_truncated": counts["truncated"], "n_errors": counts["error"],
        "accuracy": accuracy(counts["correct"], n, counts["error"]), "accuracy_ci95": [lo, hi],
    }
    # looped: truncated records whose tail repeats (analysis/loops.py); their outcome stays truncated
    rates["n_looped"] = sum(1 for r in records if r.get("outcome") == "truncated" and r.get("id") in looped)
    return rates


def _num(values) -> list[float]:
    return [v for v in values if isinstance(v, (int, float))]


def timing_medians(timing: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each median with the records it is over (`n`). The first-token medians are over the records
    that have that time *and* a total (a stream without a first-token time would otherwise set
    a median of fewer, slower records beside one of all of them); `total_s_with_ttft` is the total
    over those same records, so the two compare."""
    def has(t: dict[str, Any], key: str) -> bool:
        return isinstance(t.get(key), (int, float)) and not isinstance(t.get(key), bool)

    out: dict[str, dict[str, Any]] = {}
    for key in ("ttft_s", "ttfa_s"):
        both = [t for t in timing if has(t, key) and has(t, "total_s")]
        out[key] = {"median": median([float(t[key]) for t in both]), "n": len(both)}
    totals = [float(t["total_s"]) for t in timing if has(t, "total_s")]
    out["total_s"] = {"median": median(totals), "n": len(totals)}
    with_ttft = [float(t["total_s"]) for t in timing if has(t, "ttft_s") and has(t, "total_s")]
    out["total_s_with_ttft"] = {"median": median(with_ttft), "n": len(with_ttft)}
    return out


def run_categories(manifest: dict[str, Any], run_dir: Any = None) -> dict[str, str]:
    """Subset -> category as the run wrote them into its manifest (`categories`). A folder from
    before that field takes them from its own summary.json, which the run wrote at its end from
    the pack's table; with neither there are no category rows (analyses read the folder only)."""
    if isinstance(manifest.get("categories"), dict):
        return {str(s): str(c) for s, c in manifest["categories"].items()}
    if run_dir is None:
        return {}
    import json
    from pathlib import Path

    from ..store import SUMMARY

    try:
        data = json.loads((Path(run_dir) / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    rows = data.get("subsets") if isinstance(data, dict) else None
    return {r["subset"]: r["category"] for r in rows if isinstance(r, dict)
            and isinstance(r.get("subset"), str) and isinstance(r.get("category"), str)} if isinstance(rows, list) else {}


def summarize(manifest: dict[str, Any], records: list[dict[str, Any]], categories: dict[str, str] | None = None,
              loops: dict[str, Any] | None = None) -> dict[str, Any]:
    """`loops`: id -> Loop (analysis/loops.py) for records read without their text; None: found
    from the records' own reasoning and answer."""
    if loops is None:
        loops = {r["id"]: lp for r in records if r.get("outcome") == "truncated" and (lp := loop_of(r)) is not None}
    summary = {"pack": manifest.get("pack"), "label": manifest.get("label"), "model": manifest.get("model"),
               "status": manifest.get("status"), "n_planned": (manifest.get("dataset") or {}).get("n_items")}
    summary.update(_rates(records, loops))
    summary["errors_by_kind"] = dict(Counter((r.get("error") or {}).get("kind") for r in records if r.get("outcome") == "error"))

    if categories is None:
        categories = run_categories(manifest)
    by_subset: dict[str, list] = {}
    for r in records:
        by_subset.setdefault(r.get("subset") or "", []).append(r)
    summary["subsets"] = [dict(subset=s, category=categories.get(s), **_rates(rs, loops)) for s, rs in sorted(by_subset.items())]
    by_category: dict[str, list] = {}
    for r in records:
        cat = categories.get(r.get("subset") or "")
        if cat:
            by_category.setdefault(cat, []).append(r)
    summary["categories"] = [dict(category=c, **_rates(rs, loops)) for c, rs in sorted(by_category.items())]

    answered = [r for r in records if r.get("outcome") != "error"]
    # Packs may grade more than one way side by side (GSM8K: lm-eval's "strict" and
    # "flexible" extraction), as {"name": {"extracted", "equal"}} in the verdict's details.
    variants: dict[str, int] = {}
    for r in answered:
        for name, value in ((r.get("verdict") or {}).get("details") or {}).items():
            if isinstance(value, dict) and "equal" in value and "extracted" in value:
                variants[name] = variants.get(name, 0) + bool(value["equal"])
    summary["extraction_variants"] = {name: {"n_correct": k, "accuracy": k / len(answered) if answered else None}
                                      for name, k in variants.items()}
    validity = [((r.get("verdict") or {}).get("details") or {}) for r in answered]
    if any("valid" in d for d in validity):   # SVG answers: validity is its own figure, apart from correct
        summary["svg"] = {"n_valid": sum(1 for d in validity if d.get("valid")),
                          "n_blank": sum(1 for d in validity if d.get("blank")), "n_answered": len(answered)}
    usage = [r.get("usage") or {} for r in answered]
    timing = [r.get("timing") or {} for r in answered]
    summary["usage_missing"] = sum(1 for u in usage if u.get("completion_tokens") is None)
    summary["tokens"] = {
        key: {"median": median(_num(u.get(key) for u in usage)), "total": sum(_num(u.get(key) for u in usage)) or None,
              "n": len(_num(u.get(key) for u in usage))}
        for key in ("prompt_tokens", "completion_tokens", "reasoning_tokens")
    }
    summary["timing"] = timing_medians(timing)
    from .ttft_parts import run_breakdown

    parts = run_breakdown(answered)    # where the first-token wait went: medians of its parts
    summary["first_token"] = parts.to_dict() if parts is not None else None
    summary["rescued"] = [
        {"id": r["id"], "method": r["verdict"].get("method"), "reason": r["verdict"].get("reason"),
         "extracted": r.get("extracted"), "gold": r.get("gold")}
        for r in records
        if r.get("outcome") == "correct" and r.get("verdict")
        and r["verdict"].get("method") not in ("exact", "normalised", "choice", "rules", None)
    ]
    summary["looped"] = []
    for r in records:
        lp = loops.get(r["id"]) if r.get("outcome") == "truncated" else None
        if lp is not None:
            summary["looped"].append({"id": r["id"], "period": lp.period, "repeats": round(lp.repeats, 1),
                                      "span": lp.span, "unit": lp.unit[:200],
                                      "completion_tokens": (r.get("usage") or {}).get("completion_tokens")})
    from .judged import judge_summary   # the judge's verdicts, counted apart (evalsuite/judge.py)

    judged = judge_summary(records)
    if judged:
        summary["judge"] = judged
    from .sampling.estimators import is_sampled

    if is_sampled(manifest, records):
        _sampled(summary, manifest, records)
    return summary


def _sampled(summary: dict[str, Any], manifest: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """A sampled run (docs/sampling.md): the counts above count answers; items are the unit of
    accuracy (avg@N) and of its interval, per subset too; `sampling` holds pass@k and maj@N."""
    from .sampling.estimators import sampling_summary

    sampling = sampling_summary(manifest, records)
    summary["sampling"] = sampling
    summary["n_answers"] = summary["n_items"]
    summary["n_items"] = sampling["n_items"]
    summary["accuracy"], summary["accuracy_ci95"] = sampling["avg"], sampling["avg_ci95"]
    by_subset = {s["subset"]: s for s in sampling["subsets"]}
    for row in summary["subsets"]:
        figures = by_subset.get(row["subset"])
        if figures:
            row.update(n_answers=row["n_items"], n_items=figures["n_items"], accuracy=figures["avg"],
                       accuracy_ci95=figures["avg_ci95"])


def _pct(x: float | None) -> str:
    return "   -  " if x is None else f"{100 * x:5.1f}%"


def _ci(ci) -> str:
    lo, hi = ci
    return "" if lo is None else f"[{100 * lo:4.1f}, {100 * hi:4.1f}]"


def written_by_other_version(manifest: dict[str, Any] | None) -> str | None:
    """The line saying which evalsuite wrote the run, when that is not the one reading it: a
    verdict or a field may have changed between the two (docs/records.md)."""
    from .. import __version__

    written = (manifest or {}).get("suite_version")
    if not written or written == __version__:
        return None
    return f"written by evalsuite {written}, read by {__version__}"


def format_summary(summary: dict[str, Any], manifest: dict[str, Any] | None = None) -> str:
    """The table `evalsuite show` prints."""
    lines = []
    title = f"{summary.get('pack')}" + (f" ({summary['label']})" if summary.get("label") else "")
    title += f" — model {summary.get('model')}" if summary.get("model") else ""
    lines.append(title)
    n_planned = summary.get("n_planned")
    lines.append(f"items {summary['n_items']}" + (f" of {n_planned}" if n_planned and n_planned != summary["n_items"] else "")
                 + f" | status {summary.get('status')}")
    written_by = written_by_other_version(manifest)
    if written_by:
        lines.append(written_by)
    if summary.get("sampling"):
        from .sampling.estimators import format_sampling

        lines.append(format_sampling(summary["sampling"]))
    else:
        lines.append(f"accuracy {_pct(summary['accuracy'])} {_ci(summary['accuracy_ci95'])} (Wilson 95%; correct / (items - errors))")
    lines.append(("answers: " if summary.get("sampling") else "")
                 + f"correct {summary['n_correct']} | wrong {summary['n_wrong']} | unextracted {summary['n_unextracted']} | "
                 f"truncated {summary['n_truncated']}"
                 + (f" ({summary['n_looped']} looped)" if summary.get("n_looped") else "")
                 + f" | errors {summary['n_errors']}"
                 + (f" {summary['errors_by_kind']}" if summary["errors_by_kind"] else ""))
    if summary.get("svg"):
        v = summary["svg"]
        lines.append(f"valid SVG {v['n_valid']} of {v['n_answered']} answered ({v['n_blank']} of them draw nothing: "
                     f"not correct); correct needs a valid SVG that draws and meets every requirement")
    missing = (manifest or {}).get("logprobs_missing") or {}
    if missing.get("items"):
        lines.append(f"logprobs partly missing: {missing['tokens']} token(s) on {missing['items']} item(s) came without "
                     "a number (speculative tokens: llama-server sends none); they are never read as certain")
    skipped = (manifest or {}).get("skipped_rows") or {}
    if skipped.get("count"):   # --skip-bad-rows
        first = [f"{x.get('where')}: {x.get('why')}" for x in (skipped.get("first") or [])[:3] if isinstance(x, dict)]
        lines.append(f"skipped bad rows (--skip-bad-rows): {skipped['count']}" + (f"; e.g. {'; '.join(first)}" if first else ""))
    restarts = (manifest or {}).get("server_restarts") or []
    if restarts:   # evalsuite.serve: the managed server died or hung and was restarted
        lines.append(f"server restarts: {len(restarts)} (the items in flight were asked again; nothing recorded was lost)")
        for e in restarts:
            back = f", back in {e['ready_after_s']:.1f} s" if e.get("ready_after_s") is not None else ""
            lines.append(f"  {e.get('at')}: the server {e.get('reason')} -> {e.get('outcome')}{back}")
    from ..speculation import speculation_line, stream_mode

    serving = [x for x in (speculation_line(manifest), stream_mode(manifest)) if x]
    if serving:
        lines.append("; ".join(serving))
    subsets = summary.get("subsets") or []
    limit = ((manifest or {}).get("load") or {}).get("limit")
    if limit and len(subsets) > 1:   # which subsets a --limit sample covered (issue 42)
        names = [s["subset"] for s in subsets]
        lines.append(f"--limit {limit}: items from {len(names)} subsets: " + ", ".join(names[:12])
                     + (f" and {len(names) - 12} more (the table below)" if len(names) > 12 else ""))
    # one subset is shown too when categories follow: a category row alone hides what it holds
    if len(subsets) > 1 or (subsets and summary.get("categories")):
        width = max(len("subset"), *(len(s["subset"]) for s in subsets))
        lines.append("")
        lines.append(f"{'subset'.ljust(width)}  {'n':>5}  {'acc':>6}  {'95% CI':>13}  unext  trunc  err")
        for s in subsets:
            lines.append(f"{s['subset'].ljust(width)}  {s['n_items']:>5}  {_pct(s['accuracy'])}  {_ci(s['accuracy_ci95']):>13}  "
                         f"{s['n_unextracted']:>5}  {s['n_truncated']:>5}  {s['n_errors']:>3}")
    cats = summary.get("categories") or []
    if cats:
        lines.append("")
        width = max(len("category"), *(len(c["category"]) for c in cats))
        lines.append(f"{'category'.ljust(width)}  {'n':>5}  {'acc':>6}  {'95% CI':>13}")
        for c in cats:
            lines.append(f"{c['category'].ljust(width)}  {c['n_items']:>5}  {_pct(c['accuracy'])}  {_ci(c['accuracy_ci95']):>13}")
    if summary.get("extraction_variants"):
        lines.append("extraction side by side: " + ", ".join(
            f"{name} {_pct(v['accuracy']).strip()}" for name, v in summary["extraction_variants"].items()))
    tok, tim = summary["tokens"], summary["timing"]
    lines.append("")
    if summary["usage_missing"]:
        lines.append(f"token usage: the server sent none for {summary['usage_missing']} item(s); their token figures are "
                     f"left empty, not estimated")
    def fmt(v, unit=""):
        return "-" if v is None else (f"{v:.3g}{unit}" if isinstance(v, float) else f"{v}{unit}")
    def over(entry: dict[str, Any], unit: str = "") -> str:   # a median and the records it is over
        return fmt(entry.get("median"), unit) + (f" (n={entry['n']})" if "n" in entry else "")
    lines.append(f"median tokens: prompt {over(tok['prompt_tokens'])}, completion {over(tok['completion_tokens'])}, "
                 f"reasoning {over(tok['reasoning_tokens'])}")
    with_ttft = tim.get("total_s_with_ttft")
    if with_ttft is not None and with_ttft["n"] != tim["total_s"]["n"]:
        # some records have no first-token time: the first-token medians and a total over the same records
        lines.append(f"median time: first token {over(tim['ttft_s'], ' s')}, first answer token {over(tim['ttfa_s'], ' s')}, "
                     f"total over the same records {over(with_ttft, ' s')}; total over all {over(tim['total_s'], ' s')}")
    else:
        lines.append(f"median time: first token {over(tim['ttft_s'], ' s')}, first answer token {over(tim['ttfa_s'], ' s')}, "
                     f"total {over(tim['total_s'], ' s')}")
    parts = summary.get("first_token")
    if parts and parts.get("n"):
        from .ttft_parts import TtftParts

        breakdown = TtftParts.from_dict(parts)
        lines.append(f"first token, medians over {parts['n']} records: {breakdown.text('s')}"
                     + (" (server: llama-server's timings)" if parts.get("server_source") == "timings" else ""))
    if summary.get("looped"):
        loops = summary["looped"]
        tokens = sum(x["completion_tokens"] or 0 for x in loops)
        # per item: the sum over the looped items read as a wrong max_tokens (issue 42)
        cap = ((manifest or {}).get("decoding") or {}).get("max_tokens")
        each = f"{cap:,} per item" if isinstance(cap, int) else (f"~{tokens / len(loops):,.0f} per item" if tokens else "")
        spent = ", ".join(x for x in (each, f"{tokens:,} completion tokens in all" if tokens else "") if x)
        lines.append(f"looped: {len(loops)} truncated item(s) end in a repeated tail until max_tokens"
                     + (f" ({spent})" if spent else "") + "; e.g.")
        for x in loops[:3]:
            unit = x["unit"] if len(x["unit"]) <= 60 else x["unit"][:57] + "..."
            lines.append(f"  {x['id']}: {x['repeats']:.0f}× {unit!r}")
    if summary.get("rescued"):
        rescued = summary["rescued"]
        lines.append(f"rescued by a non-exact grader rule: {len(rescued)} (all in summary.json, for audit)")
        for r in rescued[:5]:
            lines.append(f"  {r['id']}: {r['extracted']!r} vs gold {r['gold']!r} — {r['method']}: {r['reason']}")
    if summary.get("judge"):
        from .judged import format_judge_summary

        lines.append(format_judge_summary(summary["judge"]))
    return "\n".join(lines)


def summary_line(summary: dict[str, Any]) -> str:
    """The one line `run -q` prints: accuracy with its interval, the items, the errors."""
    name = f"{summary.get('pack')}" + (f" ({summary['label']})" if summary.get("label") else "")
    sampling = summary.get("sampling")
    what = f"avg@{sampling['samples']}" if sampling else "accuracy"
    counted = (f"{summary['n_correct']} correct of {summary.get('n_answers')} answers" if sampling
               else f"{summary['n_correct']} correct of {summary['n_items']} items")
    ci = _ci(summary["accuracy_ci95"])
    return (f"{name}: {what} {_pct(summary['accuracy']).strip()}{' ' + ci if ci else ''} "
            f"({counted}; {summary['n_errors']} errors)")


def show_main(run_dir: Any, json_out: bool = False, echo: Any = print) -> int:
    """The `evalsuite show` command: the summary of one run folder, as a table or JSON; 2 when
    the folder cannot be read."""
    import json
    import sys
    from pathlib import Path

    from ..store import BULKY_FIELDS, RunFolderError, finish_pending, load_run

    try:   # server_timings kept: the first token's breakdown reads llama-server's prompt_ms
        run_ = load_run(run_dir, drop=tuple(f for f in BULKY_FIELDS if f != "server_timings"))
    except RunFolderError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    pending = finish_pending(run_)
    if pending:
        print(f"note: {pending}", file=sys.stderr)
    from .loops import loops_in_records

    summary = summarize(run_.manifest, run_.records, categories=run_categories(run_.manifest, run_dir),
                        loops=loops_in_records(Path(run_dir) / "records.jsonl"))
    if json_out:   # which evalsuite wrote the run (the manifest's suite_version)
        summary["suite_version"] = run_.manifest.get("suite_version")
    echo(json.dumps(summary, ensure_ascii=False, indent=2) if json_out else format_summary(summary, run_.manifest))
    return 0
