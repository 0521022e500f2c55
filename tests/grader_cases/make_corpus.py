"""Write tests/grader_cases/generated.jsonl: labelled answer pairs in the shapes real models
and real answer keys use, for the 13 answer kinds and the false-positive shapes.

    python tests/grader_cases/make_corpus.py           # rewrite generated.jsonl
    python tests/grader_cases/make_corpus.py --check   # exit 1 if the file is out of date

Labels are right by construction: an equal pair writes the same value in another notation
(built from an exact Fraction or from the gold string itself), an unequal pair changes the
value by a mistake a model makes (off by one, a sign, a swapped fraction or tuple, a missing
root, a wrong bracket, a letter named in the reasoning but not chosen). Nothing here asks the
grader. Golds written as solutions come from MATH-500's reference solutions (the `solution`
field) in the shared data folder; without it those pairs are left out (the committed file
keeps them). Deterministic: a fixed seed, no hash-ordered iteration.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import random
import re
import sys
from fractions import Fraction
from math import comb, gcd
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "generated.jsonl"
REPO = HERE.parents[1]


def data_dir() -> Path:
    env = os.environ.get("EVALSUITE_DATA_DIR")
    return Path(env) if env else REPO.parent / "shared" / "data"


def math500_path() -> Path:
    return data_dir() / "math500" / "test.jsonl"


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --- writing numbers ------------------------------------------------------------------------

def terminating(v: Fraction) -> bool:
    q = v.denominator
    for p in (2, 5):
        while q % p == 0:
            q //= p
    return q == 1


def decimal(v: Fraction) -> str:
    """Exact decimal of a terminating fraction ('0.375', '-2.5', '12')."""
    assert terminating(v)
    sign = "-" if v < 0 else ""
    v = abs(v)
    whole, rest = divmod(v.numerator, v.denominator)
    digits = ""
    rest = Fraction(rest, v.denominator)
    while rest:
        rest *= 10
        d = int(rest)
        digits += str(d)
        rest -= d
    return f"{sign}{whole}" + (f".{digits}" if digits else "")


def frac_tex(v: Fraction, style: str = "frac") -> str:
    """A non-integer fraction in one of the notations models and keys use."""
    p, q = abs(v.numerator), v.denominator
    sign = "-" if v < 0 else ""
    if style == "dfrac":
        return f"{sign}\\dfrac{{{p}}}{{{q}}}"
    if style == "slash":
        return f"{sign}{p}/{q}"
    if style == "nobrace" and p < 10 and q < 10:
        return f"{sign}\\frac{p}{q}"
    if style == "neg_num" and sign:
        return f"\\frac{{-{p}}}{{{q}}}"
    if style == "unreduced":
        return f"{sign}\\frac{{{2 * p}}}{{{2 * q}}}"
    return f"{sign}\\frac{{{p}}}{{{q}}}"


def number_forms(v: Fraction) -> list[str]:
    """Ways to write v exactly."""
    if v.denominator == 1:
        n = v.numerator
        forms = [str(n), f"{n}.0"]
        if abs(n) >= 1000:
            forms += [f"{n:,}", f"{n:,}".replace(",", "{,}"), f"{n:,}".replace(",", ",\\!")]
        return forms
    forms = [frac_tex(v, s) for s in ("frac", "dfrac", "slash", "nobrace", "neg_num", "unreduced")]
    if terminating(v):
        forms.append(decimal(v))
    return sorted(set(forms), key=forms.index)


def tex_number(v: Fraction, rng: random.Random) -> str:
    """v as a model would write it: mostly the plain form, sometimes another exact one."""
    forms = number_forms(v)
    if v.denominator == 1:
        return forms[0] if rng.random() < 0.75 or len(forms) == 1 else rng.choice(forms[1:])
    plain = [f for f in forms if not f.startswith("\\frac{-") and f != frac_tex(v, "unreduced")]
    if terminating(v) and len(decimal(v)) <= 7 and rng.random() < 0.25:
        return decimal(v)
    return rng.choice(plain) if rng.random() < 0.85 else rng.choice(forms)


def canonical(v: Fraction) -> str:
    return str(v.numerator) if v.denominator == 1 else frac_tex(v)


def mistakes(v: Fraction) -> list[Fraction]:
    """Values a model gets by a plausible slip (off by one or ten, doubled, halved, a sign, a
    fraction upside down or with a numerator or denominator off by one); never v itself."""
    out = [v + 1, v - 1, 2 * v, v + 10]
    if v != 0:
        out.append(-v)
    if v.denominator != 1:
        out += [Fraction(v.numerator + 1, v.denominator), Fraction(v.numerator, v.denominator + 1)]
        if abs(v) != 1:
            out.append(1 / v)
    elif v.numerator % 2 == 0:
        out.append(v / 2)
    return [w for w in dict.fromkeys(out) if w != v]


def wrong_number(v: Fraction, rng: random.Random) -> Fraction:
    return rng.choice(mistakes(v))


# --- model-like responses -------------------------------------------------------------------

def reasoning(rng: random.Random, lines: int | None = None) -> str:
    """A few lines of worked reasoning with intermediate maths (not the final answer)."""
    a, b, k = rng.randint(2, 19), rng.randint(2, 19), rng.randint(2, 9)
    pool = [
        "Let's work through this step by step.",
        "First, let's write down what we know.",
        f"We have ${a} + {b} = {a + b}$, so the remaining part is easy.",
        f"Multiplying both sides by ${k}$ gives ${k}y = {k * a}$.",
        "We need to be careful with the signs here.",
        f"The product is ${a} \\times {b} = {a * b}$.",
        f"Simplifying, $\\frac{{{a * k}}}{{{b * k}}} = \\frac{{{a}}}{{{b}}}$.",
        "Substituting back into the original equation confirms this.",
        f"Checking the case $n = {k}$ separately, nothing changes.",
        "## Step 1: Set up the equation\nWe translate the conditions into algebra.",
        "## Step 2: Solve\nCollecting like terms on one side:",
        f"Since ${a}^2 = {a * a}$, the square term is fixed.",
        "Now combine the two cases.",
        "Let me double-check the arithmetic.",
        f"- The first term contributes ${a}$.\n- The second term contributes ${b}$.",
    ]
    n = lines if lines is not None else rng.randint(1, 4)
    return "\n".join(rng.sample(pool, n))


def reasoning_zh(rng: random.Random) -> str:
    a, b = rng.randint(2, 19), rng.randint(2, 19)
    pool = ["首先，我们列出已知条件。", f"由题意得 ${a}+{b}={a + b}$。", "化简后代入原式验证。",
            "分两种情况讨论。", f"因为 ${a}\\times{b}={a * b}$，所以只需再计算一步。"]
    return "".join(rng.sample(pool, rng.randint(1, 3)))


ANSWER_STYLES = ("boxed_final", "boxed_display", "qwen", "minerva", "metamath", "answer_colon",
                 "bold", "bare", "bare_dollar", "boxed_bare", "think", "zh", "sentence", "llama",
                 "latex_paren", "display_dollars", "heading")


def respond(answer: str, rng: random.Random, style: str | None = None, plain_number: bool = False) -> str:
    """A response whose final answer is `answer` (LaTeX, no $), in a common model format."""
    styles = ANSWER_STYLES + (("gsm8k", "gsm8k") if plain_number else ())
    style = style or rng.choice(styles)
    r = reasoning(rng)
    return {
        "boxed_final": f"{r}\n\n**Final Answer**\n\n$\\boxed{{{answer}}}$",
        "boxed_display": f"{r}\n\nSo the answer is\n\\[\n\\boxed{{{answer}}}\n\\]",
        "qwen": f"{r}\n\nTherefore, the final answer is $\\boxed{{{answer}}}$.",
        "minerva": f"{r}\nFinal Answer: The final answer is ${answer}$. I hope it is correct.",
        "metamath": f"{r}\nThe answer is: {answer}",
        "answer_colon": f"{r}\n\nAnswer: ${answer}$",
        "bold": f"{r}\n\n**Answer:** ${answer}$",
        "bare": answer,
        "bare_dollar": f"${answer}$",
        "boxed_bare": f"\\boxed{{{answer}}}",
        "think": f"<think>\n{r}\n</think>\n\nThe answer is $\\boxed{{{answer}}}$.",
        "zh": f"解：{reasoning_zh(rng)}\n所以答案是 ${answer}$。",
        "sentence": f"{r}\nSo the answer is ${answer}$.",
        "gsm8k": f"{r}\n#### {answer}",
        "llama": f"{r}\n\nThe final answer is: $\\boxed{{{answer}}}$",
        "latex_paren": f"{r}\n\nThus, the answer is \\({answer}\\).",
        "display_dollars": f"{r}\n$$\n\\boxed{{{answer}}}\n$$",
        "heading": f"{r}\n\n### Final Answer\n\\[\n\\boxed{{{answer}}}\n\\]",
    }[style]


def pair(group: str, gold: str, response: str, equal: bool, shape: str | None = None,
         kind: str | None = None) -> dict:
    row = {"group": group, "equal": equal, "gold": gold, "response": response}
    if shape:
        row["shape"] = shape
    if kind:
        row["kind"] = kind
    return row


# --- 1. golds written as solutions ---------------------------------------------------------

BOX_RE = re.compile(r"\\boxed\{")


def boxes(text: str) -> list[str]:
    out = []
    for m in BOX_RE.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out.append(text[m.end():i - 1])
    return out


SIMPLE_RE = re.compile(
    r"^(?P<dollar>\\\$)?(?P<sign>-)?(?:(?P<int>\d{1,3}(?:,\\!\s?\d{3})+|\d+)|(?P<dec>\d*\.\d+)"
    r"|\\[dt]?frac\s?(?:\{(?P<p>\d+)\}|(?P<p1>\d))\s?(?:\{(?P<q>\d+)\}|(?P<q1>\d)))"
    r"(?P<unit>\^\\circ|\s?\\text\{\s*(?:degrees|cents)\}|\s?\\mbox\{\s*(?:inches|cm)\}\^2)?$")


def simple_value(answer: str) -> tuple[Fraction, str, str] | None:
    """(value, prefix, unit) of a plain numeric answer such as '\\$18.90', '\\frac 59', '90^\\circ'."""
    m = SIMPLE_RE.match(answer.strip())
    if not m:
        return None
    if m["int"]:
        v = Fraction(int(re.sub(r"[^\d]", "", m["int"])))
    elif m["dec"]:
        v = Fraction(m["dec"])
    else:
        v = Fraction(int(m["p"] or m["p1"]), int(m["q"] or m["q1"]))
    if m["sign"]:
        v = -v
    return v, ("\\$" if m["dollar"] else ""), (m["unit"] or "")


TEXT_SWAP = {"\\text{Evelyn}": "\\text{Brenda}", "\\text{east}": "\\text{west}", "\\text{even}": "\\text{odd}",
             "\\text{ellipse}": "\\text{hyperbola}", "\\text{Navin}": "\\text{Luna}",
             "\\text{(C)}": "\\text{(D)}", "\\text{(E)}": "\\text{(A)}", "\\text{(B)}": "\\text{(C)}"}
NO_DIGIT_SWAP = {"p - q": "q - p", "\\cot x": "\\tan x", "\\pi": "2\\pi"}
INT_RE = re.compile(r"\d+")


def cosmetic(answer: str, rng: random.Random) -> str:
    """The same answer as another writer would type it."""
    out = answer
    choices = [
        lambda s: s.replace("\\dfrac", "\\frac"),
        lambda s: re.sub(r"\\left\s*|\\right\s*", "", s),
        lambda s: re.sub(r"\s+", "", s) if "\\text" not in s and "\\mbox" not in s and "\\begin" not in s
        and not re.search(r"\\[a-zA-Z]+\s+[a-zA-Z]", s) else s,
        lambda s: s.replace(",", ", ") if not re.search(r"\\!|\\begin|\d,\d{3}", s) else s,
        lambda s: s[len("x \\in "):] if s.startswith("x \\in ") else s,
        lambda s: s,
    ]
    for f in rng.sample(choices, 2):
        out = f(out)
    return out


def mutate_answer(answer: str, rng: random.Random) -> str | None:
    """A wrong answer of the same shape; None when no safe mistake is known."""
    if answer in TEXT_SWAP:
        return TEXT_SWAP[answer]
    if answer in NO_DIGIT_SWAP:
        return NO_DIGIT_SWAP[answer]
    options = []
    # a tuple with its first two entries swapped
    m = re.match(r"^(\\left\s*)?\((.*)(\\right\s*)?\)$", answer)
    if m and "\\infty" not in answer and "\\cup" not in answer:
        parts = [p.strip() for p in re.sub(r"\\right\s*$", "", m.group(2)).split(",")]
        if len(parts) >= 2 and parts[0] != parts[1] and all(parts):
            swapped = [parts[1], parts[0], *parts[2:]]
            options.append("(" + ", ".join(swapped) + ")")
    # an interval with a wrong bracket
    if re.match(r"^(x \\in )?\\left[\[(]|^(x \\in )?[\[(]", answer) and re.search(r"[\])]$", answer) and (
            "\\infty" in answer or "\\cup" in answer or "]" in answer or "[" in answer):
        closing = answer[-1]
        if not answer.endswith("\\infty)"):
            options.append(answer[:-1] + (")" if closing == "]" else "]"))
    # one integer changed by one (the last, or the first)
    ints = [m for m in INT_RE.finditer(answer)
            if not re.search(r"\\(?:text|mbox)\{[^}]*$", answer[:m.start()])]
    if ints:
        m = rng.choice([ints[0], ints[-1]])
        n = int(m.group())
        new = n + 1 if n < 2 or rng.random() < 0.6 else n - 1
        options.append(answer[:m.start()] + str(new) + answer[m.end():])
    return rng.choice(options) if options else None


def gold_solution_pairs(rng: random.Random) -> list[dict]:
    rows = []
    path = math500_path()
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            found = boxes(item["solution"])
            if not found or len(set(found)) != 1 or found[-1] != item["answer"]:
                continue  # several different boxes: the gold's answer is not one value
            rows.append((item["solution"], item["answer"]))
    out = []
    for solution, answer in rows:
        equal = rng.random() < 0.55
        simple = simple_value(answer)
        if simple is not None:
            v, prefix, unit = simple
            value = v if equal else wrong_number(v, rng)
            if unit == "^\\circ" and rng.random() < 0.5:
                written = tex_number(value, rng) + "^\\circ"
            elif prefix and rng.random() < 0.5:
                written = "\\$" + (decimal(value) if terminating(value) else canonical(value))
            else:
                written = tex_number(value, rng)
            if written.startswith("\\$") and value < 0:
                continue
            plain = re.fullmatch(r"-?\d+(\.\d+)?", written) is not None
            out.append(pair("gold_solution", solution, respond(written, rng, plain_number=plain), equal))
            continue
        if answer in TEXT_SWAP:
            written = answer if equal else TEXT_SWAP[answer]
            word = re.sub(r"\\text\{(.*)\}", r"\1", written)
            if word.startswith("("):
                resp = respond(word.strip("()"), rng, rng.choice(["boxed_final", "qwen", "answer_colon"]))
            else:
                resp = rng.choice([f"{reasoning(rng)}\n\nThe answer is {word}.",
                                   f"{reasoning(rng)}\n\n**Answer:** {word}",
                                   respond(written, rng, "boxed_final")])
            out.append(pair("gold_solution", solution, resp, equal))
            continue
        written = cosmetic(answer, rng) if equal else mutate_answer(answer, rng)
        if written is None:
            continue
        out.append(pair("gold_solution", solution, respond(written, rng), equal))
    # short answer keys written as a sentence, several boxes, prose with inline maths
    nouns = [("area", "square units"), ("perimeter", "cm"), ("volume", "cubic feet"),
             ("distance", "miles"), ("total cost", "dollars"), ("height", "meters")]
    for _ in range(60):
        v = Fraction(rng.randint(2, 400))
        noun, unit = rng.choice(nouns)
        gold = rng.choice([f"The {noun} is $\\boxed{{{v}}}$ {unit}.",
                           f"Therefore the {noun} is $\\boxed{{{v}}}$.",
                           f"We find the {noun} to be ${v}$ {unit}.",
                           f"So the {noun} equals $\\boxed{{{v}\\text{{ {unit}}}}}$."])
        equal = rng.random() < 0.55
        value = v if equal else wrong_number(v, rng)
        written = str(value) if value.denominator == 1 else frac_tex(value)
        resp = rng.choice([respond(written, rng, plain_number=value.denominator == 1),
                           f"{reasoning(rng)}\n\nThe {noun} is ${written}$ {unit}."])
        out.append(pair("gold_solution", gold, resp, equal))
    for _ in range(40):
        r1, r2 = rng.sample(range(-9, 10), 2)
        gold = rng.choice([f"$\\boxed{{{r1}}}$ and $\\boxed{{{r2}}}$",
                           f"The solutions are $x = \\boxed{{{r1}}}$ and $x = \\boxed{{{r2}}}$.",
                           f"So $x = {r1}$ or $x = {r2}$."])
        kind = rng.random()
        if kind < 0.5:
            a, b = (r1, r2) if rng.random() < 0.5 else (r2, r1)
            resp = rng.choice([respond(f"{a}, {b}", rng, "boxed_final"),
                               f"{reasoning(rng)}\nThe roots are $x = {a}$ and $x = {b}$.",
                               f"{reasoning(rng)}\n\nAnswer: $x = {a}$ or $x = {b}$",
                               respond(f"\\{{{a}, {b}\\}}", rng, "qwen")])
            out.append(pair("gold_solution", gold, resp, True))
        elif kind < 0.75:
            resp = respond(str(rng.choice([r1, r2])), rng, rng.choice(["boxed_final", "qwen", "answer_colon"]))
            out.append(pair("gold_solution", gold, resp, False, "subset"))
        else:
            bad = rng.choice([v for v in range(-12, 13) if v not in (r1, r2)])
            resp = respond(f"{r1}, {bad}", rng, rng.choice(["boxed_final", "qwen"]))
            out.append(pair("gold_solution", gold, resp, False))
    for _ in range(40):
        p, q = rng.randint(1, 12), rng.randint(2, 13)
        v = Fraction(p, q)
        if v.denominator == 1:
            continue
        gold = rng.choice([f"Thus the probability is ${frac_tex(v)}$.",
                           f"Hence $P = {frac_tex(v)}$, as claimed.",
                           f"Dividing, we obtain $\\frac{{{v.numerator * 3}}}{{{v.denominator * 3}}} = \\boxed{{{frac_tex(v)}}}$."])
        equal = rng.random() < 0.55
        value = v if equal else wrong_number(v, rng)
        out.append(pair("gold_solution", gold, respond(tex_number(value, rng), rng), equal))
    return out


def line_tex(m: int, c: int) -> str:
    return f"{m}x {'+' if c > 0 else '-'} {abs(c)}"


# --- 2. the answer in the last maths span -------------------------------------------------

def last_math_span_pairs(rng: random.Random) -> list[dict]:
    out = []
    for i in range(170):
        shape = i % 5
        equal = rng.random() < 0.55
        if shape == 0:  # Thus $x = value$.
            v = Fraction(rng.randint(-30, 60), rng.choice([1, 1, 2, 3, 4, 5, 7]))
            value = v if equal else wrong_number(v, rng)
            trap = f"If we tried $x = {tex_number(v, rng)}$ directly, the check fails.\n" if not equal and rng.random() < 0.5 else ""
            lead = rng.choice(["Thus", "Therefore,", "Hence", "So", "This gives"])
            resp = f"{reasoning(rng)}\n{trap}{lead} $x = {tex_number(value, rng)}$."
            out.append(pair("last_math_span", canonical(v) if rng.random() < 0.7 else tex_number(v, rng), resp, equal))
        elif shape == 1:  # a display with an equation of a line
            m, c = rng.choice([k for k in range(-9, 10) if k not in (-1, 0, 1)]), rng.choice(
                [k for k in range(-12, 13) if k])
            gold_expr = line_tex(m, c)
            gold = rng.choice([gold_expr, f"y = {gold_expr}"])
            if equal:
                resp_expr = gold_expr
            else:
                resp_expr = line_tex(*rng.choice([(m, -c), (-m, c), (m, c + 1 if c != -1 else 2)]))
            resp = f"{reasoning(rng)}\nThe slope is ${m}$, so the line is\n\\[ y = {resp_expr} \\]"
            out.append(pair("last_math_span", gold, resp, equal))
        elif shape == 2:  # so the roots are $x=a$ and $x=b$
            a, b = rng.sample(range(-9, 10), 2)
            gold = rng.choice([f"{a}, {b}", f"\\{{{a}, {b}\\}}", f"x = {a}, x = {b}"])
            if equal:
                ra, rb = (a, b) if rng.random() < 0.5 else (b, a)
            else:
                ra, rb = rng.choice([(a, -b) if b else (a, b + 1), (a + 1, b) if a + 1 != b else (a + 2, b)])
            resp = f"Factoring, $(x - {ra})(x - {rb}) = 0$ up to signs.\n{reasoning(rng, 1)}\nso the roots are $x={ra}$ and $x={rb}$."
            out.append(pair("last_math_span", gold, resp, equal))
        elif shape == 3:  # a chain of equalities: the value after the last =
            x, k, c = rng.randint(1, 9), rng.randint(2, 9), rng.randint(1, 20)
            v = k * x + c
            value = v if equal else rng.choice([v + 1, v - 1, k * x - c, k + x + c])
            if value == v and not equal:
                value = v + 2
            resp = f"{reasoning(rng)}\nPutting it together, $f({x}) = {k} \\cdot {x} + {c} = {value}$."
            out.append(pair("last_math_span", str(v), resp, value == v))
        else:  # a probability / ratio stated in a last sentence without a box
            v = Fraction(rng.randint(1, 9), rng.randint(10, 40))
            value = v if equal else wrong_number(v, rng)
            noun = rng.choice(["probability", "ratio", "fraction of the area", "chance"])
            resp = f"{reasoning(rng)}\nHence the {noun} is ${frac_tex(value, rng.choice(['frac', 'dfrac']))}$."
            out.append(pair("last_math_span", frac_tex(v), resp, equal))
    return out


# --- 3. labelled answers ---------------------------------------------------------------------

def labelled_pairs(rng: random.Random) -> list[dict]:
    out = []
    names = [("p", "q"), ("a", "b"), ("m", "n"), ("x", "y"), ("h", "k")]
    for _ in range(40):
        (s, t), (u, v) = rng.choice(names), rng.sample(range(-12, 20), 2)
        label = f"({s}, {t}) = "
        equal = rng.random() < 0.55
        ru, rv = (u, v) if equal else rng.choice([(v, u), (u, -v) if v else (u, 1), (u + 1, v)])
        gold = rng.choice([f"({u}, {v})", f"{label}({u}, {v})", f"{s} = {u}, {t} = {v}"])
        ans = rng.choice([f"{label}({ru}, {rv})", f"({ru},{rv})", f"{s} = {ru}, {t} = {rv}"])
        shape = "swapped_tuple" if (ru, rv) == (v, u) else None
        out.append(pair("labelled", gold, respond(ans, rng, rng.choice(["boxed_final", "qwen", "bare", "answer_colon"])),
                        equal, None if equal else shape))
    for _ in range(20):
        ab, cd = rng.randint(2, 30), rng.randint(2, 30)
        if ab == cd:
            continue
        gold = rng.choice([f"AB = {ab}, CD = {cd}", f"{ab}, {cd}"])
        equal = rng.random() < 0.55
        if equal:
            ans = rng.choice([f"AB = {ab}, CD = {cd}", f"AB={ab},\\ CD={cd}", f"CD = {cd}, AB = {ab}"]) \
                if gold.startswith("AB") or rng.random() < 0.5 else f"{ab}, {cd}"
            if ans.startswith("CD") and not gold.startswith("AB"):
                ans = f"AB = {ab}, CD = {cd}"
        else:
            # swapped values are wrong only when the gold names which is which
            ans = rng.choice([f"AB = {cd}, CD = {ab}", f"AB = {ab}, CD = {cd + 1}"]) if gold.startswith("AB") \
                else f"AB = {ab}, CD = {cd + 1}"
        out.append(pair("labelled", gold, respond(ans, rng, rng.choice(["boxed_final", "sentence", "bare"])), equal))
    for _ in range(20):
        a, b = rng.sample(range(1, 15), 2)
        g = gcd(a, b)
        a, b = a // g, b // g
        if a == b:
            continue
        gold = rng.choice([f"V_1 : V_2 = {a} : {b}", f"{a}:{b}", f"{a} : {b}"])
        equal = rng.random() < 0.55
        ans = rng.choice([f"{a}:{b}", f"V_1 : V_2 = {a} : {b}", f"{a} : {b}"]) if equal else f"{b}:{a}"
        out.append(pair("labelled", gold, respond(ans, rng, rng.choice(["boxed_final", "bare", "bold"])), equal,
                        None if equal else "swapped_tuple"))
    for _ in range(35):
        f = rng.choice(["f(x)", "g(x)", "p(x)", "h(t)"])
        var = f[2]
        m, c = rng.randint(2, 9), rng.randint(1, 15)
        expr = f"{m}{var} - {c}"
        gold = rng.choice([expr, f"{f} = {expr}"])
        equal = rng.random() < 0.55
        rexpr = expr if equal else rng.choice([f"{m}{var} + {c}", f"{m + 1}{var} - {c}", f"{c}{var} - {m}" if c != m else f"{m}{var}"])
        ans = rng.choice([rexpr, f"{f} = {rexpr}"])
        out.append(pair("labelled", gold, respond(ans, rng, rng.choice(["boxed_final", "qwen", "bare", "sentence"])), equal))
    for _ in range(35):
        var = rng.choice(["k", "n", "a", "x", "t", "r"])
        v = Fraction(rng.randint(-20, 50), rng.choice([1, 1, 1, 2, 3]))
        equal = rng.random() < 0.55
        value = v if equal else wrong_number(v, rng)
        gold = rng.choice([canonical(v), f"{var} = {canonical(v)}", f"{var}={canonical(v)}"])
        ans = rng.choice([tex_number(value, rng), f"{var} = {tex_number(value, rng)}"])
        out.append(pair("labelled", gold, respond(ans, rng), equal))
    # both labelled with different names: a different statement
    for _ in range(10):
        v = rng.randint(1, 30)
        s, t = rng.sample(["x", "y", "k", "n"], 2)
        out.append(pair("labelled", f"{s} = {v}", respond(f"{t} = {v}", rng, rng.choice(["boxed_final", "bare"])), False))
    return out


# --- 4. several answers in one response ---------------------------------------------------

def several_answers_pairs(rng: random.Random) -> list[dict]:
    out = []
    for _ in range(50):
        a, b = sorted(rng.sample(range(-15, 16), 2))
        gold = rng.choice([f"{a}, {b}", f"\\{{{a}, {b}\\}}", f"{a} \\text{{ and }} {b}", f"x = {a}, x = {b}"])
        equal = rng.random() < 0.55
        x, y = (a, b) if rng.random() < 0.5 else (b, a)
        if equal:
            resp = rng.choice([f"{reasoning(rng)}\nSo $x = \\boxed{{{x}}}$ or $x = \\boxed{{{y}}}$.",
                               f"{reasoning(rng)}\n\n$\\boxed{{{x}}}$, $\\boxed{{{y}}}$",
                               f"{reasoning(rng)}\n\nThe solutions are $\\boxed{{{x}}}$ and $\\boxed{{{y}}}$."])
            out.append(pair("several_answers", gold, resp, True))
        else:
            z = rng.choice([v for v in range(-16, 17) if v not in (a, b)])
            resp = rng.choice([f"{reasoning(rng)}\nSo $x = \\boxed{{{x}}}$ or $x = \\boxed{{{z}}}$.",
                               f"{reasoning(rng)}\n\nThe only solution is $\\boxed{{{x}}}$."])
            out.append(pair("several_answers", gold, resp, False, "subset" if "only" in resp else None))
    for _ in range(60):
        v = Fraction(rng.randint(-20, 90), rng.choice([1, 1, 1, 2, 5]))
        first = wrong_number(v, rng)
        fix = rng.choice(["Wait, I made an arithmetic error above. Let me redo the last step.",
                          "Hmm, that does not satisfy the second condition. Rechecking:",
                          "Actually, I dropped a factor. Correcting it:"])
        final = rng.choice([f"The final answer is ${canonical(v)}$.", f"Final answer: {tex_number(v, rng)}",
                            f"So the final answer is $\\boxed{{{canonical(v)}}}$."])
        resp = f"{reasoning(rng)}\nThis gives $\\boxed{{{canonical(first)}}}$.\n\n{fix}\n{reasoning(rng, 1)}\n{final}"
        if rng.random() < 0.5:
            out.append(pair("several_answers", canonical(v), resp, True))
        else:
            out.append(pair("several_answers", canonical(first), resp, False))
    for _ in range(25):
        v = Fraction(rng.randint(1, 99))
        resp = f"{reasoning(rng)}\n\nThe answer is $\\boxed{{{v}}}$.\n\n**Final Answer**\nThe final answer is $\\boxed{{{v}}}$."
        equal = rng.random() < 0.6
        out.append(pair("several_answers", str(v if equal else wrong_number(v, rng)), resp, equal))
    return out


# --- 5. escaped LaTeX ------------------------------------------------------------------------

def escaped_pairs(rng: random.Random) -> list[dict]:
    out = []
    for _ in range(120):
        shape = rng.randrange(5)
        equal = rng.random() < 0.55
        if shape == 0:
            v = Fraction(rng.randint(1, 30), rng.randint(2, 17))
            if v.denominator == 1:
                continue
            value = v if equal else wrong_number(v, rng)
            gold, ans = frac_tex(v), tex_number(value, rng)
        elif shape == 1:
            a, b = rng.sample(range(-9, 15), 2)
            gold = f"\\left( {a}, {b} \\right)"
            ra, rb = (a, b) if equal else rng.choice([(b, a), (a, b + 1)])
            ans = rng.choice([f"({ra}, {rb})", f"\\left( {ra}, {rb} \\right)"])
        elif shape == 2:
            k, n = rng.randint(2, 9), rng.choice([2, 3, 5, 6, 7, 10, 11])
            gold = f"{k}\\sqrt{{{n}}}"
            ans = gold if equal else rng.choice([f"{k + 1}\\sqrt{{{n}}}", f"{k}\\sqrt{{{n + 1}}}", f"\\sqrt{{{k * n}}}"])
            if equal and rng.random() < 0.5:
                ans = f"\\sqrt{{{k * k * n}}}"
        elif shape == 3:
            k = rng.randint(2, 12)
            q = rng.choice([2, 3, 4, 6])
            gold = f"\\frac{{{k}\\pi}}{{{q}}}"
            ans = gold if equal else rng.choice([f"\\frac{{{k}\\pi}}{{{q + 1}}}", f"\\frac{{{q}\\pi}}{{{k}}}" if k != q else f"{k}\\pi"])
            if equal and rng.random() < 0.5:
                ans = f"\\dfrac{{{k}}}{{{q}}}\\pi"
        else:
            a, b = rng.randint(1, 9), rng.randint(1, 9)
            gold = f"\\begin{{pmatrix}} {a} \\\\ {b} \\end{{pmatrix}}"
            ra, rb = (a, b) if equal else ((b, a) if a != b else (a, b + 1))
            ans = f"\\begin{{pmatrix}} {ra} \\\\ {rb} \\end{{pmatrix}}" if rng.random() < 0.7 else f"({ra}, {rb})"
        # copied out of JSON or a Python string: every backslash doubled, in the gold, the
        # response or both
        where = rng.choice(["gold", "response", "both"])
        if where in ("gold", "both"):
            gold = gold.replace("\\", "\\\\")
        resp = respond(ans, rng, rng.choice(["boxed_final", "qwen", "bare", "bare_dollar", "answer_colon", "minerva"]))
        if where in ("response", "both"):
            resp = resp.replace("\\", "\\\\")
        out.append(pair("escaped_latex", gold, resp, equal))
    return out


# --- 6. choice golds with option text ------------------------------------------------------

QUESTIONS = [
    ("How far apart are the towns?", ["30 km", "35 km", "40 km", "45 km"]),
    ("Which city is the capital of Portugal?", ["Madrid", "Lisbon", "Porto", "Seville"]),
    ("What is the value of $2^5$?", ["16", "25", "32", "64"]),
    ("Which gas do plants absorb?", ["Oxygen", "Nitrogen", "Carbon dioxide", "Helium"]),
    ("What is $\\frac{3}{4}$ of 20?", ["12", "15", "16", "18"]),
    ("Which organelle makes ATP?", ["Nucleus", "Ribosome", "Mitochondrion", "Golgi body"]),
    ("Which number is prime?", ["21", "27", "29", "33"]),
    ("Who wrote 'Hamlet'?", ["Marlowe", "Shakespeare", "Jonson", "Milton"]),
    ("What is the slope of $y=3x+1$?", ["$1$", "$3$", "$\\frac{1}{3}$", "$-3$"]),
    ("Which planet is largest?", ["Mars", "Venus", "Jupiter", "Saturn"]),
    ("Which is the boiling point of water at sea level?", ["90 °C", "100 °C", "110 °C", "120 °C"]),
    ("Which value of $x$ solves $2x+1=9$?", ["3", "4", "5", "8"]),
    ("Which law relates current and voltage?", ["Hooke's law", "Ohm's law", "Boyle's law", "Snell's law"]),
    ("Which of these is a mammal?", ["Shark", "Dolphin", "Trout", "Octopus"]),
    ("What is the area of a 3 by 7 rectangle?", ["10", "20", "21", "24"]),
]
OPTION_FORMATS = ["({L}) {T}", "{L}. {T}", "{L}: {T}", "{L}) {T}"]


def choice_pairs(rng: random.Random) -> list[dict]:
    out = []
    for _ in range(170):
        _, options = rng.choice(QUESTIONS)
        letters = "ABCD"
        gi = rng.randrange(4)
        gl, gt = letters[gi], options[gi]
        gold = rng.choice(OPTION_FORMATS).format(L=gl, T=gt)
        equal = rng.random() < 0.5
        ci = gi if equal else rng.choice([i for i in range(4) if i != gi])
        cl, ct = letters[ci], options[ci]
        others = [letters[i] for i in range(4) if i != ci]
        o1, o2 = rng.sample(others, 2)
        style = rng.randrange(9)
        if style == 0:
            resp = f"{cl}, because {o1} and {o2} both fail the condition."
        elif style == 1:
            lines = [f"{letters[i]}) {options[i]} — {'this fits' if i == ci else 'does not fit'}." for i in range(4)]
            resp = "Let's check each option.\n" + "\n".join(lines) + f"\n\nSo the answer is {cl}."
        elif style == 2:
            resp = f"The answer is ({cl}) {ct}."
        elif style == 3:
            resp = f"Option {o1} is tempting, but it ignores the second condition. Option {o2} is too small.\n\n**Answer: {cl}**"
        elif style == 4:
            resp = f"{o1}项和{o2}项都不符合题意。\n答案：{cl}"
        elif style == 5:
            resp = f"分析：{o1}错误，{o2}错误，{cl}正确。\n故选{cl}。"
        elif style == 6:
            resp = f"{reasoning(rng)}\n\nThe correct option is $\\boxed{{{cl}}}$."
        elif style == 7:
            resp = f"{cl}. {ct}\n\nThe other choices ({o1}, {o2}) contradict the given data."
        else:
            resp = f"At first I considered {o1}, but checking it against the data rules it out.\nThe answer is {cl}."
        out.append(pair("choice_text", gold, resp, equal))
    return out


# --- 7. sets ---------------------------------------------------------------------------------

def element(rng: random.Random) -> tuple[str, object]:
    """(LaTeX, a key that is equal exactly when the values are)."""
    kind = rng.randrange(3)
    if kind == 0:
        n = rng.randint(-12, 15)
        return str(n), Fraction(n)
    if kind == 1:
        v = Fraction(rng.choice([1, 2, 3, 5, 7]), rng.choice([2, 3, 4]))
        return canonical(v), v
    r = rng.choice([2, 3, 5, 7])
    return f"\\sqrt{{{r}}}", ("sqrt", r)


def abs_key(key: object) -> object:
    return abs(key) if isinstance(key, Fraction) else key


def set_forms(elems: list[str], rng: random.Random) -> str:
    e = elems[:]
    rng.shuffle(e)
    return rng.choice([f"\\{{{', '.join(e)}\\}}", "{" + ", ".join(e) + "}", ", ".join(e), "; ".join(e),
                       " \\text{ or } ".join(f"x = {x}" for x in e), ", ".join(f"x = {x}" for x in e)])


def sets_pairs(rng: random.Random) -> list[dict]:
    out = []
    for _ in range(70):
        drawn = [element(rng) for _ in range(rng.randint(2, 4))]
        if len({abs_key(k) for _, k in drawn}) < len(drawn) or any(k == 0 for _, k in drawn):
            continue  # repeated values, or x with -x (a sign flip below would repeat one)
        elems = [e for e, _ in drawn]
        gold = set_forms(elems, rng)
        equal = rng.random() < 0.5
        if equal:
            resp_elems = elems + ([rng.choice(elems)] if rng.random() < 0.2 else [])
            ans = set_forms(resp_elems, rng) if len(resp_elems) == len(elems) else \
                f"\\{{{', '.join(resp_elems)}\\}}"
            shape = None
        else:
            kind = rng.randrange(3)
            if kind == 0:
                ans, shape = set_forms(elems[:-1], rng) if len(elems) > 2 else elems[0], "subset"
            elif kind == 1:
                extra = str(rng.randint(20, 30))
                ans, shape = set_forms(elems + [extra], rng), None
            else:
                i = rng.randrange(len(elems))
                e = elems[i]
                flipped = e[1:] if e.startswith("-") else ("-" + e if e != "0" else "1")
                ans, shape = set_forms(elems[:i] + [flipped] + elems[i + 1:], rng), "wrong_sign"
        out.append(pair("sets", gold, respond(ans, rng, rng.choice(["boxed_final", "qwen", "bare", "answer_colon", "sentence"])),
                        equal, None if equal else shape))
    for _ in range(40):  # plus-minus
        c, r = rng.randint(-5, 6), rng.choice(["2", "3", "\\sqrt{2}", "\\sqrt{5}", "2\\sqrt{3}"])
        base = f"{c} \\pm {r}" if c else f"\\pm {r}"
        expanded = [f"{c} + {r}", f"{c} - {r}"] if c else [r, f"-{r}"]
        equal = rng.random() < 0.55
        if rng.random() < 0.5:
            gold, ans = base, (set_forms(expanded, rng) if equal else expanded[0])
        else:
            gold, ans = set_forms(expanded, rng), (base if equal else expanded[rng.randrange(2)])
        out.append(pair("sets", gold, respond(ans, rng, rng.choice(["boxed_final", "bare", "qwen"])), equal,
                        None if equal else "subset"))
    for _ in range(40):  # sets of pairs
        p1 = (rng.randint(-5, 6), rng.randint(-5, 6))
        p2 = (rng.randint(-5, 6), rng.randint(-5, 6))
        if p1 == p2 or p1[0] == p1[1] or p2 == p1[::-1]:
            continue
        fmt = lambda p: f"({p[0]}, {p[1]})"  # noqa: E731
        gold = rng.choice([f"{fmt(p1)}, {fmt(p2)}", f"\\{{{fmt(p1)}, {fmt(p2)}\\}}", f"{fmt(p1)} \\text{{ or }} {fmt(p2)}"])
        equal = rng.random() < 0.5
        if equal:
            a, b = (p1, p2) if rng.random() < 0.5 else (p2, p1)
            ans, shape = rng.choice([f"{fmt(a)} or {fmt(b)}", f"{fmt(a)}, {fmt(b)}", f"\\{{{fmt(a)}, {fmt(b)}\\}}"]), None
        elif rng.random() < 0.5:
            ans, shape = f"{fmt(p1[::-1])} or {fmt(p2)}", "swapped_tuple"
        else:
            ans, shape = fmt(p1), "subset"
        resp = rng.choice([f"{reasoning(rng)}\nThe solutions are ${ans}$.", respond(ans, rng, "boxed_final")])
        out.append(pair("sets", gold, resp, equal, shape))
    return out


# --- 8. numbers ------------------------------------------------------------------------------

def numbers_pairs(rng: random.Random) -> list[dict]:
    out = []
    for _ in range(45):  # decimal commas
        whole, frac_digits = rng.randint(0, 99), rng.choice(["5", "25", "75", "1", "05", "4", "125", "2"])
        v = Fraction(f"{whole}.{frac_digits}")
        gold = decimal(v) if rng.random() < 0.7 else tex_number(v, rng)
        comma = f"{whole},{frac_digits}"
        if len(frac_digits) == 3:
            continue  # '12,125' reads as a thousands group: left out as ambiguous
        equal = rng.random() < 0.6
        if equal:
            ans = comma + rng.choice(["", " €", " m", " kg"])
            out.append(pair("numbers", gold, rng.choice([ans, respond(ans, rng, rng.choice(["metamath", "answer_colon", "zh", "bare"]))]), True))
        else:
            w = wrong_number(v, rng)
            if w < 0 or not terminating(w):
                continue
            ans = decimal(w).replace(".", ",")
            out.append(pair("numbers", gold, respond(ans, rng, rng.choice(["metamath", "answer_colon", "bare"])), False, "near_miss"))
    for _ in range(20):  # a decimal comma must not turn into a thousands group
        d = rng.choice(["1", "2", "5", "25"])
        v = Fraction(f"0.{d}")
        out.append(pair("numbers", decimal(v), rng.choice([f"0,{d}", respond(f"0,{d}", rng, "metamath")]), True))
        out.append(pair("numbers", d, rng.choice([f"0,{d}", respond(f"0,{d}", rng, "answer_colon")]), False))
    for _ in range(70):  # thousands separators, spaces, currency, units
        n = rng.randint(1000, 9_999_999)
        grouped = f"{n:,}"
        form = rng.choice([grouped, grouped.replace(",", "{,}"), grouped.replace(",", " "),
                           grouped.replace(",", "\\,"), grouped.replace(",", ",\\!")])
        gold = rng.choice([str(n), grouped])
        equal = rng.random() < 0.55
        if not equal:
            m = rng.choice([n + 1, n - 1, n * 10, n // 10, n + 1000])
            form = f"{m:,}"
            form = rng.choice([form, form.replace(",", "{,}"), form.replace(",", " ")])
        unit = rng.choice(["", " dollars", " km", " people", " m^2"])
        money = rng.random() < 0.3
        ans = (f"\\${form}" if money else form + unit)
        if money:
            value = n if equal else m
            text = (f"{reasoning(rng)}\nIn total she pays ${rng.choice([f'{value:,}', str(value)])}." if rng.random() < 0.5
                    else f"{reasoning(rng)}\nShe pays ${value:,} in total.\n#### {value}")
        else:
            text = respond(ans, rng, rng.choice(["metamath", "answer_colon", "bare", "boxed_final", "qwen"]))
        out.append(pair("numbers", gold, text, equal, None if equal else "near_miss"))
    for _ in range(45):  # a price or a speed after the number
        cents = rng.choice([0, 5, 20, 50, 75, 99])
        whole = rng.randint(1, 80)
        v = Fraction(whole * 100 + cents, 100)
        gold = decimal(v) if rng.random() < 0.7 else f"{whole}.{cents:02d}"
        equal = rng.random() < 0.55
        w = v if equal else rng.choice([v + 1, v * 10, Fraction(whole * 100 + cents + 10, 100)])
        s = f"{decimal(w)}" if w.denominator == 1 else f"{int(w)}.{round((w - int(w)) * 100):02d}"
        ans = rng.choice([s.replace(".", ",") + " €", "€" + s, s + " EUR", f"\\${s}", s + " km/h", s + "\\text{ km/h}"])
        out.append(pair("numbers", gold, respond(ans, rng, rng.choice(["bare", "answer_colon", "sentence", "boxed_final"])), equal))
    for _ in range(25):  # integers written with a trailing .0 or a sign, and off-by-one mistakes
        n = rng.randint(-500, 5000)
        equal = rng.random() < 0.5
        ans = rng.choice([f"{n}.0", f"{n}.00", str(n)]) if equal else str(n + rng.choice([-1, 1, 10]))
        out.append(pair("numbers", str(n), respond(ans, rng, "gsm8k" if rng.random() < 0.4 else None, plain_number=True),
                        equal, None if equal else "near_miss"))
    return out


# --- 9. intervals and inequalities ---------------------------------------------------------

LE, GE = "\\le", "\\ge"


def ineq(lo, hi, lo_closed, hi_closed, var="x"):
    if lo is None:
        return f"{var} {LE if hi_closed else '<'} {hi}"
    if hi is None:
        return f"{var} {GE if lo_closed else '>'} {lo}"
    return f"{lo} {LE if lo_closed else '<'} {var} {LE if hi_closed else '<'} {hi}"


def interval(lo, hi, lo_closed, hi_closed):
    left = "(-\\infty" if lo is None else ("[" if lo_closed else "(") + str(lo)
    right = "\\infty)" if hi is None else str(hi) + ("]" if hi_closed else ")")
    return f"{left}, {right}"


def intervals_pairs(rng: random.Random) -> list[dict]:
    out = []
    for _ in range(150):
        a, b = sorted(rng.sample(range(-10, 12), 2))
        shape = rng.randrange(4)
        lo, hi = (a, b) if shape < 2 else ((None, b) if shape == 2 else (a, None))
        lc, hc = rng.random() < 0.5, rng.random() < 0.5
        var = rng.choice(["x", "x", "t", "a"])
        iv, iq = interval(lo, hi, lc, hc), ineq(lo, hi, lc, hc, var)
        if lo is not None and hi is not None and not lc and not hc:
            # a bare (a, b) can also be read as a point: only written with the variable
            iv = f"{var} \\in {iv}"
        equal = rng.random() < 0.5
        if equal:
            gold, ans = (iv, iq) if rng.random() < 0.5 else (iq, iv)
            if rng.random() < 0.15 and hi is not None and lo is None:
                ans = f"-{var} {GE if hc else '>'} {-hi}"  # -x > -3 is x < 3
                gold = iv
            out.append(pair("intervals", gold, respond(ans, rng, rng.choice(["boxed_final", "bare", "qwen", "sentence"])), True))
        else:
            mistake = rng.randrange(3)
            if mistake == 0 and (lo is not None and hi is not None):
                bad = interval(lo, hi, not lc, hc) if rng.random() < 0.5 else interval(lo, hi, lc, not hc)
                if lo is not None and hi is not None and lc and hc and rng.random() < 0.5:
                    bad = interval(lo, hi, False, False)
                shape_tag = "bracket_type"
            elif mistake == 1:
                nl, nh = (lo, hi + 1) if hi is not None else (lo - 1, hi)
                bad, shape_tag = interval(nl, nh, lc, hc), "near_miss"
            else:
                if lo is None:
                    bad = interval(hi, None, hc, False)
                elif hi is None:
                    bad = interval(None, lo, False, lc)
                else:
                    bad = interval(lo, hi, not lc, not hc)
                shape_tag = "bracket_type" if lo is not None and hi is not None else None
            if rng.random() < 0.5:
                gold, ans = iq, bad
            else:
                gold, ans = iv, bad
            out.append(pair("intervals", gold, respond(ans, rng, rng.choice(["boxed_final", "bare", "qwen"])), False, shape_tag))
    for _ in range(30):  # 2 <= |z| <= 5 and 0 < g(x) < 4
        a, b = sorted(rng.sample(range(1, 10), 2))
        equal = rng.random() < 0.5
        union = f"[-{b}, -{a}] \\cup [{a}, {b}]"
        if rng.random() < 0.5:
            gold = union
            ans = f"{a} \\le |z| \\le {b}" if equal else f"{a} \\le z \\le {b}"
            out.append(pair("intervals", gold, respond(ans, rng, rng.choice(["boxed_final", "bare"])), equal,
                            None if equal else "subset"))
        else:
            gold = f"({a}, {b})" if rng.random() < 0.3 else f"({a}, {b}]"
            closed_hi = gold.endswith("]")
            ans = f"{a} < g(x) {LE if closed_hi else '<'} {b}" if equal else f"{a} \\le g(x) {LE if closed_hi else '<'} {b}"
            out.append(pair("intervals", gold, respond(ans, rng, rng.choice(["boxed_final", "sentence"])), equal,
                            None if equal else "bracket_type"))
    return out


# --- 10. approximations, 11. percent in words, 12. mixed numbers, 13. notation ------------

def approx_pairs(rng: random.Random) -> list[dict]:
    out = []
    for _ in range(90):
        kind = rng.randrange(3)
        equal = rng.random() < 0.55
        if kind == 0:
            v = Fraction(rng.randint(1, 9), rng.choice([3, 6, 7, 9, 11]))
            if terminating(v) or v.denominator == 1:
                continue
            value = v if equal else wrong_number(v, rng)
            approx = f"{float(value):.{rng.choice([2, 3])}f}"
            gold, written = frac_tex(v), f"{canonical(value)} \\approx {approx}"
        elif kind == 1:
            n, k = rng.choice([2, 3, 5, 7, 10]), rng.randint(1, 6)
            gold = f"{k}\\sqrt{{{n}}}" if k > 1 else f"\\sqrt{{{n}}}"
            val = k * n ** 0.5
            if equal:
                written = f"{gold} \\approx {val:.2f}"
            else:
                written = f"{k + 1}\\sqrt{{{n}}} \\approx {(k + 1) * n ** 0.5:.2f}"
        else:
            k = rng.randint(2, 30)
            gold = f"{k}\\pi"
            if equal:
                written = f"{k}\\pi \\approx {k * 3.14159265:.2f}"
            else:
                written = f"{2 * k}\\pi \\approx {2 * k * 3.14159265:.2f}"
        lead = rng.choice(["", "x = ", "A = ", "V = "])
        resp = rng.choice([f"{reasoning(rng)}\nSo ${lead}{written}$.",
                           respond(written, rng, rng.choice(["boxed_final", "qwen", "answer_colon"])),
                           f"{reasoning(rng)}\nThe exact value is ${written}$."])
        out.append(pair("approx", gold, resp, equal))
    return out


def percent_pairs(rng: random.Random) -> list[dict]:
    out = []
    for _ in range(90):
        v = rng.choice([Fraction(rng.randint(1, 99)), Fraction(rng.randint(1, 199), 2)])
        gold = rng.choice([f"{decimal(v)}\\%", f"{decimal(v)}%"])
        equal = rng.random() < 0.55
        w = v if equal else rng.choice([100 - v if v != 50 else v + 5, v + 1, v / 10, v * 2])
        word = rng.choice(["percent", "pct", "percentage points", "per cent", "%"])
        ans = f"{decimal(w)} {word}" if word != "%" else f"{decimal(w)}%"
        resp = rng.choice([f"{reasoning(rng)}\nThe share rose by {ans}.", f"{reasoning(rng)}\nThe answer is {ans}.",
                           f"{reasoning(rng)}\n#### {ans}" if word != "percentage points" else ans, ans])
        out.append(pair("percent_words", gold, resp, equal))
    return out


def mixed_number_pairs(rng: random.Random) -> list[dict]:
    out = []
    for _ in range(90):
        whole, q = rng.randint(1, 12), rng.choice([2, 3, 4, 5, 8])
        p = rng.randint(1, q - 1)
        f = Fraction(p, q)
        p, q = f.numerator, f.denominator
        sign = -1 if rng.random() < 0.2 else 1
        v = sign * (whole + f)
        mixed = ("-" if sign < 0 else "") + rng.choice([f"{whole}\\frac{{{p}}}{{{q}}}", f"{whole} \\frac{{{p}}}{{{q}}}",
                                                         f"{whole}\\tfrac{{{p}}}{{{q}}}", f"{whole}\\frac{p}{q}"])
        equal = rng.random() < 0.55
        if equal:
            if rng.random() < 0.5:
                gold, ans = tex_number(v, rng), mixed
            else:
                gold, ans = mixed, tex_number(v, rng)
            out.append(pair("mixed_numbers", gold, respond(ans, rng), True))
        else:
            mistake = rng.randrange(3)
            if mistake == 0:  # read as a product
                gold, ans = canonical(sign * whole * f), mixed
            elif mistake == 1:  # the sign applied to the whole part only
                if sign > 0:
                    continue
                gold, ans = canonical(-whole + f), mixed
            else:
                gold, ans = canonical(v), mixed.replace(f"{whole}", f"{whole + 1}", 1)
            out.append(pair("mixed_numbers", gold, respond(ans, rng), False))
    return out


def notation_pairs(rng: random.Random) -> list[dict]:
    out = []
    trig = [("\\sin", 30, Fraction(1, 2)), ("\\cos", 60, Fraction(1, 2)), ("\\tan", 45, Fraction(1)),
            ("\\sin", 90, Fraction(1)), ("\\cos", 180, Fraction(-1)), ("\\cos", 90, Fraction(0)),
            ("\\sin", 150, Fraction(1, 2)), ("\\tan", 135, Fraction(-1))]
    for _ in range(110):
        kind = rng.randrange(6)
        equal = rng.random() < 0.55
        if kind == 0:
            lo, hi = rng.randint(0, 3), rng.randint(4, 12)
            term, f = rng.choice([("k", lambda k: k), ("k^2", lambda k: k * k), ("(2k+1)", lambda k: 2 * k + 1)])
            total = sum(f(k) for k in range(lo, hi + 1))
            expr = f"\\sum_{{k={lo}}}^{{{hi}}} {term}"
            value = total if equal else total - f(hi)
            gold, ans = (str(value), expr) if rng.random() < 0.6 else (expr, str(value))
            gold_is_total = gold == str(value)
            out.append(pair("notation", gold if gold_is_total else expr, respond(ans if gold_is_total else str(value), rng),
                            equal, None if equal else "near_miss"))
        elif kind == 1:
            hi = rng.randint(3, 7)
            total = 1
            for k in range(1, hi + 1):
                total *= k
            expr = f"\\prod_{{k=1}}^{{{hi}}} k"
            value = total if equal else total // hi
            out.append(pair("notation", str(value), respond(expr, rng), equal))
        elif kind == 2:
            fn, deg, v = rng.choice(trig)
            expr = rng.choice([f"{fn}({deg}^\\circ)", f"{fn} {deg}^\\circ", f"{fn}({deg}^{{\\circ}})"])
            value = v if equal else rng.choice([w for w in (v + 1, -v, Fraction(1, 2) if v != Fraction(1, 2) else Fraction(1)) if w != v])
            if rng.random() < 0.5:
                out.append(pair("notation", canonical(value), respond(expr, rng), equal))
            else:
                out.append(pair("notation", expr, respond(tex_number(value, rng), rng), equal))
        elif kind == 3:
            var = rng.choice(["x", "\\theta", "t"])
            pairs = [(f"\\cos {var}", f"\\sin(90^\\circ - {var})"), (f"\\sin {var}", f"\\cos(90^\\circ - {var})")]
            a, b = rng.choice(pairs)
            if not equal:
                b = b.replace("\\sin(90", "\\cos(90") if b.startswith("\\sin") else b.replace("\\cos(90", "\\sin(90")
                out.append(pair("notation", a, respond(b, rng, rng.choice(["boxed_final", "bare"])), False))
            else:
                out.append(pair("notation", a, respond(b, rng, rng.choice(["boxed_final", "bare"])), True))
        elif kind == 4:
            p, q = rng.randint(1, 9), rng.randint(2, 9)
            v = Fraction(p, q)
            written = f"\\frac{p}{q}"
            value = v if equal else Fraction(q, p) if p != q else v + 1
            if value == v and not equal:
                continue
            gold = tex_number(value, rng) if rng.random() < 0.5 else canonical(value)
            out.append(pair("notation", gold, respond(written, rng), equal))
        else:
            n, k = rng.randint(4, 10), rng.randint(1, 3)
            value = comb(n, k) if equal else comb(n, k) + rng.choice([1, -1, n])
            out.append(pair("notation", str(value), respond(f"\\binom{{{n}}}{{{k}}}", rng), equal))
    return out


# --- false-positive shapes ------------------------------------------------------------------

def false_positive_pairs(rng: random.Random) -> list[dict]:
    out = []
    vars_ = ["x", "y", "t", "a"]  # not n: read as a natural number, |n| = n

    def add(gold, ans, shape, equal=False):
        style = rng.choice(["bare", "bare", "boxed_final", "qwen", "answer_colon", "bare_dollar"])
        out.append(pair("false_positives", gold, respond(ans, rng, style), equal, None if equal else shape))

    for v in vars_:
        add(v, f"|{v}|", "abs")
        add(f"|{v}|", v, "abs")
        add(f"{v} - 1", f"|{v} - 1|", "abs")
        add(f"2{v}", f"2\\left|{v}\\right|", "abs")
        add(v, f"\\sqrt{{{v}^2}}", "sqrt_square")
        add(f"{v} - 3", f"\\sqrt{{({v} - 3)^2}}", "sqrt_square")
        add(f"2{v}", f"\\sqrt{{4{v}^2}}", "sqrt_square")
        add(v, f"{v} + 10^{{-12}}", "tiny_offset")
        add(f"{v}^2", f"{v}^2 + 10^{{-10}}", "tiny_offset")
        add(f"{v}", f"{v}(1 + 10^{{-9}})", "tiny_offset")
        add(f"({v}+1)^2", f"{v}^2 + 1", "wrong_sign" if False else "near_miss")
        add(f"{v} - 1", f"1 - {v}", "wrong_sign")
        add(f"\\frac{{1}}{{{v}+1}}", f"\\frac{{1}}{{{v}}} + 1", "near_miss")
        add(f"{v}^2 - 1", f"({v} - 1)^2", "near_miss")
    for c in ["1", "\\pi", "\\sqrt{2}", "5", "e"]:
        add(c, f"{c} + 10^{{-12}}", "tiny_offset")
        add(c, f"{c} - 10^{{-15}}", "tiny_offset")
    for n in [10, 25, 40, 75, 3, 12]:
        add(str(n), f"{n}\\%", "percent_vs_plain")
        add(str(n), f"{n}%", "percent_vs_plain")
    for _ in range(20):
        a, b = sorted(rng.sample(range(-9, 10), 2))
        add(f"[{a}, {b}]", f"({a}, {b})", "bracket_type")
        add(f"[{a}, {b})", f"({a}, {b}]", "bracket_type")
    for _ in range(20):
        n = rng.randint(1000, 99999)
        add(str(n), str(n + rng.choice([1, -1])), "near_miss")
        v = Fraction(rng.randint(1, 999), 1000)
        add(decimal(v), decimal(v + Fraction(1, 1000)), "near_miss")
    for _ in range(20):
        v = Fraction(rng.randint(1, 30), rng.choice([1, 2, 3, 7]))
        add(canonical(v), canonical(-v), "wrong_sign")
        a, b = rng.sample(range(-9, 10), 2)
        add(f"({a}, {b})", f"({b}, {a})", "swapped_tuple")
        c = rng.randint(-9, 10)
        if len({a, b, c}) == 3:
            add(f"({a}, {b}, {c})", f"({c}, {b}, {a})", "swapped_tuple")
            add(f"\\{{{a}, {b}, {c}\\}}", f"\\{{{a}, {b}\\}}", "subset")
            add(f"{a}, {b}, {c}", f"{a}, {c}", "subset")
        if b != 0:
            add(f"({a}, {b})", f"({a}, {-b})", "wrong_sign")
    for c in ["\\pi", "\\frac{22}{7}"]:
        add("\\pi" if c != "\\pi" else "\\frac{22}{7}", c, "near_miss")
    # and the same answers written correctly stay equal (so a grader cannot pass by refusing)
    for v in vars_:
        add(v, v, None, equal=True)
        add(f"|{v}|", f"\\left|{v}\\right|", None, equal=True)
        add(f"{v} - 1", f"-1 + {v}", None, equal=True)
        add(f"({v}+1)^2", f"{v}^2 + 2{v} + 1", None, equal=True)
        add(f"{v}^2 - 1", f"({v} - 1)({v} + 1)", None, equal=True)
    for n in [10, 25, 40]:
        add(f"{n}\\%", f"{n}%", None, equal=True)
    for _ in range(15):
        a, b = sorted(rng.sample(range(-9, 10), 2))
        add(f"[{a}, {b}]", f"[{a},{b}]", None, equal=True)
        add(f"({a}, {b})", f"\\left({a}, {b}\\right)", None, equal=True)
    return out


# --- real answer keys from the shared benchmark data ----------------------------------------

def gsm8k_solution_pairs(rng: random.Random) -> list[dict]:
    """GSM8K reference solutions (calculator annotations, '#### N') as golds."""
    rows = read_jsonl(data_dir() / "gsm8k" / "test.jsonl")
    out = []
    for item in rng.sample(rows, min(220, len(rows))):
        gold = item["answer"]
        final = gold.rsplit("####", 1)[1].strip().replace(",", "")
        if not re.fullmatch(r"-?\d+(\.\d+)?", final):
            continue
        v = Fraction(final)
        equal = rng.random() < 0.55
        value = v if equal else rng.choice([w for w in mistakes(v) if w > 0 and w.denominator == 1] or [v + 1])
        n = decimal(value)
        shown = f"{int(value):,}" if value.denominator == 1 and abs(value) >= 1000 and rng.random() < 0.6 else n
        money = "$" if "$" in gold and rng.random() < 0.6 else ""
        steps = re.sub(r"<<[^>]*>>", "", gold.rsplit("####", 1)[0]).strip() if equal and rng.random() < 0.4 else reasoning(rng)
        resp = rng.choice([
            f"{steps}\n#### {n}",
            f"{steps}\nThe answer is {money}{shown}.",
            f"{steps}\nSo the total is {money}{shown}.\n\nThe answer is: {n}",
            f"{steps}\n\nTherefore, the answer is $\\boxed{{{n}}}$.",
            f"{steps}\n\n**Answer:** {money}{shown}",
            f"{steps}\nThe final answer is {n}",
        ])
        out.append(pair("gold_solution", gold, resp, equal))
    return out


def option_response(letters: str, ci: int, texts: list[str], rng: random.Random, zh: bool) -> str:
    """A model's answer choosing option ci, often naming the other options on the way."""
    cl = letters[ci]
    others = [letters[i] for i in range(len(texts)) if i != ci]
    o1, o2 = rng.sample(others, 2)
    ct = texts[ci]
    if zh:
        return rng.choice([
            f"答案：{cl}",
            f"{o1}项错误；{o2}项错误；{cl}项正确。\n故选{cl}。",
            f"分析各选项：{o1}说法不对，{o2}也不对。\n所以正确答案是{cl}。",
            f"本题考查基础知识。{o1}、{o2}两项均与题意不符。\n答案为：{cl}",
            f"正确答案是 {cl}：{ct}",
        ])
    return rng.choice([
        f"The answer is {cl}.",
        f"Answer: ({cl})",
        f"({cl}) {ct}",
        f"{cl}, because {o1} and {o2} are both too large.",
        f"Checking option {o1} first: it fails. Option {o2} also fails.\nThe correct answer is ({cl}) {ct}.",
        f"{reasoning(rng)}\n\n**Answer: {cl}**",
        f"{reasoning(rng)}\nSo the answer is $\\boxed{{{cl}}}$.",
        f"Let me eliminate choices. {o1} is impossible and {o2} is too small.\n\nThe answer is ({cl}).",
    ])


