"""Read the option letter(s) a model chose, from a Chinese or English answer text.

`extract_choice(response, choices, n_gold)` returns `(letters, reason)`: the chosen letters
in alphabetical order ("C", "AD") or None, and a sentence naming the rule that decided. None
means nothing could be read or the answer was ambiguous ("A 或 B", two different lone letters);
the runner counts those as "unextracted", apart from wrong answers.

Rules, strongest first; the first rule that decides wins:
  1. boxed         the last \\boxed{C}
  2. answer-cue    the last "答案是 C", "答案：C", "故选：AD", "选C", "正确答案为(C)",
                   "The answer is (c)", "Answer: C", "I choose C" ... (a cue followed by
                   option text instead of a letter reads that option's letter)
  3. option-correct  "C 正确", "C项符合题意", "option C is correct" (negations do not match)
  4. leading-letter  the last line, then the first line, starts with the letter: "C", "(C)",
                   "C. <option text>", "**C**"
  5. option-text   the last line repeats exactly one option's text
  6. lone-letter   exactly one different standalone letter on the last line
Multi-letter answers ("AD", "A、D", "A and D") are read after a cue or alone on a line.
The response is untrusted: only its last MAX_RESPONSE_CHARS are read, every pattern is linear.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Sequence

from . import region, words
from .clauses import ARTICLE_A, TAKES_BACK, Reading, read_letters
from .decide import final_letters

__all__ = ["extract_choice", "MAX_RESPONSE_CHARS"]

MAX_RESPONSE_CHARS = 20_000     # the final answer is at the end; a longer text is cut at the front
LETTERS = "ABCDEFGHIJ"
DEFAULT_N_CHOICES = 5           # A-E when the option texts are not given
MIN_OPTION_TEXT = 2             # shorter option texts ("1", "是") are never matched as text

# --- look-alike letters --------------------------------------------------------------------

# a character table, not a list of scripts: capitals that look like the Latin option letters
LOOKALIKES = str.maketrans({
    "\u0410": "A", "\u0412": "B", "\u0421": "C", "\u0415": "E", "\u041d": "H", "\u0406": "I", "\u0408": "J",  # Cyrillic
    "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0397": "H", "\u0399": "I",                              # Greek
})
LOOKALIKE_CHARS = "".join(chr(c) for c in LOOKALIKES)
_LOOKALIKE_RE = re.compile(f"[{LOOKALIKE_CHARS}]")
# the words that may follow a look-alike letter standing alone: they join letters (`В и С`, `А или В`)
_JOINING_WORD = re.compile(rf"\s+{words.alternation(words.AND, words.OR, words.CONTRAST, words.NEGATE_BEFORE)}")
_NEXT_WORD = re.compile(r"\s+(\w)")


def _script(c: str) -> str:
    """The first word of the character's Unicode name: CYRILLIC, GREEK, LATIN …"""
    return unicodedata.name(c, "?").split(" ")[0]


def _cased(c: str) -> bool:
    """A letter of a script with capitals (Latin, Greek, Cyrillic …), or a digit: a look-alike
    beside one is part of a word. Beside a letter without case (CJK, kana, Hangul) it is alone."""
    return c.isdigit() or (c.isalpha() and (c.isupper() or c.islower()))


def latin_lookalikes(text: str) -> str:
    """`Ответ: В` -> `Ответ: B`, `答えはΒです` -> `答えはBです`; `В данном случае` (the word
    before a lower-case word) stays."""
    if not _LOOKALIKE_RE.search(text):
        return text

    def alone(m: re.Match) -> str:
        at = m.start()
        if (at > 0 and _cased(text[at - 1])) or (m.end() < len(text) and _cased(text[m.end()])):
            return m.group()
        word = _NEXT_WORD.match(text, m.end())
        if word and word.group(1).islower() and _script(word.group(1)) == _script(m.group()) \
                and not _JOINING_WORD.match(text, m.end()):
            return m.group()  # a word of its own, before a word of its script: the preposition В, the conjunction А
        return m.group().translate(LOOKALIKES)

    return _LOOKALIKE_RE.sub(alone, text)


# --- normalisation -------------------------------------------------------------------------

