"""SVG generation: "Generate an SVG of a pelican riding a bicycle." and nineteen friends.

No data files: the prompts are constants below, so load() ignores data_dir. Each item
names the requirements a rule can decide (Rule from evalsuite.graders.svg); they are in
the prompt text too, and the item's `gold` lists them so a record reads on its own.

grade(): True = a valid SVG whose rule-checkable requirements all pass; False = an SVG
was found but is invalid (not XML, DTD, over the caps, bad size) or misses a
requirement; None = no SVG in the answer, which the runner records as "unextracted".
Stats and rule results are in verdict.details. Rendering is a separate step
(`evalsuite svg-render RUN`, `evalsuite gallery RUN...`), never part of grading.

Decoding: temperature 0 and max_tokens 4096 (16384 for reasoning models, whose
reasoning counts against it); a detailed SVG runs 1-3k tokens. See docs/svg.md.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..graders.svg import Rule, count, grade_svg, stat
from ..graders.verdict import Verdict
from .pack import Item, LoadOptions, Pack, seeded_sample

VERSION = "1"

# Recommended decoding for comparable runs (the runner's flags decide; see docs/svg.md).
RECOMMENDED_DECODING = {"temperature": 0.0, "max_tokens": 4096}

TEMPLATE = (
    "{question}\n\n"
    "Reply with one complete, standalone SVG document in a single ```svg code block."
)


@dataclass(frozen=True)
class SvgPrompt:
    slug: str
    subset: str                 # object, scene, icon or chart
    text: str
    rules: tuple[Rule, ...] = ()


PROMPTS: tuple[SvgPrompt, ...] = (
    # --- objects (free-form drawing) ---
    SvgPrompt("pelican-bicycle", "object", "Generate an SVG of a pelican riding a bicycle."),
    SvgPrompt("teapot", "object", "Generate an SVG of a teapot pouring tea into a cup."),
    SvgPrompt("octopus-guitar", "object", "Generate an SVG of an octopus playing four guitars at once."),
    SvgPrompt("traffic-light", "object",
              "Draw an SVG traffic light. Use exactly three <circle> elements for the lamps "
              "(red, amber, green) and no other circles.",
              (count("circle", "==", 3),)),
    SvgPrompt("robot-no-paths", "object",
              "Draw an SVG robot using only basic shapes (<rect>, <circle>, <ellipse>, <line>, "
              "<polygon>). Do not use any <path> element.",
              (count("path", "==", 0), stat("elements", ">=", 5))),
    SvgPrompt("olympic-rings", "object",
              "Draw the five Olympic rings as an SVG with exactly five <circle> elements, "
              "each with a coloured stroke and fill=\"none\".",
              (count("circle", "==", 5),)),
    # --- scenes ---
    SvgPrompt("sunset-beach", "scene", "Generate an SVG of a sunset over a beach with palm trees."),
    SvgPrompt("city-night", "scene",
              "Generate an SVG of a city skyline at night with lit windows and a moon. "
              "Give it a <title> element.",
              (Rule("title"),)),
    SvgPrompt("two-colour-mountains", "scene",
              "Draw an SVG landscape of mountains under a sky using only two colours. "
              "Set every fill and stroke explicitly to one of those two colours.",
              (stat("colours", "<=", 2), stat("colours", ">=", 1))),
    SvgPrompt("snowflake-rotate", "scene",
              "Draw an SVG snowflake with six-fold symmetry: draw one arm inside a <g> and repeat "
              "it with transform=\"rotate(...)\" on at least five more copies.",
              (stat("transforms", ">=", 5), stat("groups", ">=", 1))),
    # --- icons ---
    SvgPrompt("home-icon", "icon",
              "Design a 24x24 home icon as an SVG with viewBox=\"0 0 24 24\".",
              (Rule("viewbox", text="0 0 24 24"),)),
    SvgPrompt("accessible-heart", "icon",
              "Design an accessible heart icon as an SVG: put role=\"img\" on the <svg> element, "
              "a <title> reading \"Favourite\" and a <desc> describing the icon.",
              (Rule("root_attr", name="role", text="img"), Rule("title"), Rule("desc"))),
    SvgPrompt("gear-icon", "icon", "Design a settings (gear) icon as an SVG, 64 by 64 pixels.",
              (Rule("size", text="64 64"),)),
    SvgPrompt("hello-badge", "icon",
              "Make an SVG badge 200 pixels wide and 60 pixels high (width=\"200\" height=\"60\") "
              "with the text \"Hello, world\" in a <text> element on a rounded rectangle.",
              (Rule("size", text="200 60"), Rule("text", text="Hello, world"), count("rect", ">=", 1))),
    SvgPrompt("smiley-minimal", "icon",
              "Draw a smiley face as an SVG using at most four elements inside the <svg> "
              "(for example a face, two eyes and a mouth).",
              (stat("elements", "<=", 5),)),
    # --- charts ---
    SvgPrompt("bar-chart", "chart",
              "Draw an SVG bar chart of these values: A=3, B=7, C=2, D=9, E=5. Use exactly five "
              "<rect> elements, one per bar, and no other <rect>. Label each bar with a <text>.",
              (count("rect", "==", 5), count("text", ">=", 5))),
    SvgPrompt("pie-chart", "chart",
              "Draw an SVG pie chart with three slices of 50%, 30% and 20%, each slice one "
              "<path> element (exactly three <path> elements in total), in three colours.",
              (count("path", "==", 3), stat("colours", ">=", 3))),
    SvgPrompt("line-chart", "chart",
              "Draw an SVG line chart of monthly sales Jan-Jun (10, 14, 9, 17, 21, 18) as a single "
              "<polyline>, with axis lines and a <title> naming the chart.",
              (count("polyline", "==", 1), Rule("title"))),
    SvgPrompt("scatter-plot", "chart",
              "Draw an SVG scatter plot with exactly eight points, each a <circle>, and no other "
              "circles, on labelled x and y axes.",
              (count("circle", "==", 8), count("text", ">=", 2))),
    SvgPrompt("progress-ring", "chart",
              "Draw an SVG progress ring showing 75% complete: a grey background <circle>, a "
              "coloured <circle> arc using stroke-dasharray, and the text \"75%\" in the middle.",
              (count("circle", "==", 2), Rule("text", text="75%"))),
)

SUBSETS = ("object", "scene", "icon", "chart")
CATEGORIES = {"object": "drawing", "scene": "drawing", "icon": "icon", "chart": "chart"}


def _item(p: SvgPrompt) -> Item:
    gold = "valid SVG" + "".join(f"; {r.describe()}" for r in p.rules)
    return Item(id=f"svg/{p.slug}", subset=p.subset, question=p.text, gold=gold,
                meta={"rules": p.rules})


def load(options: LoadOptions) -> list[Item]:
    """All prompts (data_dir is ignored: there is no data), filtered and sampled per subset."""
    if options.fewshot:
        raise ValueError("svg pack: there are no few-shot examples; use fewshot=0")
    unknown = set(options.subsets) - set(SUBSETS)
    if unknown:
        raise ValueError(f"svg pack: unknown subset(s) {sorted(unknown)}; known: {', '.join(SUBSETS)}")
    items = [_item(p) for p in PROMPTS if not options.subsets or p.subset in options.subsets]
    if options.per_subset is None:
        return items
    chosen: set[str] = set()
    for subset in SUBSETS:
        ids = [i.id for i in items if i.subset == subset]
        chosen.update(seeded_sample(ids, options.per_subset, options.seed))
    return [i for i in items if i.id in chosen]


def prompt(item: Item) -> list[dict[str, str]]:
    return [{"role": "user", "content": TEMPLATE.format(question=item.question)}]


def grade(item: Item, answer: str) -> Verdict:
    return grade_svg(answer, item.meta.get("rules", ()))


PACK = Pack(
    name="svg",
    version=VERSION,
    description="SVG generation (pelican on a bicycle, objects, scenes, icons, charts): "
                "valid-SVG and rule checks, stats, renders and a gallery",
    template=TEMPLATE,
    max_tokens=RECOMMENDED_DECODING["max_tokens"],
    load=load,
    prompt=prompt,
    grade=grade,
    subsets=SUBSETS,
    categories=CATEGORIES,
    source="built in (tasks/svg.py)",
    data_paths=(),
    count=len(PROMPTS),
)