def exam_choice_pairs(rng: random.Random) -> list[dict]:
    """Golds written as the keyed option with its text: AQuA-RAT, SAT maths, C-Eval."""
    out = []
    for name, n in (("aqua-rat", 130), ("sat-math", 60)):
        rows = [r for r in read_jsonl(data_dir() / "agieval" / f"{name}.jsonl") if r.get("options") and r.get("label")]
        for item in rng.sample(rows, min(n, len(rows))):
            options, label = item["options"], item["label"]
            letters = "ABCDE"[:len(options)]
            if label not in letters or any(len(o) > 80 for o in options):
                continue
            texts = [re.sub(r"^\([A-E]\)\s*", "", o) for o in options]
            gi = letters.index(label)
            gold = options[gi] if rng.random() < 0.7 else f"({label}) {texts[gi]}"
            equal = rng.random() < 0.5
            ci = gi if equal else rng.choice([i for i in range(len(options)) if i != gi])
            out.append(pair("choice_text", gold, option_response(letters, ci, texts, rng, zh=False), equal))
    ceval = sorted((data_dir() / "ceval" / "val").glob("*.csv")) if (data_dir() / "ceval" / "val").exists() else []
    rows = []
    for path in ceval:
        with path.open(encoding="utf-8") as f:
            rows += [r for r in csv.DictReader(f) if all(len(r[k]) <= 30 and r[k].strip() for k in "ABCD")]
    for item in rng.sample(rows, min(80, len(rows))):
        label = item["answer"].strip()
        if label not in "ABCD" or len(label) != 1:
            continue
        texts = [item[k].strip() for k in "ABCD"]
        gi = "ABCD".index(label)
        gold = rng.choice([f"{label}. {texts[gi]}", f"{label}：{texts[gi]}", f"({label}) {texts[gi]}"])
        equal = rng.random() < 0.5
        ci = gi if equal else rng.choice([i for i in range(4) if i != gi])
        out.append(pair("choice_text", gold, option_response("ABCD", ci, texts, rng, zh=True), equal))
    return out