_LATEX_WRAPPERS = re.compile(r"\\(?:text|textbf|mathrm|mathbf|mathit|textit|operatorname)\s*\{([^{}]{0,200})\}")
_EMPHASIS = re.compile(r"\*+|_{2,}|`+|#+\s")
_WHITESPACE = re.compile(r"\s+")


def _normalise(response: str) -> str:
    """NFKC turns full-width letters and punctuation (Ｃ （ ： ，) into ASCII; markup goes; a
    look-alike capital standing alone (Cyrillic В, Greek Β) is the Latin letter."""
    text = latin_lookalikes(unicodedata.normalize("NFKC", response[-MAX_RESPONSE_CHARS:]))
    text = "".join(" " if unicodedata.category(c) == "Cc" and c not in "\n\t" else c for c in text)
    # every run of whitespace becomes one character, so the patterns' neighbouring \s* cannot
    # backtrack over long runs (quadratic or worse on untrusted text)
    text = _WHITESPACE.sub(lambda m: "\n" if "\n" in m.group() else " ", text)
    text = _LATEX_WRAPPERS.sub(r"\1", text)
    text = _EMPHASIS.sub("", text)
    return text.replace("$", "")


# --- reading a letter group at a position --------------------------------------------------

_OPEN = "([【{<《「'\"“‘"
_CLOSE = ")]】}>》」'\"”’"
# what may follow a group of several letters for it to count as the answer ("A, B is wrong" is not)
_A = words.alternation
_CJK_COUNT = "[" + "".join(words.zh.DIGITS) + "]"
_TERMINATOR = re.compile(rf"\s*(?:{_CJK_COUNT}?{_A(words.OPTION)}|(?:{_A(words.COPULA, words.MODAL)}\s*)?{_A(words.RIGHT)})?"
                         rf"\s*(?:$|[。.!！;；,，:：)\]】\n]|{_A(words.REASON)}|<eoa>|<eos>|</s>|<\|(?:endoftext|im_end|eot_id)\|>)",
                         re.IGNORECASE)


_CLAUSE_VERB = re.compile(rf"\s*(?:\s{_A(words.spaced(words.COPULA), words.spaced(words.MODAL), words.NEGATE_BEFORE)}"
                          rf"|(?:{_A(words.OPTION)}|的)*(?:{_A(words.glued(words.NEGATE_AFTER), words.glued(words.MODAL), words.glued(words.COPULA))}))",
                          re.IGNORECASE)


_CALLED_CORRECT = re.compile(rf"\s*(?:{_A(words.PRONOUN, words.MODAL)})?\s*(?:{_A(words.ARTICLE)}\s+)?{_A(words.RIGHT)}", re.IGNORECASE)


@dataclass(frozen=True)
class _Read:
    letters: str          # sorted, unique
    end: int              # position after the group
    alternatives: bool    # "A 或 B", "A or B": the model did not choose
    cut: bool = False     # more letters were listed after these, but the list did not end there


def _letter_at(text: str, pos: int, valid: str, allow_lower: bool) -> tuple[str, int] | None:
    """One run of option letters at pos ("C", "AD"), bounded by non-letters on both sides."""
    if pos > 0 and text[pos - 1].isascii() and text[pos - 1].isalnum():
        return None
    end = pos
    while end < len(text) and end - pos <= len(valid) and text[end].isascii() and text[end].isalpha():
        end += 1
    run = text[pos:end]
    if not run or (end < len(text) and text[end].isascii() and text[end].isalnum()):
        return None
    if run.isupper() and all(c in valid for c in run) and len(set(run)) == len(run):
        return run, end
    if allow_lower and len(run) == 1 and run.upper() in valid:
        return run.upper(), end
    return None


def _skip(text: str, pos: int, chars: str) -> int:
    while pos < len(text) and (text[pos] in chars or text[pos] in " \t"):
        pos += 1
    return pos


_SEPARATOR = re.compile(rf"\s*(?:(?P<alt>{words.alternation(words.OR)})|{words.alternation(words.AND)}|[、,/&+;])\s*", re.IGNORECASE)


def _separator_at(text: str, pos: int) -> tuple[str, int] | None:
    """('list' | 'alt', position after it) when a separator between letters starts at pos."""
    m = _SEPARATOR.match(text, pos)
    if m is not None:
        return ("alt" if m.group("alt") else "list"), m.end()
    p = _skip(text, pos, "")
    if p > pos:  # plain spaces: "A C", "A B D"
        return "list", p
    return None


