"""The three HTML pages (report, diff, gallery) as a reader gets them: no Python `None` in a
cell, figures rounded, no raw control byte anywhere in the file (a NUL or ESC token shows as
an escape), and, in headless Chromium at 1400 px, nothing wider than the window."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from browser import WIDTH, chromium_binary, page_width, screenshot
from runfactory import make_run, rec
from test_diff import plain, record, tok
from test_report import build_runs, names_of

from evalsuite.lossless.runs import diff_runs
from evalsuite.lossless.html import render_html
from evalsuite.analysis.report import report_main
from evalsuite.store import load_run

CONTROL = "\x00\x1b[31m\x07"
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
UNROUNDED = re.compile(r"\d\.\d{5,}")
LONG = "a_very_long_unbroken_token_" * 40


def diff_page(tmp_path: Path) -> tuple[Path, dict]:
    """A diff whose divergences hold NUL/ESC tokens, long unbroken text and full-precision logprobs."""
    head = plain(["The", " answer", LONG])
    base = head + [tok("\x00", -0.6931471805599453, [("\x00", -0.6931471805599453), ("\x1b", -0.7123456789)])] \
        + plain([" is", " 42"])
    cand = head + [tok("\x1b", -0.6931471805599453, [("\x1b", -0.6931471805599453), ("\x00", -0.7123456789)])] \
        + plain([" is", " 43" + CONTROL])
    b = make_run(tmp_path / "db", records=[record("main/0", base), record("main/1", plain(["x"]))],
                 decoding={"logprobs": 5}, label="spec-off")
    c = make_run(tmp_path / "dc", records=[record("main/0", cand, outcome="wrong"),
                                           record("main/1", plain(["y"]))], decoding={"logprobs": 5}, label="spec-on")
    result = diff_runs(load_run(b), load_run(c), 0.05)
    page = tmp_path / "diff.html"
    page.write_text(render_html(result), encoding="utf-8")
    return page, result.to_dict()


def report_page(tmp_path: Path) -> Path:
    """The report of two runs, with the divergences of a diff JSON, and a transcript whose
    answer holds control characters and whose usage is missing."""
    a, b = build_runs(tmp_path)
    runs = [load_run(a), load_run(b)]
    odd = rec("algebra/30", "wrong", answer="answer:" + CONTROL + LONG, completion_tokens=None, ttft_s=None,
              total_s=0.14940862200000993, extracted=None)
    (b / "records.jsonl").write_text("\n".join(json.dumps(r) for r in (
        odd if r["id"] == "algebra/30" else r for r in runs[1].records)) + "\n", encoding="utf-8")
    _, data = diff_page(tmp_path / "d")
    data.update(names_of(tmp_path))
    data["items"].append({"id": "geometry/7", "class": "near_tie", "margin": 0.0123456789, "reason": "x" * 500,
                          "baseline_text": "\x00", "candidate_text": None, "token_index": 3})
    (tmp_path / "diff.json").write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "report.html"
    assert report_main([a, b], out, diff=tmp_path / "diff.json", out=io.StringIO(), err=io.StringIO()) == 0
    return out


def gallery_page(tmp_path: Path) -> Path:
    from test_svg_grader import PELICAN

    from evalsuite.analysis.gallery import write_gallery
    from test_svg_render import svg_run

    a = svg_run(tmp_path / "ga", {"svg/pelican-bicycle": f"```svg\n{PELICAN}\n```",
                                  "svg/traffic-light": "I cannot draw" + CONTROL + " that. " + LONG}, label="spec-off")
    b = svg_run(tmp_path / "gb", {"svg/pelican-bicycle": "no svg here", "svg/traffic-light": None}, label="spec-on")
    return write_gallery([a, b], tmp_path / "gallery.html", size=64)


PAGES = {"report": report_page, "diff": lambda p: diff_page(p)[0], "gallery": gallery_page}


@pytest.fixture(scope="module", params=sorted(PAGES))
def page(request, tmp_path_factory) -> Path:
    return PAGES[request.param](tmp_path_factory.mktemp(request.param))


def visible_text(html: str) -> str:
    """What a reader reads: tags (and the base64 images inside them) and the stylesheet gone."""
    html = re.sub(r"<style>.*?</style>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


def test_no_none_no_unrounded_figures_no_raw_control_bytes(page):
    html = page.read_text(encoding="utf-8")
    text = visible_text(html)
    assert not re.search(r"\bNone\b", text), re.search(r".{60}\bNone\b.{20}", text, re.S)
    assert not UNROUNDED.search(text), UNROUNDED.search(text)
    assert not RAW_CONTROL.search(html), repr(html[RAW_CONTROL.search(html).start() - 60:][:80])
    assert "Content-Security-Policy" in html and "<script" not in html
    assert "\\x1b" in html                          # control characters shown as escapes, not dropped
    if page.stem in ("report", "diff"):
        assert "\\x00" in html
    if page.stem == "gallery":
        assert "I cannot draw\\x00\\x1b[31m\\x07 that." in html and "what the model wrote (no SVG in the answer)" in html


def test_page_fits_1400px_in_headless_chromium(page, tmp_path):
    binary = chromium_binary()
    assert page_width(binary, page, tmp_path) <= WIDTH
    shot = screenshot(binary, page, tmp_path / f"{page.stem}.png", tmp_path)
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[1] == WIDTH
    assert 0.01 < (pixels < 0.95).any(axis=-1).mean() < 0.9, "screenshot looks blank or broken"


def test_token_ids_read_as_names_not_quantities():
    from evalsuite.pages.cards import divergence_card

    card = divergence_card({"id": "s/1", "verdict": "real", "token_index": 3,
                            "baseline_token": {"text": "a", "id": 18520, "logprob_baseline": -0.1},
                            "candidate_token": {"text": "b", "bytes": [195, 169]}})
    idents = [row["ident"] for row in card["tokens"]]
    assert idents == ["18520", "195 169"]