def gaokao_cloze_pairs(rng: random.Random) -> list[dict]:
    """Gaokao fill-in answers: inline maths, several blanks separated by ';'."""
    out = []
    for item in read_jsonl(data_dir() / "agieval" / "gaokao-mathcloze.jsonl"):
        gold = item["answer"]
        if re.search(r"[\u4e00-\u9fff]|textcircled|^\$?[A-E]\$?$", gold):
            continue
        parts = [p.strip().strip("$") for p in gold.split(";")]
        equal = rng.random() < 0.55
        if equal:
            written = [cosmetic(p, rng) for p in parts]
        else:
            i = rng.randrange(len(parts))
            wrong = mutate_answer(parts[i], rng)
            if wrong is None:
                continue
            written = parts[:i] + [wrong] + parts[i + 1:]
        if len(parts) == 1:
            out.append(pair("gold_solution", gold, respond(written[0], rng), equal))
            continue
        resp = rng.choice([
            f"{reasoning(rng)}\n\n" + "，".join(f"$\\boxed{{{w}}}$" for w in written),
            f"{reasoning(rng)}\n\nThe answers are " + " and ".join(f"${w}$" for w in written) + ".",
            f"解：{reasoning_zh(rng)}\n故答案为：" + "；".join(f"${w}$" for w in written),
            f"{reasoning(rng)}\n\nAnswer: " + "; ".join(written),
        ])
        out.append(pair("several_answers", gold, resp, equal))
        if equal and rng.random() < 0.5:  # only the first blank answered
            resp = f"{reasoning(rng)}\n\nThe answer is $\\boxed{{{written[0]}}}$."
            out.append(pair("several_answers", gold, resp, False, "subset"))
    return out


