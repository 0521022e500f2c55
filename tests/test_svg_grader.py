"""The svg pack's grader and pack, with hand-written model answers: valid, broken, hostile."""
from __future__ import annotations

import json
import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from evalsuite.graders.svg import (MAX_ELEMENTS, MAX_SVG_BYTES, Rule, count, extract_svg, grade_svg,
                                   normalise_colour, stat, validate_svg)
from evalsuite.tasks import get_pack
from evalsuite.tasks.pack import LoadOptions

NS = 'xmlns="http://www.w3.org/2000/svg"'
PELICAN = f"""<svg {NS} viewBox="0 0 200 200" width="400" height="400" role="img" aria-label="A pelican">
  <title>Pelican on a bicycle</title>
  <desc>A white pelican pedalling a red bicycle.</desc>
  <g id="bike" transform="translate(0,20)">
    <circle cx="50" cy="150" r="30" fill="none" stroke="red"/>
    <circle cx="150" cy="150" r="30" fill="none" stroke="#F00"/>
    <path d="M50 150 L100 100 L150 150 Z" stroke="rgb(255, 0, 0)" fill="none"/>
  </g>
  <g id="bird" transform="rotate(-5 100 80)">
    <ellipse cx="100" cy="80" rx="35" ry="22" style="fill: white; stroke: #000"/>
    <path d="M130 70 q30 5 40 15 l-40 0 z" fill="#ffcc00"/>
  </g>
</svg>"""


# ----------------------------------------------------------------------------- extraction

def test_extracts_the_fenced_svg_from_prose():
    answer = f"Here is a pelican riding a bicycle, using an `<svg>` element:\n\n```svg\n{PELICAN}\n```\n\nEnjoy!"
    ex = extract_svg(answer)
    assert ex.svg == PELICAN
    assert ex.method == "fence" and ex.candidates == 1


def test_extracts_a_bare_svg_and_keeps_its_xml_declaration():
    doc = '<?xml version="1.0" encoding="UTF-8"?>\n' + PELICAN
    ex = extract_svg(f"Sure.\n{doc}\nThat's it.")
    assert ex.svg == doc and ex.method == "bare"


def test_the_last_complete_svg_wins_and_nested_svg_counts_as_one():
    first = f"<svg {NS}><rect width='1' height='1'/></svg>"
    nested = f"<svg {NS}><svg x='5'><circle r='2'/></svg><rect width='2' height='2'/></svg>"
    ex = extract_svg(f"Draft:\n```xml\n{first}\n```\nBetter:\n```\n{nested}\n```")
    assert ex.svg == nested and ex.candidates == 2


def test_an_unclosed_svg_is_no_svg_and_says_so():
    v = grade_svg(f"```svg\n<svg {NS}><rect width='1'")
    assert v.equal is None and v.extracted is None
    assert v.reason.startswith("no SVG") and "never closed" in v.reason
    assert v.details["extraction"]["unclosed"] is True


@pytest.mark.parametrize("answer", ["", "I cannot draw.", "<svgfoo></svgfoo>", "The <svg tag is"])
def test_answers_without_svg_are_unextracted(answer):
    v = grade_svg(answer)
    assert v.equal is None and v.extracted is None and v.reason.startswith("no SVG")


def test_gibberish_with_thousands_of_svg_tags_is_bounded():
    v = grade_svg("<svg>" * 50_000 + " text")
    assert v.equal is None


# ----------------------------------------------------------------------------- validation

def test_broken_xml_is_found_but_invalid():
    v = grade_svg(f"```svg\n<svg {NS}><rect width='3'><circle/></svg>\n```")
    assert v.equal is False and v.extracted is not None
    assert v.reason.startswith("invalid SVG: not well-formed XML")
    assert v.details["valid"] is False


def test_root_must_be_svg():
    assert validate_svg(f"<html {NS}/>").errors == ("root element is <{http://www.w3.org/2000/svg}html>, not <svg>",)
    assert not validate_svg('<svg xmlns="http://example.com/other"/>').ok


