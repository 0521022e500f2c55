"""The measures of a valid SVG document (svg.py validates it): drawn elements, colours, text,
titles, sizes -- what a rule of the SVG pack compares. Pure functions over a parsed tree.
"""
from __future__ import annotations

import colorsys
import re
from typing import Any, Iterable
from xml.etree.ElementTree import Element

NUMBER_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def local_name(tag: object) -> str:
    """'{ns}rect' -> 'rect'. Comments and processing instructions have no str tag: ''."""
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]

# ----------------------------------------------------------------------------- stats

# CSS named colours (CSS Color 4), name -> rrggbb, so "red" and "#f00" count as one colour.
_NAMED = dict(pair.split(":") for pair in """
aliceblue:f0f8ff antiquewhite:faebd7 aqua:00ffff aquamarine:7fffd4 azure:f0ffff beige:f5f5dc
bisque:ffe4c4 black:000000 blanchedalmond:ffebcd blue:0000ff blueviolet:8a2be2 brown:a52a2a
burlywood:deb887 cadetblue:5f9ea0 chartreuse:7fff00 chocolate:d2691e coral:ff7f50
cornflowerblue:6495ed cornsilk:fff8dc crimson:dc143c cyan:00ffff darkblue:00008b
darkcyan:008b8b darkgoldenrod:b8860b darkgray:a9a9a9 darkgreen:006400 darkgrey:a9a9a9
darkkhaki:bdb76b darkmagenta:8b008b darkolivegreen:556b2f darkorange:ff8c00 darkorchid:9932cc
darkred:8b0000 darksalmon:e9967a darkseagreen:8fbc8f darkslateblue:483d8b darkslategray:2f4f4f
darkslategrey:2f4f4f darkturquoise:00ced1 darkviolet:9400d3 deeppink:ff1493 deepskyblue:00bfff
dimgray:696969 dimgrey:696969 dodgerblue:1e90ff firebrick:b22222 floralwhite:fffaf0
forestgreen:228b22 fuchsia:ff00ff gainsboro:dcdcdc ghostwhite:f8f8ff gold:ffd700
goldenrod:daa520 gray:808080 green:008000 greenyellow:adff2f grey:808080 honeydew:f0fff0
hotpink:ff69b4 indianred:cd5c5c indigo:4b0082 ivory:fffff0 khaki:f0e68c lavender:e6e6fa
lavenderblush:fff0f5 lawngreen:7cfc00 lemonchiffon:fffacd lightblue:add8e6 lightcoral:f08080
lightcyan:e0ffff lightgoldenrodyellow:fafad2 lightgray:d3d3d3 lightgreen:90ee90
lightgrey:d3d3d3 lightpink:ffb6c1 lightsalmon:ffa07a lightseagreen:20b2aa lightskyblue:87cefa
lightslategray:778899 lightslategrey:778899 lightsteelblue:b0c4de lightyellow:ffffe0
lime:00ff00 limegreen:32cd32 linen:faf0e6 magenta:ff00ff maroon:800000 mediumaquamarine:66cdaa
mediumblue:0000cd mediumorchid:ba55d3 mediumpurple:9370db mediumseagreen:3cb371
mediumslateblue:7b68ee mediumspringgreen:00fa9a mediumturquoise:48d1cc mediumvioletred:c71585
midnightblue:191970 mintcream:f5fffa mistyrose:ffe4e1 moccasin:ffe4b5 navajowhite:ffdead
navy:000080 oldlace:fdf5e6 olive:808000 olivedrab:6b8e23 orange:ffa500 orangered:ff4500
orchid:da70d6 palegoldenrod:eee8aa palegreen:98fb98 paleturquoise:afeeee palevioletred:db7093
papayawhip:ffefd5 peachpuff:ffdab9 peru:cd853f pink:ffc0cb plum:dda0dd powderblue:b0e0e6
purple:800080 rebeccapurple:663399 red:ff0000 rosybrown:bc8f8f royalblue:4169e1
saddlebrown:8b4513 salmon:fa8072 sandybrown:f4a460 seagreen:2e8b57 seashell:fff5ee
sienna:a0522d silver:c0c0c0 skyblue:87ceeb slateblue:6a5acd slategray:708090 slategrey:708090
snow:fffafa springgreen:00ff7f steelblue:4682b4 tan:d2b48c teal:008080 thistle:d8bfd8
tomato:ff6347 turquoise:40e0d0 violet:ee82ee wheat:f5deb3 white:ffffff whitesmoke:f5f5f5
yellow:ffff00 yellowgreen:9acd32
""".split())

