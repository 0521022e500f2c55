"""report: one self-contained HTML page with the tables, plots, transcripts and divergences;
rendered in headless Chromium (non-blank screenshot, key numbers in the DOM)."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

from browser import chromium, chromium_binary
from runfactory import make_run, paired_outcomes, rec

from evalsuite.analysis.report import report_main

EVIL = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"


def build_runs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = paired_outcomes(both_right=30, a_only=6, b_only=2, both_wrong=12)
    subsets = ("algebra", "geometry")
    ra = [rec(f"{subsets[n % 2]}/{n}", o, completion_tokens=400, reasoning_tokens=250, ttft_s=0.2, total_s=4.2,
              reasoning=f"thinking about item {n} " * 20) for n, o in enumerate(a)]
    rb = [rec(f"{subsets[n % 2]}/{n}", o, completion_tokens=1000, reasoning_tokens=700, ttft_s=0.2, total_s=8.2,
              reasoning=f"long thinking about item {n} " * 50,
              answer=(EVIL if n == 30 else None)) for n, o in enumerate(b)]
    return (make_run(tmp_path / "a", "math500", ra, label="engine-A"),
            make_run(tmp_path / "b", "math500", rb, label="engine-B"))


def write_report(tmp_path: Path, **kw) -> tuple[Path, str]:
    a, b = build_runs(tmp_path)
    out = tmp_path / "report.html"
    code = report_main([a, b], out, out=io.StringIO(), err=io.StringIO(), **kw)
    assert code == 0
    return out, out.read_text(encoding="utf-8")


def test_page_holds_tables_plots_transcripts_and_is_self_contained(tmp_path):
    _, page = write_report(tmp_path)
    assert page.startswith("<!DOCTYPE html>")
    # key numbers: accuracies, McNemar counts, tokens ratio, verdict
    assert "72.0%" in page and "64.0%" in page                 # 36/50 and 32/50
    assert "only engine-A right 6, only engine-B right 2" in page
    assert "×2.50" in page                                     # 1000 / 400 tokens on items both got right
    assert "Verdict:" in page and "no detectable difference" in page
    assert "algebra" in page and "geometry" in page
    # three embedded PNG plots, nothing fetched from outside
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 3 and all(len(i) > 4000 for i in images)
    assert not re.search(r'(src|href)="(https?:)?//', page)
    # transcripts: disagreements first, reasoning folded
    assert page.count("<details><summary>reasoning") >= 8
    assert "Sample transcripts (8 of 50, disagreements first)" in page
    first_item = re.search(r'<div class="card item"><h3>([^ <]+)', page).group(1)
    assert first_item == "algebra/30"                          # the first discordant item (30..37)


def test_model_output_is_escaped(tmp_path):
    _, page = write_report(tmp_path)
    assert "<script>" not in page and "<img src=x" not in page
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in page


def names_of(tmp_path: Path) -> dict:
    """The run identities a diff JSON of build_runs' two runs carries."""
    a, b = build_runs(tmp_path / "names")
    out = {}
    for role, folder in (("baseline", a), ("candidate", b)):
        m = json.loads((folder / "manifest.json").read_text())
        out[role] = {"fingerprint": m["dataset"]["fingerprint"], "started_at": m["started_at"]}
    return out


def test_diff_json_of_other_runs_is_refused(tmp_path):
    names = names_of(tmp_path)
    names["candidate"]["started_at"] = "2026-01-01T00:00:00.000+00:00"
    diff = tmp_path / "diff.json"
    diff.write_text(json.dumps({"counts": {"real": 0}, **names}), encoding="utf-8")
    a, b = build_runs(tmp_path)
    err = io.StringIO()
    assert report_main([a, b], tmp_path / "r.html", diff=diff, out=io.StringIO(), err=err) == 2
    assert "not made from these runs" in err.getvalue() and not (tmp_path / "r.html").exists()


def test_divergences_from_a_diff_json(tmp_path):
    diff = tmp_path / "diff.json"
    diff.write_text(json.dumps({**names_of(tmp_path),
        "counts": {"identical": 40, "near_tie": 4, "suspicious": 2, "real": 3, "undetermined": 1, "hidden_drift": 0},
        "summary": "40 identical, 4 near-tie flips, 2 suspicious, 3 real, 1 undetermined",
        "items": [{"id": "geometry/7", "class": "near_tie", "margin": 0.01},
                  {"id": "algebra/30", "class": "real", "note": "first token differs at position 12",
                   "baseline_text": "<b>42</b>", "remerge": {"at": 3}},
                  {"id": "algebra/2", "class": "identical"}],
    }), encoding="utf-8")
    _, page = write_report(tmp_path, diff=diff)
    assert "<h2>Divergences</h2>" in page
    assert "hidden_drift" in page and "first token differs at position 12" in page
    cards = re.findall(r'<div class="card" id="item-([^"]+)">', page)
    assert cards == ["algebra-30", "geometry-7"]                # real before near-tie; identical ones left out
    assert "4 near-tie flips" in page and "&lt;b&gt;42&lt;/b&gt;" in page
    assert "m = 0.0100 nats" in page                            # rounded, not 0.01000000
    assert "<th>remerge</th>" not in page                       # nested fields are not listed as fields


def test_unusable_input_exits_2(tmp_path):
    err = io.StringIO()
    assert report_main([tmp_path / "none"], tmp_path / "r.html", out=io.StringIO(), err=err) == 2
    assert "no run folder" in err.getvalue() and not (tmp_path / "r.html").exists()
    a, b = build_runs(tmp_path)
    (tmp_path / "bad.json").write_text("[]", encoding="utf-8")
    err = io.StringIO()
    assert report_main([a, b], tmp_path / "r.html", diff=tmp_path / "bad.json", out=io.StringIO(), err=err) == 2
    assert "counts" in err.getvalue()


def test_report_renders_in_headless_chromium(tmp_path):
    binary = chromium_binary()
    path, _ = write_report(tmp_path)
    shot = tmp_path / "shot.png"
    result = chromium(binary, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,1600",
                      path.resolve().as_uri())
    assert shot.exists(), result.stderr.decode(errors="replace")[-2000:]
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)[..., :3]
    non_white = (pixels < 0.95).any(axis=-1).mean()
    assert pixels.shape[:2] == (1600, 1280)
    assert 0.02 < non_white < 0.9, f"screenshot looks blank or broken ({non_white:.1%} non-white pixels)"
    assert pixels.std() > 0.05
    dom = chromium(binary, tmp_path / "profile", "--dump-dom", path.resolve().as_uri()).stdout.decode()
    text = re.sub(r"<[^>]+>", " ", dom)
    for number in ("72.0%", "64.0%", "only engine-A right 6", "×2.50", "[58.3, 82.5]"):
        assert number in text, number
    assert "pwned" not in re.search(r"<title>(.*?)</title>", dom).group(1)   # the evil answer did not run
