"""The HTML page of one or more speed profiles (`speed --html`, `report A.json B.json`): the
llama-bench table of each, the speedups of each against the first, and the plots, drawn with
the one template set and stylesheet of every evalsuite page (pages/page.py,
templates/speed.html.j2). Reads profiles only."""
from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any, Sequence, TextIO

from .compare import compare_profiles, comparison_cells, comparison_text  # noqa: F401  (comparison_text: report's stdout)
from .rows import Profile, ProfileError, read_profile
from .table import load_cells, load_text, profile_cells, profile_headers, replay_cells, replay_summary, soak_text


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], text: Sequence[str] = ()) -> dict[str, Any]:
    numeric = [i for i, h in enumerate(headers) if h not in text]
    return {"headers": list(headers), "rows": [list(r) for r in rows], "numeric": numeric}


def build_page(profiles: Sequence[Profile], title: str | None = None) -> str:
    from ..pages.page import render
    from .plots import all_plots

    summary = _table(["profile", "model", "endpoint", "engine", "status", "rows", "round trip (ms)", "prompts sized by",
                      "started"],
                     [[p.name, p.model, p.endpoint, p.engine, p.status, len(p.rows), p.latency_ms, p.token_counts,
                       p.started_at] for p in profiles],
                     text=("profile", "model", "endpoint", "engine", "status", "prompts sized by", "started"))
    sections = []
    for p in profiles:
        headers = profile_headers(p)
        extra = []
        if p.replay is not None:
            h, cells = replay_cells(p)
            extra.append({"title": "Replayed session", "lines": [replay_summary(p)],
                          "table": _table(h, cells, text=("session", "turn", "where the TTFT went / error"))})
        if p.load is not None:
            h, cells = load_cells(p)
            extra.append({"title": "Load by arrival rate", "lines": load_text(p).split("\n\n")[0:1]
                          + [line for line in load_text(p).splitlines() if line.startswith(("knee", "rate "))],
                          "table": _table(h, cells, text=("rate (req/s)", "within SLO", "notes"))})
        sections.append({"title": f"{p.name}: {p.status}", "notes": list(p.notes),
                         "table": _table(headers, profile_cells(p), text=("model", "workload", "test", "median [p10, p90]",
                                                                          "acceptance", "notes")),
                         "soak": soak_text(p) if p.soak else None, "sections": extra})
    comparison, verdict = None, None
    if len(profiles) > 1:
        rows, notes, lines = [], [], []
        headers: list[str] = []
        for other in profiles[1:]:
            cmp = compare_profiles(profiles[0], other)
            headers, cells = comparison_cells(cmp)
            headers = ["against"] + headers
            rows += [[f"{other.name} vs {profiles[0].name}"] + c for c in cells]
            if cmp.only_a or cmp.only_b:
                notes.append(f"{other.name}: rows in one profile only: {', '.join(cmp.only_a + cmp.only_b)}")
            lines.append(f"{other.name} vs {profiles[0].name}: {cmp.headline()}")
        comparison = {"title": "Speedups against " + profiles[0].name, "notes": notes,
                      **_table(headers, rows, text=("against", "workload", "test", "figure", "verdict"))}
        verdict = "; ".join(lines)
    plots = [(name, base64.b64encode(png).decode("ascii")) for name, png in all_plots(profiles)]
    return render("speed.html.j2", title=title or "evalsuite speed: " + " vs ".join(p.name for p in profiles),
                  profiles=summary, rows=sections, comparison=comparison, verdict=verdict, plots=plots)


def write_page(path: str | Path, profiles: Sequence[Profile], title: str | None = None) -> int:
    data = build_page(profiles, title).encode("utf-8")
    Path(path).write_bytes(data)
    return len(data)


def report_main(paths: Sequence[str | Path], output: str | Path, out: TextIO | None = None,
                err: TextIO | None = None) -> int:
    """`evalsuite report A.json [B.json ...] --html page.html`: 0 written, 2 unusable input."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        profiles = [read_profile(p) for p in paths]
    except ProfileError as e:
        print(f"report: {e}", file=err)
        return 2
    try:
        size = write_page(output, profiles)
    except OSError as e:
        print(f"report: cannot write {output}: {e.strerror or e}", file=err)
        return 2
    print(f"report: {output} ({size / 1024:.0f} KiB)", file=out)
    return 0
