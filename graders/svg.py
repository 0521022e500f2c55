"""SVG answers: extract one SVG document, validate it with a hardened parser, measure it,
and check the requirements a rule can decide.

Pure functions, no I/O. Model output is untrusted, so every step is bounded:
- extraction scans the text in linear time (no backtracking regex over the whole answer);
- nothing over MAX_SVG_BYTES is parsed;
- the parser is defusedxml with DTDs, entities and external references forbidden, so
  XXE and billion-laughs documents are rejected before anything is expanded or fetched;
- documents with more than MAX_ELEMENTS elements are rejected after parsing.

Rendering is not here (see evalsuite/svg/render.py): grading never draws anything.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Sequence
from xml.etree.ElementTree import Element, ParseError

from .verdict import Verdict
from .svg_stats import NUMBER_RE, local_name, normalise_colour, svg_stats, text_of  # noqa: F401  (normalise_colour: for callers)

SVG_NS = "http://www.w3.org/2000/svg"

MAX_SVG_BYTES = 1 << 20            # 1 MiB: a 4096-token answer is ~20 KB; anything near this is abuse
MAX_ELEMENTS = 10_000
MAX_ATTRIBUTE_CHARS_FOR_SIZE = 64  # width/height/viewBox longer than this are not sizes
MAX_DIMENSION_PX = 100_000.0       # "sane" width/height after unit conversion
MAX_VIEWBOX_ABS = 1e7
MAX_SVG_TAGS_SCANNED = 2_000       # <svg / </svg tokens considered during extraction
MAX_PROLOG_CHARS = 64 * 1024

# ----------------------------------------------------------------------------- extraction


@dataclass(frozen=True)
class Extraction:
    """One SVG document found in an answer, or the reason none was."""

    svg: str | None          # the document text as written (prolog + <svg>…</svg>)
    method: str | None       # "fence" (inside a ``` block) or "bare" (in prose)
    candidates: int = 0      # complete <svg> documents found; the last one is used
    unclosed: bool = False   # an <svg> opened and never closed (truncated answer?)
    reason: str = ""


_FENCE_OPEN = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})[^\n`]*")
_SVG_TAG = re.compile(r"<(/?)svg(?=[\s/>])")
_PROLOG_START = re.compile(r"<\?xml|<!DOCTYPE", re.IGNORECASE)
_PROLOG = re.compile(
    r"(?:<\?xml[^>]{0,500}\?>\s*)?"
    r"(?:<!--(?:(?!-->).){0,4000}-->\s*)*"
    r"(?:<!DOCTYPE\b[^\[>]{0,2000}(?:\[.*?\]\s*)?>\s*)?"
    r"(?:<!--(?:(?!-->).){0,4000}-->\s*)*",
    re.IGNORECASE | re.DOTALL,
)


def _fenced_regions(text: str) -> list[tuple[int, int]]:
    """(start, end) of the body of each fenced code block, by a linear line scan.

    An unterminated fence (a truncated answer) runs to the end of the text.
    """
    regions: list[tuple[int, int]] = []
    pos, n = 0, len(text)
    fence: str | None = None
    body_start = 0
    while pos < n:
        eol = text.find("\n", pos)
        line_end = n if eol < 0 else eol
        if fence is None:
            m = _FENCE_OPEN.match(text, pos, line_end)
            if m:
                fence, body_start = m.group(1), line_end + 1
        else:
            closing = text[pos:line_end].strip()
            if len(closing) >= len(fence) and closing == fence[0] * len(closing):
                regions.append((body_start, pos))
                fence = None
        pos = line_end + 1
    if fence is not None:
        regions.append((min(body_start, n), n))
    return regions


def _svg_spans(text: str, start: int, end: int) -> tuple[list[tuple[int, int]], bool]:
    """Complete top-level <svg>…</svg> spans in text[start:end], and whether one stayed open.

    Counts nesting (an <svg> may contain <svg>). An open tag that never closes (say a
    prose mention of "<svg>") is skipped and the scan retries from the next one.
    """
    tokens: list[tuple[int, int, str]] = []   # (tag start, tag end, "open"|"close"|"empty")
    next_gt = -1
    for m in _SVG_TAG.finditer(text, start, end):
        if len(tokens) >= MAX_SVG_TAGS_SCANNED:
            break
        if next_gt < m.end():
            next_gt = text.find(">", m.end(), end)
            if next_gt < 0:
                break                                   # no tag closes after here
        kind = "close" if m.group(1) else ("empty" if text[next_gt - 1] == "/" else "open")
        tokens.append((m.start(), next_gt + 1, kind))

    spans: list[tuple[int, int]] = []
    unclosed = False
    i = 0
    while i < len(tokens):
        tag_start, tag_end, kind = tokens[i]
        if kind == "close":
            i += 1
            continue
        if kind == "empty":
            spans.append((tag_start, tag_end))
            i += 1
            continue
        depth, j = 0, i
        while j < len(tokens):
            depth += {"open": 1, "close": -1, "empty": 0}[tokens[j][2]]
            if depth == 0:
                break
            j += 1
        if j < len(tokens):
            spans.append((tag_start, tokens[j][1]))
            i = j + 1
        else:
            unclosed = True
            i += 1
    return spans, unclosed


def _with_prolog(text: str, region_start: int, svg_start: int) -> int:
    """Where the document starts: at an <?xml …?> / <!DOCTYPE …> directly before <svg>, if any.

    The prolog is kept so that validation sees (and refuses) a DTD the model wrote.
    """
    lo = max(region_start, svg_start - MAX_PROLOG_CHARS)
    for attempt, m in enumerate(_PROLOG_START.finditer(text, lo, svg_start)):
        if attempt >= 8:   # bound the work on text full of "<?xml" decoys
            break
        p = _PROLOG.fullmatch(text, m.start(), svg_start)
        if p:
            return m.start()
    return svg_start


def extract_svg(answer: str | None) -> Extraction:
    """The SVG document in an answer: the last complete one inside code fences, else the
    last complete one in the prose. Reasoning is not part of `answer` (the runner splits it)."""
    if not answer:
        return Extraction(None, None, reason="no SVG: empty answer")
    found: list[tuple[int, int, int]] = []   # (doc start, end, region start)
    unclosed = False
    for r_start, r_end in _fenced_regions(answer):
        spans, open_left = _svg_spans(answer, r_start, r_end)
        unclosed |= open_left
        found.extend((s, e, r_start) for s, e in spans)
    method = "fence"
    if not found:
        spans, unclosed = _svg_spans(answer, 0, len(answer))
        found = [(s, e, 0) for s, e in spans]
        method = "bare"
    if not found:
        why = "no SVG: an <svg> element is opened but never closed" if unclosed else "no SVG"
        return Extraction(None, None, unclosed=unclosed, reason=why)
    start, end, region_start = found[-1]
    start = _with_prolog(answer, region_start, start)
    return Extraction(answer[start:end], method, candidates=len(found), unclosed=unclosed,
                      reason=f"{method}: {len(found)} SVG document(s), the last one used")


# ----------------------------------------------------------------------------- validation


@dataclass(frozen=True)
class Validation:
    ok: bool
    errors: tuple[str, ...]
    root: Element | None = None     # the parsed tree when ok


_LENGTH = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(px|pt|pc|mm|cm|in|em|ex|%)?\s*")
_UNIT_PX = {None: 1.0, "px": 1.0, "pt": 96 / 72, "pc": 16.0, "mm": 96 / 25.4, "cm": 96 / 2.54,
            "in": 96.0, "em": 16.0, "ex": 8.0}


def _check_length(name: str, value: str | None) -> str | None:
    """An error for a width/height that is not a sane length, else None."""
    if value is None:
        return None
    if len(value) > MAX_ATTRIBUTE_CHARS_FOR_SIZE:
        return f"{name} is {len(value)} characters long, not a length"
    m = _LENGTH.fullmatch(value)
    if not m:
        return f"{name}={value!r} is not a length"
    number, unit = float(m.group(1)), m.group(2)
    if not math.isfinite(number) or number <= 0:
        return f"{name}={value!r} is not a positive length"
    if unit == "%":
        return None if number <= 100 else f"{name}={value!r} is over 100%"
    if number * _UNIT_PX[unit] > MAX_DIMENSION_PX:
        return f"{name}={value!r} is over {MAX_DIMENSION_PX:g}px"
    return None


def parse_viewbox(value: str | None) -> tuple[float, float, float, float] | None:
    """viewBox as four finite numbers with positive width and height, else None."""
    if value is None or len(value) > MAX_ATTRIBUTE_CHARS_FOR_SIZE * 2:
        return None
    parts = [p for p in re.split(r"[\s,]+", value.strip()) if p]
    if len(parts) != 4 or not all(NUMBER_RE.fullmatch(p) for p in parts):
        return None
    x, y, w, h = (float(p) for p in parts)
    if not all(math.isfinite(v) and abs(v) <= MAX_VIEWBOX_ABS for v in (x, y, w, h)) or w <= 0 or h <= 0:
        return None
    return x, y, w, h


def _refusal(e: Exception) -> str:
    """defusedxml's refusal in words (its str() is a Python repr with None fields)."""
    def given(*names: str) -> str:
        return " ".join(str(v) for v in (getattr(e, n, None) for n in names) if v)

    kind = type(e).__name__
    return f"{kind}: {_refusal_words(kind, given)}"


