"""`evalsuite report RUN… --html report.html [--diff DIFF_JSON]`: one self-contained HTML page.

The page holds the comparison tables (accuracy, McNemar, per subset, reasoning length), the
verdict, the plots embedded as base64 PNGs, sample transcripts with the reasoning folded in
<details>, and the divergences of a diff JSON when one is given. No scripts, no external
files: it can be mailed or attached to a CI job as is. This module gathers the figures;
templates/report.html.j2 draws them (every value escaped there; long texts cut here).
"""
from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence, TextIO

from ..store import Run, RunFolderError
from ..pages.cards import divergence_card, is_divergence, sort_divergences
from .compare.comparison import CompareError, Comparison, compare_runs, load_runs, settings_lines
from .compare.tables import accuracy_rows, reasoning_notes, reasoning_rows, speed_notes, speed_rows, subset_rows
from .run_stats import is_correct, is_error
from ..pages.page import clip, number, render, seconds

MAX_ANSWER_CHARS = 4_000
MAX_REASONING_CHARS = 20_000
MAX_QUESTION_CHARS = 3_000
MAX_DIVERGENCE_CARDS = 50        # the worst ones; all of them are on the diff page and in its JSON


def table(headers: Sequence[Any], rows: Sequence[Sequence[Any]], text_columns: int = 1) -> dict[str, Any]:
    """A table for the page: the first `text_columns` columns are text, the rest figures."""
    return {"headers": list(headers), "rows": [list(r) for r in rows],
            "numeric": list(range(text_columns, len(headers)))}


def runs_table(runs: Sequence[Run], names: Sequence[str]) -> dict[str, Any]:
    rows = []
    for run, name in zip(runs, names):
        m = run.manifest
        d = m.get("decoding") or {}
        decoding = ", ".join(f"{k}={json.dumps(v)}" for k, v in d.items() if v not in (None, {}, []))
        stream = (m.get("client") or {}).get("stream")
        if stream is not None:     # logprob shapes and verdicts depend on it (docs/lossless.md)
            decoding += ("" if not decoding else ", ") + ("stream" if stream else "no-stream")
        from ..speculation import manifest_summary
        rows.append([name, run.path.name, m.get("pack"), m.get("model"), ", ".join(m.get("endpoints") or []),
                     m.get("status"), decoding, manifest_summary(m) or "not recorded", len(run.records)])
    return table(["run", "folder", "pack", "model", "endpoints", "status", "decoding", "speculation", "records"], rows,
                 text_columns=8)


def plot_images(cmp: Comparison) -> list[tuple[str, str]]:
    from .plots import all_plots   # matplotlib only when a report is made

    return [(name, base64.b64encode(png).decode("ascii")) for name, png in all_plots(cmp).items()]


def sample_ids(runs: Sequence[Run], ids: Sequence[str], limit: int) -> list[str]:
    """Items worth reading first: where the runs disagree on right/wrong, then errors and
    truncations, then the rest, in run order."""
    maps = [r.by_id for r in runs]

    def interest(i: str) -> int:
        outcomes = [m[i] for m in maps]
        if len({is_correct(r) for r in outcomes if not is_error(r)}) > 1:
            return 0
        if any(r.get("outcome") in ("error", "truncated") for r in outcomes):
            return 1
        return 2

    ranked = sorted(range(len(ids)), key=lambda n: (interest(ids[n]), n))
    return [ids[n] for n in ranked[:limit]]


def question_of(record: Mapping[str, Any]) -> str:
    messages = record.get("messages")
    if isinstance(messages, list) and messages:
        users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        last = (users or messages)[-1]
        return str(last.get("content", "")) if isinstance(last, dict) else ""
    return str(record.get("prompt") or "")


MAX_EXTRACTED_CHARS = 60     # in the bold transcript header; the whole answer is below it


def short(text: Any, limit: int = MAX_EXTRACTED_CHARS) -> Any:
    """A value for a one-line header: long ones cut with an ellipsis."""
    if not isinstance(text, str) or len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"… ({len(text):,} chars)"


def transcript(item_id: str, runs: Sequence[Run], names: Sequence[str]) -> dict[str, Any]:
    records = [r.by_id[item_id] for r in runs]
    first = records[0]
    sides = []
    for name, record in zip(names, records):
        usage = record.get("usage") or {}
        timing = record.get("timing") or {}
        tokens = usage.get("completion_tokens")
        error = record.get("error") or None
        reasoning = record.get("reasoning") or ""
        sides.append({
            "name": name, "outcome": str(record.get("outcome")), "extracted": short(record.get("extracted")),
            "tokens": "output tokens n/a (no usage)" if tokens is None else f"{number(tokens)} output tokens",
            # this item's request latency (timing.total_s), named so: the tables' time/item may be the server's
            "time": "latency n/a" if timing.get("total_s") is None else f"latency {seconds(timing['total_s'])}",
            "error": (f"error {error.get('kind')}: {clip(str(error.get('message')), MAX_ANSWER_CHARS)}"
                      if isinstance(error, dict) else None),
            "reasoning": clip(reasoning, MAX_REASONING_CHARS), "reasoning_chars": f"{len(reasoning):,}",
            "answer": None if record.get("answer") is None else clip(str(record["answer"]), MAX_ANSWER_CHARS),
        })
    return {"id": item_id, "subset": first.get("subset"), "gold": first.get("gold"),
            "question": clip(question_of(first), MAX_QUESTION_CHARS), "sides": sides}