def _read_group(text: str, pos: int, valid: str) -> _Read | None:
    """Letters at pos: "C", "(C)", "AD", "A、D", "A and D", "A 或 B" (alternatives)."""
    start = _skip(text, pos, _OPEN)
    bracketed = start > pos and text[start - 1] in _OPEN
    first = _letter_at(text, start, valid, allow_lower=True)
    if first is None:
        return None
    run, end = first
    if text[start].islower() and not bracketed and not _TERMINATOR.match(text, end):
        return None  # "the answer is a bit ..." is an article, not option a
    groups, kinds, ends = [run], [], [end]
    while len(groups) < len(LETTERS):  # more groups than letters is no answer; bounds the work
        sep = _separator_at(text, _skip(text, end, _CLOSE) if bracketed else end)
        if sep is None:
            break
        kind, after = sep
        after = _skip(text, after, _OPEN)
        nxt = _letter_at(text, after, valid, allow_lower=False)
        if nxt is None:
            break
        groups.append(nxt[0])
        kinds.append(kind)
        ends.append(nxt[1])
        end = nxt[1]
    # several groups only count when the answer ends there ("A and D." but not "A, B is wrong")
    all_ends = ends[:]
    while len(groups) > 1 and not _TERMINATOR.match(text, _skip(text, ends[-1], _CLOSE)):
        groups.pop()
        kinds.pop()
        ends.pop()
    end = ends[-1]
    letters = "".join(sorted(set("".join(groups))))
    # the letters were cut from a longer list ("C, D <eoa>"), unless the letters dropped open
    # a clause of their own ("A, B is a distractor", "E; A and B are both too small")
    cut = False
    if len(ends) < len(all_ends):
        clause = _CLAUSE_VERB.match(text, all_ends[len(ends)]) or _CLAUSE_VERB.match(text, all_ends[-1])
        # ... but "A, B and C are all correct" names them all as the answer
        cut = clause is None or _CALLED_CORRECT.match(text, clause.end()) is not None
    return _Read(letters, end, alternatives="alt" in kinds, cut=cut)


# --- cues ----------------------------------------------------------------------------------

# 'Therefore, C.', '所以B。': a conclusion word before a letter that ends the sentence (the other cues: region.cues)
_CONCLUDE_LETTER = re.compile(rf"{_A(words.CONCLUDE)}\s*,?\s*(?:{_A(words.OPTION)}\s+)?"
                              r"(?=\(?[A-J]\)?\s*(?:[.。!]|$))", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\s*\{([^{}]{0,200})\}")
_OPTION_CORRECT = re.compile(
    rf"(?:{_A(words.OPTION)}\s*)?(?<![A-Za-z0-9])([A-J](?:\s*(?:[、,/]|{_A(words.AND)})\s*[A-J]){{0,9}})(?![A-Za-z0-9])"
    rf"\s*(?:(?:{_CJK_COUNT}?{_A(words.OPTION)}|的)\s*)*(?:{_A(words.PRONOUN, words.glued(words.MODAL))}\s*)?"
    rf"(?:{_A(words.glued(words.RIGHT))}|{_A(words.spaced(words.COPULA))}\s+(?:{_A(words.PRONOUN)}\s+)?(?:{_A(words.ARTICLE)}\s+)?"
    rf"{_A(words.spaced(words.RIGHT))})")
_NEGATED = re.compile(rf"(?:{_A(words.NEGATE_BEFORE, words.EXCLUDE)}|n't)\s*(?:{_A(words.OPTION)}\s*)?\(?$", re.IGNORECASE)
# "首先分析A选项", "let us check option B": a letter being examined, not chosen
_EXAMINING = re.compile(rf"{_A(words.CHECK)}\s*(?:一下)?\s*(?:{_A(words.OPTION)})?\s*\(?$", re.IGNORECASE)
# a letter standing alone between words, spaces or ordinary punctuation ("是C。", "it's B."),
# not inside symbol noise ("@D^")
_LONE_LETTER = re.compile(r"(?<![A-Za-z0-9])([A-J])(?![A-Za-z0-9])")
_BESIDE_LONE = set(" \t\n()[]【】（）《》“”\"'.。,，、:：;；!！?？")


def _alone_beside(line: str, at: int) -> bool:
    """The character at `at` lets a letter stand alone: the line's end, a space or ordinary
    punctuation, or a letter of a script without capitals (CJK, kana, Hangul: `是C。`, `D입니다`),
    not symbol noise (`@D^`)."""
    if at < 0 or at >= len(line):
        return True
    c = line[at]
    return c in _BESIDE_LONE or (c.isalpha() and not c.isupper() and not c.islower())
# a reason after the chosen letter ("Definitely C, since A, B and D fail"): letters named in it
# are being rejected, not chosen
_REASON = re.compile(rf"[,;，；]?\s*{_A(words.REASON)}", re.IGNORECASE)


def _valid_letters(choices: Sequence[str]) -> str:
    return LETTERS[: len(choices) if choices else DEFAULT_N_CHOICES]


def _option_key(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"^\s*\(?[A-J]\)\s*|^\s*[A-J][.、:]\s*", "", text)  # "(A)..." / "A. ..." prefixes
    return re.sub(r"[\s。.,，;；!！\"'“”‘’《》]+", "", text).lower()


def _option_text_letter(segment: str, choices: Sequence[str]) -> str | None:
    """The letter of the one option whose text the segment contains (None: zero or several)."""
    if not choices:
        return None
    haystack = _option_key(segment)
    keys = [_option_key(c) for c in choices]
    exact = [LETTERS[i] for i, key in enumerate(keys) if key and key == haystack]
    if len(exact) == 1:
        return exact[0]
    found = {LETTERS[i]: key for i, key in enumerate(keys) if len(key) >= MIN_OPTION_TEXT and key in haystack}
    # drop options whose text is part of another found option's text ("土地" inside "土地改革")
    kept = [letter for letter, key in found.items()
            if not any(key != other and key in other for other in found.values())]
    return kept[0] if len(kept) == 1 else None


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.split("\n") if line.strip()]