COLOUR_PROPERTIES = ("fill", "stroke", "stop-color", "color", "flood-color", "lighting-color")
NOT_COLOURS = {"none", "transparent", "currentcolor", "inherit", "initial", "unset", "context-fill",
               "context-stroke"}
_PATH_COMMANDS = re.compile(r"[MmLlHhVvCcSsQqTtAaZz]")
_CSS_DECLARATION = re.compile(r"(?<![\w-])(" + "|".join(COLOUR_PROPERTIES) + r")\s*:\s*([^;}]{1,200})", re.I)
_HEX = re.compile(r"#([0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})")
_FUNC = re.compile(r"(rgba?|hsla?)\(\s*([^)]{1,100})\)", re.I)


def _channel(text: str, scale: float) -> float:
    text = text.strip()
    value = float(text[:-1]) / 100 * scale if text.endswith("%") else float(text)
    return min(max(value, 0.0), scale)


def normalise_colour(value: str) -> str | None:
    """A colour as '#rrggbb' (or '#rrggbbaa' when not opaque); None for none/url()/unknown."""
    v = value.strip().lower()
    v = re.sub(r"\s*!important$", "", v)
    if not v or v in NOT_COLOURS or v.startswith("url("):
        # url(#gradient) paints with the gradient's stop colours, counted on their own
        return None
    if v in _NAMED:
        return "#" + _NAMED[v]
    m = _HEX.fullmatch(v)
    if m:
        h = m.group(1)
        if len(h) in (3, 4):
            h = "".join(c * 2 for c in h)
        return "#" + (h[:6] if h[6:] in ("", "ff") else h)
    m = _FUNC.fullmatch(v)
    if not m:
        return None
    try:
        parts = [p for p in re.split(r"[\s,/]+", m.group(2).strip()) if p]
        if len(parts) not in (3, 4):
            return None
        if m.group(1).startswith("rgb"):
            rgb = [round(_channel(p, 255)) for p in parts[:3]]
        else:
            hue = float(parts[0].removesuffix("deg")) % 360 / 360
            sat, light = _channel(parts[1], 100) / 100, _channel(parts[2], 100) / 100
            rgb = [round(c * 255) for c in colorsys.hls_to_rgb(hue, light, sat)]
        alpha = _channel(parts[3], 1.0) if len(parts) == 4 else 1.0
    except ValueError:
        return None
    hex6 = "#" + "".join(f"{c:02x}" for c in rgb)
    return hex6 if alpha >= 1.0 else hex6 + f"{round(alpha * 255):02x}"


def _colour_values(root: Element) -> Iterable[str]:
    for el in root.iter():
        for prop in COLOUR_PROPERTIES:
            if el.get(prop) is not None:
                yield el.get(prop, "")
        style = el.get("style")
        if style:
            yield from (m.group(2) for m in _CSS_DECLARATION.finditer(style))
        if local_name(el.tag) == "style" and el.text:
            yield from (m.group(2) for m in _CSS_DECLARATION.finditer(el.text))


def text_of(el: Element) -> str:
    return "".join(el.itertext()).strip()


# What paints nothing by itself: definitions (drawn only where a <use> or a reference draws
# them), metadata, and what the validator keeps out anyway.
_NOT_DRAWN = frozenset({"defs", "clipPath", "mask", "symbol", "pattern", "marker", "linearGradient",
                        "radialGradient", "filter", "title", "desc", "metadata", "style", "script"})
