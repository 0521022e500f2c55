"""`evalsuite gallery RUN... -o gallery.html`: several runs' SVG renders side by side per prompt.

One self-contained HTML file: PNG renders embedded as base64 data: URIs, inline CSS, no
script, and a Content-Security-Policy that allows only data: images, so the page fetches
nothing and runs nothing. The model's SVG source is shown as escaped text, never as live
markup. Renders come from RUN/renders/ (`evalsuite svg-render RUN`); missing ones are
drawn first and cached there. Judge scores (RUN/judge.jsonl) are shown when present.
"""
from __future__ import annotations

import base64
import html
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..store import Run, load_run

STAT_LABELS = (("bytes", "bytes"), ("elements", "elements"), ("paths", "&lt;path&gt;"),
               ("path_commands", "path cmds"), ("transforms", "transforms"), ("groups", "groups"),
               ("colours", "colours"))
MAX_SOURCE_CHARS = 50_000   # source shown per cell; the full text is in the run folder


@dataclass(frozen=True)
class RunView:
    run: Run
    renders: dict[str, dict[str, Any]]
    judged: dict[str, dict[str, Any]]


def _prompt_text(record: dict[str, Any]) -> str:
    messages = record.get("messages") or []
    users = [m.get("content", "") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    return users[-1] if users else (record.get("prompt") or "")


def _svg_facts(record: dict[str, Any]) -> dict[str, Any]:
    """Stats, rule results, validity and source for one record: what the run recorded in
    verdict.details, else measured again from the answer (records from older graders)."""
    from ..graders.svg import analyse_svg

    details = ((record.get("verdict") or {}).get("details")) or {}
    analysis = analyse_svg(record.get("answer"))
    facts = {
        "source": analysis.extraction.svg,
        "valid": bool(analysis.validation and analysis.validation.ok),
        "errors": list(analysis.validation.errors) if analysis.validation else [],
        "stats": details.get("stats") or analysis.stats,
        "rules": details.get("rules") or [],
    }
    return facts


def _load_views(run_dirs: Sequence[Path], render: bool, size: int, timeout_s: float,
                progress: Callable[[str], None] | None) -> list[RunView]:
    from ..svg_judge import read_judge
    from ..svg_render import read_render_index, render_run

    views = []
    for run_dir in run_dirs:
        run = load_run(run_dir)
        if render:
            render_run(run_dir, size=size, timeout_s=timeout_s, progress=progress)
        views.append(RunView(run, read_render_index(run_dir), read_judge(run_dir)))
    return views


def _item_order(views: Sequence[RunView]) -> list[str]:
    order: list[str] = []
    seen: set[str] = set()
    for v in views:
        for item_id in list(v.run.manifest.get("item_ids") or []) + [r["id"] for r in v.run.records]:
            if item_id not in seen:
                seen.add(item_id)
                order.append(item_id)
    return order


def _run_names(views: Sequence[RunView]) -> list[str]:
    names = [v.run.name for v in views]
    # two runs with the same label still need telling apart
    return [n if names.count(n) == 1 else f"{n} ({v.run.path.name})" for n, v in zip(names, views)]


def _png_tag(view: RunView, item_id: str, alt: str) -> str:
    entry = view.renders.get(item_id) or {}
    if entry.get("status") != "rendered" or not entry.get("png"):
        status = entry.get("status") or "not rendered"
        why = entry.get("error") or ""
        return f'<div class="noimg">{html.escape(status)}<br><small>{html.escape(why[:200])}</small></div>'
    path = view.run.path / entry["png"]
    try:
        data = path.read_bytes()
    except OSError as e:
        return f'<div class="noimg">render missing<br><small>{html.escape(str(e)[:200])}</small></div>'
    b64 = base64.b64encode(data).decode("ascii")
    blank = ' <span class="bad">blank</span>' if entry.get("blank") else ""
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{b64}">{blank}'


def _cell(view: RunView, record: dict[str, Any] | None, item_id: str) -> str:
    if record is None:
        return '<td class="cell"><div class="noimg">not in this run</div></td>'
    outcome = record.get("outcome", "?")
    facts = _svg_facts(record)
    parts = [f'<div class="outcome {html.escape(outcome)}">{html.escape(outcome)}</div>',
             _png_tag(view, item_id, f"{item_id} render")]
    reason = (record.get("verdict") or {}).get("reason") or ((record.get("error") or {}).get("message")) or ""
    if reason:
        parts.append(f'<div class="reason">{html.escape(str(reason)[:300])}</div>')
    stats = facts["stats"]
    if stats:
        rows = "".join(f"<tr><th>{label}</th><td>{html.escape(str(stats.get(key)))}</td></tr>"
                       for key, label in STAT_LABELS)
        access = ", ".join(name for name, on in (("title", stats.get("title")), ("desc", stats.get("desc")),
                                                   (f"aria×{stats.get('aria')}", stats.get("aria")),
                                                   ("viewBox", stats.get("viewbox"))) if on) or "none"
        rows += f"<tr><th>a11y</th><td>{html.escape(access)}</td></tr>"
        parts.append(f'<table class="stats">{rows}</table>')
    if facts["rules"]:
        items = "".join(
            f'<li class="{"ok" if r.get("passed") else "bad"}">{"✓" if r.get("passed") else "✗"} '
            f'{html.escape(str(r.get("rule")))} <small>(found {html.escape(str(r.get("actual"))[:60])})</small></li>'
            for r in facts["rules"])
        parts.append(f'<ul class="rules">{items}</ul>')
    judged = view.judged.get(item_id)
    if judged:
        score = judged.get("score")
        shown = "—" if score is None else f"{score}/10"
        parts.append(f'<div class="judge">judge: <b>{html.escape(shown)}</b> '
                     f'{html.escape(str(judged.get("reason") or judged.get("error") or "")[:300])}</div>')
    if facts["source"]:
        src = facts["source"]
        cut = f"\n… ({len(src) - MAX_SOURCE_CHARS} more characters)" if len(src) > MAX_SOURCE_CHARS else ""
        parts.append(f"<details><summary>SVG source</summary><pre>{html.escape(src[:MAX_SOURCE_CHARS] + cut)}</pre></details>")
    return f'<td class="cell">{"".join(parts)}</td>'


def _run_summary_row(name: str, view: RunView) -> str:
    records = view.run.records
    manifest = view.run.manifest
    outcomes = [r.get("outcome") for r in records]
    sizes = [((r.get("verdict") or {}).get("details") or {}).get("stats", {}).get("bytes") for r in records]
    sizes = [s for s in sizes if isinstance(s, int)]
    rendered = [e for e in view.renders.values() if e.get("status") == "rendered"]
    cells = [name, str(manifest.get("model") or ""), ", ".join(manifest.get("endpoints") or []),
             str(len(records)), str(outcomes.count("correct")), str(outcomes.count("wrong")),
             str(outcomes.count("unextracted")), str(outcomes.count("truncated")), str(outcomes.count("error")),
             f"{len(rendered)} ({sum(1 for e in rendered if e.get('blank'))} blank)",
             str(int(statistics.median(sizes))) if sizes else "—"]
    return "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"


CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table.runs{border-collapse:collapse;margin-bottom:2em}
table.runs td,table.runs th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
section{margin-bottom:2.5em;border-top:2px solid #444;padding-top:.5em}
.prompt{white-space:pre-wrap;background:#f4f4f4;padding:.5em;border-radius:4px}
table.grid{border-collapse:collapse;table-layout:fixed}
table.grid th{padding:.3em;text-align:left}
td.cell{vertical-align:top;border:1px solid #ddd;padding:.5em;width:320px}
td.cell img{width:300px;height:300px;border:1px solid #eee;display:block}
.noimg{width:300px;height:300px;background:#fafafa;border:1px dashed #bbb;display:flex;
 flex-direction:column;justify-content:center;align-items:center;color:#888;text-align:center}
.outcome{font-weight:bold;margin-bottom:.3em}.correct{color:#1a7f37}.wrong{color:#b35900}
.unextracted,.error{color:#c00}.truncated{color:#8250df}
.reason{font-size:.85em;color:#555;margin:.3em 0}
table.stats{font-size:.8em;border-collapse:collapse}table.stats th{text-align:left;padding-right:1em;font-weight:normal;color:#666}
ul.rules{font-size:.85em;padding-left:1em}li.ok{color:#1a7f37}li.bad,.bad{color:#c00}
.judge{font-size:.85em;margin:.3em 0}
pre{max-height:20em;overflow:auto;font-size:.75em;background:#f8f8f8;white-space:pre-wrap;word-break:break-all}
"""


def build_gallery_html(views: Sequence[RunView], title: str = "SVG gallery") -> str:
    names = _run_names(views)
    by_id = [v.run.by_id for v in views]
    header_cells = "".join(f"<th>{html.escape(n)}</th>" for n in names)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        # the page may show only embedded images: nothing is fetched, nothing runs
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
        "style-src 'unsafe-inline'\">",
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>{len(views)} run(s), generated {html.escape(time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()))}.</p>",
        '<table class="runs"><tr><th>run</th><th>model</th><th>endpoint</th><th>items</th><th>correct</th>'
        "<th>wrong</th><th>no SVG</th><th>truncated</th><th>errors</th><th>rendered</th><th>median bytes</th></tr>",
        *(_run_summary_row(n, v) for n, v in zip(names, views)),
        "</table>",
    ]
    for item_id in _item_order(views):
        records = [b.get(item_id) for b in by_id]
        first = next((r for r in records if r is not None), {})
        anchor = html.escape(item_id.replace("/", "-"))
        out.append(f'<section id="{anchor}"><h2>{html.escape(item_id)}</h2>')
        out.append(f'<div class="prompt">{html.escape(_prompt_text(first))}</div>')
        if first.get("gold"):
            out.append(f"<p><small>requirements: {html.escape(str(first['gold']))}</small></p>")
        out.append(f'<table class="grid"><tr>{header_cells}</tr><tr>')
        out.extend(_cell(v, r, item_id) for v, r in zip(views, records))
        out.append("</tr></table></section>")
    out.append("</body></html>")
    return "\n".join(out)


def write_gallery(run_dirs: Sequence[str | os.PathLike], output: str | os.PathLike, *, render: bool = True,
                  size: int | None = None, timeout_s: float | None = None, title: str = "SVG gallery",
                  progress: Callable[[str], None] | None = None) -> Path:
    """Render what is missing (unless render=False), then write the gallery page."""
    from ..svg_render import RENDER_SIZE, RENDER_TIMEOUT_S

    views = _load_views([Path(d) for d in run_dirs], render, size or RENDER_SIZE,
                        timeout_s or RENDER_TIMEOUT_S, progress)
    output = Path(output)
    output.write_text(build_gallery_html(views, title), encoding="utf-8")
    return output