# --- the rules -----------------------------------------------------------------------------

Decision = tuple[str | None, str]


def _decide(read: _Read, rule: str, snippet: str) -> Decision:
    if read.alternatives:
        return None, f"ambiguous: {rule} gives alternatives {snippet!r}"
    return read.letters, f"{rule}: {snippet!r}"


def _snippet(text: str, start: int, end: int) -> str:
    return text[max(0, start): min(len(text), end)].strip()[:80]


def _rule_boxed(text: str, valid: str) -> Decision | None:
    for match in reversed(list(_BOXED.finditer(text))):
        read = _read_group(match.group(1).strip() + " ", 0, valid)
        if read is not None and not match.group(1).strip()[read.end:].strip(" .)"):
            return _decide(read, "boxed", match.group(0))
    return None


def _cycles(text: str, cues: list[re.Match], valid: str, choices: Sequence[str]) -> str | None:
    """A reply that names different options under its last answer cues with no correction between
    them ('选择：C … 选择：D … 选择：C', a loop through the options): the letters it names, else None."""
    named = []
    for match in cues[-4:]:
        read = _read_group(text, match.end(), valid)
        letters = read.letters if read is not None else _option_text_letter(text[match.end(): match.end() + 300].split("\n")[0],
                                                                            choices)
        if letters:
            named.append((match, letters))
    if len(named) < 3 or len({letters for _, letters in named}) < 2:
        return None
    if TAKES_BACK.search(text, named[-2][0].end(), named[-1][0].start()):
        return None  # 'The answer is C. … incorrect. The correct answer is D.': the last one corrects
    return ", ".join(dict.fromkeys(letters for _, letters in named))