_LEADING_LENGTH = re.compile(r"\s*[+]?(\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _positive(value: str | None) -> bool:
    """A length attribute that is there and above 0 ("10", "2.5px", "50%")."""
    if value is None:
        return False
    m = _LEADING_LENGTH.match(value)
    return bool(m) and float(m.group(0)) > 0


def _draws(el: Element) -> bool:
    """Whether this element paints something of its own (its size or content is not empty)."""
    name = local_name(el.tag)
    if name == "rect":
        return _positive(el.get("width")) and _positive(el.get("height"))
    if name == "circle":
        return _positive(el.get("r"))
    if name == "ellipse":
        return _positive(el.get("rx")) or _positive(el.get("ry"))
    if name == "line":
        return tuple(el.get(k, "0") for k in ("x1", "y1")) != tuple(el.get(k, "0") for k in ("x2", "y2"))
    if name in ("polyline", "polygon"):
        return len(NUMBER_RE.findall(el.get("points", "")[:100_000])) >= 4
    if name == "path":
        d = el.get("d", "")
        return bool(re.search(r"[LlHhVvCcSsQqTtAa]", d)) or len(NUMBER_RE.findall(d[:100_000])) > 2
    if name in ("text", "tspan", "textPath"):
        return bool(text_of(el).strip())
    if name in ("image", "use"):
        return any(local_name(a) == "href" and v.strip() for a, v in el.attrib.items())
    return False


def drawn_elements(root: Element) -> int:
    """Elements that paint something, outside definitions and what display="none" or
    visibility="hidden" hides: 0 means a blank drawing, however valid (a render of it is one
    colour). A structural count, not a render: grading never draws anything."""
    count, stack = 0, [root]
    while stack:
        el = stack.pop()
        if local_name(el.tag) in _NOT_DRAWN or el.get("display", "").strip() == "none":
            continue
        if el.get("visibility", "").strip() not in ("hidden", "collapse") and _draws(el):
            count += 1
        stack.extend(el)
    return count


def svg_stats(document: str, root: Element) -> dict[str, Any]:
    """Structural figures for one parsed SVG (all JSON-serialisable)."""
    tags: dict[str, int] = {}
    path_commands = transforms = aria = 0
    depth_max = 0
    stack: list[tuple[Element, int]] = [(root, 1)]
    while stack:  # iterative: a deeply nested document must not hit the recursion limit
        el, depth = stack.pop()
        depth_max = max(depth_max, depth)
        name = local_name(el.tag)
        if name:
            tags[name] = tags.get(name, 0) + 1
        if name == "path":
            path_commands += len(_PATH_COMMANDS.findall(el.get("d", "")))
        if el.get("transform") is not None:
            transforms += 1
        aria += sum(1 for a in el.attrib if local_name(a).startswith("aria-"))
        stack.extend((child, depth + 1) for child in el)
    colours = sorted({c for c in map(normalise_colour, _colour_values(root)) if c})
    titles = [el for el in root.iter() if local_name(el.tag) == "title"]
    descs = [el for el in root.iter() if local_name(el.tag) == "desc"]
    root_title = next((el for el in root if local_name(el.tag) == "title"), None)
    event_handlers = sum(1 for el in root.iter() for a in el.attrib if local_name(a).lower().startswith("on"))
    return {
        "bytes": len(document.encode("utf-8", "surrogatepass")),
        "elements": sum(tags.values()),
        "paths": tags.get("path", 0),
        "path_commands": path_commands,
        "transforms": transforms,
        "groups": tags.get("g", 0),
        "colours": len(colours),
        "colour_list": colours[:32],
        "title": bool(titles),
        "title_text": text_of(root_title)[:200] if root_title is not None else None,
        "desc": bool(descs),
        "aria": aria,
        "role": root.get("role"),
        "viewbox": root.get("viewBox") is not None,
        "width": root.get("width"),
        "height": root.get("height"),
        "depth": depth_max,
        "scripts": tags.get("script", 0) + event_handlers,
        "drawn": drawn_elements(root),
        "tags": dict(sorted(tags.items())),
    }
