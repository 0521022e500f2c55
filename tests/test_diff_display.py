"""Speculation engaged and streaming, per side, in `show`, `diff` (text, JSON, HTML) and
`report`; the token drift (line, JSON, survival plot) on the diff page and in the report."""
from __future__ import annotations

import io
import json
import math

from runfactory import make_run, rec

from evalsuite.analysis.report import report_main
from evalsuite.analysis.summary import format_summary, summarize
from evalsuite.lossless.command import diff_main

LN = math.log


def ent(text, tid, lp, top):
    alts = [{"token": t, "bytes": list(t.encode()), "id": i, "logprob": v} for t, i, v in top]
    return {"token": text, "bytes": list(text.encode()), "id": tid, "logprob": lp, "part": "answer", "top": alts}


def spec(drafted, accepted, summary, stream):
    return {"speculation": {"http://127.0.0.1:8080/v1": {
        "during_run": {"drafted": drafted, "accepted": accepted, "source": "metrics"}, "summary": summary}},
        "client": {"concurrency": 1, "timeout": 600, "max_retries": 2, "max_downtime": 300, "stream": stream}}


def two_runs(tmp_path):
    base = [ent("a", 1, LN(0.6), [("a", 1, LN(0.6)), ("b", 2, LN(0.3))])] * 3
    cand = [ent("a", 1, LN(0.5), [("a", 1, LN(0.5)), ("b", 2, LN(0.4))])] * 3
    b = make_run(tmp_path / "b", records=[rec("main/0", answer="aaa", logprobs=base, finish_reason="length")],
                 decoding={"logprobs": 2}, extra_manifest=spec(0, 0, "speculation never engaged: no tokens were "
                                                               "drafted during the run", True))
    c = make_run(tmp_path / "c", records=[rec("main/0", answer="aaa", logprobs=cand, finish_reason="length")],
                 decoding={"logprobs": 2}, extra_manifest=spec(10, 9, "speculation engaged: 9 of 10 drafted "
                                                               "tokens accepted (90.0%)", False))
    return b, c


def test_diff_text_json_and_page_show_speculation_streaming_and_drift(tmp_path):
    b, c = two_runs(tmp_path)
    lines = []
    code = diff_main(b, c, json_path=tmp_path / "d.json", html_path=tmp_path / "d.html", echo=lines.append)
    assert code == 0
    text = "\n".join(lines)
    assert "baseline  b: http://127.0.0.1:8080/v1 (speculation never engaged" in text and "; streamed)" in text
    assert "candidate c: http://127.0.0.1:8080/v1 (speculation engaged: 9 of 10" in text
    assert "unstreamed (--no-stream)" in text
    assert "drift over 3 common-prefix tokens of 1 items" in text
    data = json.loads((tmp_path / "d.json").read_text())
    assert data["baseline"]["speculation"].startswith("speculation never engaged")
    assert data["candidate"]["speculation"].startswith("speculation engaged") and data["candidate"]["stream"].startswith("unstreamed")
    assert data["drift"]["tokens"] == 3 and data["drift"]["kl_mean"] > 0
    page = (tmp_path / "d.html").read_text()
    assert "speculation engaged: 9 of 10 drafted tokens accepted" in page and "Token drift" in page
    assert "<svg" in page and "<script" not in page


def test_show_and_report_show_speculation_and_streaming(tmp_path):
    b, c = two_runs(tmp_path)
    manifest = json.loads((c / "manifest.json").read_text())
    shown = format_summary(summarize(manifest, [json.loads(line) for line in (c / "records.jsonl").open()]), manifest)
    assert "speculation engaged: 9 of 10 drafted tokens accepted (90.0%); unstreamed (--no-stream)" in shown
    diff_main(b, c, json_path=tmp_path / "d.json", echo=lambda s: None)
    out = tmp_path / "r.html"
    assert report_main([b, c], out, diff=tmp_path / "d.json", out=io.StringIO(), err=io.StringIO()) == 0
    page = out.read_text()
    assert "speculation never engaged" in page and "speculation engaged: 9 of 10" in page
    assert "stream" in page and "no-stream" in page
    assert "Token drift" in page and "<svg" in page


def test_old_runs_without_the_fields_still_diff_and_say_not_recorded(tmp_path):
    base = [ent("a", 1, LN(0.6), [("a", 1, LN(0.6))])]
    b = make_run(tmp_path / "b", records=[rec("main/0", answer="a", logprobs=base)], decoding={"logprobs": 1})
    c = make_run(tmp_path / "c", records=[rec("main/0", answer="a", logprobs=base)], decoding={"logprobs": 1})
    lines = []
    assert diff_main(b, c, html_path=tmp_path / "d.html", echo=lines.append) == 0
    assert "baseline  b: http://127.0.0.1:8080/v1\n" in "\n".join(lines) + "\n"
    assert "not recorded" in (tmp_path / "d.html").read_text()