def _rule_answer_cue(text: str, valid: str, choices: Sequence[str]) -> Decision | None:
    cues = sorted(region.cues(text, joined=False) + list(_CONCLUDE_LETTER.finditer(text)), key=lambda m: m.end())
    cycled = _cycles(text, cues, valid, choices)
    if cycled is not None:
        return None, f"ambiguous: the last answer cues name different options ({cycled})"
    reads = []  # (cue match, letters read) from the last cue backwards, while they follow each other
    for match in reversed(cues):
        if match.end() == match.start():
            continue
        read = _read_group(text, match.end(), valid)
        if read is not None and _lists_options_after(text, match.end(), valid):
            if not reads:  # the last cue opens the options written out ('选择：A. 熟知性', 'B. 权威性'): no choice
                return None, f"ambiguous: the last answer cue writes the options out: {_snippet(text, match.start(), match.end() + 40)!r}"
            continue
        if read is None and not reads:
            out_of_range = re.match(r"[(\[]?([A-Z])(?![A-Za-z0-9])", text[match.end():])
            if out_of_range and out_of_range.group(1) in LETTERS[len(valid):]:
                return None, f"answer-cue names letter {out_of_range.group(1)} outside {valid[0]}-{valid[-1]}"
            tail = text[match.end(): match.end() + 300].split("\n")[0]
            letter = _option_text_letter(tail, choices)
            if letter is not None:
                return letter, f"answer-cue + option text: {_snippet(text, match.start(), match.end() + 60)!r}"
            continue
        if read is None:
            continue
        if reads:
            # an earlier cue right before the last one ("答案：A 答案：B") is a second final answer
            between = text[read.end: reads[0][0].start()]
            if not re.sub(r"[\s。.,，;；!！)）]", "", between) and read.letters != reads[0][1].letters:
                return None, (f"ambiguous: two final answers {read.letters} and {reads[0][1].letters}: "
                              f"{_snippet(text, match.start(), reads[0][1].end + 1)!r}")
            break
        reads.append((match, read))
    if not reads:
        return None
    match, read = reads[0]
    if read.cut:
        # "答案：C, D 都…": several letters are listed as the answer; reading only the first would
        # accept a one-letter gold that the model did not give alone
        return None, f"ambiguous: answer-cue lists more letters than it ends with: {_snippet(text, match.start(), read.end + 8)!r}"
    decision = _decide(read, "answer-cue", _snippet(text, match.start(), read.end + 1))
    later = _lone_letter_line_after(text, read.end, valid)
    if decision[0] is not None and later is not None and later != decision[0]:
        return None, f"ambiguous: answer-cue says {decision[0]} but a later line says {later}"
    return decision


def _lone_letter_line_after(text: str, pos: int, valid: str) -> str | None:
    """A later line holding nothing but a letter ("…the answer is A.\\n\\nB")."""
    for line in _lines(text[pos:].split("\n", 1)[1]) if "\n" in text[pos:] else []:
        read = _read_group(line + "\n", 0, valid)
        if read is not None and not line[read.end:].strip(" .)）]"):
            return read.letters
    return None


def _rule_option_correct(text: str, valid: str, n_gold: int) -> Decision | None:
    letters = []
    for match in _OPTION_CORRECT.finditer(text):
        named = re.findall(r"[A-J]", match.group(1))
        if all(c in valid for c in named) and not _NEGATED.search(text[max(0, match.start() - 12): match.start()]):
            letters.extend(named)
    if not letters:
        return None
    distinct = "".join(sorted(set(letters)))
    if len(distinct) > 1 and n_gold == 1:
        return None, f"ambiguous: several options called correct ({distinct})"
    return distinct, f"option-correct: {', '.join(letters)} called correct"


def _ends_with_option_list(lines: list[str], valid: str) -> bool:
    """The text ends by listing options ("…\nC. 劳动力\nD. 资金"): its last line is no answer."""
    if len(lines) < 2:
        return False
    heads = [_read_group(line + "\n", 0, valid) for line in lines[-2:]]
    return all(h is not None for h in heads) and heads[0].letters != heads[1].letters and all(
        line[h.end:].strip() for line, h in zip(lines[-2:], heads))


def _option_line(line: str, valid: str, bare: bool = False) -> str | None:
    """The letter of a line that writes out an option ('A. 冲突规范'; `bare`: also a letter alone)."""
    read = _read_group(line + "\n", 0, valid)
    listed = read is not None and len(read.letters) == 1 and (bare or line[read.end:].strip(" .:：、．)"))
    return read.letters if listed else None


def _listed_option(lines: list[str], i: int, valid: str) -> bool:
    """Line i is one option of a list the reply writes out ('A. 冲突规范' with 'B. …' within two
    lines of it): an echo of the options, no answer."""
    def head(k: int, bare: bool = False) -> str | None:
        return _option_line(lines[k], valid, bare) if 0 <= k < len(lines) else None
    letter = head(i)
    if letter is None:  # a bare letter cut after the option before it ('A. 加dropout层' then 'B'): the list, cut
        bare, before = head(i, bare=True), head(i - 1)
        return bare is not None and before is not None and ord(bare) - ord(before) == 1
    return any(abs(ord(other) - ord(letter)) == 1 for k in (i - 2, i - 1, i + 1, i + 2) if k != i and (other := head(k)) is not None)


