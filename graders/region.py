"""Where the answer of a response is, and the pieces every reader splits it into.

The response ends at a chat-template marker (`cut_at_turn_end`); digits of any script read as
ASCII (`ascii_digits`); sentences end at a character named FULL STOP, QUESTION MARK, EXCLAMATION
MARK, DANDA or ELLIPSIS and at line ends (`sentences`, the one splitter of the graders); clause
punctuation is told by Unicode name and category (`char_kind`). Pure string work, linear.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .numbers import inside_brackets
from .words import (ANSWER, ARTICLE, CERTAIN, CHOOSE, CONCLUDE, COPULA, EXCLUDE, FINAL, MODAL, NEGATE_BEFORE, NO, OPTION, PRONOUN, TOPIC,
                    TURN, alternation, glued, spaced)


# --- chat-template debris ----------------------------------------------------------------------
# A turn marker ends the response for grading: what follows is the next turn (a new question, a
# made-up answer), never the answer. Generic shapes: <|name|> and DeepSeek's <｜name｜>, </s>, and
# the plain-tag markers of Gemma, Mistral and older chat formats; a line opening a transcript's next
# turn ('User:', '### Human:', the role names of graders/words/).
_ROLES = sorted((w for w in TURN if w[:1].isupper()), key=len, reverse=True)
TURN_MARKER_RE = re.compile(r"<\|[^<>|\s]{1,40}\|>|<｜[^<>｜]{1,40}｜>|</s>|<s>|\[/?INST\]|"
                            r"<(?:eos|bos|eot|eoa|eom|end_of_turn|start_of_turn|end_of_text|endoftext)>"
                            r"|(?:^|\n)[ \t]*(?:#+[ \t]*)?(?:" + "|".join(_ROLES) + r")[ \t]*:")
OPENING_ROLE_RE = re.compile(r"\s*(?:" + "|".join(w for w in TURN if w.islower()) + r")\b\s*", re.I)


def cut_at_turn_end(text: str) -> str:
    """The response up to its first chat-template marker after some content; markers before any
    content ('<|im_start|>assistant\\n…') are dropped with the role word after them."""
    if "<" not in text and "[" not in text and ":" not in text:
        return text
    for _ in range(8):
        m = TURN_MARKER_RE.search(text)
        if m is None:
            return text
        if text[:m.start()].strip():
            return text[:m.start()].rstrip()
        # a marker before any content: drop it (and a role name right after it)
        rest = text[m.end():]
        role = OPENING_ROLE_RE.match(rest)
        text = rest[role.end():] if role else rest
    return text


# --- characters ---------------------------------------------------------------------------------

def ascii_digits(text: str) -> str:
    """Digits of any script (Unicode category Nd: ٤٧, ४७, ๔๗, ４７) as ASCII; the Arabic decimal
    and thousands separators and percent sign as '.', ',' and '%'. One character for one, so
    positions stay."""
    if text.isascii():
        return text
    out = []
    for ch in text:
        if ch.isdigit() and not ch.isascii():
            try:
                out.append(str(unicodedata.decimal(ch)))
                continue
            except ValueError:  # a digit that is no decimal digit (², ①): kept
                pass
        out.append(_ARABIC_SIGNS.get(ch, ch))
    return "".join(out)


_ARABIC_SIGNS = {"\u066b": ".", "\u066c": ",", "\u066a": "%", "\uff05": "%", "\uff0e": "."}


@lru_cache(maxsize=4096)
def char_kind(ch: str) -> str:
    """'end' (a sentence ends), 'clause' (a comma, semicolon, colon or dash), 'letter', 'other'."""
    cat = unicodedata.category(ch)
    if cat[0] in "LM":
        return "letter"
    if ch == "\n":
        return "end"
    if cat == "Po":
        name = unicodedata.name(ch, "")
        if any(w in name for w in ("FULL STOP", "QUESTION MARK", "EXCLAMATION MARK", "DANDA", "ELLIPSIS")):
            return "end"
        if any(w in name for w in ("COMMA", "SEMICOLON", "COLON")):
            return "clause"
    if cat == "Pd" and ch != "-":
        return "clause"
    if ch in "()[]{}（）【】「」『』":
        return "clause"
    return "other"


_CANDIDATE = re.compile(r"[.!?;\n]|[^\x00-\x7f\w\s]")


def sentences(text: str, semicolons: bool = True) -> list[tuple[int, int]]:
    """(start, end) of each sentence: split after a character named FULL STOP, QUESTION MARK,
    EXCLAMATION MARK, DANDA or ELLIPSIS, at line ends, and (`semicolons`; not between the answers of
    a list, '5; 10') after a semicolon followed by a space outside brackets and maths. A full stop
    between digits (2.5), inside an abbreviation (i.e.) or before a lower-case word, and LaTeX's
    '\\!', split nothing."""
    spans, start, n = [], 0, len(text)
    i = 0
    while i < n:
        found = _CANDIDATE.search(text, i)  # (letters, digits, spaces and ASCII marks but . ! ? ; end nothing)
        if found is None:
            break
        i = found.start()
        ch = text[i]
        if semicolons and ch in ";；؛" and i + 1 < len(text) and text[i + 1] in " \n" and not inside_brackets(text[start:], i - start) \
                and text[start:i].count("$") % 2 == 0:
            if text[start:i + 1].strip():
                spans.append((start, i + 1))
            start = i + 1
        elif char_kind(ch) == "end":
            if ch == "." and not _full_stop_ends(text, i) or ch == "!" and i and text[i - 1] == "\\":  # '\\!' spacing
                i += 1
                continue
            j = i + 1
            while j < n and (char_kind(text[j]) == "end" or text[j] in "\"'”’»)）") and text[j] != "\n":
                j += 1  # '?!', '...', a closing quote
            if text[start:j].strip():
                spans.append((start, j))
            start = j
            i = j
            continue
        i += 1
    if text[start:].strip():
        spans.append((start, n))
    return spans


def asks(sentence: str) -> bool:
    """The sentence ends with a question mark (a character so named, in any script; '?!' too)."""
    end = sentence.rstrip(" \t\n\"'”’»)）*_!！")[-1:]
    return bool(end) and "QUESTION MARK" in unicodedata.name(end, "")


def asked(text: str, pos: int, before: int) -> bool:
    """The sentence going on at `pos` asks, and ends before `before` ('C? No, D.')."""
    end = next((b for a, b in sentences(text) if b > pos), len(text))
    return end <= before and asks(text[pos:end])


def _full_stop_ends(text: str, i: int) -> bool:
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if before.isdigit() and after.isdigit():
        return False  # 2.5
    if not (after == "" or after.isspace() or after in "*_\"'”’»)）" or char_kind(after) == "end"):
        return False  # 'e.g' inside a word, '3.x'
    if re.search(r"(?:^|[\s(])[^\W\d_]\.[^\W\d_]$", text[max(0, i - 4):i]):
        return False  # 'i.e.', 'e.g.', 'a.m.'
    if re.search(r"(?:^|[\s(])(?:Mrs|[A-Z][a-z])$", text[max(0, i - 4):i]) and re.match(r"\s+[A-Z]", text[i + 1:i + 3]):
        return False  # 'Mr. Sylas', 'Dr. Lee': a title before a name ('box B. Het …' ends a sentence)
    if re.search(r"(?:^|[^\w.])[A-Z][A-Za-z]{1,2}$", text[max(0, i - 4):i]) and re.match(r" [-−]?\d", text[i + 1:i + 3]):
        return False  # 'Rs. 18', 'Nr. 5', 'Vol. 2', 'USD. 18': a capitalised abbreviation before its number
    following = re.match(r"\s+(\S)", text[i + 1:i + 4])
    return not (following and following.group(1).islower())  # 'approx. as', 'etc. and': an abbreviation


# $$..$$, $..$, \[..\], \(..\): bounded lengths keep the scan linear enough on hostile text
MATH_SPAN_RE = re.compile(r"\$\$([^$]{1,2000}?)\$\$|\$([^$]{1,2000}?)\$|\\\[(.{1,2000}?)\\\]|\\\((.{1,2000}?)\\\)", re.S)


def span_text(m: re.Match) -> str:
    return next(g for g in m.groups() if g is not None).strip()


def plain_maths(text: str) -> str | None:
    """The statement with its maths spans holding only a number written as that number
    ('$14$ jars' -> '14 jars', '$1{,}234$' -> '1,234', '$\\frac{3}{4}$' -> '3/4'); None when a span
    holds more (a formula: the maths readers decide)."""
    if "$" not in text and "\\(" not in text and "\\[" not in text:
        return text
    out, pos = [], 0
    for m in MATH_SPAN_RE.finditer(text):
        inner = re.sub(r",\\!\s*", ",", span_text(m)).replace("{,}", ",").replace("\\,", "")
        inner = re.sub(r"\\text\{\s*([^{}]*)\}", r" \1", inner).strip()
        frac = re.fullmatch(r"\\[dt]?frac\{(\d+)\}\{(\d+)\}", inner)
        if frac:
            inner = f"{frac.group(1)}/{frac.group(2)}"
        elif not re.fullmatch(r"[-−]?\d[\d,.]*(?:\\?%)?(?:\s+[^\W\d_][^\W\d_\s]*)?", inner):
            return None
        out.append(text[pos:m.start()] + inner.replace("\\%", "%"))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


HTML_TAG_RE = re.compile(r"</?[A-Za-z][A-Za-z0-9]{0,10}(?:\s[^<>\n]{0,60})?/?>")


def clean(text: str) -> str:
    """Markdown emphasis and code marks as spaces ('**14**'), digits of any script as ASCII,
    full-width forms as ASCII (not '＄', money marked so by extract.py, nor '，', which is never a
    decimal comma): same length, so the positions of the values stay."""
    text = ascii_digits(text)
    if not text.isascii():
        text = "".join(_narrow(c) for c in text)
    if "\\" in text or "{" in text:  # LaTeX thousands written on purpose: 12{,}480, 10,\!080, 8\,076
        text = re.sub(r"(?<=\d)(?:\{,\}|,\\!\s*)(?=\d{3})", ",", text)
        text = re.sub(r"(?<=\d)\\,(?=\d{3})", " ", text)
    if not any(c in text for c in "*_`#><"):
        return text  # (no marks, no tags)

    def emphasis(m: re.Match) -> str:
        before = text[: m.start()].rstrip()[-1:]
        after = text[m.end():].lstrip()[:1]
        spaced = text[m.start() - 1: m.start()] == " " and text[m.end(): m.end() + 1] == " "
        operator = m.group()[0] == "*" and len(m.group()) <= 2 and (
            spaced or (before.isdigit() or before == ")") and (after.isdigit() or after == "("))
        return m.group() if operator else " " * len(m.group())  # ' * ' and '3*4' multiply; '*14*' is emphasis
    text = re.sub(r"\*+|(?<![^\W_])_+|_+(?![^\W_])|`+|^[ \t]*[#>]+|(?<=\n)[ \t]*[#>]+", emphasis, text)
    # markup tags ('<b>18</b>', '<span class="x">'): marks like '**', not words
    text = HTML_TAG_RE.sub(lambda m: " " * len(m.group()), text)
    return text


@lru_cache(maxsize=4096)
def _narrow(ch: str) -> str:
    """A full-width form as its ASCII character (its Unicode decomposition is '<wide> …'), but
    '＄' (money, marked so by extract.py) and '，' (never a decimal comma)."""
    if ch in "\uff04\uff0c" or ch.isascii() or not unicodedata.decomposition(ch).startswith("<wide>"):
        return ch
    narrow = unicodedata.normalize("NFKC", ch)
    return narrow if len(narrow) == 1 else ch


# --- where the answer is: boxes, tags, tables, JSON ------------------------------------------------

BOX_COMMANDS = ("\\boxed", "\\fbox")


def _box_at(text: str, start: int) -> tuple[str, int] | None:
    """(contents, end) of the box command at `start`; None if it is torn (no closing brace)."""
    cmd_len = len("\\boxed") if text.startswith("\\boxed", start) else len("\\fbox")
    i = start + cmd_len
    while i < len(text) and text[i] == " ":
        i += 1
    if i < len(text) and text[i] == "{":
        depth = 0
        for j in range(i, len(text)):
            c = text[j]
            if c == "{" and text[j - 1] != "\\":
                depth += 1
            elif c == "}" and text[j - 1] != "\\":
                depth -= 1
                if depth == 0:
                    return text[i + 1: j].strip(), j + 1
    elif i < len(text) and i > start + cmd_len:  # "\boxed 5": up to the next space or $
        m = re.match(r"[^\s$]+", text[i:])
        if m:
            return m.group().strip(), i + m.end()
    return None


ANSWER_TAG_RE = re.compile(r"<answer>(.{0,2000}?)</answer>", re.S | re.I)
TABLE_ANSWER_RE = re.compile(r"^[ \t]*\|[ \t]*(?:\*\*)?(?:final[ \t]+)?answer(?:\*\*)?[ \t]*\|[ \t]*([^|\n]+?)[ \t]*\|[ \t]*$", re.I | re.M)


def find_boxed(text: str) -> str | None:
    """Contents of the last complete \\boxed{...} / \\fbox{...}, nested braces allowed."""
    boxes = find_all_boxed(text, limit=1)
    return boxes[-1][2] if boxes else None


def find_all_boxed(text: str, limit: int = 32) -> list[tuple[int, int, str]]:
    """(start, end, contents) of the last `limit` complete boxes, in text order. A torn
    (unclosed) box is skipped; a box inside another box is not listed separately."""
    out: list[tuple[int, int, str]] = []
    end = len(text)
    for _ in range(4 * limit):
        start = max(text.rfind(cmd, 0, end) for cmd in BOX_COMMANDS)
        if start < 0:
            break
        found = _box_at(text, start)
        if found is not None and not found[0]:  # an empty \boxed{} holds no answer
            found = None
        if found is not None and not (out and out[-1][0] < found[1] <= out[-1][1]):
            if out and start < out[-1][0] and found[1] >= out[-1][1]:
                out.pop()  # the later one was nested inside this box
            out.append((start, found[1], found[0]))
            if len(out) >= limit:
                break
        end = start
    return out[::-1]


MAX_JSON = 10_000          # characters of one JSON object that are parsed
JSON_TRIES = 8             # objects tried, from the last one back
_LATEX_IN_JSON_RE = re.compile(r"(?<!\\)\\(?=[a-zA-Z]{2})")


def json_answer(text: str) -> tuple[int, int, str | None] | None:
    """(start, end, value) of the answer field of the last JSON object in the text that has one (a
    key naming an answer: "answer", "final_answer", "finalAnswer"); its value as text ('27', None
    for null). Parsed by the standard library, at most MAX_JSON characters an object."""
    import json

    decoder = json.JSONDecoder()
    end = len(text)
    for _ in range(JSON_TRIES):
        start = text.rfind("{", 0, end)
        if start < 0:
            return None
        end = start
        if '"' not in text[start:start + 40]:
            continue
        try:
            value, stop = decoder.raw_decode(text[start:start + MAX_JSON])
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        raw = text[start:start + stop]
        if _LATEX_IN_JSON_RE.search(raw):  # '"\\frac{3}{4}"' written with one backslash: LaTeX, not '\\f'
            try:
                value = decoder.raw_decode(_LATEX_IN_JSON_RE.sub(r"\\\\", raw))[0]
            except ValueError:
                pass
        for key, field in value.items():
            if isinstance(key, str) and re.fullmatch(r"(?:final[ _]?)?answer", key, re.I) \
                    and (field is None or isinstance(field, (str, int, float)) and not isinstance(field, bool)):
                return start, start + stop, None if field is None else str(field).strip()
    return None


# --- answer cues --------------------------------------------------------------------------------
# 'The (final) answer is', 'Answer:', 'La réponse est', 'Die Antwort lautet', 'Ответ:', 'الجواب هو',
# '答案是', '答案：', '答え は', '정답은', 'I choose', '故选': a noun naming the answer (after adjectives
# naming it right or final), then a copula or a colon; in the scripts written without spaces the
# noun and its particle. Built once from graders/words/; a cue followed by a negation ('La réponse
# n'est pas 12', 'Ответ не 25') or after one ('不选') is none.
_JOIN = rf"(?:\s*(?:{alternation(spaced(COPULA), spaced(MODAL))}))*\s*(?:{alternation(spaced(COPULA))}|[:：=—–])"
CUE_RE = re.compile(
    rf"(?:(?:{alternation(ARTICLE)}\s+)?(?:{alternation(FINAL)}\s+){{0,2}}{alternation(spaced(ANSWER))}(?:\s+{alternation(FINAL)})?"
    rf"[\"'”]?(?:\s+{alternation(PRONOUN)})?{_JOIN}"
    rf"|(?:{alternation(FINAL)}\s+){{1,2}}{alternation(spaced(ANSWER))}\s*\**[ \t]*(?=\n)"
    rf"|(?:{alternation(ARTICLE)}\s+)?{alternation(FINAL)}\s+{alternation(OPTION)}(?:\s+{alternation(PRONOUN)})?{_JOIN}"
    rf"|{alternation(spaced(CHOOSE))}"
    rf"|(?P<glued>{alternation(glued(ANSWER), glued(CHOOSE))})择?\s*[】\]>]?\s*(?:{alternation(glued(MODAL))})?"
    rf"\s*(?P<join>{alternation(glued(COPULA), TOPIC)}|[:：])?)"
    rf"(?!\s*{alternation(NEGATE_BEFORE, NO)})"
    rf"\s*:?\s*(?:\*\*)?\s*(?:{alternation(CERTAIN)}\s+)?(?:{alternation(spaced(CONCLUDE))}\s*,?\s*)?"
    rf"(?:{alternation(OPTION, glued(CHOOSE))}\s*:?\s*)?", re.IGNORECASE)
_NEGATED_BEFORE = re.compile(rf"{alternation(glued(NO), glued(EXCLUDE), glued(NEGATE_BEFORE))}$")


_NO_CHARS = "".join(w[1:] for w in glued(NO) if len(w) == 2)  # 不, 非: a negation of one character
# '故所求的面积为 6。', '所以答案是 12': a conclusion word, then the copula of its sentence (never the 是 of 不是)
CONCLUDE_CUE_RE = re.compile(rf"{alternation(glued(CONCLUDE))}[^。\n]{{0,60}}?(?<![{_NO_CHARS}])(?:{alternation(glued(COPULA), TOPIC)})\s*")


_CUE_WORD_RE = re.compile(alternation(ANSWER, OPTION, CHOOSE), re.IGNORECASE)
_WORD_START_RE = re.compile(r"(?<!\S)\S")


def _cue_matches(text: str) -> list[re.Match]:
    """CUE_RE tried only where a noun or verb of a cue stands, from up to three words before it
    ('the final correct answer is'): one cheap pass instead of the whole pattern at every position."""
    out: list[re.Match] = []
    for word in _CUE_WORD_RE.finditer(text):
        if out and word.start() < out[-1].end():
            continue
        lo = max(0, word.start() - 48)
        for start in [m.start() for m in _WORD_START_RE.finditer(text, lo, word.start())][-3:] + [word.start()]:
            m = CUE_RE.match(text, start)
            if m is not None and m.end() > word.start():
                out.append(m)
                break
    return out


def cues(text: str, joined: bool = True) -> list[re.Match]:
    """The answer cues of the text, in order (a cue negated before it, '不选', left out). A cue in a
    script without spaces needs its particle or a colon ('答案是', '答え：'), unless `joined` is False
    and its noun has two characters or more or names a choice ('【答案】C', '选C')."""
    out = []
    for m in _cue_matches(text):
        glued_noun = m.group("glued")
        if glued_noun and any(text.startswith(w[1:], m.start()) for w in glued(OPTION) if w[1:].startswith(glued_noun)
                              and len(w) > len(glued_noun) + 1):
            continue  # '选项D': the noun 选项 (option), not the verb 选 (choose)
        if glued_noun and (_NEGATED_BEFORE.search(text, 0, m.start()) or not m.group("join") and (
                joined or len(glued_noun) < 2 and not any(w[1:] == glued_noun for w in CHOOSE))):
            continue
        out.append(m)
    return out