@pytest.mark.parametrize("attrs, fragment", [
    ('width="-5"', "not a positive length"),
    ('width="abc"', "not a length"),
    ('height="200000"', "over 100000px"),
    ('width="1e9"', "over 100000px"),
    ('width="150%"', "over 100%"),
    ('viewBox="0 0 0 10"', "viewBox"),
    ('viewBox="0 0 10"', "viewBox"),
    ('viewBox="0 0 nan 10"', "viewBox"),
])
def test_insane_sizes_are_invalid(attrs, fragment):
    result = validate_svg(f"<svg {NS} {attrs}/>")
    assert not result.ok and fragment in " ".join(result.errors)


@pytest.mark.parametrize("attrs", ['width="100%" height="50%"', 'width="10cm" height="3in"', 'viewBox="-5,-5 10,10"'])
def test_sane_sizes_are_valid(attrs):
    assert validate_svg(f"<svg {NS} {attrs}/>").ok


def test_a_100_megabyte_width_is_refused_before_parsing():
    answer = f'<svg {NS} width="' + "9" * (100 * 1024 * 1024) + '" height="10"></svg>'
    v = grade_svg(answer)
    assert v.equal is False and v.extracted is None  # not copied into the record
    assert f"over the {MAX_SVG_BYTES}-byte cap" in v.reason


def test_a_long_but_small_width_is_not_a_length():
    assert "not a length" in " ".join(validate_svg(f'<svg {NS} width="{"1" * 5000}"/>').errors)


def test_a_megabyte_of_elements_is_over_the_element_cap():
    doc = f"<svg {NS}>" + "<g/>" * 200_000 + "</svg>"     # 800 KB: under the byte cap
    assert len(doc) < MAX_SVG_BYTES
    v = grade_svg(doc)
    assert v.equal is False and f"over the cap of {MAX_ELEMENTS}" in v.reason
    bigger = f"<svg {NS}>" + "<rect/>" * 160_000 + "</svg>"  # 1.1 MB: over the byte cap
    assert "byte cap" in grade_svg(bigger).reason


@contextmanager
def fifo_never_opened(folder: Path) -> Iterator[Path]:
    """A named pipe; asserts on exit that nobody opened it (a reader would unblock our writer)."""
    path = folder / "secret"
    os.mkfifo(path)
    opened = threading.Event()

    def writer() -> None:
        with open(path, "wb"):
            opened.set()

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        yield path
        assert not opened.wait(0.2), f"{path} was opened"
    finally:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # release the writer thread
        thread.join(5)
        os.close(fd)


def test_xxe_is_refused_and_the_file_is_never_opened(tmp_path):
    with fifo_never_opened(tmp_path) as secret:
        answer = (f'```svg\n<?xml version="1.0"?>\n<!DOCTYPE svg [<!ENTITY xxe SYSTEM "file://{secret}">]>\n'
                  f'<svg {NS}><text>&xxe;</text></svg>\n```')
        v = grade_svg(answer)
    assert v.equal is False and "DTDForbidden" in v.reason
    passwd = (f'<!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><svg {NS}><text>&xxe;</text></svg>')
    v = grade_svg(passwd)
    assert v.equal is False and "root:" not in json.dumps(v.to_dict())


def test_an_entity_reference_without_its_doctype_is_not_expanded():
    v = grade_svg(f"<svg {NS}><text>&xxe;</text></svg>")
    assert v.equal is False and "undefined entity" in v.reason


def test_billion_laughs_is_refused_quickly():
    lols = "".join(f'<!ENTITY lol{i} "{("&lol%d;" % (i - 1)) * 10}">' for i in range(1, 10))
    answer = f'<!DOCTYPE svg [<!ENTITY lol0 "lol">{lols}]>\n<svg {NS}><text>&lol9;</text></svg>'
    v = grade_svg(answer)
    assert v.equal is False and "DTDForbidden" in v.reason


def test_even_a_harmless_doctype_is_refused():
    doc = ('<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n'
           f"<svg {NS}/>")
    v = grade_svg(doc)
    assert v.equal is False and "DTD" in v.reason and v.extracted == doc


