"""Numbers in a statement: digits in the usual conventions of any language and script, and number
words (text2num for the languages that say so, and the grammars below for the others, their
vocabularies in graders/words/); each read into a `Value` with its place and the unit after it.

Digits: `1,234.5`, `1.234,5`, `1.234.567`, `1 234` (any space), `1'234`, `12,34,567`, `2,5`, `3/4`, a
mixed `2 1/2`, a sign, a percent, a multiplier after it (`3万`, `2.5 million`, `70k`). Number words:
'thirty-four', 'quatre-vingt-dix-sept', 'сто двадцать', 'empat belas', 'واحد و عشرون', 'năm mươi bốn',
'หนึ่งร้อยสามสิบห้า', '一百二十', '三分之一'. Ordinals are no values. Pure string work, bounded.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from .words import AMBIGUOUS, SCALE, TEXT2NUM, is_letter, letter_runs, numbers, zh

MAX_VALUES = 24            # candidate values of one statement (more: declined)
# an integer as the reader and a GSM8K key write it (no sign on 0, no leading 0, far below the parser's digit bound)
INTEGER_RE = re.compile(r"-?[1-9]\d{0,99}|0")


# --- numbers in digits -------------------------------------------------------------------------

NUMBER_RE = re.compile(  # (the lookahead first: a position that starts no number is left at one test)
    r"(?=[-−.\d])(?<![\d.,'’])(?P<sign>(?<![\d)])[-−](?=\d))?(?P<num>"
    r"(?!0[,.]\d)\d{1,2}(?:,\d{2})+,\d{3}(?![\d,])"               # 12,34,567 (Indian grouping)
    r"|(?!0,)\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,]|\.\d)"         # 1,234,567.5
    r"|(?!0\.)\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?(?![\d.]|,\d)"       # 1.234.567,5
    r"|(?!0\.)\d{1,3}\.\d{3},\d+(?![\d.,])"                       # 1.234,5
    r"|\d{1,3}(?:['’]\d{3})+(?:\.\d+)?(?!\d)"                     # 1'234 (Swiss)
    r"|\d{1,3}(?:[\u00a0\u202f\u2009 ]\d{3})+(?:,\d+)?(?![\d]|[.,]\d)"  # 1 234 567 (spaces)
    r"|\d+/\d+(?!\d)"                                             # 3/4
    r"|\d+(?:[.,]\d+)?"                                           # 14, 2.5, 2,5
    r"|(?<!\d)\.\d+"                                              # .5
    r")(?P<pct>\s?\\?%)?")
# a multiplier word right after a number: '3万' is 30000, '2 millions' 2000000 (never just 3 or 2); 千 before a
# metric unit (千克, 千米) and 百 of 百分 are no multipliers
SCALE_WORDS = SCALE
GLUED_SCALE = "|".join(w + (f"(?![{zh.METRIC}])" if w == "千" else "(?!分)" if w == "百" else "") for w in SCALE_WORDS if len(w) == 1)
SCALE_WORD_RE = re.compile(rf"\s?({GLUED_SCALE}|[^\W\d_]+)\.?")


def number_value(text: str) -> Fraction | None:
    """'1,234.5' -> 2469/2, '1.234,5' -> 2469/2, '2,5' -> 5/2, '1 234' -> 1234, '3/4' -> 3/4: the
    value of a number as written in any of the usual conventions. A single comma followed by
    exactly three digits is a thousands separator ('1,234'), otherwise a decimal comma ('2,5')."""
    t = text.replace("\u00a0", " ").replace("\u202f", " ").replace("\u2009", " ").replace("’", "'")
    try:
        if t.isdigit() and t.isascii():
            return Fraction(int(t))
        if "/" in t:
            a, b = t.split("/")
            return Fraction(int(a), int(b)) if int(b) else None
        if " " in t or "'" in t:
            whole, _, frac = t.replace(" ", "").replace("'", "").partition(",")
            return Fraction(whole + ("." + frac if frac else ""))
        if "," in t and "." in t:
            if t.rfind(",") > t.rfind("."):   # 1.234,5
                return Fraction(t.replace(".", "").replace(",", "."))
            return Fraction(t.replace(",", ""))  # 1,234.5
        if t.count(",") > 1 or re.fullmatch(r"[1-9]\d{0,2},\d{3}", t):
            return Fraction(t.replace(",", ""))  # 1,234 and 12,34,567
        if t.count(".") > 1:
            return Fraction(t.replace(".", ""))  # 1.234.567
        return Fraction(t.replace(",", "."))
    except (ValueError, ZeroDivisionError):
        return None


def show(value: Fraction) -> str:
    """A Fraction as the answer text the graders parse: '14', '-3', '1234.5', '1/3'."""
    if value.denominator == 1:
        return str(value.numerator)
    d = value.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    if d == 1:  # a terminating decimal
        digits = 0
        while (value * 10 ** digits).denominator != 1:
            digits += 1
        scaled = abs(value * 10 ** digits).numerator
        whole, frac = divmod(scaled, 10 ** digits)
        return f"{'-' if value < 0 else ''}{whole}.{frac:0{digits}d}"
    return f"{value.numerator}/{value.denominator}"



@dataclass(frozen=True)
class Value:
    """One candidate value of a statement and the words around it: a number, or an option letter
    (clauses.read_letters)."""

    value: Fraction | str
    start: int
    end: int
    written: str              # as written ('1.234,5', 'thirty-four')
    words: bool = False       # written in words
    unit: str = ""            # the letters right after it (a unit, in any language)
    percent: bool = False
    negated: bool = False
    bound: bool = False       # 'at least 14', '14 or more'
    alternative: bool = False  # one of an 'or' list or a range
    working: bool = False     # a term of an equation chain, not its value
    weak: bool = False        # a number word beside digits, a lone 'one', a letter talked about: not stated
    retracted: bool = False   # a letter taken back by a later one ('B? No, D.', 'first B, but D')
    thousands: Fraction | None = None  # '10.066': also 10066 where a dot separates thousands (de, es, it …)

    @property
    def text(self) -> str:
        # a fraction stays a fraction: '-32988/15' as a decimal would be compared with a tolerance
        exact = "/" in self.written and self.value.denominator != 1
        return (f"{self.value.numerator}/{self.value.denominator}" if exact else show(self.value)) + ("%" if self.percent else "")



def scan_digits(text: str) -> list[Value]:
    """The numbers written in digits, each with its unit (the letters glued to or right after it,
    by Unicode category) and a multiplier word folded in ('3万' -> 30000, '2.5 million')."""
    out: list[Value] = []
    for m in NUMBER_RE.finditer(text):
        before = text[m.start() - 1] if m.start() else ""
        if before and unicodedata.category(before) in ("Lu", "Ll", "Lt"):
            # the cased letters glued to it: in '赚USD14' the name is 'USD' (letters of a script
            # without case, Unicode Lo, are the words of the sentence around it)
            word = re.search(r"[^\W\d_]+$", text[: m.start()]).group()
            k = len(word)
            while k and unicodedata.category(word[k - 1]) in ("Lu", "Ll", "Lt"):
                k -= 1
            word = word[k:]
            if not re.fullmatch(r"[A-Z][a-z]|[A-Z]{3}", word):
                continue  # 'x2', 'B12', 'CO2': a name ('Rp9', 'Rs14', 'USD14': money)
        if "," in m.group("num") and inside_brackets(text, m.start()):
            raise Declined  # '(7,300)': a pair, never seven thousand three hundred
        value = number_value(m.group("num"))
        if value is None:
            continue
        if out and "/" in m.group("num") and 0 < value < 1 and out[-1].value.denominator == 1 and out[-1].value > 0 \
                and text[out[-1].end:m.start()] in (" ", "  ") and not out[-1].unit:
            whole = out.pop()  # '2 1/2': a mixed number
            value += whole.value
            m_start = whole.start
        else:
            m_start = m.start()
        end = m.end()
        percent = bool(m.group("pct"))
        scale = SCALE_WORD_RE.match(text, end) if not percent else None
        if scale and scale.group(1).lower() in SCALE_WORDS:
            value *= SCALE_WORDS[scale.group(1).lower()]
            end = scale.end()
        elif not percent and text[end:end + 1] in "kK" and re.match(r"[kK](?![^\W\d_])", text[end:end + 2]):
            value *= 1000  # '$70k'
            end += 1
        spaced_sign = not m.group("sign") and text[m_start - 2:m_start - 1] in ("-", "−") \
            and re.search(r"(?:^|[^\d)\s])\s*[-−]\s$", text[max(0, m_start - 4):m_start]) \
            and not re.search(r"[\d)]\s*[-−]\s$", text[:m_start])
        if m.group("sign") or spaced_sign:
            value = -value
        unit = _unit_after(text, end)
        if not percent and "p" in text[end:end + 14].lower() and re.match(r"\s*(?:percent|per\s?cent|pct|percentage)\b", text[end:end + 14], re.I):
            percent = True
        dotted = "." in m.group("num") and re.fullmatch(r"[1-9]\d{0,2}\.\d{3}", m.group("num"))
        alt = (-1 if m.group("sign") else 1) * int(m.group("num").replace(".", "")) if dotted and end == m.end() else None
        out.append(Value(value, m_start, end, text[m_start:end].strip(), unit=unit, percent=percent,
                         thousands=Fraction(alt) if alt is not None else None))
        if len(out) > MAX_VALUES:
            break
    return out


class Declined(Exception):
    """The statement holds maths the structure does not read."""


def inside_brackets(text: str, pos: int) -> bool:
    before = text[:pos]
    return before.count("(") > before.count(")") or before.count("[") > before.count("]") or \
        before.count("{") > before.count("}")


def _unit_after(text: str, end: int) -> str:
    """The word right after a value (letters and marks of any script, a unit however spelt):
    '14 jars' -> 'jars', '15个苹果' -> '个苹果', '20 किताबें' -> 'किताबें'."""
    i = end
    if i < len(text) and text[i] in " \u00a0\u202f":
        i += 1
    j = i
    while j < len(text) and (is_letter(text[j]) or (text[j] in "'’-." and j + 1 < len(text) and is_letter(text[j + 1]))):
        j += 1
    return text[i:j]


# --- number words --------------------------------------------------------------------------------

# Arabic, Vietnamese, Thai, Russian, Polish and Indonesian: digit words, words of a fixed value
# (Arabic tens and teens' عشر, Vietnamese mười, Russian сорок and сто, Indonesian belas), multipliers
# of the digit before them (mươi, trăm; สิบ, ร้อย; مائة; puluh, ratus) and of the whole section (ألف,
# nghìn, ล้าน, тысяча, ribu); fillers (و, linh, lẻ) join them
GENERIC_WORDS = numbers("generic")




def _common_word(word: str) -> bool:
    return word.lower() in AMBIGUOUS


def _generic_value(tokens: list[tuple[str, int]]) -> int | None:
    """The value of number-word tokens: digits add into a section or are multiplied by the word
    after them, sections are multiplied by a scale word; two digits in a row are two numbers."""
    total, section, digit, seen = 0, 0, None, False
    for kind, value in tokens:
        if kind == "filler":
            continue
        seen = True
        if kind == "digit":
            if digit is not None:
                return None
            digit = value
        elif kind == "fixed":
            section += (digit or 0) + value
            digit = None
        elif kind == "times":
            section += (digit if digit is not None else 1) * value
            digit = None
        else:
            total += ((section + (digit or 0)) or 1) * value
            section, digit = 0, None
    return total + section + (digit or 0) if seen else None


def _generic_runs(text: str) -> list[tuple[int, int, int, int]]:
    """(start, end, value, words) of each run of number words in `text`: words separated by
    spaces, a word of the vocabulary or 'و' + one (Arabic writes 'وعشرون'), or a run of letters
    made of vocabulary words only (Thai writes no spaces: 'หนึ่งร้อยสามสิบห้า')."""
    if all(_split_glued(w) is None for w in letter_runs(text)):
        return []  # (number words are letters: a run of them is a run of letters of the text)
    runs, current = [], []
    pos = 0
    for m in re.finditer(r"\S+", text):
        token = m.group().strip(".,;:!?()\"'،؛“”«»")
        offset = m.start() + m.group().find(token) if token else m.start()
        parts = _split_glued(token)
        if parts is not None and (not current or not text[pos:offset].strip()):
            current.append((offset, offset + len(token), parts))
            pos = offset + len(token)
            continue
        if current:
            runs.append(current)
        current = [(offset, offset + len(token), parts)] if parts is not None else []
        pos = offset + len(token)
    if current:
        runs.append(current)
    out = []
    for run in runs:
        tokens = [t for _, _, parts in run for t in parts]
        value = _generic_value(tokens)
        if value is not None:
            out.append((run[0][0], run[-1][1], value, sum(kind != "filler" for kind, _ in tokens)))
    return out


@lru_cache(maxsize=4096)
def _split_glued(token: str) -> list[tuple[str, int]] | None:
    """The words of GENERIC_WORDS a token is made of, longest first ('وعشرون' -> و + عشرون,
    'สามสิบห้า' -> สาม + สิบ + ห้า); None when any part is not one (remembered per token)."""
    vocabulary, word = GENERIC_WORDS, token.lower()
    if word in vocabulary:
        return [vocabulary[word]]
    out, i = [], 0
    longest = max(map(len, vocabulary))
    while i < len(word):
        for n in range(min(longest, len(word) - i), 0, -1):
            if word[i:i + n] in vocabulary:
                out.append(vocabulary[word[i:i + n]])
                i += n
                break
        else:
            return None
    return out if out and any(kind != "filler" for kind, _ in out) else None


CJK_DIGIT, CJK_SMALL, CJK_BIG = zh.DIGITS, zh.SMALL, zh.BIG
_CJK_NUMERAL = "[" + "".join(CJK_DIGIT) + "".join(CJK_SMALL) + "".join(CJK_BIG) + "]"
CJK_RUN_RE = re.compile(f"(?<!第){_CJK_NUMERAL}+(?:[点點]{_CJK_NUMERAL}+)?(?:分之{_CJK_NUMERAL}+(?:[点點]{_CJK_NUMERAL}+)?)?")


def cjk_value(run: str) -> tuple[Fraction, bool] | None:
    """Chinese and Japanese numerals: '十五' -> 15, '一百二十' -> 120, '两千' -> 2000, '三万五千'
    -> 35000, '二〇二四' -> 2024, '三分之一' -> 1/3, '百分之二十' -> 20 (percent: True)."""
    if "分之" in run:
        den, _, num = run.partition("分之")
        if den == "百":
            inner = cjk_value(num)
            return (inner[0], True) if inner else None
        d, n = cjk_value(den), cjk_value(num)
        return (n[0] / d[0], False) if d and n and d[0] else None
    whole, _, frac = re.split("[点點]", run, maxsplit=1)[0], None, None
    if re.search("[点點]", run):
        whole, frac = re.split("[点點]", run, maxsplit=1)
    if whole and all(c in CJK_DIGIT for c in whole) and len(whole) > 1:
        if not any(c in "〇零" for c in whole):
            return None  # '三四个': three or four, a hedge
        value = Fraction(int("".join(str(CJK_DIGIT[c]) for c in whole)))
    else:
        total, section, number, last_big = 0, 0, None, 0
        for c in whole:
            if c in CJK_DIGIT:
                if number is not None and CJK_DIGIT[c] != 0:
                    return None
                number = CJK_DIGIT[c] if CJK_DIGIT[c] else None
            elif c in CJK_SMALL:
                section += (number if number is not None else 1) * CJK_SMALL[c]
                number = None
            else:
                big = CJK_BIG[c]
                if not (section or number or total):
                    return None  # '万一': no number before the multiplier
                if last_big and big > last_big:
                    total = (total + section + (number or 0)) * big
                else:
                    total += (section + (number or 0)) * big
                section, number, last_big = 0, None, big
        value = Fraction(total + section + (number or 0))
    if frac:
        if not all(c in CJK_DIGIT for c in frac):
            return None
        value += Fraction(int("".join(str(CJK_DIGIT[c]) for c in frac)), 10 ** len(frac))
    return value, False


def scan_words(text: str, taken: list[tuple[int, int]], threshold_one: bool) -> list[Value]:
    """The numbers written in words: text2num for English, French, German, Spanish, Italian,
    Portuguese and Dutch (the reading that converts the most words wins; two readings that
    disagree give none), the grammar above for Arabic, Vietnamese, Thai, Russian, Polish and
    Indonesian, and CJK numerals.
    Ordinals ('fourth', '4.') are not values. A lone 'one' / 'un' / 'ein' is weak (an article as
    often as a number) unless `threshold_one`."""
    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in taken)

    found: list[Value] = []
    if re.search(r"[^\W\d_]", text):
        found += _text2num_values(text, free, threshold_one)
        for start, end, value, count in _generic_runs(text):
            if free(start, end) and all(not (v.start < end and start < v.end) for v in found):
                found.append(Value(Fraction(value), start, end, text[start:end], words=True, unit=_unit_after(text, end),
                                   weak=count == 1 and (value == 1 and not threshold_one or _common_word(text[start:end]))))
    cjk = [m for m in CJK_RUN_RE.finditer(text) if free(m.start(), m.end())]
    for m in cjk:
        run, end = m.group(), m.end()
        if run[-1] == "千" and text[end:end + 1] in "克米瓦帕卡" or run[-1] == "百" and text[end:end + 2] == "分之":
            run, end = run[:-1], end - 1  # '千克', '千米': a metric prefix of the unit, not a multiplier
        read = cjk_value(run) if run else None
        if read is None:
            continue
        lone = len(run) == 1 and run in "一两兩"
        found.append(Value(read[0], m.start(), end, run, words=True, unit=_unit_after(text, end), percent=read[1],
                           weak=lone and (len(cjk) > 1 or not threshold_one)))
    return found


def _text2num_values(text: str, free, threshold_one: bool) -> list[Value]:
    try:
        from text_to_num import alpha2digit
    except ImportError:  # pragma: no cover - a declared dependency
        return []
    readings = {}
    for lang in _number_word_languages(text):
        try:
            out = alpha2digit(text, lang, threshold=0)
        except Exception:  # noqa: BLE001 - a library error on odd text reads no words
            continue
        if out != text:
            values = _aligned(text, out)
            if values:
                readings[lang] = values
    if not readings:
        return []
    best = max(readings.values(), key=lambda vs: sum(e - s for s, e, _, _ in vs))
    for other in readings.values():
        if {(v, s) for s, _, v, _ in other} != {(v, s) for s, _, v, _ in best} and \
                sum(e - s for s, e, _, _ in other) == sum(e - s for s, e, _, _ in best):
            return []  # two languages read the words differently: none is trusted
    merged: list[tuple[int, int, Fraction, bool]] = []
    for item in best:  # 'one thousand, one hundred and twenty-eight': one number across the comma
        if merged and not item[3] and not merged[-1][3] and re.fullmatch(r",?\s*(?:and\s+)?", text[merged[-1][1]:item[0]]) \
                and merged[-1][2] % 1000 == 0 and 0 < item[2] < merged[-1][2] and merged[-1][2] >= 1000:
            merged[-1] = (merged[-1][0], item[1], merged[-1][2] + item[2], False)
        else:
            merged.append(item)
    out = []
    for start, end, value, ordinal in merged:
        if ordinal or not free(start, end):
            continue
        words = re.findall(r"[^\W\d_]+", text[start:end])
        out.append(Value(value, start, end, text[start:end], words=True, unit=_unit_after(text, end),
                         weak=len(words) == 1 and value == 1 and not threshold_one))
    return out


_CONVERTS: dict[str, frozenset[str]] = {}   # a word -> the languages text2num reads it as a number word in
MAX_CONVERTS = 50_000


def _number_word_languages(text: str) -> tuple[str, ...]:
    """The languages of TEXT2NUM in which some word of the text, alone, is a number word to text2num
    (remembered per word): a number in words holds one ('twenty-one', 'dreiundzwanzig', 'a hundred').
    In the others text2num finds nothing and is not run (German, Italian and Dutch cost 10-45 µs a
    call even on a sentence without one)."""
    from text_to_num import alpha2digit

    found: set[str] = set()
    for word in letter_runs(text):
        langs = _CONVERTS.get(word)
        if langs is None:
            if len(_CONVERTS) >= MAX_CONVERTS:
                _CONVERTS.clear()
            langs = _CONVERTS[word] = frozenset(lang for lang in TEXT2NUM if _converts(alpha2digit, word, lang))
        found |= langs
    return tuple(lang for lang in TEXT2NUM if lang in found)


def _converts(alpha2digit, word: str, lang: str) -> bool:
    try:
        return alpha2digit(word, lang, threshold=0) != word
    except Exception:  # noqa: BLE001 - a library error on odd text reads no words
        return False


def _aligned(src: str, out: str) -> list[tuple[int, int, Fraction, bool]]:
    """(start, end, value, ordinal) of each number text2num wrote in `out`, mapped to the words of
    `src` it replaced."""
    from difflib import SequenceMatcher

    found = []
    matcher = SequenceMatcher(None, src, out, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag not in ("replace", "insert") or not re.search(r"\d", out[j1:j2]):
            continue
        written = out[j1:j2]
        m = re.search(r"\d+(?:[.,]\d+)?", written)
        if m is None or not re.search(r"[^\W\d_]", src[i1:i2]):
            continue
        after = out[j1 + m.end(): j1 + m.end() + 1]
        ordinal = bool(re.match(r"[^\W\d_]", written[m.end():] or after)) or \
            (written[m.end():].startswith(".") and not src[i1:i2].rstrip().endswith("."))
        value = number_value(m.group())
        if value is not None:
            found.append((i1, i2, value, ordinal))
    return found