def _lists_options_after(text: str, start: int, valid: str) -> bool:
    """The letter after a cue at `start` opens a written-out option list: the next line writes out the
    next option ('选择：A. 熟知性' then 'B. 权威性')."""
    lines = [line.strip() for line in text[start:start + 600].split("\n")[:2]]
    first, second = (_option_line(line, valid) for line in lines + [""] * (2 - len(lines)))
    return first is not None and second is not None and ord(second) - ord(first) == 1


def _rule_leading_letter(text: str, valid: str) -> Decision | None:
    every = _lines(text)
    lines = every[:1] if _ends_with_option_list(every, valid) else every
    # a reply that writes out two options or more ('A. 硬件自动', 'B. 进栈指令…'): its option lines are an echo
    written = {k: letter for k, line in enumerate(every) if (letter := _option_line(line, valid))}
    echoed = len(set(written.values())) >= 2
    for n, line in ([(len(every) - 1, lines[-1]), (0, lines[0])] if len(lines) > 1 else [(0, lines[0])] if lines else []):
        if _listed_option(every, n, valid) or echoed and n in written:
            continue
        if ARTICLE_A.match(line) or _NEGATED.match(line):
            continue
        read = _read_group(line + "\n", 0, valid)
        if read is None:
            continue
        rest = line[read.end:]
        if re.match(r"\s*[、,/&+]\s*[A-J](?![A-Za-z])", rest):
            continue  # a list of letters that does not end: no answer
        others = {v.value for v in read_letters(line, valid).values if not (v.negated or v.retracted or v.weak) and v.start >= read.end
                  and not (v.start and unicodedata.category(line[v.start - 1])[0] == "S")}  # '120 °C' is a unit
        if others - set(read.letters):
            continue  # the line names another letter after it ('C är fel, D är rätt'): it does not open with its answer
        if rest.strip() == "" or re.match(r"\s*[)\]】.:、．,]|\s+\S", rest) and not re.match(rf"\s*{_A(words.COPULA, words.OR, words.AND)}", rest):
            return _decide(read, "leading-letter", line[:80])
    return None


def _rule_option_text(text: str, choices: Sequence[str]) -> Decision | None:
    lines = _lines(text)
    if not lines or _ends_with_option_list(lines, _valid_letters(choices)):
        return None
    letter = _option_text_letter(lines[-1], choices)
    if letter is None:
        return None
    return letter, f"option-text: last line repeats option {letter}: {lines[-1][:80]!r}"


def _rule_lone_letter(text: str, valid: str) -> Decision | None:
    lines = _lines(text)
    if not lines or _ends_with_option_list(lines, valid) or _listed_option(lines, len(lines) - 1, valid):
        return None
    line = lines[-1]
    reason = _REASON.search(line)
    if reason and _LONE_LETTER.search(line[: reason.start()]):
        line = line[: reason.start()]
    found = []
    for match in _LONE_LETTER.finditer(line):
        letter = match.group(1)
        if not (_alone_beside(line, match.start() - 1) and _alone_beside(line, match.end())):
            continue
        before = line[max(0, match.start() - 16): match.start()]
        if letter not in valid or _NEGATED.search(before) or _EXAMINING.search(before):
            continue
        if letter == "A" and ARTICLE_A.match(line, match.start()):
            continue
        found.append(letter)
    distinct = sorted(set(found))
    if len(distinct) == 1:
        return distinct[0], f"lone-letter: only {distinct[0]} stands alone on the last line: {line[:80]!r}"
    if len(distinct) > 1:
        return None, f"ambiguous: the last line names {', '.join(distinct)}"
    return None


def _final_statement(text: str, valid: str) -> Reading | None:
    """The last line that names an option letter, among the last three (not a list of options)."""
    lines = _lines(text)
    if not lines or _ends_with_option_list(lines, valid):
        return None
    for line in reversed(lines[-3:]):
        statement = final_letters(line, valid)
        if statement is not None:
            return statement
    return None