def _refusal_words(kind: str, given) -> str:
    if kind == "DTDForbidden":
        return f"a document type declaration is not allowed (<!DOCTYPE {given('name', 'pubid', 'public_id', 'sysid', 'system_id') or '…'}>)"
    if kind == "EntitiesForbidden":
        return f"entity declarations are not allowed (<!ENTITY {given('name') or '…'}>)"
    if kind == "ExternalReferenceForbidden":
        return f"external references are not allowed ({given('pubid', 'public_id', 'sysid', 'system_id') or 'a reference'})"
    return "an XML feature that is not allowed"


def validate_svg(document: str) -> Validation:
    """Parse with defusedxml (no DTD, no entities, no external references) and check the
    root and its size. Errors are sentences naming what is wrong."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    size = len(document.encode("utf-8", "surrogatepass"))
    if size > MAX_SVG_BYTES:
        return Validation(False, (f"SVG is {size} bytes, over the {MAX_SVG_BYTES}-byte cap",))
    try:
        root = fromstring(document, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as e:
        return Validation(False, (f"refused by the hardened XML parser: {_refusal(e)}",))
    except ParseError as e:
        return Validation(False, (f"not well-formed XML: {e}",))
    except (ValueError, UnicodeError) as e:
        return Validation(False, (f"not parseable: {e}",))

    errors: list[str] = []
    tag = root.tag if isinstance(root.tag, str) else ""
    if local_name(tag) != "svg" or tag not in ("svg", f"{{{SVG_NS}}}svg"):
        errors.append(f"root element is <{tag}>, not <svg>")
    n_elements = sum(1 for _ in root.iter())
    if n_elements > MAX_ELEMENTS:
        errors.append(f"{n_elements} elements, over the cap of {MAX_ELEMENTS}")
    for name in ("width", "height"):
        problem = _check_length(name, root.get(name))
        if problem:
            errors.append(problem)
    if root.get("viewBox") is not None and parse_viewbox(root.get("viewBox")) is None:
        shown = root.get("viewBox", "")[:40]
        errors.append(f"viewBox={shown!r} is not four numbers with positive width and height")
    return Validation(not errors, tuple(errors), root if not errors else None)


# ----------------------------------------------------------------------------- rules


@dataclass(frozen=True)
class Rule:
    """One requirement a rule can decide.

    kind:
      count     - number of <tag> elements `op` value ("==", ">=", "<=")
      stat      - a figure from svg_stats (e.g. "colours", "transforms") `op` value
      title     - a non-empty <title> as a direct child of the root
      desc      - a <desc> anywhere
      root_attr - the root has attribute `name` (equal to `text` when text is set)
      viewbox   - the root viewBox is exactly these four numbers (`text`)
      size      - root width/height equal these numbers in px (`text` = "W H")
      text      - the text of the <text> elements contains `text` (case-insensitive)
    """

    kind: str
    name: str = ""
    op: str = "=="
    value: float = 0
    text: str = ""

    def describe(self) -> str:
        if self.kind == "count":
            if self.op == "==" and self.value == 0:
                return f"no <{self.name}>"
            return {"==": "exactly", ">=": "at least", "<=": "at most"}[self.op] + f" {self.value:g} <{self.name}>"
        if self.kind == "stat":
            return f"{self.name} {self.op} {self.value:g}"
        if self.kind == "title":
            return "a non-empty <title> directly inside <svg>"
        if self.kind == "desc":
            return "a <desc>"
        if self.kind == "root_attr":
            return f'<svg {self.name}="{self.text}">' if self.text else f"<svg {self.name}=…>"
        if self.kind == "viewbox":
            return f'viewBox="{self.text}"'
        if self.kind == "size":
            w, h = self.text.split()
            return f'width="{w}" height="{h}"'
        if self.kind == "text":
            return f"<text> containing {self.text!r}"
        raise ValueError(f"unknown rule kind {self.kind!r}")


def count(tag: str, op: str, n: int) -> Rule:
    return Rule("count", name=tag, op=op, value=n)


def stat(name: str, op: str, n: float) -> Rule:
    return Rule("stat", name=name, op=op, value=n)


def _compare(actual: float, op: str, value: float) -> bool:
    return {"==": actual == value, ">=": actual >= value, "<=": actual <= value}[op]


def _text_elements(root: Element) -> str:
    return " ".join(text_of(el) for el in root.iter() if local_name(el.tag) == "text")


def check_rule(rule: Rule, root: Element, stats: dict[str, Any]) -> tuple[bool, Any]:
    """(passed, what was found) for one rule."""
    if rule.kind == "count":
        actual = stats["tags"].get(rule.name, 0)
        return _compare(actual, rule.op, rule.value), actual
    if rule.kind == "stat":
        actual = stats[rule.name]
        return _compare(float(actual), rule.op, rule.value), actual
    if rule.kind == "title":
        return bool(stats["title_text"]), stats["title_text"]
    if rule.kind == "desc":
        return stats["desc"], stats["desc"]
    if rule.kind == "root_attr":
        actual = root.get(rule.name)
        passed = actual is not None and (not rule.text or actual.strip() == rule.text)
        return passed, actual
    if rule.kind == "viewbox":
        actual = parse_viewbox(root.get("viewBox"))
        wanted = parse_viewbox(rule.text)
        return actual is not None and actual == wanted, root.get("viewBox")
    if rule.kind == "size":
        wanted = [float(x) for x in rule.text.split()]
        got = []
        for name in ("width", "height"):
            m = _LENGTH.fullmatch(root.get(name) or "")
            got.append(float(m.group(1)) if m and m.group(2) in (None, "px") else None)
        return got == wanted, [root.get("width"), root.get("height")]
    if rule.kind == "text":
        text = _text_elements(root)
        return rule.text.lower() in text.lower(), text[:200]
    raise ValueError(f"unknown rule kind {rule.kind!r}")


# ----------------------------------------------------------------------------- grading


@dataclass(frozen=True)
class SvgAnalysis:
    extraction: Extraction
    validation: Validation | None
    stats: dict[str, Any] | None
    rules: tuple[dict[str, Any], ...] = field(default=())

    @property
    def failed_rules(self) -> list[str]:
        return [r["rule"] for r in self.rules if not r["passed"]]


def analyse_svg(answer: str | None, rules: Sequence[Rule] = ()) -> SvgAnalysis:
    """Extract, validate, measure and rule-check one answer."""
    extraction = extract_svg(answer)
    if extraction.svg is None:
        return SvgAnalysis(extraction, None, None)
    validation = validate_svg(extraction.svg)
    if not validation.ok or validation.root is None:
        return SvgAnalysis(extraction, validation, None)
    stats = svg_stats(extraction.svg, validation.root)
    results = []
    for rule in rules:
        passed, actual = check_rule(rule, validation.root, stats)
        results.append({"rule": rule.describe(), "passed": bool(passed), "actual": actual})
    return SvgAnalysis(extraction, validation, stats, tuple(results))


def grade_svg(answer: str | None, rules: Sequence[Rule] = (), drawing: bool = True) -> Verdict:
    """equal=True: a valid SVG that draws something and passes every rule; False: invalid,
    blank (with `drawing`: a prompt asks for a picture, and a valid SVG that paints nothing is
    not one; details.valid stays True), or a rule fails; None: no SVG in the answer (the runner
    records it as 'unextracted').

    `extracted` is the SVG document as written (None when none, or over the byte cap).
    Rule checks are exact decisions: the method is "rules" (not a rescue).
    """
    a = analyse_svg(answer, rules)
    ex = a.extraction
    base = {"extraction": {"method": ex.method, "candidates": ex.candidates, "unclosed": ex.unclosed}}
    if ex.svg is None:
        return Verdict(None, None, "none", ex.reason, None, {**base, "valid": False})
    kept = ex.svg if len(ex.svg) <= MAX_SVG_BYTES else None
    extraction_label = f"svg-{ex.method}"
    assert a.validation is not None
    if not a.validation.ok:
        errors = list(a.validation.errors)
        return Verdict(False, kept, "rules", "invalid SVG: " + "; ".join(errors), extraction_label,
                       {**base, "valid": False, "errors": errors})
    details = {**base, "valid": True, "stats": a.stats, "rules": list(a.rules)}
    if drawing and a.stats is not None and not a.stats.get("drawn"):
        return Verdict(False, kept, "rules", "blank: a valid SVG that draws nothing (no shape, path, text or "
                       "image with a size outside <defs>)", extraction_label, {**details, "blank": True})
    failed = a.failed_rules
    if failed:
        return Verdict(False, kept, "rules", "requirement not met: " + "; ".join(failed),
                       extraction_label, details)
    reason = f"valid SVG; all {len(a.rules)} requirement(s) met" if a.rules else "valid SVG"
    return Verdict(True, kept, "rules", reason, extraction_label, details)
