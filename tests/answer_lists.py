"""The answers a gold lists and the ones a response's final answer names, as sets of normalised
strings: for the `subset` shape of the grader corpus (tests/test_graders_cases.py), a response
that names some of the gold's answers but not all ("The only solution is 5" against "5, 10"), or
more than the gold has ("2, 3, 4" against "2, 3").

Lists split at top-level `;`, `,`, `or`, `and`, `\\cup` (not inside brackets, so tuples stay
whole); `x =` is dropped, `a \\pm b` is both `a+b` and `a-b`, `a \\le z \\le b` is `[a,b]`, set
braces are removed. Test-side reading only: the graders never use it.
"""
from __future__ import annotations

import re

SEPARATORS = (";", ",", "\\text{or}", "\\text{and}", "or", "and", "\\cup")

# Tagged `subset` in shapes_by_hand_11.txt but no list of answers: an interval less one point
# is a subset of the reals, which these lists cannot say.
NOT_LISTS = {("(0, 2)", "(0, 1) \\cup (1, 2)"), ("[0, 2]", "[0, 1) \\cup (1, 2]")}


def boxed(text: str) -> list[str]:
    """The contents of every \\boxed{...}, braces matched."""
    out, i = [], 0
    while (i := text.find("\\boxed{", i)) != -1:
        j, depth = i + len("\\boxed{"), 1
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        out.append(text[i + len("\\boxed{"):j - 1])
        i = j
    return out


def top_level_split(text: str, separators=SEPARATORS) -> list[str]:
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
        elif depth == 0:
            sep = next((s for s in separators if text.startswith(s, i)), None)
            if sep:
                parts.append(text[start:i])
                i = start = i + len(sep)
                continue
        i += 1
    parts.append(text[start:])
    return parts


def answer_parts(sources: list[str]) -> set[str]:
    parts: set[str] = set()
    for source in sources:
        text = re.sub(r"\s+|\$|\\left|\\right|\\!|\\,", "", source).rstrip(".")
        text = re.sub(r"^\\\{(.*)\\\}$|^\{(.*)\}$", lambda m: m.group(1) or m.group(2), text)
        for part in top_level_split(text):
            part = re.sub(r"^[a-z]=", "", part)
            between = re.fullmatch(r"(.+)\\le[a-z]\\le(.+)", part)
            if between:
                part = f"[{between.group(1)},{between.group(2)}]"
            if "\\pm" in part:
                parts |= {part.replace("\\pm", "+"), part.replace("\\pm", "-")}
            elif part:
                parts.add(part)
    return parts


def gold_answers(gold: str) -> set[str]:
    """Every box of the gold; else its $...$ pieces when it is prose ("So $x = -9$ or $x = -3$."); else all of it."""
    boxes = boxed(gold)
    if boxes:
        return answer_parts(boxes)
    prose = re.sub(r"\$[^$]*\$|\\[a-zA-Z]+", "", gold)
    maths = re.findall(r"\$([^$]+)\$", gold) if re.search(r"[A-Za-z]{2,}", prose) else []
    return answer_parts(maths or [gold])


def final_answers(response: str) -> set[str]:
    """The response's last box; else the $...$ pieces of its last line; else that line."""
    boxes = boxed(response)
    if boxes:
        return answer_parts(boxes[-1:])
    last = response.strip().splitlines()[-1]
    maths = re.findall(r"\$([^$]+)\$", last)
    return answer_parts(maths or [last])


def one_lists_part_of_the_other(gold: str, response: str) -> bool:
    """The response's answers are a proper subset or superset of the gold's (or a named exception)."""
    if (gold.strip(), response.strip()) in NOT_LISTS:
        return True
    said, wanted = final_answers(response), gold_answers(gold)
    return bool(said) and (said < wanted or wanted < said)
