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


# --- chat-template debris ----------------------------------------------------------------------
# A turn marker ends the response for grading: what follows is the next turn (a new question, a
# made-up answer), never the answer. Generic shapes: <|name|> and DeepSeek's <｜name｜>, </s>, and
# the plain-tag markers of Gemma, Mistral and older chat formats.
TURN_MARKER_RE = re.compile(r"<\|[^<>|\s]{1,40}\|>|<｜[^<>｜]{1,40}｜>|</s>|<s>|\[/?INST\]|"
                            r"<(?:eos|bos|eot|eoa|eom|end_of_turn|start_of_turn|end_of_text|endoftext)>")


def cut_at_turn_end(text: str) -> str:
    """The response up to its first chat-template marker after some content; markers before any
    content ('<|im_start|>assistant\\n…') are dropped with the role word after them."""
    if "<" not in text and "[" not in text:
        return text
    pos = 0
    while True:
        m = TURN_MARKER_RE.search(text, pos)
        if m is None:
            return text
        if text[:m.start()].strip():
            return text[:m.start()].rstrip()
        # a marker before any content: drop it (and a role name right after it)
        rest = text[m.end():]
        role = re.match(r"\s*(?:assistant|model|gpt|bot)\b\s*", rest, re.I)
        text = rest[role.end():] if role else rest
        pos = 0


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


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence: split after a character named FULL STOP, QUESTION MARK,
    EXCLAMATION MARK, DANDA or ELLIPSIS, at line ends, and after a semicolon followed by a space
    outside brackets and maths. A full stop between digits (2.5), inside an abbreviation (i.e.)
    or before a lower-case word, and LaTeX's '\\!', split nothing."""
    spans, start, n = [], 0, len(text)
    i = 0
    while i < n:
        ch = text[i]
        if ch in ";；؛" and i + 1 < len(text) and text[i + 1] in " \n" and not inside_brackets(text[start:], i - start) \
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
