"""Responses that loop: a repeated tail running into max_tokens.

A model that falls into a loop writes the same line, sentence or token again and again until
the server stops it at `max_tokens` (`finish_reason == "length"`). Its outcome is `truncated`
like any response cut short, but the cause and the cost are different: the tokens are wasted,
not thinking. `looped` is that outcome, told apart from the stored records alone:

    looped  ⇔  finish_reason == "length"  and  the generated text ends in a periodic tail

The tail rule (`repeated_tail`): after every run of digits is read as one `0` (so "step 12 …
step 13 …" repeats), the text's last `span` characters equal the `span` characters `p` before
them for some period 1 <= p <= MAX_PERIOD, with span >= max(MIN_REPEATS · p, MIN_SPAN): at
least MIN_REPEATS copies of the unit and at least MIN_SPAN characters of repetition. The
smallest such p is the loop's unit. Pure functions, linear in the tail inspected; bounded by
TAIL_CHARS (the rule looks at the end of the text only).

Records keep their stored outcome (`truncated`); analyses (show, summary.json, compare) count
`looped` apart. docs/compare.md has the rule.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

MAX_PERIOD = 2000      # characters in one repeated unit (a paragraph at most)
MIN_REPEATS = 3        # copies of the unit at the end
MIN_SPAN = 64          # characters of repetition at least ("the the the" needs 16 copies)
TAIL_CHARS = 200_000   # how much of the end of a response is inspected

_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class Loop:
    """A periodic tail: `unit` repeated `repeats` times over the last `span` characters
    (of the text with digit runs read as `0`)."""

    period: int
    repeats: float
    span: int
    unit: str

    def words(self) -> str:
        shown = self.unit if len(self.unit) <= 60 else self.unit[:57] + "..."
        return f"{self.repeats:.0f}× {shown!r} (last {self.span:,} characters)"


def _periodic_suffix(s: str, p: int, need: int) -> bool:
    n = len(s)
    return n >= need + p and s[n - need:] == s[n - need - p:n - p]


def repeated_tail(text: str | None) -> Loop | None:
    """The loop the text ends in, or None (see the module's rule)."""
    if not text:
        return None
    s = _DIGITS.sub("0", text[-TAIL_CHARS:]).rstrip()
    n = len(s)
    for p in range(1, min(MAX_PERIOD, n // MIN_REPEATS) + 1):
        span = max(MIN_REPEATS * p, MIN_SPAN)
        if span > n or s[-1] != s[-1 - p] or not _periodic_suffix(s, p, min(32, span - p)):
            continue   # cheap checks first: most periods fail within the last few characters
        # s[j] == s[j - p] over the last span - p characters: the last `span` are periodic
        if not _periodic_suffix(s, p, span - p):
            continue
        # how far back it goes: the longest periodic suffix (monotone, so a binary search)
        low, high = span - p, n - p
        while low < high:
            mid = (low + high + 1) // 2
            if _periodic_suffix(s, p, mid):
                low = mid
            else:
                high = mid - 1
        total = low + p
        return Loop(period=p, repeats=total / p, span=total, unit=_original_suffix(text[-TAIL_CHARS:], p))
    return None


def _original_suffix(text: str, normalised_chars: int) -> str:
    """The end of `text` that reads as the last `normalised_chars` characters once digit runs
    are `0`: the loop's unit as the model wrote it (its last copy)."""
    text = text.rstrip()
    pieces = _DIGITS.split(text)
    numbers = _DIGITS.findall(text)
    # walk back over the text piece by piece: a digit run counts as one character
    remaining, out = normalised_chars, []
    for i in range(len(pieces) - 1, -1, -1):
        piece = pieces[i]
        if remaining <= len(piece):
            out.append(piece[len(piece) - remaining:])
            remaining = 0
            break
        out.append(piece)
        remaining -= len(piece)
        if i > 0:
            out.append(numbers[i - 1])
            remaining -= 1
            if remaining <= 0:
                break
    return "".join(reversed(out))


def generated_text(record: Mapping[str, Any]) -> str:
    """Reasoning then answer: the end of this is where generation stopped."""
    return (record.get("reasoning") or "") + (record.get("answer") or "")


def loop_of(record: Mapping[str, Any]) -> Loop | None:
    """The record's loop when it ran into max_tokens with a repeated tail, else None."""
    if record.get("outcome") == "error" or record.get("finish_reason") != "length":
        return None
    return repeated_tail(generated_text(record))


def is_looped(record: Mapping[str, Any]) -> bool:
    return loop_of(record) is not None


def loops_in_records(path: Any) -> dict[str, Loop]:
    """id -> Loop for the looped records of a records.jsonl, streamed (the last record per id
    wins, as readers apply it), for callers that read the records without their text."""
    from ..store import iter_record_lines

    found: dict[str, Loop] = {}
    for record in iter_record_lines(path):
        loop = loop_of(record)
        if loop is None:
            found.pop(record["id"], None)
        else:
            found[record["id"]] = loop
    return found
