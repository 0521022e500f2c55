"""The gallery: one self-contained HTML page, runs side by side per prompt, renders embedded."""
from __future__ import annotations

import base64
import re

import pytest
from markupsafe import escape

from test_svg_grader import NS, PELICAN
from test_svg_render import RED_SQUARE, svg_run

from evalsuite.svg.render import png_size

HOSTILE = f'```svg\n<svg {NS}><image href="file:///etc/passwd" width="5" height="5"/><script>alert(1)</script>' \
          '<rect width="5" height="5" fill="blue"/></svg>\n```'


@pytest.fixture()
def two_runs(tmp_path):
    a = svg_run(tmp_path / "a", {
        "svg/pelican-bicycle": f"Here:\n```svg\n{PELICAN}\n```",
        "svg/traffic-light": "Sorry, no.",
        "svg/home-icon": HOSTILE,
    }, label="spec-off")
    b = svg_run(tmp_path / "b", {
        "svg/pelican-bicycle": RED_SQUARE,
        "svg/traffic-light": f"<svg {NS}>" + "".join(f"<circle cy='{y}' r='3'/>" for y in (5, 15, 25)) + "</svg>",
        "svg/bar-chart": None,
    }, label="spec-on")
    return a, b


def test_gallery_shows_every_prompt_with_embedded_renders(two_runs, tmp_path):
    from evalsuite.analysis.gallery import write_gallery

    out = write_gallery(two_runs, tmp_path / "gallery.html", size=96)
    page = out.read_text(encoding="utf-8")
    # every prompt of either run, in full, once per item
    from evalsuite.tasks import get_pack
    from evalsuite.tasks.pack import LoadOptions

    pack = get_pack("svg")
    items = {i.id: i for i in pack.load(LoadOptions())}
    for item_id in ("svg/pelican-bicycle", "svg/traffic-light", "svg/home-icon", "svg/bar-chart"):
        assert f"<h2>{item_id}</h2>" in page
        assert str(escape(pack.prompt(items[item_id])[0]["content"])) in page
    assert "spec-off" in page and "spec-on" in page
    # renders: pelican (a), hostile home icon (a), red square (b), traffic light (b)
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 4
    assert all(png_size(base64.b64decode(img)) == (96, 96) for img in images)
    # nothing external, nothing live: only data: images, no script, the hostile source escaped
    assert not re.search(r"<script", page, re.I)
    assert not re.search(r'(src|href)="(?!data:)', page)
    assert "Content-Security-Policy" in page
    assert str(escape('<image href="file:///etc/passwd"')) in page and '<image href="file' not in page
    # stats, rule results and outcomes are shown
    assert "path cmds" in page and "exactly 3 &lt;circle&gt;" in page
    assert page.count('class="outcome correct"') == 3 and "not in this run" in page
    # an answer without SVG: said once, and what the model wrote instead is shown
    assert "what the model wrote (no SVG in the answer)" in page and "Sorry, no." in page


def test_gallery_without_rendering_uses_only_what_is_there(two_runs, tmp_path):
    from evalsuite.analysis.gallery import write_gallery

    page = write_gallery(two_runs, tmp_path / "g.html", render=False).read_text()
    assert "data:image/png" not in page and "not rendered" in page
    assert not (two_runs[0] / "renders").exists()


def test_gallery_command(two_runs, tmp_path, run_cli):
    out = tmp_path / "gallery.html"
    done = run_cli("gallery", *two_runs, "--html", out, "--size", "64", timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.exists() and out.read_text().count("data:image/png;base64,") == 4
    assert (two_runs[1] / "renders" / "svg" / "traffic-light.png").exists()
    bad = run_cli("gallery", tmp_path / "missing", "--html", out, timeout=60)
    assert bad.returncode == 2 and "missing" in bad.stderr
