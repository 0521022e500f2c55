"""Safe rendering: PNGs at a fixed size, a blank check, and hostile SVG that reads nothing."""
from __future__ import annotations

import base64
import io
import json
import socket
from pathlib import Path

import pytest
from PIL import Image

from test_svg_grader import NS, PELICAN, fifo_never_opened

from evalsuite.svg.render import (MAX_DATA_URI_BYTES, RENDER_SIZE, png_size, read_render_index, render_in_process,
                                  render_path, render_run, render_svg)

RED_SQUARE = f"<svg {NS} viewBox='0 0 10 10'><rect x='2.5' y='2.5' width='5' height='5' fill='red'/></svg>"


def colours(png: bytes) -> dict[tuple[int, ...], int]:
    with Image.open(io.BytesIO(png)) as im:
        return {c: n for n, c in im.convert("RGB").getcolors(1 << 20)}


def reddish(png: bytes) -> int:
    return sum(n for (r, g, b), n in colours(png).items() if r > 200 and g < 60 and b < 60)


def test_renders_at_the_fixed_size_and_is_not_blank():
    result = render_svg(RED_SQUARE)
    assert result.ok and result.png and result.blank is False and result.refused == ()
    assert png_size(result.png) == (RENDER_SIZE, RENDER_SIZE)
    # the square covers the middle quarter of the canvas, on white
    assert reddish(result.png) == pytest.approx(RENDER_SIZE * RENDER_SIZE / 4, rel=0.02)
    with Image.open(io.BytesIO(result.png)) as im:
        assert im.convert("RGB").getpixel((RENDER_SIZE // 2, RENDER_SIZE // 2)) == (255, 0, 0)
        assert im.convert("RGB").getpixel((5, 5)) == (255, 255, 255)


def test_a_wide_drawing_keeps_its_aspect_ratio_inside_the_square():
    result = render_svg(f"<svg {NS} viewBox='0 0 200 100'><rect width='200' height='100' fill='red'/></svg>", size=128)
    assert png_size(result.png) == (128, 128)
    assert reddish(result.png) == pytest.approx(128 * 64, rel=0.03)


def test_the_pelican_renders():
    result = render_svg(PELICAN, size=256)
    assert result.ok and not result.blank and png_size(result.png) == (256, 256)


def test_an_empty_drawing_is_blank():
    result = render_svg(f"<svg {NS} viewBox='0 0 10 10'><rect width='10' height='10' fill='white'/></svg>", size=64)
    assert result.ok and result.blank is True


def test_invalid_svg_is_not_rendered():
    result = render_svg('<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg>&x;</svg>')
    assert result.png is None and result.error.startswith("invalid SVG") and "DTDForbidden" in result.error


def test_the_time_limit_stops_a_render():
    result = render_svg(RED_SQUARE, timeout_s=0.001)
    assert result.png is None and "timed out" in result.error


def test_the_fifo_detector_detects_an_open(tmp_path):
    with pytest.raises(AssertionError, match="was opened"):
        with fifo_never_opened(tmp_path) as path:
            with open(path, "rb") as f:
                f.read()


def image_svg(href: str) -> str:
    return (f'<svg {NS} xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10">'
            f'<rect width="1" height="1" fill="blue"/>'
            f'<image href="{href}" width="10" height="10"/><image xlink:href="{href}" width="10" height="10"/>'
            f'<use href="{href}#x"/><rect width="5" height="5" fill="url({href}#g)"/>'
            f'<style>@import url({href}); rect {{ stroke: url("{href}") }}</style></svg>')


@pytest.mark.parametrize("strip", [True, False], ids=["stripped+fetcher", "fetcher-only"])
def test_a_file_image_is_never_opened(tmp_path, strip):
    with fifo_never_opened(tmp_path) as secret:
        document = image_svg(f"file://{secret}")
        if strip:
            result = render_svg(document, size=64)
            assert result.ok, result.error
            refused = result.refused
        else:  # no stripping: the url_fetcher alone must refuse
            _, refused = render_in_process(document.encode(), 64)
    assert any(str(secret) in r for r in refused)


def test_a_red_png_file_never_shows_up_in_the_render(tmp_path):
    red = tmp_path / "red.png"
    Image.new("RGB", (10, 10), (255, 0, 0)).save(red)
    document = f"<svg {NS} viewBox='0 0 10 10'><image href='file://{red}' width='10' height='10'/>" \
               f"<image href='{red}' width='10' height='10'/></svg>"
    result = render_svg(document, size=64)
    png, refused = render_in_process(document.encode(), 64)
    assert reddish(result.png) == 0 and reddish(png) == 0
    assert len(refused) == 2 and all(str(red) in r for r in refused)
    assert sum(str(red) in r for r in result.refused) == 2


@pytest.mark.parametrize("strip", [True, False], ids=["stripped+fetcher", "fetcher-only"])
def test_a_url_on_a_listening_socket_gets_no_connection(strip):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        for scheme in ("http", "https"):
            document = image_svg(f"{scheme}://127.0.0.1:{port}/pelican.png")
            if strip:
                result = render_svg(document, size=64)
                assert result.ok and len(result.refused) >= 6
            else:
                _, refused = render_in_process(document.encode(), 64)
                assert any(f"127.0.0.1:{port}" in r for r in refused)
        # a connection would sit in the backlog, accepted or not
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()


def test_small_data_uris_render_and_big_ones_are_refused():
    inner = f"<svg {NS} viewBox='0 0 1 1'><rect width='1' height='1' fill='red'/></svg>"
    small = "data:image/svg+xml;base64," + base64.b64encode(inner.encode()).decode()
    result = render_svg(f"<svg {NS} viewBox='0 0 10 10'><image href='{small}' width='10' height='10'/></svg>", size=64)
    assert result.ok and reddish(result.png) > 64 * 64 * 0.9 and result.refused == ()
    padding = "<!--" + "x" * MAX_DATA_URI_BYTES + "-->"
    big = "data:image/svg+xml;base64," + base64.b64encode((inner + padding).encode()).decode()
    document = f"<svg {NS} viewBox='0 0 10 10'><image href='{big}' width='10' height='10'/></svg>"
    result = render_svg(document, size=64)
    assert result.ok and reddish(result.png) == 0 and result.refused
    png, refused = render_in_process(document.encode(), 64)
    assert reddish(png) == 0 and refused


def test_scripts_are_dropped():
    result = render_svg(f"<svg {NS} onload='alert(1)'><script>alert(2)</script>{RED_SQUARE[len(f'<svg {NS} '):]}")
    assert result.ok and "<script> element removed" in result.refused


# ----------------------------------------------------------------------------- run folders

from runfactory import make_run, rec


def svg_run(path: Path, answers: dict[str, str | None], label: str | None = None) -> Path:
    """A run of the svg pack whose records hold these answers, graded by the pack."""
    from evalsuite.tasks import get_pack
    from evalsuite.tasks.pack import LoadOptions

    pack = get_pack("svg")
    items = {i.id: i for i in pack.load(LoadOptions())}
    records = []
    for item_id, answer in answers.items():
        item = items[item_id]
        if answer is None:
            records.append(rec(item_id, "error", subset=item.subset, gold=item.gold,
                               question=pack.prompt(item)[0]["content"]))
            continue
        verdict = pack.grade(item, answer)
        outcome = {True: "correct", False: "wrong", None: "unextracted"}[verdict.equal]
        records.append(rec(item_id, outcome, subset=item.subset, gold=item.gold, answer=answer,
                           question=pack.prompt(item)[0]["content"], extracted=verdict.extracted,
                           verdict=verdict.to_dict()))
    return make_run(path, "svg", records, label=label)


def test_render_run_writes_pngs_and_an_index(tmp_path):
    run = svg_run(tmp_path / "run", {
        "svg/pelican-bicycle": f"Here you go:\n```svg\n{PELICAN}\n```",
        "svg/teapot": "I would rather not.",
        "svg/traffic-light": f"<svg {NS}><circle r='1'></svg>",
        "svg/octopus-guitar": None,
    })
    entries = {e.id: e for e in render_run(run, size=128)}
    assert entries["svg/pelican-bicycle"].status == "rendered"
    png = (run / "renders" / "svg" / "pelican-bicycle.png").read_bytes()
    assert png_size(png) == (128, 128) and entries["svg/pelican-bicycle"].blank is False
    assert entries["svg/teapot"].status == "no-svg"
    assert entries["svg/traffic-light"].status == "invalid"
    assert entries["svg/octopus-guitar"].status == "no-answer"
    index = read_render_index(run)
    assert index["svg/pelican-bicycle"]["png"] == "renders/svg/pelican-bicycle.png"
    assert json.loads((run / "renders" / "index.json").read_text())["svg/teapot"]["status"] == "no-svg"
    # a second call keeps what is there
    again = render_run(run, size=128)
    assert [e.status for e in again] == [e.status for e in entries.values()]


def test_ids_that_would_leave_the_folder_are_refused(tmp_path):
    for bad in ("../x", "svg/../../x", "/etc/x", "a\\b"):
        with pytest.raises(ValueError, match="not safe"):
            render_path(tmp_path, bad)
    assert render_path(tmp_path, "svg/pelican-bicycle") == tmp_path / "renders" / "svg" / "pelican-bicycle.png"


def test_svg_render_command(tmp_path, run_cli):
    run = svg_run(tmp_path / "run", {"svg/pelican-bicycle": PELICAN, "svg/teapot": "no"})
    done = run_cli("svg-render", run, "--size", "64", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "1 rendered" in done.stdout and "1 no-svg" in done.stdout
    assert png_size((run / "renders" / "svg" / "pelican-bicycle.png").read_bytes()) == (64, 64)