def divergences(path: Path) -> dict[str, Any]:
    """The diff tool's JSON: its `counts` and, when present, its `items` (each a dict with at
    least an `id`) as cards, the worst first, identical ones left out."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CompareError(f"--diff {path}: cannot be read as a diff's JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("counts"), dict):
        raise CompareError(f"--diff {path}: not a diff's JSON (no top-level 'counts' object; `evalsuite diff --json` writes one)")
    items = data.get("items") if isinstance(data.get("items"), list) else []
    shown = sort_divergences([i for i in items if isinstance(i, dict) and is_divergence(i)])
    from ..lossless.diff_json import drift_view

    floor = data.get("noise_floor") if isinstance(data.get("noise_floor"), dict) else {}
    return {"source": Path(path).name, "summary": data["summary"] if isinstance(data.get("summary"), str) else "",
            "counts": data["counts"], "cards": [divergence_card(i) for i in shown[:MAX_DIVERGENCE_CARDS]],
            "more": max(0, len(shown) - MAX_DIVERGENCE_CARDS),
            "drift": drift_view(data),
            "noise_floor": floor.get("summary") if isinstance(floor.get("summary"), str) else None}


def build_report(runs: Sequence[Run], *, diff: Path | None = None, samples: int = 8, alpha: float = 0.05,
                 title: str | None = None) -> str:
    cmp = compare_runs(runs, alpha=alpha)
    names = [r.name for r in cmp.runs]
    items_note = (f"same items: {len(cmp.alignment.ids)} (dataset fingerprints match)" if cmp.alignment.same_items
                  else "; ".join(cmp.alignment.notes))
    return render(
        "report.html.j2", title=title or "evalsuite report: " + " vs ".join(names), items_note=items_note,
        verdict=cmp.verdict(), runs=runs_table(runs, names), accuracy=table(*accuracy_rows(cmp)),
        subsets=table(*subset_rows(cmp)) if len(cmp.subset_names) > 1 else None,
        speed=table(*speed_rows(cmp)), speed_notes=speed_notes(cmp),
        reasoning=table(*reasoning_rows(cmp)), reasoning_notes=reasoning_notes(cmp), plots=plot_images(cmp),
        divergences=divergences(diff) if diff is not None else None, n_items=len(cmp.alignment.ids),
        transcripts=[transcript(i, runs, names) for i in sample_ids(runs, cmp.alignment.ids, samples)],
        judged=judged_section(runs, names),
        restarts=server_restarts(runs, names),
        settings=settings_lines(names, cmp.settings),
    )


def judged_section(runs: Sequence[Run], names: Sequence[str]) -> dict[str, Any] | None:
    """The items a judge decided, apart from the rule figures above (evalsuite/judge.py)."""
    from .judged import judge_summary

    rows, counts = [], []
    for run, name in zip(runs, names):
        js = judge_summary(run.records)
        if not js:
            continue
        counts.append(f"{name}: {js['n_judged']} judged ({js['n_correct']} correct, {js['n_incorrect']} incorrect, "
                      f"{js['n_undecided']} undecided)")
        rows += [[name, i["id"], i["outcome"], i["judge"], i["reason"]] for i in js["items"]]
    if not rows:
        return None
    return {"note": "; ".join(counts) + ". Not in the figures above: they are the rule verdicts "
                    "(compare / gate --use-judge count the judge).",
            "table": table(["run", "item", "rules", "judge", "reason"], rows, text_columns=5)}


def server_restarts(runs: Sequence[Run], names: Sequence[str]) -> list[dict[str, Any]]:
    """Each managed-server restart of each run (manifest `server_restarts`, evalsuite.serve)."""
    return [{"run": name, "at": e.get("at"), "reason": e.get("reason"), "outcome": e.get("outcome")}
            for run, name in zip(runs, names) for e in run.manifest.get("server_restarts") or ()]


def report_main(
    paths: Sequence[str | Path],
    output: str | Path,
    *,
    diff: str | Path | None = None,
    samples: int = 8,
    alpha: float = 0.05,
    title: str | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """The `evalsuite report` command: 0 written, 2 unusable input (message on stderr)."""
    out = out or sys.stdout
    err = err or sys.stderr
    if not paths:
        print("report: give at least one run folder", file=err)
        return 2
    from .outputs import OutputError, check_writable

    try:
        check_writable(output, "--html")
        runs = load_runs(paths)
        if diff:
            from ..lossless.diff_json import diff_json_mismatch_any
            why = diff_json_mismatch_any(Path(diff), runs)
            if why:
                raise CompareError(f"--diff {diff}: {why}")
        from .sampling.compare import handles

        if handles(runs):   # sampled runs: rates, pass@k curves, paired rates (docs/sampling.md)
            from .sampling.report import build_sampled_report

            try:
                page = build_sampled_report(runs, runs_table(runs, [r.name for r in runs]), alpha=alpha, title=title)
            except ValueError as e:
                raise CompareError(str(e)) from None
        else:
            page = build_report(runs, diff=Path(diff) if diff else None, samples=samples, alpha=alpha, title=title)
    except (RunFolderError, CompareError, OutputError) as e:
        print(f"report: {e}", file=err)
        return 2
    data = page.encode("utf-8")
    Path(output).write_bytes(data)
    print(f"report: {output} ({len(data) / 1024:.0f} KiB)", file=out)   # bytes, not characters
    return 0