# ----------------------------------------------------------------------------- stats

def test_stats_of_a_known_drawing():
    v = grade_svg(f"```svg\n{PELICAN}\n```")
    assert v.equal is True and v.method == "rules" and v.extraction == "svg-fence"
    s = v.details["stats"]
    assert s["bytes"] == len(PELICAN.encode())
    assert s["elements"] == 10          # svg title desc g circle circle path g ellipse path
    assert s["paths"] == 2
    assert s["path_commands"] == 4 + 4  # M L L Z, then M q l z
    assert s["transforms"] == 2 and s["groups"] == 2
    # red, #F00 and rgb(255,0,0) are one colour; plus white, black, #ffcc00
    assert s["colour_list"] == ["#000000", "#ff0000", "#ffcc00", "#ffffff"] and s["colours"] == 4
    assert s["title"] and s["title_text"] == "Pelican on a bicycle" and s["desc"]
    assert s["aria"] == 1 and s["role"] == "img" and s["viewbox"] is True
    assert s["tags"]["circle"] == 2 and s["scripts"] == 0
    json.dumps(v.to_dict())  # lands in the record as JSON


@pytest.mark.parametrize("value, expected", [
    ("RED", "#ff0000"), ("#abc", "#aabbcc"), ("#AABBCCFF", "#aabbcc"), ("rgb(100%, 0%, 0%)", "#ff0000"),
    ("rgba(0,0,255,0.5)", "#0000ff80"), ("hsl(120, 100%, 25%)", "#008000"), ("none", None),
    ("url(#grad)", None), ("currentColor", None), ("bogus", None), ("rgb(1,2)", None),
])
def test_colour_normalisation(value, expected):
    assert normalise_colour(value) == expected


def test_colours_in_style_sheets_and_gradient_stops_count():
    doc = (f"<svg {NS}><style>.a {{ fill: navy; stroke:#000080 }} .b{{stop-color: gold}}</style>"
           "<linearGradient id='g'><stop offset='0' stop-color='teal'/></linearGradient>"
           "<rect class='a' fill='url(#g)' width='1' height='1'/></svg>")
    assert grade_svg(doc).details["stats"]["colour_list"] == ["#000080", "#008080", "#ffd700"]


# ----------------------------------------------------------------------------- rules

def test_rules_pass_and_fail_with_what_was_found():
    rules = [count("circle", "==", 2), count("path", ">=", 3), Rule("title"), Rule("desc"),
             Rule("root_attr", name="role", text="img"), Rule("viewbox", text="0 0 200 200"),
             Rule("size", text="400 400"), stat("colours", "<=", 2), Rule("text", text="hello")]
    v = grade_svg(PELICAN, rules)
    assert v.equal is False
    results = {r["rule"]: (r["passed"], r["actual"]) for r in v.details["rules"]}
    assert results["exactly 2 <circle>"] == (True, 2)
    assert results["at least 3 <path>"] == (False, 2)
    assert results['viewBox="0 0 200 200"'][0] and results['width="400" height="400"'][0]
    assert results["colours <= 2"] == (False, 4)
    assert results["<text> containing 'hello'"][0] is False
    assert v.reason == "requirement not met: at least 3 <path>; colours <= 2; <text> containing 'hello'"


def test_title_rule_needs_a_non_empty_title_on_the_root():
    assert grade_svg(f"<svg {NS}><g><title>x</title></g></svg>", [Rule("title")]).equal is False
    assert grade_svg(f"<svg {NS}><title> </title></svg>", [Rule("title")]).equal is False
    assert grade_svg(f"<svg {NS}><title>Ok</title></svg>", [Rule("title")], drawing=False).equal is True


# ----------------------------------------------------------------------------- the pack