def more_notation_pairs(rng: random.Random) -> list[dict]:
    """Scientific notation, complex numbers and equations of lines written another way."""
    out = []
    for _ in range(40):
        mant, exp = Fraction(rng.randint(11, 99), 10), rng.choice([-4, -3, -2, -1, 1, 2, 3, 4, 5, 6])
        v = mant * Fraction(10) ** exp
        equal = rng.random() < 0.55
        w = v if equal else rng.choice([mant * Fraction(10) ** (exp + 1), mant * Fraction(10) ** (-exp) if exp else v + 1,
                                        (mant + Fraction(1, 10)) * Fraction(10) ** exp])
        sci = f"{decimal(mant)} \\times 10^{{{exp}}}"  # v itself
        if equal:
            gold, ans = (decimal(v), rng.choice([sci, sci.replace(" \\times ", " \\cdot "), f"{decimal(mant)}e{exp}"])) \
                if rng.random() < 0.6 else (sci, decimal(v))
        else:
            gold, ans = (decimal(v), decimal(w)) if rng.random() < 0.5 else (sci, decimal(w))
        out.append(pair("notation", gold, respond(ans, rng), equal))
    for _ in range(30):
        a, b = rng.randint(-9, 9) or 1, rng.randint(1, 9)
        gold = f"{a} + {b}i" if rng.random() < 0.5 else f"{a}+{b}i"
        equal = rng.random() < 0.55
        sign = "-" if a < 0 else "+"
        ans = rng.choice([f"{b}i {sign} {abs(a)}", f"{a} + {b} i", f"{a}+{b}\\mathrm{{i}}"]) if equal else \
            rng.choice([f"{a} - {b}i", f"{b} {sign} {abs(a)}i" if a != b else f"{a} + {b + 1}i", f"{-a} + {b}i"])
        out.append(pair("notation", gold, respond(ans, rng), equal, None if equal else "wrong_sign" if "-" in ans else None))
    for _ in range(30):
        m, c = rng.choice([2, 3, 4, 5, -2, -3]), rng.choice([k for k in range(-7, 8) if k])
        gold = f"y = {line_tex(m, c)}"
        equal = rng.random() < 0.55
        if equal:
            ans = rng.choice([f"{m}x - y {'+' if c > 0 else '-'} {abs(c)} = 0", f"y {'+' if m < 0 else '-'} {abs(m)}x = {c}", f"{line_tex(m, c)} = y"])
        else:
            ans = rng.choice([f"y = {line_tex(c, m)}" if c != m else f"y = {line_tex(m, c + 1)}",
                              f"{m}x + y {'+' if c > 0 else '-'} {abs(c)} = 0", f"y = {line_tex(m, -c)}"])
        out.append(pair("notation", gold, respond(ans, rng, rng.choice(["boxed_final", "bare", "qwen", "sentence"])), equal))
    return out


