"""`evalsuite gallery RUN... --html gallery.html`: several runs' SVG renders side by side per prompt.

One self-contained HTML file (templates/gallery.html.j2): PNG renders embedded as base64
data: URIs, inline CSS, no script, and a Content-Security-Policy that allows only data:
images, so the page fetches nothing and runs nothing. The model's SVG source is shown as
escaped text, never as live markup; an answer without SVG is shown as the text it is.
Renders come from RUN/renders/ (`evalsuite svg-render RUN`); missing ones are
drawn first and cached there. Judge scores (RUN/judge.jsonl) are shown when present.
"""
from __future__ import annotations

import base64
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..store import Run, load_run
from ..pages.page import clip, render

STAT_LABELS = (("bytes", "bytes"), ("elements", "elements"), ("paths", "<path>"),
               ("path_commands", "path cmds"), ("transforms", "transforms"), ("groups", "groups"),
               ("colours", "colours"), ("scripts", "scripts (not run)"))
MAX_SOURCE_CHARS = 50_000   # source shown per cell; the full text is in the run folder
MAX_WRITTEN_CHARS = 2_000   # an answer without SVG: its start says what went wrong


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
    from ..svg.judge import read_judge
    from ..svg.render import read_render_index, render_run

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


def _image(view: RunView, item_id: str) -> dict[str, Any]:
    """The render of one answer: a base64 PNG, or why there is none."""
    entry = view.renders.get(item_id) or {}
    if entry.get("status") != "rendered" or not entry.get("png"):
        status = entry.get("status") or "not rendered"
        label = "no SVG in the answer" if status == "no-svg" else status
        return {"png": None, "status": label, "why": clip(entry.get("error") or "", 200), "blank": False,
                "removed": _removed(entry)}
    try:
        data = (view.run.path / entry["png"]).read_bytes()
    except OSError as e:
        return {"png": None, "status": "render missing", "why": clip(str(e), 200), "blank": False,
                "removed": _removed(entry)}
    return {"png": base64.b64encode(data).decode("ascii"), "status": "rendered", "why": "",
            "blank": bool(entry.get("blank")), "removed": _removed(entry)}


MAX_REMOVED_SHOWN = 20


def _removed(entry: dict[str, Any]) -> list[str]:
    """What the safe renderer took out before drawing (renders/index.json `refused`): a render
    that looks fine may have lost scripts and external images, and the reader should know."""
    refused = [clip(str(r), 200) for r in entry.get("refused") or []]
    if len(refused) > MAX_REMOVED_SHOWN:
        refused = refused[:MAX_REMOVED_SHOWN] + [f"… and {len(refused) - MAX_REMOVED_SHOWN} more (renders/index.json)"]
    return refused


def _cell(view: RunView, record: dict[str, Any] | None, item_id: str) -> dict[str, Any] | None:
    if record is None:
        return None
    facts = _svg_facts(record)
    image = _image(view, item_id)
    reason = str((record.get("verdict") or {}).get("reason") or ((record.get("error") or {}).get("message")) or "")
    if reason and image["why"] and image["why"].split("\n…")[0] in reason:
        image = {**image, "why": ""}          # said once, under the outcome
    stats = facts["stats"] or {}
    access = ", ".join(name for name, on in (("title", stats.get("title")), ("desc", stats.get("desc")),
                                             (f"aria×{stats.get('aria')}", stats.get("aria")),
                                             ("viewBox", stats.get("viewbox"))) if on) or "none"
    judged = view.judged.get(item_id)
    src = facts["source"]
    answer = record.get("answer")
    return {
        "outcome": str(record.get("outcome", "?")),
        # validity apart from the outcome: a valid SVG can still be wrong (blank, a rule missed)
        "validity": ("no SVG" if src is None else "valid SVG" if facts["valid"] else "invalid SVG")
                    + (", draws nothing" if facts["valid"] and not stats.get("drawn", 1) else ""),
        "image": image,
        "reason": clip(reason, 300),
        "stats": [(label, stats.get(key)) for key, label in STAT_LABELS] + [("a11y", access)] if stats else [],
        "rules": [{"passed": bool(r.get("passed")), "rule": str(r.get("rule")), "actual": clip(str(r.get("actual")), 60)}
                  for r in facts["rules"]],
        "judge": None if not judged else {
            "score": "—" if judged.get("score") is None else f"{judged['score']}/10",
            "reason": clip(str(judged.get("reason") or judged.get("error") or ""), 300)},
        "source": clip(src, MAX_SOURCE_CHARS) if src else None,
        # no SVG to draw: what the model wrote instead is the thing to read
        "written": (clip(str(answer), MAX_WRITTEN_CHARS) if not src and answer else None),
    }


def _run_summary_row(name: str, view: RunView) -> list[Any]:
    records = view.run.records
    manifest = view.run.manifest
    outcomes = [r.get("outcome") for r in records]
    sizes = [((r.get("verdict") or {}).get("details") or {}).get("stats", {}).get("bytes") for r in records]
    sizes = [s for s in sizes if isinstance(s, int)]
    rendered = [e for e in view.renders.values() if e.get("status") == "rendered"]
    valid = sum(1 for r in records if ((r.get("verdict") or {}).get("details") or {}).get("valid"))
    return [name, manifest.get("model") or "", ", ".join(manifest.get("endpoints") or []), len(records),
            valid, outcomes.count("correct"), outcomes.count("wrong"), outcomes.count("unextracted"),
            outcomes.count("truncated"), outcomes.count("error"),
            f"{len(rendered)} ({sum(1 for e in rendered if e.get('blank'))} blank)",
            int(statistics.median(sizes)) if sizes else None]


def build_gallery_html(views: Sequence[RunView], title: str = "SVG gallery") -> str:
    names = _run_names(views)
    by_id = [v.run.by_id for v in views]
    items = []
    for item_id in _item_order(views):
        records = [b.get(item_id) for b in by_id]
        first = next((r for r in records if r is not None), {})
        items.append({"id": item_id, "anchor": item_id.replace("/", "-"), "prompt": _prompt_text(first),
                      "requirements": str(first["gold"]) if first.get("gold") else "",
                      "cells": [(n, _cell(v, r, item_id)) for n, v, r in zip(names, views, records)]})
    return render("gallery.html.j2", title=title, n_runs=len(views),
                  runs=[_run_summary_row(n, v) for n, v in zip(names, views)], items=items)


def write_gallery(run_dirs: Sequence[str | os.PathLike], output: str | os.PathLike, *, render: bool = True,
                  size: int | None = None, timeout_s: float | None = None, title: str = "SVG gallery",
                  progress: Callable[[str], None] | None = None) -> Path:
    """Render what is missing (unless render=False), then write the gallery page."""
    from ..svg.render import RENDER_SIZE, RENDER_TIMEOUT_S

    views = _load_views([Path(d) for d in run_dirs], render, size or RENDER_SIZE,
                        timeout_s or RENDER_TIMEOUT_S, progress)
    output = Path(output)
    output.write_text(build_gallery_html(views, title), encoding="utf-8")
    return output


def gallery_main(run_dirs: Sequence[str | os.PathLike], output: str | os.PathLike, *, render: bool = True,
                 size: int | None = None, timeout: float | None = None, echo: Callable[[str], None] = print) -> int:
    """The `evalsuite gallery` command: write the page; 2 when a folder cannot be read."""
    import sys

    from ..store import RunFolderError

    try:
        path = write_gallery(run_dirs, output, render=render, size=size, timeout_s=timeout)
    except (RunFolderError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    echo(f"wrote {path}")
    return 0