def test_pack_items_prompts_and_grading():
    pack = get_pack("svg")
    items = pack.load(LoadOptions(data_dir=Path("/nonexistent")))   # data_dir is ignored
    assert len(items) == pack.count == 20
    ids = [i.id for i in items]
    assert len(set(ids)) == 20 and all(i.startswith("svg/") for i in ids)
    assert ids[0] == "svg/pelican-bicycle" and items[0].question == "Generate an SVG of a pelican riding a bicycle."
    assert {i.subset for i in items} == set(pack.subsets)
    assert sum(1 for i in items if i.meta["rules"]) >= 12
    assert all(i.gold.startswith("valid SVG") for i in items)
    light = next(i for i in items if i.id == "svg/traffic-light")
    assert light.gold == "valid SVG; exactly 3 <circle>"
    messages = pack.prompt(light)
    assert messages[0]["role"] == "user" and light.question in messages[0]["content"]
    lamps = "".join(f"<circle cx='10' cy='{y}' r='4' fill='{c}'/>" for y, c in ((10, "red"), (20, "orange"), (30, "green")))
    assert pack.grade(light, f"```svg\n<svg {NS}><rect width='20' height='40'/>{lamps}</svg>\n```").equal is True
    assert pack.grade(light, f"<svg {NS}>{lamps}<circle r='1'/></svg>").equal is False
    assert pack.grade(light, "no drawing today").equal is None


def test_pack_subsets_and_sampling():
    pack = get_pack("svg")
    charts = pack.load(LoadOptions(subsets=("chart",)))
    assert charts and all(i.subset == "chart" for i in charts)
    sample = pack.load(LoadOptions(per_subset=2, seed=1))
    assert len(sample) == 8 and sample == pack.load(LoadOptions(per_subset=2, seed=1))
    with pytest.raises(ValueError, match="unknown subset"):
        pack.load(LoadOptions(subsets=("nope",)))
    with pytest.raises(ValueError, match="few-shot"):
        pack.load(LoadOptions(fewshot=2))


# ----------------------------------------------------------------------------- blank drawings (issue 34)

@pytest.mark.parametrize("doc", [
    f"<svg {NS}/>",
    f"<svg {NS}></svg>",
    f'<svg {NS} width="400" height="400"><title>A pelican</title><desc>riding a bicycle</desc></svg>',
    f"<svg {NS}><defs><circle id='c' r='5'/></defs><g></g></svg>",          # drawn only where used
    f"<svg {NS}><rect width='0' height='10'/><circle r='0'/><path d='M 3 4'/><text>  </text></svg>",
    f"<svg {NS}><g display='none'><circle r='5'/></g><rect width='5' height='5' visibility='hidden'/></svg>",
])
def test_a_valid_svg_that_draws_nothing_is_not_correct_for_a_drawing_prompt(doc):
    v = grade_svg(f"```svg\n{doc}\n```")
    assert v.equal is False and v.reason.startswith("blank: a valid SVG that draws nothing"), v.reason
    assert v.details["valid"] is True and v.details["blank"] is True      # validity stays its own fact
    assert v.details["stats"]["drawn"] == 0


@pytest.mark.parametrize("body", ["<rect width='5' height='5'/>", "<circle r='1'/>", "<path d='M0 0 L 5 5'/>",
                                  "<text>hi</text>", "<line x2='3'/>", "<polygon points='0,0 5,0 5,5'/>",
                                  "<defs><circle id='c' r='5'/></defs><use href='#c'/>"])
def test_one_drawn_element_is_a_drawing(body):
    v = grade_svg(f"<svg {NS}>{body}</svg>")
    assert v.equal is True and v.details["stats"]["drawn"] >= 1 and not v.details.get("blank"), v.reason


def test_the_pelican_pack_item_is_not_correct_for_an_empty_svg():
    from evalsuite.tasks import get_pack

    pack = get_pack("svg")
    item = next(i for i in pack.load(__import__("evalsuite.tasks", fromlist=["LoadOptions"]).LoadOptions())
                if i.id == "svg/pelican-bicycle")
    assert pack.grade(item, f"```svg\n<svg {NS}></svg>\n```").equal is False
    assert pack.grade(item, f"```svg\n{PELICAN}\n```").equal is True