# --- second round: shapes measured on the graders before they were added -----------------

def amc_choice_pairs(rng):
    out = []
    for _ in range(70):
        letters = "ABCDE"
        vals = rng.sample(range(2, 99), 5)
        gi = rng.randrange(5)
        gl = letters[gi]
        gold = rng.choice([gl, f"({gl}) {vals[gi]}", f"\\text{{({gl})}}", f"\\textbf{{({gl})}}\\ {vals[gi]}"])
        equal = rng.random() < 0.5
        ci = gi if equal else rng.choice([i for i in range(5) if i != gi])
        cl, cv = letters[ci], vals[ci]
        ans = rng.choice([f"$\\boxed{{\\textbf{{({cl})}}\\ {cv}}}$", f"$\\textbf{{({cl}) }} {cv}$", f"$\\boxed{{\\text{{{cl}}}}}$",
                          f"**({cl})**", f"$\\mathrm{{({cl})}}$", f"\\boxed{{({cl})}}"])
        other = letters[rng.choice([i for i in range(5) if i != ci])]
        resp = rng.choice([f"{reasoning(rng)}\n\nThe answer is {ans}.", f"{reasoning(rng)}\nChoice ({other}) is too small.\n\n{ans}",
                           f"{ans}"])
        out.append(pair("choice_text", gold, resp, equal))
    return out