def _rule_statement(statement: Reading | None, n_gold: int) -> Decision | None:
    """A final statement that negates, corrects or hedges decides: the one letter it asserts
    ("D, not B", "B? No, D."), alternatives ("A or C") are no choice; several asserted letters
    for a one-letter gold are given as they are (and graded wrong)."""
    if statement is None or not statement.decisive:
        return None
    snippet = statement.statement[:80]
    if statement.kind == "hedge":
        return None, f"ambiguous: the final statement offers alternatives: {snippet!r}"
    asserted = "".join(sorted(statement.stated))
    if not asserted:
        return None  # only rejected letters: the other rules read on, never choosing those
    rejected = ", ".join(sorted(statement.rejected)) or "none"
    how = "correction" if statement.corrected else "contrast"
    return asserted, f"statement-{how}: asserts {asserted}, rejects {rejected}: {snippet!r}"


def _stated_before(text: str, valid: str, statement: Reading | None) -> Decision | None:
    """An answer cue with more lines after it ('答案：B\\n解析：A项错误…', 'Answer: C\\n\\nA would …, B …'):
    the lines after it explain, and the letters they reject are the other options. Unless they reject
    the stated letters ('The answer is (G). … So G does not work; … (H).'): then the stated answer
    is disowned, and the letters the final statement still asserts are the answer, or none. A final
    statement that corrects itself or hedges, or a box after the cue, leaves it to the other rules."""
    named = [m for m in region.cues(text, joined=False) if _read_group(text, m.end(), valid) is not None]
    if not named or _cycles(text, named, valid, ()) or _lists_options_after(text, named[-1].end(), valid):
        return None
    cue = named[-1]
    read = _read_group(text, cue.end(), valid)
    after = text[read.end:]
    if read.alternatives or read.cut or "\n" not in after.strip(" .。)）") or _BOXED.search(after) \
            or statement is not None and (statement.corrected or statement.kind == "hedge") \
            or _lone_letter_line_after(text, read.end, valid) not in (None, read.letters):
        return None  # (a later line of one other letter: two final answers, the cue rule says so)
    rejected = set().union(*(read_letters(after[a:b], valid).rejected for a, b in region.sentences(after)))
    snippet = _snippet(text, cue.start(), read.end + 1)
    if not rejected & set(read.letters):
        return read.letters, f"answer-first: {snippet!r}, the lines after it explain"
    asserted = "".join(sorted(statement.stated - rejected)) if statement is not None else ""
    if asserted and not set(asserted) & set(read.letters):
        return asserted, f"disowned: {snippet!r} rejected later; the final statement asserts {asserted}"
    return None, f"ambiguous: the stated answer {read.letters} is rejected later ({snippet!r})"


def extract_choice(response: str, choices: Sequence[str] = (), n_gold: int = 1) -> tuple[str | None, str]:
    """The option letters chosen in `response` (sorted, e.g. "C" or "AD"), or None, and why.

    `choices` are the option texts in letter order (they fix the valid letters and let an answer
    that repeats an option's text count); `n_gold` is how many letters the gold answer has, so
    several letters called correct count as a multi-answer instead of as ambiguous. The
    response ends at chat-template debris (region.cut_at_turn_end); a final
    statement that negates, corrects or hedges decides first, and no rule may choose a letter
    that statement rejects.
    """
    if not response or not response.strip():
        return None, "no choice letter found: empty answer"
    text = _normalise(region.cut_at_turn_end(response[-MAX_RESPONSE_CHARS:]))
    if not text.strip():
        return None, "no choice letter found: empty answer"
    valid = _valid_letters(choices)
    statement = _final_statement(text, valid)
    stated = _stated_before(text, valid, statement)
    if stated is not None:
        return stated
    decided = _rule_statement(statement, n_gold)
    if decided is not None:
        return decided
    rejected = statement.rejected if statement is not None else set()
    for rule in (lambda: _rule_boxed(text, valid),
                 lambda: _rule_answer_cue(text, valid, choices),
                 lambda: _rule_option_correct(text, valid, n_gold),
                 lambda: _rule_leading_letter(text, valid),
                 lambda: _rule_option_text(text, choices),
                 lambda: _rule_lone_letter(text, valid)):
        decision = rule()
        if decision is not None:
            if decision[0] is not None and rejected & set(decision[0]):
                return None, (f"ambiguous: {decision[1]}, but the final statement rejects "
                              f"{', '.join(sorted(rejected & set(decision[0])))}")
            return decision
    return None, "no choice letter found"
