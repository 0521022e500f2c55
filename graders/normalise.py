"""String normalisation of an answer before it is parsed or compared.

Turns unicode maths and full-width characters into ASCII/LaTeX, strips what carries no
value (`$`, `\\left`, spacing commands, `\\text{cm}`, °, trailing full stops, thousands
separators) and records what it removed that can matter: a percent sign (only the gold's
percent changes the comparison) and a unit. Pure string work: no sympy, microseconds.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from .words import OR as OR_WORDS

# Unicode maths -> the LaTeX the parser reads. Applied before NFKC, which would turn ² into 2.
UNICODE_MATH = {
    "π": r"\pi ", "∞": r"\infty ", "√": r"\sqrt ", "×": r"\times ", "·": r"\cdot ", "⋅": r"\cdot ",
    "÷": "/", "−": "-", "–": "-", "—": "-", "≤": r"\le ", "≥": r"\ge ", "⩽": r"\le ", "⩾": r"\ge ",
    "≠": r"\ne ", "≈": r"\approx ", "∅": r"\emptyset ", "€": " ", "£": " ", "¥": " ", "∈": r"\in ", "∪": r"\cup ", "∩": r"\cap ", "±": r"\pm ", "∓": r"\mp ",
    "°": r"^\circ ", "℃": r"^\circ ", "θ": r"\theta ", "α": r"\alpha ", "β": r"\beta ",
    "²": "^2", "³": "^3", "¹": "^1", "⁴": "^4", "⁵": "^5", "⁶": "^6", "⁷": "^7", "⁸": "^8", "⁹": "^9",
    "⁰": "^0", "⁻": "^-", "½": " 1/2", "⅓": " 1/3", "⅔": " 2/3", "¼": " 1/4", "¾": " 3/4",
    "⅕": " 1/5", "⅛": " 1/8", "⁄": "/", "∶": ":", "，": ",", "。": ".", "：": ":", "；": ";",
    "（": "(", "）": ")", "【": "[", "】": "]", "｛": "{", "｝": "}",
    "\u00a0": " ", "\u2009": " ", "\u202f": " ", "\u3000": " ",
}
VULGAR_RE = re.compile("[\u00bc-\u00be\u2150-\u215e]")
UNICODE_RE = re.compile("|".join(map(re.escape, UNICODE_MATH)))

# Letters after a value at the end of an answer are its unit, whatever they spell and in any script
# ('14 jars', '5 cm^2', '12 square units', '20 किताबें', '15个'), found by Unicode category
# (split_unit); maths names are not units, nor is a single letter ('2 x' is 2x), except the SI
# symbols m, g, s, h and L right after a number ('5 m', '3h').
MATHS_NAMES = frozenset(("sqrt", "pi", "sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "lg", "exp", "mod", "gcd", "lcm",
                         "max", "min", "det", "arg", "inf", "infty", "oo", "choose", "and", "or", "cis", "arcsin", "arccos",
                         "arctan", "sinh", "cosh", "tanh", "lim", "deg"))
SI_LETTERS = "mgshL"
TEXT_CMD_RE = re.compile(r"\\(?:text|textnormal|textup|textsf|textbf|textit|mbox|mathrm|mathbf|mathit|operatorname|textrm|rm|bf)\s*\{([^{}]*)\}(\s*\^\s*\{?[23]\}?)?")  # noqa: E501
SPACING_RE = re.compile(r"(?<!\\)\\[!,;:> ]|\\q?quad\b|~|\\displaystyle|\\left(?![a-zA-Z])|\\right(?![a-zA-Z])|\\[bB]igg?[lr]?(?![a-zA-Z])")
DEGREE_RE = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree|\^\{\s*o\s*\}")
THOUSANDS_RE = re.compile(r"(?<![\d.,])(?!0,)\d{1,3}(?:,\d{3})+(?![\d,])")
TIME_OF_DAY_RE = re.compile(r"^(\d{1,2}):(\d{2})\s*(?:([apAP])\.?\s*[mM]\.?)?$")
PERCENT_RE = re.compile(r"\s*(?:%|\bpercent(?:age(?: points?)?)?|\bper cent|\bpct\.?|\bpercentage points?|\bpp)$")
TRIG_RE = re.compile(r"\\(?:sin|cos|tan|cot|sec|csc)(?![a-zA-Z])|(?<![a-zA-Z\\])(?:sin|cos|tan|cot|sec|csc)(?![a-zA-Z])")
APPROX_RE = re.compile(r"\\approx|\\simeq|\\thickapprox")
SCALES = {"thousand": 10 ** 3, "million": 10 ** 6, "billion": 10 ** 9, "trillion": 10 ** 12}
SCALE_RE = re.compile(r"(-?\d[\d,]*(?:\.\d+)?)\s*(thousand|million|billion|trillion)", re.I)
# a number (in scientific notation or not), then units only: \\text{}/\\mathrm{} groups of letters
# (one level of braces inside: m\\,s^{-1}), spacing, \\cdot, '/', powers
_UNIT_GROUP = (r"\\(?:text|mathrm|textrm|rm|mbox)\s*\{(?!\s*[eid]\s*\})(?=[^{}]*[A-Za-zμΩÅ°])"
               r"[A-Za-zμΩÅ°\s\\,;.·/]*(?:\^\s*\{?\s*-?\d\s*\}?[A-Za-zμΩÅ°\s\\,;./]*)*\}")
_UNIT_GLUE = r"(?:\\[,;:! ]|\\cdot|\\quad|\s|/|\^\s*\{?\s*-?\d\s*\}?)"
SCIENTIFIC_UNIT_RE = re.compile(rf"([-−]?\d+(?:\.\d+)?(?:\s*(?:\\times|\\cdot|×)\s*10\s*\^\s*\{{?\s*-?\d+\s*\}}?)?)"
                                rf"((?:{_UNIT_GLUE})*{_UNIT_GROUP}(?:{_UNIT_GLUE}|{_UNIT_GROUP})*)")
REAL_LINE_RE = re.compile(r"\\mathbb\s*\{?\s*R\s*\}?|^\s*(?:\\text\{)?\s*(?:all real numbers|all reals|every real number)\s*\}?\s*$", re.I)
EMPTY_SET_RE = re.compile(r"\\(?:emptyset|varnothing)(?![a-zA-Z])|^\s*(?:\\text\{)?\s*(?:the )?empty set\s*\}?\s*$|\{\s*\}(?<!\\\{\})", re.I)
REPEATING_RE = re.compile(r"(-?)(\d*)\.(\d*)\\overline\s*\{(\d{1,20})\}")
SET_BUILDER_RE = re.compile(r"^\\\{\s*[a-zA-Z]\s*(?:\\in\s*\(-\\infty, \\infty\)\s*)?(?:\||\\mid|:)\s*(.+?)\s*\\\}$")
MIXED_RE = re.compile(r"^(-?)(\d+)\s*(?:\\frac\s*\{(\d+)\}\s*\{(\d+)\}|\s(\d+)/(\d+))$")
SPACE_THOUSANDS_RE = re.compile(r"^-?\d{1,3}(?: \d{3})+(?:\.\d+)?$")


@dataclass(frozen=True)
class Normalised:
    text: str             # what the parser reads
    percent: bool = False  # a % sign (or "percent") was removed
    unit: str | None = None  # the unit text removed, if any
    approx: str | None = None  # the value after an approximation sign, when one was cut


def vulgar_fractions(text: str) -> str:
    """'2⅜' -> '2 3/8', '−½' -> '− 1/2': each vulgar fraction as ' p/q' (NFKC would glue
    '2⅜' into '23⁄8')."""
    if not VULGAR_RE.search(text):
        return text
    def one(m: re.Match) -> str:
        num, _, den = unicodedata.normalize("NFKC", m.group()).partition("\u2044")
        return f" {num}/{den}" if den else m.group()
    return VULGAR_RE.sub(one, text)


SUPERSCRIPTS = dict(zip("⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹", "-+0123456789"))
SUPERSCRIPT_RUN_RE = re.compile("[⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹]{2,}")
# '√47', '2√11', '√(3)/2', '∛2': the radicand is the number, letter or bracket right after the sign
RADICAL_RE = re.compile(r"([³⁴]?√|∛|∜)\s*(\d+(?:\.\d+)?|[A-Za-z]|\([^()]{1,200}\))")


def unicode_to_latex(text: str) -> str:
    text = vulgar_fractions(text)
    if "√" in text or "∛" in text or "∜" in text:
        text = RADICAL_RE.sub(lambda m: {"√": "\\sqrt", "∛": "\\sqrt[3]", "³√": "\\sqrt[3]", "∜": "\\sqrt[4]", "⁴√": "\\sqrt[4]"}[m.group(1)]
                              + "{" + m.group(2).removeprefix("(").removesuffix(")") + "}", text)
    text = SUPERSCRIPT_RUN_RE.sub(lambda m: "^{" + "".join(SUPERSCRIPTS[c] for c in m.group()) + "}", text)  # 10⁻³
    text = UNICODE_RE.sub(lambda m: UNICODE_MATH[m.group()], text)
    text = unicodedata.normalize("NFKC", text)  # full-width digits/letters -> ASCII
    return text.replace("\u2044", "/")


def strip_math_delimiters(text: str) -> str:
    text = text.strip()
    for left, right in (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$")):
        if text.startswith(left) and text.endswith(right) and len(text) >= len(left) + len(right):
            text = text[len(left): len(text) - len(right)].strip()
    return text


VECTOR_RE = re.compile(r"\\(?:vec|overrightarrow)\s*\{([A-Za-z]{1,4})\}")
VECTOR_PRODUCT_RE = re.compile(r"\\(?:vec|overrightarrow)\s*\{[A-Za-z]{1,4}\}\s*\\(?:times|cdot|wedge|cross)\b"
                               r"|\\(?:times|cdot|wedge|cross)\s*\\(?:vec|overrightarrow)\b")
# an or-word of the statement reader between two closed brackets (words of two letters or more:
# a lone 'U' may be a union)
OR_BETWEEN_BRACKETS_RE = re.compile(
    r"(?<=[)\]])\s*(?:" + "|".join(sorted((re.escape(w) for w in OR_WORDS if not w.startswith("~") and len(w) > 1),
                                         key=len, reverse=True)) + r")\s*(?=[(\[])", re.I)


def _unglued(m: re.Match, keep: str = "") -> str:
    """What replaces a dropped command: a space first where the text before ends in a letter, so
    that no command is glued to the letters after it ('\\cos\\angle BAC' -> '\\cos BAC', not
    '\\cosBAC'; '\\vec{a}\\cdot\\vec{b}' never '\\cdotb')."""
    before = m.string[m.start() - 1] if m.start() else ""
    return (" " if before.isalpha() else "") + keep


# A pure function of its text, called several times per answer (the gold, then each extraction of
# the answer; N times per item in a sampled run): remembered. Its result is frozen.
def normalise(answer: str) -> Normalised:
    """Normalise one extracted answer (not a whole response)."""
    # only short texts are remembered: 8,192 long ones would hold a lot of memory
    return _normalise(answer) if len(answer) <= 2000 else _normalise.__wrapped__(answer)


@lru_cache(maxsize=8192)
def _normalise(answer: str) -> Normalised:
    text = unicode_to_latex(answer)
    text = strip_math_delimiters(text)
    time = TIME_OF_DAY_RE.match(text)
    if time:  # before unit stripping, which would read the m of "p.m." as metres
        meridiem = f" {time.group(3).lower()}m" if time.group(3) else ""
        return Normalised(f"{int(time.group(1))}:{time.group(2)}{meridiem}")
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac").replace("\\cfrac", "\\frac")
    # 10,\!080, 11,\! 111 and 12{,}480: a comma written as a thousands separator on purpose
    text = re.sub(r"(\d)(?:,\s*\\!\s*|\{,\})(?=\d)", "\\1" + THOUSANDS_MARK, text)
    text = text.replace("\\!", "")
    text = re.sub(r"\\(q?quad)(?=[A-Za-z])", r"\\\1 ", text)  # \quady_2: a spacing command glued to a name
    quad_parts = re.split(r"\\q?quad\b", text)
    if len(quad_parts) > 1 and sum("=" in part for part in quad_parts) >= 2:  # x = 2 \quad x = 3
        text = ", ".join(part.strip().strip(",") for part in quad_parts if part.strip().strip(","))
    text = SPACING_RE.sub(" ", text)
    # "x > 2 and x < 5": inequalities joined by "and" hold together (an intersection)
    conj = re.split(r"\s*(?:\\text\s*\{\s*and\s*\}|\band\b|\\land\b|\\wedge\b)\s*", text)
    if len(conj) > 1 and all(re.search(r"[<>]|\\(?:le|ge|leq|geq|lt|gt)\b", part) for part in conj):
        text = " \\cap ".join(conj)
    text = text.replace("{,}", ",").replace("\\%", "%").replace("\\$", "$")
    text = re.sub(r"(\d)\s*[xX]\s*(?=10\s*\^)", r"\1 \\times ", text)  # 7.4x10^8
    text = re.sub(r"\\(?:num|SI|si)\s*\{([^{}]*)\}(?:\s*\{[^{}]*\})?", r"\1", text)  # siunitx \num{1234}, \SI{5}{\metre}
    text = REAL_LINE_RE.sub(r"(-\\infty, \\infty)", text)
    # R \ {a}: everything but one point
    text = re.sub(r"^\(-\\infty, \\infty\)\s*(?:\\setminus|\\backslash|-)\s*\\\{\s*([^{},]+?)\s*\\\}$",
                  r"(-\\infty, \1) \\cup (\1, \\infty)", text.strip())
    # ]a, b[ and [a, b[ (French notation): open ends written as outward brackets
    french = re.fullmatch(r"\s*([\[\]])\s*([^\[\]]+?)\s*([\[\]])\s*", text)
    if french and "," in french.group(2) and (french.group(1) == "]" or french.group(3) == "["):
        text = ("(" if french.group(1) == "]" else "[") + french.group(2) + (")" if french.group(3) == "[" else "]")
    text = EMPTY_SET_RE.sub(r"\\{\\}", text)
    text = REPEATING_RE.sub(repeating_decimal, text)
    # names of geometric objects: m\angle ABC, \triangle ABC, \overline{AB} -> the letters
    text = re.sub(r"(?:m\s*)?\\(?:angle|measuredangle|triangle)\s*", _unglued, text)
    text = re.sub(r"\\langle(?![a-zA-Z])", "(", re.sub(r"\\rangle(?![a-zA-Z])", ")", text))
    text = re.sub(r"\s*(?:或者|或|以及|和|及|且)\s*", ", ", text)
    text = OR_BETWEEN_BRACKETS_RE.sub(", ", text)  # '(11,7) or (7,11)': two answers, never a number
    if VECTOR_RE.search(text):
        # the bars around vectors are a norm (a length: the label rule reads it), not the absolute
        # value of unknowns; a product of vectors (dot, cross) is no product of numbers, so the
        # arrows stay and only the same text is equal
        text = re.sub(r"(?<!\\)\|([^|]{1,200}?\\(?:vec|overrightarrow)[^|]{0,200}?)(?<!\\)\|", r"\\|\1\\|", text)
        if not VECTOR_PRODUCT_RE.search(text):
            text = VECTOR_RE.sub(lambda m: _unglued(m, m.group(1)), text)
    text = re.sub(r"\\(?:overline|widehat|hat|arc|overarc)\s*\{([A-Za-z]{1,4})\}", lambda m: _unglued(m, m.group(1)), text)
    builder = SET_BUILDER_RE.match(text.strip())
    if builder:  # {x | x > 1}: the condition is the answer
        text = builder.group(1)
    text, approx = cut_approximation(text)
    trig = TRIG_RE.search(text)
    # degrees inside a trig function are an angle: sin(30°) = sin(pi/6); elsewhere a unit
    text = DEGREE_RE.sub(lambda m: " (\\pi/180)" if trig else " ", text)
    text = re.sub(r"\\boxed\s*\{(.*)\}", r"\1", text)
    unit = None
    value_unit = SCIENTIFIC_UNIT_RE.fullmatch(text.strip())
    if value_unit:  # '6.2\\times10^{-3}\\,\\text{erg s}^{-1}': the units after a number, powers and all
        text, unit = value_unit.group(1), value_unit.group(2).strip()
    # \text{ cm}^2 after a value is a unit; \text{or} is a separator; \text{(B)} is its content
    def text_cmd(m: re.Match) -> str:
        nonlocal unit
        inner = m.group(1).strip()
        before = text[: m.start()].rstrip()
        if inner.lower() in ("or", "and", ",", "or,"):
            return ", "
        if inner in ("i", "e", "d"):  # \mathrm{i}, \mathrm{e}: the constants, not units
            return " " + inner + " "
        if before and re.fullmatch(r"[^\W\d_][^\W\d_/. ]*", inner) and (before[-1].isdigit() or before[-1] in "})."):
            unit = inner
            return " "
        power = m.group(2) or ""
        return (" " + inner + power + " ") if before else inner + power
    for _ in range(3):  # nested \text{\textbf{..}}
        new = TEXT_CMD_RE.sub(text_cmd, text)
        if new == text:
            break
        text = new
    text = text.strip()
    emphasis = re.fullmatch(r"(\*{1,2}|_{1,2})(.+?)\1", text)  # markdown **5**
    if emphasis:
        text = emphasis.group(2).strip()
    text = re.sub(r"(?<=\S)\s+\(\s*[A-Za-z]{2,}[A-Za-z .-]*\)\s*$", "", text)  # "4 (four)"
    text = re.sub(r"^[A-Za-z][A-Za-z-]{2,}(?: [A-Za-z-]+)*\s+\(\s*(-?\d[\d.,/]*)\s*\)$", r"\1", text)  # "thirteen (13)"
    text = re.sub(r"^[A-Za-z][A-Za-z ]{2,30}:\s+(?=\S)", "", text)  # "Roots: 5 and 4"
    text = re.sub(r"\s+(?:or|and)\s+", ", ", text)  # a list: '2 or 400' is never 2400
    text = re.sub(r"[\s.;:,。]+$", "", text) if not re.search(r"\d\.$", text) else text[:-1]
    text = re.sub(r"^(?:is|are|=|:)\s*", "", text).strip()
    # units and money
    percent = False
    if PERCENT_RE.search(text):
        percent = True
        text = PERCENT_RE.sub("", text).strip()
    text = re.sub(r"^\$\s*", "", text).strip()
    # a currency code by its shape (ISO 4217: three capitals; a dollar with its country's letters):
    # EUR 5.90, NOK 12, HK$ 8
    text = re.sub(r"^(?:[A-Z]{3}|[A-Z]{1,2}\$)\s*(?=-?\.?\d)", "", text)
    text = re.sub(r"^-\s*\$\s*", "-", text).strip()
    text = re.sub(r"(?<=[\s=+*/(-])\$(?=\d)", "", text)  # money inside a worked line: 9 * $2 = $18
    if text.count("$") == 1:  # a stray sign after a bare number: 2,500.50$, 45\$
        text = re.sub(r"(?<=[\d.])\s*\$$", "", text)
    text = re.sub(r"(?<=[\d.])\s*(?<!\\)\\$", "", text)  # a stray backslash: 96\
    rate = re.search(r"(?<=\d)\s*/\s*(?:[^\W\d_]{2,12}|[" + SI_LETTERS + r"])\.?$", text)
    if rate:  # $18,000/year, 45 miles/hour: a rate's unit, whatever the word
        unit = unit or rate.group().strip()
        text = text[: rate.start()].strip()
    split = split_unit(text)
    if split is not None:
        text, found_unit = split
        unit = unit or found_unit
    text = re.sub(r"\^\s*\{?\s*\}?$", "", text).strip()
    # thousands separators: 1,000 and 10,\!080 (spacing already removed); "1, 2" stays a list
    text = strip_thousands(text)
    if SPACE_THOUSANDS_RE.match(text):
        text = text.replace(" ", "")
    text = re.sub(r"\s+", " ", text).strip()
    scaled = SCALE_RE.fullmatch(text)
    if scaled:  # 2.5 million
        from fractions import Fraction
        value = Fraction(scaled.group(1).replace(",", "")) * SCALES[scaled.group(2).lower()]
        text = str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    # mixed numbers: 1\frac{4}{5}, 137 \frac{1}{2}, 1 1/2 (a whole answer only)
    m = MIXED_RE.match(text)
    if m:
        sign, whole, num, den = m.group(1), m.group(2), m.group(3) or m.group(5), m.group(4) or m.group(6)
        text = f"{sign}({whole}+{num}/{den})"
    return Normalised(text, percent, unit, normalise(approx).text if approx else None)


def split_unit(text: str) -> tuple[str, str] | None:
    """(value, unit) when the answer ends with letters after a value ('14 jars' -> ('14', 'jars'),
    '5 cm^2', '12 square units', '20 किताबें', '15个', '3万' -> ('30000', '')); None otherwise.
    Letters and marks are told by their Unicode category: no list of units. At most four words;
    none of them a maths name; a single cased letter only as an SI symbol right after a number."""
    from .numbers import SCALE_WORDS, number_value, show
    from .words import is_letter

    body = text.rstrip(" .")
    power = re.search(r"(?:\^\s*\{?\s*[23]\s*\}?|[23²³])$", body)
    core = body[: power.start()] if power and power.start() and is_letter(body[power.start() - 1]) else body
    i = len(core)
    while i and (is_letter(core[i - 1]) or core[i - 1] in " /.'’-"):
        i -= 1
    run = core[i:].strip(" /.-")
    head = core[:i].rstrip()
    if not run or not head or not (head[-1].isdigit() or head[-1] in "})%") or (i and core[i - 1:i] == "\\"):
        return None
    if head.endswith("\\") or re.search(r"\\[a-zA-Z]*$", head):
        return None  # '2\\pi': a LaTeX command, not a unit
    words = run.split()
    if len(words) > 4 or any(part.lower().strip(".") in MATHS_NAMES for w in words for part in w.split("/")):
        return None
    if len(words) == 1 and len(words[0]) == 1 and unicodedata.category(words[0]) in ("Lu", "Ll"):
        if words[0] not in SI_LETTERS or not head[-1].isdigit() or core[len(head):i].count(" ") > 1:
            return None  # '2 x', '5 n': a variable
    if any(len(w) == 1 and unicodedata.category(w) in ("Lu", "Ll") for w in words[1:]):
        return None  # 'for all x' ('km/h' is one word)
    first = words[0].lower().rstrip(".")
    scale = SCALE_WORDS.get(first)
    if scale:  # '3万', '2.5 million': a multiplier, never dropped
        number = re.search(r"-?\d[\d,]*(?:\.\d+)?$", head)
        value = number_value(number.group().replace(",", "")) if number else None
        if value is None:
            return None
        rest = " ".join(words[1:])
        return head[: number.start()] + show(value * scale), rest
    return head, run


THOUSANDS_MARK = "\u0001"  # a comma written 12{,}480 or 10,\!080 (a thousands separator on purpose)
MARKED_THOUSANDS_RE = re.compile(r"(?<![\d.])\d{1,3}(?:\u0001\d{3})+(?!\d)")


def bracket_depth_at(text: str) -> list[int]:
    """The bracket depth before each character: (, [ and \\{ open; ), ] and \\} close. A plain
    { } is a LaTeX group (\\frac{3,000}{7}), not a bracket."""
    depths, depth, i = [], 0, 0
    while i < len(text):
        ch = text[i]
        if text.startswith("\\{", i) or text.startswith("\\}", i):
            depths += [depth, depth]
            depth += 1 if text[i + 1] == "{" else -1
            i += 2
            continue
        depths.append(depth)
        depth += 1 if ch in "([" else -1 if ch in ")]" else 0
        i += 1
    return depths


def strip_thousands(text: str) -> str:
    """Remove thousands separators, by a rule that cannot fire inside brackets.

    Outside any bracket, 1,000 and 12,345,678 (groups of three digits, no space after the
    comma; '1, 2' stays a list) are one number. Inside (, [ or \\{ a plain comma separates
    entries: (7,300) is a pair and (1,5) \\cup (5,200) two intervals. A comma written as a
    separator on purpose (12{,}480, 10,\\!080) is a thousands separator anywhere, when the
    groups after it have three digits; otherwise (3{,}14) it is an ordinary comma.
    """
    text = MARKED_THOUSANDS_RE.sub(lambda m: m.group().replace(THOUSANDS_MARK, ""), text)
    text = text.replace(THOUSANDS_MARK, ",")
    if "," not in text:
        return text
    text = text.replace(", ", ",\u0000")  # protect list commas followed by a space
    depths = bracket_depth_at(text)
    text = THOUSANDS_RE.sub(lambda m: m.group().replace(",", "") if depths[m.start()] == 0 else m.group(), text)
    return text.replace(",\u0000", ", ")


def repeating_decimal(m: re.Match) -> str:
    """0.1\\overline{6} -> (1/6): the exact value of a repeating decimal."""
    from fractions import Fraction
    sign, whole, fixed, period = m.groups()
    value = Fraction(int(whole or "0")) + (Fraction(int(fixed), 10 ** len(fixed)) if fixed else 0)
    value += Fraction(int(period), (10 ** len(period) - 1) * 10 ** len(fixed))
    return f"{sign}({value.numerator}/{value.denominator})"


def cut_approximation(text: str) -> tuple[str, str | None]:
    """'p = \\frac{2}{3} \\approx 0.67' -> 'p = \\frac{2}{3}': the exact value before the
    approximation counts. 'x \\approx 0.67' (only a name before it) keeps the approximation."""
    m = APPROX_RE.search(text)
    if not m:
        return text, None
    before = text[: m.start()].strip()
    value = re.split(r"=", before)[-1].strip()
    if value and not re.fullmatch(r"[A-Za-z](?:_\{?\w+\}?)?(?:\([A-Za-z]\))?", value):
        return before, APPROX_RE.split(text[m.end():])[0].strip()
    return (before + " = " + APPROX_RE.sub("=", text[m.end():]) if before else APPROX_RE.sub("", text[m.end():])), None


def plain_key(text: str) -> str:
    """The key for the 'normalised' method: the normalised text without spaces (braces and
    case kept: \\frac9{19} is not \\frac{9}{1}9, and R is not r)."""
    return re.sub(r"\s", "", text)
