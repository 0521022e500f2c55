"""Issue 21 #2: `compare` and `report` timed the same two runs differently (compare loaded them
without `server_timings`, so it fell back to the client's latency while report used the server's
timings), and the footnotes gave two definitions. Both now take time/item from one computation
(run_stats.token_stats on runs loaded alike) and say what it is once."""
from __future__ import annotations

import io
from html import unescape
import json
import re

from runfactory import make_run, rec

from evalsuite.analysis.compare.tables import compare_main


def _runs(tmp_path):
    """Two runs whose server time is 0.50 s and 0.25 s per item, and client latency 3 s and 9 s."""
    paths = []
    for name, server_ms, latency in (("a", 500.0, 3.0), ("b", 250.0, 9.0)):
        records = []
        for n in range(4):
            r = rec(f"main/{n}", "correct", total_s=latency, ttft_s=0.1)
            r["server_timings"] = {"prompt_ms": server_ms / 5, "predicted_ms": server_ms * 4 / 5, "predicted_n": 40}
            records.append(r)
        paths.append(make_run(tmp_path / name, "gsm8k", records=records, label=name))
    return paths


def _time_cells(headers: list[str], rows: list[list[str]]) -> list[tuple[str, str]]:
    med, vs = headers.index("time/item med (s)"), headers.index("time vs first")
    return [(row[med], row[vs]) for row in rows]


def test_compare_and_report_give_the_same_time_per_item(tmp_path):
    from evalsuite.analysis.report import report_main

    a, b = _runs(tmp_path)
    out = io.StringIO()
    assert compare_main([a, b], json_path=tmp_path / "cmp.json", out=out) == 0
    text = out.getvalue()
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("run ") and "time/item med (s)" in line)
    headers = re.split(r"\s{2,}", lines[head].strip())
    rows = [re.split(r"\s{2,}", lines[head + 2 + k].strip()) for k in range(2)]
    printed = _time_cells(headers, rows)

    html = tmp_path / "r.html"
    assert report_main([a, b], html, out=io.StringIO()) == 0
    page = unescape(html.read_text(encoding="utf-8"))
    table = page[page.index("Reasoning length and time to solution"):]
    cells = [re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row) for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[:3]]
    reported = _time_cells(cells[0], cells[1:])

    assert printed == reported == [("0.50", "(first)"), ("0.25", "×0.50")], (printed, reported)
    for shown in (text, page):
        assert shown.count("time/item =") == 1, "time/item is defined once"
        assert "the server's own timings" in shown and "timing.total_s" not in shown
    # the --json output holds the same figures: the server's time per item, not the client's 3 s / 9 s
    runs = json.loads((tmp_path / "cmp.json").read_text())["runs"]
    assert [(r["tokens"]["tts_median"], r["tokens"]["tts_total"], r["tokens"]["tts_source"]) for r in runs] \
        == [(0.5, 2.0, "server"), (0.25, 1.0, "server")], runs


def test_report_size_is_counted_in_bytes(tmp_path):
    """Issue 21 #3: the size printed was the page's length in characters (94 KiB for 102,143 bytes)."""
    from evalsuite.analysis.report import report_main

    records = [rec(f"main/{n}", "correct", answer="答" * 3000 + " The answer is 42") for n in range(6)]
    a = make_run(tmp_path / "a", "gsm8k", records=records)
    out = io.StringIO()
    html = tmp_path / "r.html"
    assert report_main([a], html, out=out) == 0
    kib = int(re.search(r"\((\d+) KiB\)", out.getvalue()).group(1))
    size = html.stat().st_size
    assert len(html.read_text(encoding="utf-8")) < size - 20_000   # characters and bytes differ here
    assert kib == round(size / 1024), (kib, size)
