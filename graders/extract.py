"""Finding the final answer in a whole model response.

Order (the first rule that finds something wins, and says so in `how`):
  boxed        the last \\boxed{...} or \\fbox{...} (nested braces; the final one, not a merge)
  answer-is    "The (final) answer is ...", "Final answer: ...", "Answer: ..." (the last one)
  zh-answer    "答案是…", "答案为…", "答：…", "故…为…" / "所以…为…"
  gsm8k        "#### 42"
  whole        a short one-line response is the answer itself
  last-number  the last number in the text, a last resort (a grader may treat it with care)

Only the last MAX_SCAN characters are scanned, so a 1 MB response costs one slice; all
regexes are linear (no nested quantifiers).
"""
from __future__ import annotations

import re

MAX_SCAN = 20_000      # characters from the end of a response that are searched
MAX_WHOLE = 80         # a one-line response up to this long may be the bare answer
BOX_COMMANDS = ("\\boxed", "\\fbox")

ANSWER_IS_RE = re.compile(
    r"(?:the\s+)?(?:final\s+)?answer\s*(?:is|:|=)\s*:?\s*(?:\*\*)?\s*(.+)", re.I)
FINAL_ANSWER_RE = re.compile(r"final\s+answer\s*(?:is)?\s*[:：]?\s*(?:\*\*)?\s*(.+)", re.I)
ZH_ANSWER_RES = (
    re.compile(r"答案\s*(?:是|为|應為|应为|:|：)\s*[:：]?\s*(.+)"),
    re.compile(r"答\s*[:：]\s*(.+)"),
    re.compile(r"(?:故|所以|因此)[^。\n]{0,60}?(?:为|是|等于)\s*(.+)"),
)
GSM8K_RE = re.compile(r"####\s*(.+)")
NUMBER_RE = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?(?:/\d+)?|-?\.\d+")
GSM_STRICT_RE = re.compile(r"####\s*(-?[0-9.,]+)")
GSM_ANSWER_IS_RE = re.compile(r"[Tt]he (?:final )?answer is\s*\$?\s*(-?[0-9.,]+)")
GSM_FLEX_RE = re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)")


def find_boxed(text: str) -> str | None:
    """Contents of the last complete \\boxed{...} / \\fbox{...}, nested braces allowed."""
    end = len(text)
    while True:
        start = max(text.rfind(cmd, 0, end) for cmd in BOX_COMMANDS)
        if start < 0:
            return None
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
                        return text[i + 1: j].strip()
        elif i < len(text):  # "\boxed 5": up to the next space or $
            m = re.match(r"[^\s$]+", text[i:])
            if m and i > start + cmd_len:
                return m.group().strip()
        end = start  # unbalanced (truncated) box: look at the one before


def clean_tail(answer: str) -> str:
    """Trim the sentence after an answer: 'is 5. Then ...' -> '5'; keep $...$ contents."""
    answer = answer.strip()
    math = re.match(r"^\$\$?([^$]+)\$\$?", answer) or re.match(r"^\\\((.+?)\\\)", answer) or re.match(r"^\\\[(.+?)\\\]", answer)
    if math:
        return math.group(1).strip()
    answer = answer.split("\n")[0]
    answer = re.split(r"(?<!\d)\.(?:\s|$)|\.\s+(?=[A-Z])|。", answer)[0]
    answer = answer.strip().strip("*").strip()
    return re.sub(r"[.。,，;；]+$", "", answer).strip()


def extract_answer(response: str) -> tuple[str | None, str]:
    """(answer text, how it was found); (None, 'none') when the response holds nothing."""
    if response is None:
        return None, "none"
    text = response[-MAX_SCAN:]
    boxed = find_boxed(text)
    if boxed is not None:
        return boxed, "boxed"
    last = _last_match(FINAL_ANSWER_RE, text) or _last_match(ANSWER_IS_RE, text)
    if last:
        return clean_tail(last), "answer-is"
    for pattern in ZH_ANSWER_RES:
        found = _last_match(pattern, text)
        if found:
            return clean_tail(found), "zh-answer"
    found = _last_match(GSM8K_RE, text)
    if found:
        return clean_tail(found), "gsm8k"
    stripped = text.strip()
    if stripped and len(stripped) <= MAX_WHOLE and "\n" not in stripped:
        return stripped, "whole"
    number = extract_last_number(text)
    if number is not None:
        return number, "last-number"
    if stripped and len(response) <= MAX_SCAN:
        return stripped, "whole"
    return None, "none"


def _last_match(pattern: re.Pattern, text: str) -> str | None:
    last = None
    for m in pattern.finditer(text):
        last = m
    if last is None:
        return None
    value = last.group(1).strip()
    return value or None


def _clean_number(text: str) -> str | None:
    text = text.replace(",", "").replace("$", "").rstrip(".")
    return text if re.fullmatch(r"-?\d*\.?\d+", text) else None


def extract_gsm8k_strict(text: str) -> str | None:
    """lm-eval's strict GSM8K extraction: the number after '####' (or 'The answer is N').

    Returns the number with commas, '$' and a final '.' removed, or None.
    """
    if text is None:
        return None
    text = text[-MAX_SCAN:]
    for pattern in (GSM_STRICT_RE, GSM_ANSWER_IS_RE):
        m = pattern.search(text)
        if m:
            cleaned = _clean_number(m.group(1))
            if cleaned is not None:
                return cleaned
    return None


def extract_last_number(text: str) -> str | None:
    """lm-eval's flexible GSM8K extraction: the last number-like run in the text, cleaned."""
    if text is None:
        return None
    last = None
    for m in GSM_FLEX_RE.finditer(text[-MAX_SCAN:]):
        cleaned = _clean_number(m.group())
        if cleaned is not None:
            last = cleaned
    return last