def unit_box_pairs(rng):
    out = []
    units = [("\\text{ cm}", "cm"), ("\\,\\mathrm{cm}^2", "square centimetres"), ("\\text{ dollars}", "dollars"),
             ("\\text{ hours}", "hours"), ("\\text{ km/h}", "km/h"), ("\\ \\text{m}", "metres"), ("^\\circ", "degrees")]
    for _ in range(70):
        v = Fraction(rng.randint(2, 400), rng.choice([1, 1, 1, 2, 4]))
        tex_unit, word = rng.choice(units)
        equal = rng.random() < 0.55
        w = v if equal else wrong_number(v, rng)
        if w <= 0:
            continue
        num = decimal(w) if terminating(w) else frac_tex(w)
        gold = rng.choice([canonical(v), f"{canonical(v)}{tex_unit}", f"{decimal(v) if terminating(v) else canonical(v)} {word}"])
        ans = rng.choice([f"\\boxed{{{num}{tex_unit}}}", f"\\boxed{{{num}}}\\text{{ {word}}}", f"{num} {word}"])
        resp = rng.choice([f"{reasoning(rng)}\n\nSo the answer is ${ans}$." if "\\boxed" in ans else f"{reasoning(rng)}\nThe answer is {ans}.",
                           f"{reasoning(rng)}\n\n**Final Answer:** ${ans}$" if "\\boxed" in ans else f"{reasoning(rng)}\n\n**Final Answer:** {ans}"])
        out.append(pair("numbers", gold, resp, equal))
    for _ in range(30):
        n = rng.randint(1001, 99999)
        equal = rng.random() < 0.55
        m = n if equal else rng.choice([n + 100, n - 1, n * 10])
        ans = rng.choice([f"\\boxed{{\\${m:,}}}".replace(",", "{,}"), f"\\boxed{{{m:,}}}", f"\\${m:,}"])
        out.append(pair("numbers", str(n), respond(ans, rng, rng.choice(["boxed_bare", "sentence", "bare_dollar"])) if not ans.startswith("\\boxed") else f"{reasoning(rng)}\n\n${ans}$", equal))
    return out


def inequality_pairs(rng):
    out = []
    GEQ = ["\\geqslant", "\\geq", "≥", "\\ge"]
    LEQ = ["\\leqslant", "\\leq", "≤", "\\le"]
    for _ in range(80):
        a, b = sorted(rng.sample(range(-9, 10), 2))
        shape = rng.randrange(4)
        equal = rng.random() < 0.5
        if shape == 0:   # x >= a  <->  [a, +inf)
            gold = rng.choice([f"[{a}, +\\infty)", f"[{a},+\\infty)", f"\\left[{a}, \\infty\\right)"])
            ans = f"x {rng.choice(GEQ)} {a}" if equal else rng.choice([f"x > {a}", f"x {rng.choice(LEQ)} {a}", f"x {rng.choice(GEQ)} {a + 1}"])
        elif shape == 1:  # x <= b  <->  (-inf, b]
            gold = rng.choice([f"(-\\infty, {b}]", f"\\left(-\\infty,{b}\\right]"])
            ans = f"x {rng.choice(LEQ)} {b}" if equal else rng.choice([f"x < {b}", f"x {rng.choice(GEQ)} {b}"])
        elif shape == 2:  # a <= x < b
            gold = rng.choice([f"[{a}, {b})", f"x \\in [{a}, {b})", f"\\left[{a}, {b}\\right)"])
            ans = f"{a} {rng.choice(LEQ)} x < {b}" if equal else rng.choice([f"{a} < x {rng.choice(LEQ)} {b}", f"{a} {rng.choice(LEQ)} x {rng.choice(LEQ)} {b}"])
        else:  # outside an interval
            gold = rng.choice([f"(-\\infty, {a}) \\cup ({b}, +\\infty)", f"(-\\infty,{a})\\cup({b},\\infty)"])
            ans = rng.choice([f"x < {a} \\text{{ or }} x > {b}", f"x<{a} or x>{b}"]) if equal else \
                rng.choice([f"{a} < x < {b}", f"x < {a} \\text{{ or }} x {rng.choice(GEQ)} {b}"])
        out.append(pair("intervals", gold, respond(ans, rng, rng.choice(["boxed_final", "bare", "sentence", "zh", "llama"])), equal))
    return out


def root_form_pairs(rng):
    out = []
    same = [("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}"), ("2\\sqrt{2}", "\\sqrt{8}"), ("\\frac{2\\sqrt{3}}{3}", "\\frac{2}{\\sqrt{3}}"),
            ("3\\sqrt{3}", "\\sqrt{27}"), ("\\frac{\\sqrt{6}}{3}", "\\sqrt{\\frac{2}{3}}"), ("\\sqrt{3}", "3^{1/2}"),
            ("\\frac{1+\\sqrt{5}}{2}", "\\frac{\\sqrt{5}+1}{2}"), ("2 + \\sqrt{3}", "\\frac{1}{2 - \\sqrt{3}}"),
            ("\\frac{\\sqrt{3}}{2}", "\\sin 60^\\circ"), ("4\\sqrt{5}", "\\sqrt{80}")]
    wrong = [("\\frac{\\sqrt{2}}{2}", "\\frac{\\sqrt{3}}{2}"), ("2\\sqrt{2}", "\\sqrt{6}"), ("\\frac{2\\sqrt{3}}{3}", "\\frac{3}{\\sqrt{2}}"),
             ("3\\sqrt{3}", "\\sqrt{9}"), ("\\sqrt{3}", "3^{1/3}"), ("\\frac{1+\\sqrt{5}}{2}", "\\frac{1-\\sqrt{5}}{2}"),
             ("2 + \\sqrt{3}", "\\frac{1}{2 + \\sqrt{3}}"), ("4\\sqrt{5}", "5\\sqrt{4}"), ("\\frac{\\sqrt{3}}{2}", "\\cos 60^\\circ")]
    for _ in range(60):
        equal = rng.random() < 0.55
        g, a = rng.choice(same if equal else wrong)
        if rng.random() < 0.4:
            g, a = a, g
        out.append(pair("notation", g, respond(a, rng), equal))
    for _ in range(30):
        var = rng.choice(["i", "j", "n", "m"])
        lo, hi = rng.randint(1, 2), rng.randint(4, 9)
        total = sum(range(lo, hi + 1))
        equal = rng.random() < 0.55
        out.append(pair("notation", str(total if equal else total + rng.choice([lo, -hi, 1])),
                        respond(f"\\sum_{{{var}={lo}}}^{{{hi}}} {var}", rng), equal))
    return out


def gsm8k_prose_pairs(rng):
    out = []
    rows = read_jsonl(data_dir() / "gsm8k" / "test.jsonl")
    nouns = ["apples", "miles", "dollars", "students", "cookies", "hours", "pages", "eggs"]
    for item in rng.sample(rows, 70):
        final = item["answer"].rsplit("####", 1)[1].strip().replace(",", "")
        if not re.fullmatch(r"\d+", final):
            continue
        n = int(final)
        equal = rng.random() < 0.55
        m = n if equal else rng.choice([n + 1, n * 2, max(n - 2, 0) if n > 2 else n + 3])
        noun = rng.choice(nouns)
        shown = f"{m:,}" if m >= 1000 and rng.random() < 0.5 else str(m)
        resp = rng.choice([f"{reasoning(rng)}\nSo she has {shown} {noun} left.",
                           f"{reasoning(rng)}\nIn total, he ran {shown} {noun}.",
                           f"{reasoning(rng)}\nThe answer is {shown} {noun}.",
                           f"{reasoning(rng)}\nTherefore, they need ${shown} in total."])
        gold = item["answer"] if rng.random() < 0.5 else str(n)
        out.append(pair("gold_solution" if "####" in gold else "last_math_span", gold, resp, equal))
    return out


def chinese_pairs(rng):
    out = []
    for _ in range(50):
        v = Fraction(rng.randint(-20, 120), rng.choice([1, 1, 2, 3]))
        equal = rng.random() < 0.55
        w = v if equal else wrong_number(v, rng)
        t = tex_number(w, rng)
        resp = rng.choice([f"{reasoning_zh(rng)}\n最终答案是 ${t}$", f"{reasoning_zh(rng)}\n故答案为：${t}$",
                           f"{reasoning_zh(rng)}\n所以，$x$ 的值为 ${t}$。", f"{reasoning_zh(rng)}\n答：结果是 ${t}$。",
                           f"{reasoning_zh(rng)}\n因此 $\\boxed{{{t}}}$"])
        out.append(pair("last_math_span", canonical(v), resp, equal))
    return out


def set_notation_pairs(rng):
    out = []
    for _ in range(50):
        a, b = sorted(rng.sample(range(-9, 10), 2))
        gold = rng.choice([f"\\{{{a}, {b}\\}}", f"{a}, {b}", f"x = {a} \\text{{ or }} x = {b}"])
        equal = rng.random() < 0.5
        x, y = (a, b) if rng.random() < 0.5 else (b, a)
        if not equal:
            y = rng.choice([v for v in range(-10, 11) if v not in (a, b)])
        ans = rng.choice([f"x = {x}, {y}", f"\\left\\{{ {x}, {y} \\right\\}}", f"x \\in \\{{{x}, {y}\\}}", f"x_1 = {x}, x_2 = {y}",
                          f"x={x} 或 x={y}"])
        out.append(pair("sets", gold, respond(ans, rng, rng.choice(["boxed_final", "sentence", "bare", "answer_colon"])), equal))
    return out


# --- fourth round ---------------------------------------------------------------------------

def answer_first_pairs(rng):
    """The answer stated first, then an explanation with other numbers (and other letters)."""
    out = []
    for _ in range(60):
        v = Fraction(rng.randint(-30, 200), rng.choice([1, 1, 1, 2, 3, 4]))
        equal = rng.random() < 0.55
        w = v if equal else wrong_number(v, rng)
        t = tex_number(w, rng)
        a, b = rng.randint(2, 20), rng.randint(2, 20)
        expl = rng.choice([f"Explanation: first we compute ${a} \\times {b} = {a * b}$, then subtract ${b}$ to get ${a * b - b}$.",
                           f"Here is why: the two parts are ${a}$ and ${b}$, and checking with $n = {a + b}$ confirms it.",
                           f"Reasoning:\n1. Start with ${a}$.\n2. Add ${b}$ to get ${a + b}$.\n3. Scale and simplify."])
        lead = rng.choice([f"**Answer: ${t}$**", f"The answer is ${t}$.", f"Answer: {t}", f"$\\boxed{{{t}}}$"])
        out.append(pair("answer_first", canonical(v), f"{lead}\n\n{expl}", equal))
    for _ in range(50):
        _, options = rng.choice(QUESTIONS)
        gi = rng.randrange(4)
        gold = rng.choice(["ABCD"[gi], f"({'ABCD'[gi]}) {options[gi]}"])
        equal = rng.random() < 0.5
        ci = gi if equal else rng.choice([i for i in range(4) if i != gi])
        cl = "ABCD"[ci]
        others = [l for l in "ABCD" if l != cl]
        if rng.random() < 0.5:
            expl = "".join(f"{l}项错误；" for l in others)
            resp = f"答案：{cl}。\n解析：{expl}{cl}项正确。"
        else:
            resp = (f"The answer is {cl}.\n\nWhy not the others: " + ", ".join(f"({l}) fails" for l in others)
                    + f"; only ({cl}) satisfies every condition.")
        out.append(pair("choice_text", gold, resp, equal))
    return out


# --- fifth round --------------------------------------------------------------------------

def wrapped_gold_pairs(rng):
    """Golds kept with their maths delimiters or box, as datasets store them."""
    out = []
    for _ in range(80):
        v = Fraction(rng.randint(-40, 300), rng.choice([1, 1, 1, 2, 3, 5, 8]))
        inner = canonical(v)
        gold = rng.choice([f"${inner}$", f"\\({inner}\\)", f"\\[{inner}\\]", f"\\boxed{{{inner}}}", f"$\\boxed{{{inner}}}$",
                           f"$$ {inner} $$"])
        equal = rng.random() < 0.55
        w = v if equal else wrong_number(v, rng)
        out.append(pair("gold_solution", gold, respond(tex_number(w, rng), rng), equal))
    return out


def poly_tex(coeffs: list[int], var: str = "x") -> str:
    """sum c_k x^k, highest power first, as a person writes it."""
    terms = []
    n = len(coeffs) - 1
    for k, c in zip(range(n, -1, -1), coeffs):
        if c == 0:
            continue
        mag = abs(c)
        body = ("" if mag == 1 and k else str(mag)) + (var if k >= 1 else "") + (f"^{k}" if k >= 2 else "")
        terms.append(("-" if c < 0 else "+", body))
    if not terms:
        return "0"
    first_sign, first = terms[0]
    text = ("-" if first_sign == "-" else "") + first
    for sign, body in terms[1:]:
        text += f" {sign} {body}"
    return text


def expand(roots: list[int], lead: int = 1) -> list[int]:
    coeffs = [lead]
    for r in roots:  # multiply by (x - r)
        coeffs = [a - r * b for a, b in zip(coeffs + [0], [0] + coeffs)]
    return coeffs


def factor_tex(roots: list[int], lead: int = 1) -> str:
    parts = "".join(f"(x {'-' if r > 0 else '+'} {abs(r)})" if r else "x" for r in roots)
    return {1: "", -1: "-"}.get(lead, str(lead)) + parts


def expression_pairs(rng):
    """Polynomials written expanded, factored or with terms reordered; wrong by a sign or root."""
    out = []
    for _ in range(90):
        roots = [rng.choice([k for k in range(-7, 8) if k]) for _ in range(rng.choice([2, 2, 3]))]
        lead = rng.choice([1, 1, 2, 3, -1])
        expanded = poly_tex(expand(roots, lead))
        factored = factor_tex(roots, lead)
        equal = rng.random() < 0.5
        if equal:
            gold, ans = rng.choice([(expanded, factored), (factored, expanded)])
        else:
            bad_roots = roots[:]
            i = rng.randrange(len(bad_roots))
            bad_roots[i] = -bad_roots[i]
            if sorted(bad_roots) == sorted(roots):
                continue
            gold, ans = rng.choice([(expanded, factor_tex(bad_roots, lead)), (factored, poly_tex(expand(bad_roots, lead)))])
        out.append(pair("notation", gold, respond(ans, rng, rng.choice(["boxed_final", "bare", "qwen", "sentence", "minerva"])), equal))
    return out


