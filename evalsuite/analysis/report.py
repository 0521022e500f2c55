"""`evalsuite report RUN… -o report.html [--diff DIFF_JSON]`: one self-contained HTML page.

The page holds the comparison tables (accuracy, McNemar, per subset, reasoning length), the
verdict, the plots embedded as base64 PNGs, sample transcripts with the reasoning folded in
<details>, and the divergences of a diff JSON when one is given. No scripts, no external
files: it can be mailed or attached to a CI job as is. Model output is untrusted: every
piece of text is HTML-escaped and cut to a bounded length.
"""
from __future__ import annotations

import base64
import datetime as dt
import html
import json
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence, TextIO

from ..store import Run, RunFolderError
from .compare import (
    CompareError,
    Comparison,
    accuracy_rows,
    compare_runs,
    is_correct,
    is_error,
    load_runs,
    reasoning_notes,
    reasoning_rows,
    subset_rows,
)

MAX_ANSWER_CHARS = 4_000
MAX_REASONING_CHARS = 20_000
MAX_QUESTION_CHARS = 3_000
MAX_DIVERGENCE_ROWS = 200
DIVERGENCE_ORDER = {"real": 0, "suspicious": 1, "undetermined": 2, "near_tie": 3}
DIVERGENCE_COLUMNS = ("id", "class", "reason", "part", "token_index", "baseline_text", "candidate_text", "margin",
                      "baseline_outcome", "candidate_outcome", "answer_changed", "correctness_changed")

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1400px;
 color:#1d232a;background:#fff;line-height:1.4;padding:0 16px}