# --- eighth round: word answers and fractions stated in a sentence ---------------------------

WORDS = {
    "day": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "parity": ["even", "odd"],
    "shape": ["parabola", "ellipse", "hyperbola", "circle"],
    "direction": ["north", "south", "east", "west"],
    "name": ["Priya", "Marcus", "Elena", "Kofi", "Hiroshi"],
    "answer": ["yes", "no"],
}
SENTENCES = {
    "day": ["The meeting falls on a {w}.", "So the 100th day is a {w}.", "It will be {w}."],
    "parity": ["The sum is always {w}.", "Therefore the number is {w}.", "So $f$ is {w}."],
    "shape": ["The graph is a {w}.", "So the curve is an {w}." , "This conic is a {w}."],
    "direction": ["She ends up facing {w}.", "The final direction is {w}."],
    "name": ["{w} ran the farthest.", "So the winner is {w}.", "The answer is {w}."],
    "answer": ["{W}, because the discriminant decides it.", "{W}.", "The answer is {w}."],
}


def word_answer_pairs(rng):
    out = []
    for _ in range(60):
        cat = rng.choice(sorted(WORDS))
        g = rng.choice(WORDS[cat])
        equal = rng.random() < 0.55
        w = g if equal else rng.choice([x for x in WORDS[cat] if x != g])
        sentence = rng.choice(SENTENCES[cat])
        if "an {w}" in sentence and w[0] not in "aeiou":
            sentence = sentence.replace("an {w}", "a {w}")
        if "a {w}" in sentence and w[0] in "aeiou":
            sentence = sentence.replace("a {w}", "an {w}")
        text = sentence.format(w=w, W=w.capitalize())
        gold = rng.choice([g, f"\\text{{{g}}}", f"\\text{{{g.capitalize()}}}" if cat in ("day", "name") else g])
        resp = rng.choice([text, f"{reasoning(rng)}\n{text}", f"{reasoning(rng)}\n\n**Answer:** {w}",
                           f"{reasoning(rng)}\n\n$\\boxed{{\\text{{{w}}}}}$"])
        out.append(pair("gold_solution" if gold.startswith("\\text") else "last_math_span", gold, resp, equal))
    return out


def prose_fraction_pairs(rng):
    out = []
    for _ in range(50):
        v = Fraction(rng.randint(1, 11), rng.randint(2, 12))
        if v.denominator == 1:
            continue
        equal = rng.random() < 0.55
        w = v if equal else wrong_number(v, rng)
        if w <= 0 or w.denominator == 1:
            continue
        slash = f"{w.numerator}/{w.denominator}"
        below_one = [f"The probability is {slash}.", f"She ate {slash} of the pie.", f"That leaves {slash} of the tank full.",
                     f"所以概率是 {slash}。"]
        text = rng.choice(below_one if w < 1 else [f"So the ratio is {slash}.", f"The scale factor is {slash}."])
        gold = rng.choice([frac_tex(v), f"{v.numerator}/{v.denominator}", decimal(v) if terminating(v) else frac_tex(v, "dfrac")])
        out.append(pair("last_math_span", gold, rng.choice([text, f"{reasoning(rng)}\n{text}"]), equal))
    return out


# --- ninth round: maths written without LaTeX ------------------------------------------------

def plain_text_maths_pairs(rng):
    """Maths written by a model without LaTeX: sqrt(2), √3/2, π/4, 3pi, x^2 + 1, negative and
    decimal numbers in a sentence, a display on its own lines after 'Final answer:'."""
    out = []
    for _ in range(140):
        kind = rng.randrange(6)
        equal = rng.random() < 0.55
        if kind == 0:  # square roots in plain text or unicode
            k, n = rng.randint(1, 6), rng.choice([2, 3, 5, 6, 7])
            gold = f"{k}\\sqrt{{{n}}}" if k > 1 else f"\\sqrt{{{n}}}"
            kk, nn = (k, n) if equal else rng.choice([(k + 1, n), (k, n + 1)])
            pre = "" if kk == 1 else str(kk)
            text = rng.choice([f"{pre}sqrt({nn})" if kk == 1 else f"{kk}*sqrt({nn})", f"{pre}√{nn}", f"{pre}\u221a({nn})"])
            resp = rng.choice([f"The side length is {text}.", f"{reasoning(rng)}\nSo the distance is {text} units.", f"Answer: {text}"])
        elif kind == 1:  # pi in plain text
            k, q = rng.randint(1, 9), rng.choice([1, 2, 3, 4, 6])
            if q > 1 and (k % q == 0 or q % k == 0 and k > 1 or (k % 2 == 0 and q % 2 == 0) or (k % 3 == 0 and q % 3 == 0)):
                continue  # keys write pi fractions in lowest terms
            gold = (f"\\frac{{{k}\\pi}}{{{q}}}" if k > 1 else f"\\frac{{\\pi}}{{{q}}}") if q > 1 else (f"{k}\\pi" if k > 1 else "\\pi")
            kk, qq = (k, q) if equal else rng.choice([(k + 1, q), (k, q + 1)])
            sym = rng.choice(["pi", "π"])
            num = sym if kk == 1 else f"{kk}{sym}"
            text = num if qq == 1 else f"{num}/{qq}"
            resp = rng.choice([f"The angle is {text} radians.", f"{reasoning(rng)}\nThe area is {text}.", f"Answer: {text}"])
        elif kind == 2:  # polynomial without dollars
            a, b = rng.randint(2, 9), rng.randint(1, 12)
            gold = f"x^2 + {a}x + {b}" if rng.random() < 0.5 else f"{a}x + {b}"
            g_is_quad = gold.startswith("x^2")
            aa, bb = (a, b) if equal else rng.choice([(a + 1, b), (a, b + 1), (a, -b)])
            sign = "-" if bb < 0 else "+"
            expr = (f"x^2 + {aa}x {sign} {abs(bb)}" if g_is_quad else f"{aa}x {sign} {abs(bb)}")
            resp = rng.choice([f"The answer is {expr}.", f"{reasoning(rng)}\nSo f(x) = {expr}.", f"Simplifying gives {expr}"])
        elif kind == 3:  # negative numbers in a sentence
            v = -rng.randint(1, 40)
            w = v if equal else rng.choice([-v, v - 1, v + 1])
            s = str(w).replace("-", rng.choice(["-", "\u2212"]))
            gold = str(v)
            resp = rng.choice([f"The temperature drops to {s} degrees.", f"{reasoning(rng)}\nThe change in height is {s} m.",
                               f"So the minimum value is {s}."])
        elif kind == 4:  # decimals in a sentence
            v = Fraction(rng.randint(11, 999), rng.choice([2, 4, 10, 100]))
            w = v if equal else wrong_number(v, rng)
            if w <= 0 or not terminating(w):
                continue
            gold = decimal(v) if rng.random() < 0.6 else canonical(v)
            d = decimal(w)
            if "." in d and len(d.split(".")[1]) == 1 and rng.random() < 0.4:
                d += "0"
            resp = rng.choice([f"Each ticket costs {d} dollars.", f"{reasoning(rng)}\nThe mean is {d}.", f"The average speed is {d} km/h."])
        else:  # display on its own lines after a heading
            v = Fraction(rng.randint(-20, 60), rng.choice([1, 1, 2, 3]))
            w = v if equal else wrong_number(v, rng)
            gold = canonical(v)
            resp = rng.choice([f"{reasoning(rng)}\n\nFinal answer:\n$$x = {tex_number(w, rng)}$$",
                               f"{reasoning(rng)}\n\n**Final answer**\n\\[\nx = {tex_number(w, rng)}\n\\]",
                               f"{reasoning(rng)}\n\nFinal Answer\n{tex_number(w, rng)}"])
        out.append(pair("last_math_span", gold, resp, equal))
    return out


# --- tenth round: a check or a reason after the answer --------------------------------------

def verified_answer_pairs(rng):
    """The answer, then a check or a reason with other numbers after it."""
    out = []
    for _ in range(80):
        x, k, c = rng.randint(1, 15), rng.randint(2, 9), rng.randint(1, 20)
        rhs = k * x + c
        equal = rng.random() < 0.55
        w = x if equal else rng.choice([x + 1, x - 1 if x > 1 else x + 2, -x])
        style = rng.randrange(4)
        if style == 0:
            resp = f"{reasoning(rng)}\nThus $x = {w}$. Let's verify: ${k}({w}) + {c} = {k * w + c}$."
        elif style == 1:
            resp = f"{reasoning(rng)}\nSo $x = {w}$.\n\nCheck: substituting gives ${k * w} + {c} = {k * w + c}$ ✓"
        elif style == 2:
            resp = f"The answer is {w} because {k} × {w} + {c} = {k * w + c}."
        else:
            resp = f"The answer is {w}, since ${k}x + {c} = {rhs}$ gives $x = {w}$ and ${w} < {rhs}$."
            if w != x:
                resp = f"The answer is {w}, since it is the only value below ${rhs}$ that I found."
        out.append(pair("answer_first", str(x), resp, equal))
    for _ in range(40):
        _, options = rng.choice(QUESTIONS)
        gi = rng.randrange(4)
        gold = rng.choice(["ABCD"[gi], f"({'ABCD'[gi]}) {options[gi]}"])
        equal = rng.random() < 0.5
        ci = gi if equal else rng.choice([i for i in range(4) if i != gi])
        cl, ct = "ABCD"[ci], options[ci]
        ans = rng.choice([f"\\boxed{{{cl}: {ct}}}", f"\\boxed{{({cl})\\ {ct}}}", f"\\boxed{{\\text{{{cl}. {ct}}}}}"])
        out.append(pair("choice_text", gold, f"{reasoning(rng)}\n\nThe answer is ${ans}$.", equal))
    return out


# --- eleventh round: unicode digits, fractions and powers; words inside the box ---------------

FULL = str.maketrans("0123456789.-", "０１２３４５６７８９．－")
VULGAR = {Fraction(1, 2): "½", Fraction(1, 4): "¼", Fraction(3, 4): "¾", Fraction(1, 3): "⅓", Fraction(2, 3): "⅔",
          Fraction(1, 8): "⅛", Fraction(3, 8): "⅜", Fraction(5, 8): "⅝", Fraction(7, 8): "⅞"}
SUP = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def unicode_and_box_text_pairs(rng):
    out = []
    for _ in range(150):
        kind = rng.randrange(4)
        equal = rng.random() < 0.55
        if kind == 0:  # words or punctuation inside the box
            v = Fraction(rng.randint(1, 300))
            w = v if equal else wrong_number(v, rng)
            noun = rng.choice(["apples", "cm", "students", "ways", "days"])
            box = rng.choice([f"{w}.", f"{w} \\text{{ {noun}}}", f"\\text{{{w} {noun}}}", f"{w} \\text{{(approximately)}}" if False else f"{w}\\ \\text{{{noun}}}"])
            out.append(pair("numbers", str(v), f"{reasoning(rng)}\n\nThe answer is $\\boxed{{{box}}}$", equal))
        elif kind == 1:  # full-width digits in a Chinese answer
            v = Fraction(rng.randint(-50, 500))
            w = v if equal else wrong_number(v, rng)
            fw = str(w).translate(FULL)
            resp = rng.choice([f"{reasoning_zh(rng)}\n答案是{fw}", f"{reasoning_zh(rng)}\n答：共{fw}个。", f"答案：{fw}"])
            out.append(pair("numbers", str(v), resp, equal))
        elif kind == 2:  # vulgar fraction characters, alone or as a mixed number
            f = rng.choice(sorted(VULGAR))
            whole = rng.choice([0, 0, 1, 2, 3, 5])
            v = whole + f
            g = rng.choice([g for g in sorted(VULGAR) if g != f])
            w = v if equal else (whole + g)
            text = (str(whole) if whole else "") + VULGAR[w - whole if equal else g]
            if whole and rng.random() < 0.5:
                text = f"{whole} {VULGAR[w - whole]}"
            resp = rng.choice([f"The answer is {text}.", f"{reasoning(rng)}\nShe needs {text} cups of flour.", f"Answer: {text}"])
            out.append(pair("mixed_numbers", canonical(v) if rng.random() < 0.7 else tex_number(v, rng), resp, equal))
        else:  # superscript powers
            a, b = rng.randint(2, 9), rng.randint(1, 9)
            n = rng.choice([2, 3])
            gold = f"x^{n} + {a}x + {b}"
            aa, nn = (a, n) if equal else rng.choice([(a + 1, n), (a, 5 - n)])
            text = f"x{str(nn).translate(SUP)} + {aa}x + {b}"
            resp = rng.choice([f"The answer is {text}.", f"{reasoning(rng)}\nSo p(x) = {text}", f"Answer: {text}"])
            out.append(pair("notation", gold, resp, equal))
    return out


# --- twelfth round: roots listed in plain words ----------------------------------------------

def plain_roots_pairs(rng):
    """Several roots listed in plain words, without LaTeX."""
    out = []
    for _ in range(70):
        a, b = rng.sample([k for k in range(-9, 10) if k], 2)
        gold = rng.choice([f"{a}, {b}", f"\\{{{a}, {b}\\}}", f"x = {a} \\text{{ or }} x = {b}", f"{a} \\text{{ and }} {b}"])
        equal = rng.random() < 0.55
        x, y = (a, b) if rng.random() < 0.5 else (b, a)
        if not equal:
            x, y = rng.choice([(-x, -y), (x, rng.choice([k for k in range(-10, 11) if k not in (a, b)]))])
            if {x, y} == {a, b}:
                continue
        resp = rng.choice([f"The solutions are x = {x} or x = {y}.", f"Roots: {x} and {y}", f"x = {x} and x = {y} both work.",
                           f"{reasoning(rng)}\nSo x is {x} or {y}.", f"The two roots are {x} and {y}.",
                           f"{reasoning_zh(rng)}\n所以方程的解为 x={x} 或 x={y}。", f"Answer: x = {x}, x = {y}"])
        out.append(pair("sets", gold, resp, equal))
    return out


# --- thirteenth round: answers in markdown, code fences, <answer> tags, JSON, tables ---------