h1{font-size:1.6em;margin-bottom:4px}h2{margin-top:32px;border-bottom:2px solid #dde3ea;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0;font-size:0.9em}
th,td{border:1px solid #cfd6de;padding:4px 8px;text-align:right;vertical-align:top}
th{background:#eef2f6}td:first-child,th:first-child{text-align:left}
.verdict{background:#fff6d6;border-left:6px solid #e0a800;padding:10px 14px;font-size:1.05em}
.note{color:#555;font-size:0.9em}
.outcome-correct{color:#137333;font-weight:600}.outcome-wrong{color:#b3261e;font-weight:600}
.outcome-error,.outcome-truncated,.outcome-unextracted{color:#8a5a00;font-weight:600}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:8px;border-radius:4px;margin:4px 0}
details summary{cursor:pointer;color:#0b57d0}
.item{border:1px solid #dde3ea;border-radius:6px;padding:8px 12px;margin:12px 0}
.plots img{max-width:100%;margin:8px 12px 8px 0;border:1px solid #eee}
"""


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def clip(text: str | None, limit: int) -> str:
    if text is None:
        return ""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters not shown)"


def html_table(headers: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def runs_table(runs: Sequence[Run], names: Sequence[str]) -> str:
    rows = []
    for run, name in zip(runs, names):
        m = run.manifest
        d = m.get("decoding") or {}
        decoding = ", ".join(f"{k}={json.dumps(v)}" for k, v in d.items() if v not in (None, {}, []))
        rows.append([name, run.path.name, m.get("pack"), m.get("model"), ", ".join(m.get("endpoints") or []),
                     m.get("status"), len(run.records), decoding])
    return html_table(["run", "folder", "pack", "model", "endpoints", "status", "records", "decoding"], rows)


def plots_html(cmp: Comparison) -> str:
    from .plots import all_plots   # matplotlib only when a report is made

    images = []
    for name, png in all_plots(cmp).items():
        data = base64.b64encode(png).decode("ascii")
        images.append(f'<img alt="{esc(name)}" src="data:image/png;base64,{data}">')
    return '<div class="plots">' + "".join(images) + "</div>"


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


def transcript_html(item_id: str, runs: Sequence[Run], names: Sequence[str]) -> str:
    records = [r.by_id[item_id] for r in runs]
    first = records[0]
    parts = [f'<div class="item"><h3>{esc(item_id)} <span class="note">subset {esc(first.get("subset"))}, '
             f'gold {esc(first.get("gold"))}</span></h3>',
             f"<details><summary>question</summary><pre>{esc(clip(question_of(first), MAX_QUESTION_CHARS))}</pre></details>"]
    for name, record in zip(names, records):
        outcome = str(record.get("outcome"))
        usage = record.get("usage") or {}
        timing = record.get("timing") or {}
        facts = (f'<span class="outcome-{esc(outcome)}">{esc(outcome)}</span> · extracted {esc(record.get("extracted"))}'
                 f' · {esc(usage.get("completion_tokens"))} output tokens · {esc(timing.get("total_s"))} s')
        body = [f"<h4>{esc(name)}: {facts}</h4>"]
        if record.get("error"):
            error = record["error"]
            body.append(f"<pre>error {esc(error.get('kind'))}: {esc(clip(str(error.get('message')), MAX_ANSWER_CHARS))}</pre>")
        reasoning = record.get("reasoning")
        if reasoning:
            body.append(f"<details><summary>reasoning ({len(reasoning):,} characters)</summary>"
                        f"<pre>{esc(clip(reasoning, MAX_REASONING_CHARS))}</pre></details>")
        if record.get("answer") is not None:
            body.append(f"<pre>{esc(clip(record.get('answer'), MAX_ANSWER_CHARS))}</pre>")
        parts.append("".join(body))
    parts.append("</div>")
    return "".join(parts)


def divergences_html(path: Path) -> str:
    """The diff tool's JSON: its `counts` table and, when present, its `items` list
    (each a dict with at least an `id`), non-identical ones first."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CompareError(f"diff JSON {path} cannot be read ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("counts"), dict):
        raise CompareError(f"diff JSON {path} has no top-level 'counts' object")
    counts = data["counts"]
    summary = f" · {esc(data['summary'])}" if isinstance(data.get("summary"), str) else ""
    out = [f"<p class='note'>from {esc(Path(path).name)}{summary}</p>",
           html_table(list(counts), [[counts[k] for k in counts]])]
    items = data.get("items")
    if isinstance(items, list):
        rows = [i for i in items if isinstance(i, dict) and i.get("class", i.get("category")) != "identical"]
        rows.sort(key=lambda i: DIVERGENCE_ORDER.get(str(i.get("class")), len(DIVERGENCE_ORDER)))
        # the diff tool's most telling fields first, then any other scalar ones, at most 12 columns
        keys = [k for k in DIVERGENCE_COLUMNS if any(k in row for row in rows)]
        for row in rows[:MAX_DIVERGENCE_ROWS]:
            keys += [k for k, v in row.items() if k not in keys and not isinstance(v, (dict, list))]
        keys = keys[:12]
        table_rows = [[clip(str(row.get(k, "")), 300) for k in keys] for row in rows[:MAX_DIVERGENCE_ROWS]]
        if table_rows:
            out.append(html_table(keys, table_rows))
        if len(rows) > MAX_DIVERGENCE_ROWS:
            out.append(f"<p class='note'>{len(rows) - MAX_DIVERGENCE_ROWS} more not shown</p>")
    return "".join(out)


def build_report(runs: Sequence[Run], *, diff: Path | None = None, samples: int = 8, alpha: float = 0.05,
                 title: str | None = None) -> str:
    cmp = compare_runs(runs, alpha=alpha)
    names = [r.name for r in cmp.runs]
    title = title or "evalsuite report: " + " vs ".join(names)
    items_note = (f"same items: {len(cmp.alignment.ids)} (dataset fingerprints match)" if cmp.alignment.same_items
                  else "; ".join(cmp.alignment.notes))
    sections = [
        f"<h1>{esc(title)}</h1>",
        f"<p class='note'>made {esc(dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'))} "
        f"by evalsuite from run folders only · {esc(items_note)}</p>",
        f"<p class='verdict'><b>Verdict:</b> {esc(cmp.verdict())}</p>",
        "<h2>Runs</h2>", runs_table(runs, names),
        "<h2>Accuracy</h2><p class='note'>accuracy = correct / (items − errors), Wilson 95% interval; exact "
        "McNemar of each run against the first (b: first right, this wrong; c: first wrong, this right; "
        "items erroring in either run left out)</p>",
        html_table(*accuracy_rows(cmp)),
    ]
    if len(cmp.subset_names) > 1:
        sections += ["<h2>Per subset</h2>", html_table(*subset_rows(cmp))]
    sections += ["<h2>Reasoning length and time to solution</h2>", html_table(*reasoning_rows(cmp)),
                 "<ul class='note'>" + "".join(f"<li>{esc(n)}</li>" for n in reasoning_notes(cmp)) + "</ul>",
                 "<h2>Plots</h2>", plots_html(cmp)]
    if diff is not None:
        sections += ["<h2>Divergences</h2>", divergences_html(diff)]
    chosen = sample_ids(runs, cmp.alignment.ids, samples)
    if chosen:
        sections += [f"<h2>Sample transcripts ({len(chosen)} of {len(cmp.alignment.ids)}, disagreements first)</h2>"]
        sections += [transcript_html(i, runs, names) for i in chosen]
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            + "\n".join(sections) + "</body></html>\n")


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
        check_writable(output, "--output")
        runs = load_runs(paths)
        if diff:
            from .diff import diff_json_mismatch_any
            why = diff_json_mismatch_any(Path(diff), runs)
            if why:
                raise CompareError(f"--diff {diff}: {why}")
        page = build_report(runs, diff=Path(diff) if diff else None, samples=samples, alpha=alpha, title=title)
    except (RunFolderError, CompareError, OutputError) as e:
        print(f"report: {e}", file=err)
        return 2
    Path(output).write_text(page, encoding="utf-8")
    print(f"report: {output} ({len(page) / 1024:.0f} KiB)", file=out)
    return 0