def markup_answer_pairs(rng):
    """Answers wrapped in markdown, code fences, XML-like tags or JSON."""
    out = []
    for _ in range(120):
        v = Fraction(rng.randint(-30, 400), rng.choice([1, 1, 1, 2, 4, 5]))
        equal = rng.random() < 0.55
        w = v if equal else wrong_number(v, rng)
        t = tex_number(w, rng)
        plain = str(w.numerator) if w.denominator == 1 else f"{w.numerator}/{w.denominator}"
        r = reasoning(rng)
        resp = rng.choice([
            f"{r}\n\nThe answer is **{plain}**.",
            f"{r}\n\n*Answer*: {plain}",
            f"{r}\n\n```\n{plain}\n```",
            f"<think>\n{r}\n</think>\n<answer>{plain}</answer>",
            f"<think>\n{r}\n</think>\n<answer>\n$\\boxed{{{t}}}$\n</answer>",
            f"{r}\n\n<answer>{t}</answer>",
            f'{{"reasoning": "short", "answer": "{plain}"}}',
            f"{r}\n\n```json\n{{\"answer\": {json.dumps(plain) if '/' in plain else plain}}}\n```",
            f"{r}\n\n> **Final answer:** ${t}$",
            f"{r}\n\n| quantity | value |\n|---|---|\n| answer | {plain} |",
        ])
        out.append(pair("last_math_span", canonical(v), resp, equal))
    return out


# --- fourteenth round: scale words, plain scientific notation, a**b, ∞ and ∅ -----------------

def plain_notation_pairs(rng):
    """Scale words, scientific notation and powers typed in plain text, unicode intervals/sets."""
    out = []
    for _ in range(120):
        kind = rng.randrange(5)
        equal = rng.random() < 0.55
        if kind == 0:  # million / billion / thousand
            scale, word = rng.choice([(10 ** 3, "thousand"), (10 ** 6, "million"), (10 ** 9, "billion")])
            m = Fraction(rng.randint(11, 99), 10)
            v = m * scale
            w = v if equal else rng.choice([m * scale * 10, m * scale / 1000, (m + 1) * scale])
            shown = decimal(w / scale)
            gold = decimal(v)
            resp = rng.choice([f"The city has about {shown} {word} people.", f"Revenue reached {shown} {word} dollars.",
                               f"The answer is {shown} {word}."])
            if not equal and w / scale == m:
                continue
        elif kind == 1:  # scientific notation in plain text
            m, e = Fraction(rng.randint(11, 99), 10), rng.randint(3, 9)
            v = m * 10 ** e
            ee = e if equal else rng.choice([e + 1, e - 1])
            gold = rng.choice([decimal(v), f"{decimal(m)} \\times 10^{{{e}}}"])
            shown = rng.choice([f"{decimal(m)} × 10^{ee}", f"{decimal(m)}x10^{ee}", f"{decimal(m)}*10^{ee}", f"{decimal(m)} × 10{str(ee).translate(str.maketrans('0123456789', '⁰¹²³⁴⁵⁶⁷⁸⁹'))}"])
            resp = rng.choice([f"The answer is {shown}.", f"{reasoning(rng)}\nSo N = {shown}.", f"Answer: {shown}"])
        elif kind == 2:  # Python-style powers
            b, n = rng.choice([2, 3, 5, 10]), rng.randint(2, 10)
            v = b ** n
            nn = n if equal else n + 1
            gold = str(v)
            resp = rng.choice([f"The answer is {b}**{nn}.", f"{reasoning(rng)}\nresult = {b}**{nn}", f"Answer: {b}**{nn} = {b ** nn}"])
        elif kind == 3:  # unicode infinity and membership
            a = rng.randint(-9, 9)
            closed = rng.random() < 0.5
            gold = interval(a, None, closed, False)
            c2 = closed if equal else not closed
            left = "[" if c2 else "("
            resp = rng.choice([f"The solution set is {left}{a}, ∞).", f"x ∈ {left}{a}, +∞)", f"Answer: {left}{a}, ∞)"])
        else:  # unicode empty set
            gold = rng.choice(["\\emptyset", "\\varnothing", "\\{\\}"])
            resp = rng.choice(["The solution set is ∅.", "Answer: ∅", "So there is no solution: ∅"]) if equal else \
                rng.choice(["The solution set is {0}.", "Answer: {∅}", "So the solution is x = 0."])
        out.append(pair("notation", gold, resp, equal))
    return out


# --- fifteenth round: matrices, linear equations and circles written another way -------------

def entry(v: Fraction, rng) -> str:
    if v.denominator == 1:
        return str(v.numerator)
    if terminating(v) and rng.random() < 0.4:
        return decimal(v)
    return rng.choice([canonical(v), f"{v.numerator}/{v.denominator}"])


def matrix_tex(rows, env, rng):
    body = " \\\\ ".join(" & ".join(entry(x, rng) for x in row) for row in rows)
    if env == "array":
        return f"\\left[\\begin{{array}}{{{'c' * len(rows[0])}}} {body} \\end{{array}}\\right]"
    return f"\\begin{{{env}}} {body} \\end{{{env}}}"


def matrix_equation_pairs(rng):
    out = []
    for _ in range(70):
        r, c = rng.choice([(2, 2), (2, 1), (3, 1), (2, 3)])
        rows = [[Fraction(rng.randint(-9, 9), rng.choice([1, 1, 1, 2, 4])) for _ in range(c)] for _ in range(r)]
        equal = rng.random() < 0.55
        other = [row[:] for row in rows]
        if not equal:
            i, j = rng.randrange(r), rng.randrange(c)
            mistake = rng.randrange(2)
            if mistake == 0 or r * c == 1:
                other[i][j] = -other[i][j] if other[i][j] else Fraction(1)
            else:  # two entries swapped
                flat = [x for row in other for x in row]
                a, b = rng.sample(range(len(flat)), 2)
                if flat[a] == flat[b]:
                    continue
                flat[a], flat[b] = flat[b], flat[a]
                other = [flat[k * c:(k + 1) * c] for k in range(r)]
            if other == rows:
                continue
        gold = matrix_tex(rows, rng.choice(["pmatrix", "bmatrix"]), rng)
        ans = matrix_tex(other, rng.choice(["pmatrix", "bmatrix", "array"]), rng)
        out.append(pair("notation", gold, respond(ans, rng, rng.choice(["boxed_final", "qwen", "bare", "heading"])), equal))
    for _ in range(60):
        a, b, c = rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3, 5]), rng.randint(1, 12)
        gold = f"{a}x + {b}y = {c}"
        equal = rng.random() < 0.55
        if equal:
            k = rng.choice([1, 2, -1])
            ans = rng.choice([f"{b}y + {a}x = {c}", f"{k * a}x + {k * b}y - {k * c} = 0" if k > 0 else f"-{a}x - {b}y + {c} = 0",
                              f"{c} = {a}x + {b}y"])
        else:
            ans = rng.choice([f"{b}x + {a}y = {c}" if a != b else f"{a}x + {b}y = {c + 1}", f"{a}x - {b}y = {c}", f"{a}x + {b}y = {-c}"])
        gold, ans = (re.sub(r"(?<![\d.])1([xy])", r"\1", t) for t in (gold, ans))  # x, not 1x
        out.append(pair("notation", gold, respond(ans, rng, rng.choice(["boxed_final", "bare", "sentence"])), equal))
    for _ in range(40):
        h, k, r = rng.randint(-5, 5), rng.randint(-5, 5), rng.randint(1, 6)
        def sq(var, t):
            return f"{var}^2" if t == 0 else f"({var} {'-' if t > 0 else '+'} {abs(t)})^2"
        gold = f"{sq('x', h)} + {sq('y', k)} = {r * r}"
        equal = rng.random() < 0.55
        D, E, F = -2 * h, -2 * k, h * h + k * k - r * r
        if not equal:
            F += rng.choice([1, -1, 2 * r * r])
        terms = "x^2 + y^2"
        for coef, var in ((D, "x"), (E, "y")):
            if coef:
                terms += f" {'+' if coef > 0 else '-'} {abs(coef)}{var}"
        if F:
            terms += f" {'+' if F > 0 else '-'} {abs(F)}"
        out.append(pair("notation", gold, respond(f"{terms} = 0", rng, rng.choice(["boxed_final", "bare", "qwen"])), equal))
    return out


# --- seventeenth round: MGSM-style answers in other languages --------------------------------

PHRASES = [  # (language, reasoning line, answer template)
    ("fr", "Calculons étape par étape : {a} + {b} = {c}.", "La réponse est {n}."),
    ("es", "Calculemos paso a paso: {a} + {b} = {c}.", "La respuesta es {n}."),
    ("de", "Schritt für Schritt: {a} + {b} = {c}.", "Die Antwort ist {n}."),
    ("pt", "Vamos calcular: {a} + {b} = {c}.", "A resposta é {n}."),
    ("it", "Calcoliamo: {a} + {b} = {c}.", "La risposta è {n}."),
    ("ja", "順番に計算します：{a} + {b} = {c}。", "答えは{n}です。"),
    ("ru", "Посчитаем: {a} + {b} = {c}.", "Ответ: {n}."),
    ("sw", "Tuhesabu: {a} + {b} = {c}.", "Jibu ni {n}."),
    ("bn", "ধাপে ধাপে: {a} + {b} = {c}।", "উত্তর: {n}"),
    ("zh", "一步一步算：{a} + {b} = {c}。", "答案是 {n}。"),
]


def multilingual_pairs(rng):
    """MGSM-style answers in other languages, with an intermediate sum in the reasoning."""
    out = []
    for _ in range(100):
        lang, line, ans = rng.choice(PHRASES)
        n = rng.randint(2, 500)
        equal = rng.random() < 0.55
        w = n if equal else rng.choice([n + 1, n - 1, 2 * n, n + 10])
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        resp = line.format(a=a, b=b, c=a + b) + "\n" + ans.format(n=w)
        out.append(pair("last_math_span", str(n), resp, equal))
    return out


# --- nineteenth round: AGIEval's other MATH reference solutions as golds ----------------------

def agieval_math_solution_pairs(rng):
    """AGIEval's MATH problems outside MATH-500: reference solutions as golds."""
    math500 = {r["problem"] for r in read_jsonl(data_dir() / "math500" / "test.jsonl")}
    rows = [r for r in read_jsonl(data_dir() / "agieval" / "math.jsonl")
            if r["question"] not in math500 and r.get("other") and r["other"].get("solution")]
    out = []
    for item in rng.sample(rows, min(250, len(rows))):
        solution, answer = item["other"]["solution"], item["answer"]
        found = boxes(solution)
        if not found or len(set(found)) != 1 or found[-1] != answer:
            continue
        equal = rng.random() < 0.55
        simple = simple_value(answer)
        if simple is not None:
            v, prefix, unit = simple
            value = v if equal else wrong_number(v, rng)
            written = tex_number(value, rng)
        elif answer in TEXT_SWAP:
            continue
        else:
            written = cosmetic(answer, rng) if equal else mutate_answer(answer, rng)
            if written is None:
                continue
        out.append(pair("gold_solution", solution, respond(written, rng), equal))
    return out


# --- twenty-fourth round: MATH-500 answers with other closing phrases -------------------------

CLOSINGS = [
    "Thus, the final answer is: $\\boxed{{{a}}}$",
    "We conclude that the answer is ${a}$.",
    "Hence the required value equals ${a}$.",
    "The final result is $\\boxed{{{a}}}$.",
    "Answer — ${a}$",
    "∴ The answer is ${a}$.",
    "In conclusion, $\\boxed{{{a}}}$ is the answer.",
    "Final answer: \\( {a} \\)",
    "So, putting everything together, we get \\[\\boxed{{{a}}}.\\]",
    "The answer is therefore ${a}$, as required.",
    "**Result:** $\\displaystyle {a}$",
    "最终答案：$\\boxed{{{a}}}$",
]
OPENINGS = ["To solve this, I'll first restate the problem.", "Let me think about this carefully.",
            "We are asked to find the quantity described.", "Okay, so I need to figure this out.",
            "Here's a step-by-step solution."]


def math500_answer_pairs(rng):
    """MATH-500 answers as bare golds, answered in closing phrases not used elsewhere."""
    out = []
    rows = read_jsonl(data_dir() / "math500" / "test.jsonl")
    for item in rng.sample(rows, 200):
        ans = item["answer"]
        if ans in TEXT_SWAP or "\\text" in ans or "\\mbox" in ans:
            continue
        equal = rng.random() < 0.55
        simple = simple_value(ans)
        if simple is not None and not simple[1] and not simple[2]:
            v = simple[0]
            written = tex_number(v if equal else wrong_number(v, rng), rng)
        else:
            written = cosmetic(ans, rng) if equal else mutate_answer(ans, rng)
            if written is None:
                continue
        resp = rng.choice(OPENINGS) + "\n\n" + reasoning(rng) + "\n\n" + rng.choice(CLOSINGS).format(a=written)
        out.append(pair("last_math_span", ans, resp, equal))
    return out


GENERATORS = [gsm8k_solution_pairs, exam_choice_pairs, gaokao_cloze_pairs, more_notation_pairs, gold_solution_pairs, last_math_span_pairs, labelled_pairs, several_answers_pairs, escaped_pairs,
              choice_pairs, sets_pairs, numbers_pairs, intervals_pairs, approx_pairs, percent_pairs,
              mixed_number_pairs, notation_pairs, false_positive_pairs,
              amc_choice_pairs, unit_box_pairs, inequality_pairs, root_form_pairs, gsm8k_prose_pairs,
              chinese_pairs, set_notation_pairs, answer_first_pairs, wrapped_gold_pairs, expression_pairs,
              word_answer_pairs, prose_fraction_pairs, plain_text_maths_pairs, verified_answer_pairs,
              unicode_and_box_text_pairs, plain_roots_pairs, markup_answer_pairs,
              plain_notation_pairs, matrix_equation_pairs, multilingual_pairs,
              agieval_math_solution_pairs, math500_answer_pairs]


def build() -> str:
    rows = []
    for gen in GENERATORS:
        rows += gen(random.Random(gen.__name__))
    seen, unique = set(), []
    for row in rows:
        key = (row["gold"], row["response"])
        if key not in seen:
            seen.add(key)
            unique.append(row)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in unique)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if generated.jsonl is out of date")
    args = parser.parse_args(argv)
    text = build()
    if args.check:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{OUT} is out of date: run {Path(__file__).name}")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {text.count(chr(10))} pairs to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
