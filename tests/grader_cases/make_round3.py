"""Write tests/grader_cases/round3_prose.jsonl and round3_gsm8k.jsonl (issue 19, round three).

    python tests/grader_cases/make_round3.py           # rewrite both files
    python tests/grader_cases/make_round3.py --check   # exit 1 if a file is out of date

round3_prose: word-problem answers written as prose in eight languages (Chinese, Japanese,
French, German, Spanish, Russian, Arabic, English), with and without an answer cue, in the
shapes models write: the working, then a final sentence that ends an equation chain
(`所以一共有4 + 7 = 11只猫和狗。`, `Donc le total est (48 + 16 = 64).`), states the value after
a cue in its language (`答案是40千克`, `Ответ: 15 рублей.`, `الجواب هو **47**.`), with measure
words, units, currency signs and bold. Each problem gives an equal pair and a near-miss twin:
the gold is an intermediate value of the working, an operand of the last chain, the stated
answer off by one or ten times, or a value the sentence rejects ("n'est pas 12 mais 14").

round3_gsm8k: GSM8K test solutions (shared data) written back as a model trained on GSM8K's
notation writes them: `<<a*b=c>>c` calculator annotations, `$` money, ending `A: N`,
`#### N`, `The answer is N.`, `A: $N`, a few-shot continuation (`A: 21` then `Q: …` with other
numbers), annotations kept or dropped. Near-miss twins end on another number than the gold:
an intermediate result of the working, the gold off by one, a slip in the last step.

Labels are right by construction (nothing here asks the grader). Deterministic: one seed.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PROSE_OUT = HERE / "round3_prose.jsonl"
GSM8K_OUT = HERE / "round3_gsm8k.jsonl"


def data_dir() -> Path:
    env = os.environ.get("EVALSUITE_DATA_DIR")
    return Path(env) if env else REPO.parent / "shared" / "data"


def gsm8k_path() -> Path:
    return data_dir() / "gsm8k" / "test.jsonl"


# --- prose in eight languages -----------------------------------------------------------------

# (noun, measure word / unit) per language for a few kinds of things counted or measured
THINGS = {
    "zh": [("猫和狗", "只"), ("苹果", "个"), ("面粉", "千克"), ("书", "本"), ("学生", "名"), ("钱", "元"), ("路程", "千米"), ("水", "升")],
    "ja": [("りんご", "個"), ("本", "冊"), ("お金", "円"), ("距離", "km"), ("生徒", "人"), ("水", "リットル")],
    "fr": [("pommes", ""), ("euros", "€"), ("kilomètres", "km"), ("élèves", ""), ("livres", ""), ("kilos de farine", "kg")],
    "de": [("Äpfel", ""), ("Euro", "€"), ("Kilometer", "km"), ("Schüler", ""), ("Bücher", ""), ("Kilogramm Mehl", "kg")],
    "es": [("manzanas", ""), ("euros", "€"), ("kilómetros", "km"), ("estudiantes", ""), ("libros", ""), ("dólares", "$")],
    "ru": [("яблок", ""), ("рублей", "руб."), ("километров", "км"), ("учеников", ""), ("книг", ""), ("килограммов", "кг")],
    "ar": [("تفاحة", ""), ("دولارًا", "$"), ("كيلومترًا", "كم"), ("طالبًا", ""), ("كتابًا", ""), ("كيلوغرامًا", "كغ")],
    "en": [("apples", ""), ("dollars", "$"), ("miles", "mi"), ("students", ""), ("books", ""), ("pounds of flour", "lb")],
}

# working lines: {a} op {b} = {c}; {what} is a noun phrase of the language
STEP = {
    "zh": ["首先，{a} {op} {b} = {c}。", "第一步：{a}{op}{b}={c}", "先算：{a} {op} {b} = {c}，", "- {a} {op} {b} = {c}"],
    "ja": ["まず、{a} {op} {b} = {c} です。", "ステップ1：{a}{op}{b}={c}", "{a} {op} {b} = {c} なので、"],
    "fr": ["D'abord, {a} {op} {b} = {c}.", "**Étape 1 :** {a} {op} {b} = {c}", "On calcule {a} {op} {b} = {c}.", "- {a} {op} {b} = {c}"],
    "de": ["Zuerst rechnen wir {a} {op} {b} = {c}.", "**Schritt 1:** {a} {op} {b} = {c}", "Es gilt {a} {op} {b} = {c}.", "- {a} {op} {b} = {c}"],
    "es": ["Primero, {a} {op} {b} = {c}.", "**Paso 1:** {a} {op} {b} = {c}", "Calculamos {a} {op} {b} = {c}."],
    "ru": ["Сначала найдём {a} {op} {b} = {c}.", "**Шаг 1:** {a} {op} {b} = {c}", "Получаем {a} {op} {b} = {c}."],
    "ar": ["أولاً، {a} {op} {b} = {c}.", "**الخطوة 1:** {a} {op} {b} = {c}", "نحسب {a} {op} {b} = {c}."],
    "en": ["First, {a} {op} {b} = {c}.", "**Step 1:** {a} {op} {b} = {c}", "We compute {a} {op} {b} = {c}."],
}

# final sentences: {chain} is the last equation chain ("4 + 7 = 11"), {ans} its value,
# {noun}/{unit} the thing counted; "cue" ones state the value after an answer phrase
FINAL = {
    "zh": ["所以一共有{chain}{unit}{noun}。", "{noun} = {chain}{unit}", "所以{noun}共有{chain}{unit}。",
           "答案是{ans}{unit}。", "答案：**{ans}**", "因此，{noun}共有{ans}{unit}。", "综上所述，最终答案是 {ans}。",
           "故答案为：{ans}{unit}", "所以{noun}的数量为{ans}{unit}。", "因此一共需要 {chain} {unit}。"],
    "ja": ["したがって、答えは{ans}{unit}です。", "よって、{chain}{unit}となります。", "答え：{ans}{unit}",
           "つまり、全部で{ans}{unit}です。", "合計は{chain}{unit}です。", "答えは **{ans}** です。"],
    "fr": ["Donc le total est ({chain}).", "La réponse est {ans} {unit}.", "Ainsi, elle a {ans} {noun}.",
           "Par conséquent, il reste **{ans}** {noun}.", "Réponse finale : {ans} {unit}", "Le total est donc de {chain} {noun}.",
           "Donc, au total : {chain} {noun}.", "La réponse finale est **{ans}**."],
    "de": ["Die Antwort ist {ans}.", "Also hat sie insgesamt {chain} {noun}.", "Daher sind es {ans} {noun}.",
           "Die Antwort lautet: **{ans}**", "Somit ergibt sich {chain} {unit}.", "Insgesamt also {chain} {noun}.",
           "Die endgültige Antwort ist {ans} {unit}."],
    "es": ["La respuesta es {ans}.", "Por lo tanto, tiene {chain} {noun}.", "Entonces, el total es **{ans}** {noun}.",
           "Así que la respuesta final es {ans} {unit}.", "Respuesta: {ans}", "En total hay {chain} {noun}.",
           "Por lo tanto, la respuesta es {ans} {noun}."],
    "ru": ["Ответ: {ans} {noun}.", "Следовательно, всего {chain} {noun}.", "Итак, ответ — {ans}.",
           "Таким образом, получаем **{ans}** {unit}.", "Значит, всего {chain} {noun}.", "Ответ: **{ans}**"],
    "ar": ["الجواب هو **{ans}**.", "إذن، المجموع هو {chain}.", "الإجابة النهائية: {ans} {unit}", "لذلك، لديها {ans} {noun}.",
           "الإجابة هي {ans}.", "إذن المجموع = {chain} {noun}."],
    "en": ["So in total there are {chain} {noun}.", "That makes {ans} {noun} altogether.", "Hence the total is ({chain}).",
           "So the box weighs {chain} {unit}."],
}

# a final sentence that names the answer after rejecting another value: the gold is the rejected one
REJECT = {
    "zh": "答案不是{x}，而是{ans}。", "ja": "答えは{x}ではなく{ans}です。", "fr": "La réponse n'est pas {x}, mais {ans}.",
    "de": "Die Antwort ist nicht {x}, sondern {ans}.", "es": "La respuesta no es {x}, sino {ans}.",
    "ru": "Ответ не {x}, а {ans}.", "ar": "الجواب ليس {x} بل {ans}.", "en": "The answer is not {x} but {ans}.",
}

# a sentence after the answer with a number of its own (a comparison): the answer stays the stated one
AFTER = {
    "zh": "这比昨天多{d}{unit}。", "ja": "これは昨日より{d}多いです。", "fr": "C'est {d} de plus qu'hier.",
    "de": "Das sind {d} mehr als gestern.", "es": "Son {d} más que ayer.", "ru": "Это на {d} больше, чем вчера.",
    "ar": "وهذا أكثر بـ {d} من الأمس.", "en": "That is {d} more than yesterday.",
}
OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "×": lambda a, b: a * b, "*": lambda a, b: a * b,
       "/": lambda a, b: a // b, "÷": lambda a, b: a // b}


def two_numbers(rng: random.Random, op: str) -> tuple[int, int, int]:
    if op in "/÷":
        b = rng.randint(2, 24)
        c = rng.randint(2, 60)
        return b * c, b, c
    if op == "-":
        a = rng.randint(20, 900)
        b = rng.randint(2, a - 1)
        return a, b, a - b
    if op in "×*":
        a, b = rng.randint(2, 40), rng.randint(2, 30)
        return a, b, a * b
    a, b = rng.randint(2, 500), rng.randint(2, 500)
    return a, b, a + b


CUE_RE = re.compile(r"答案|答え|réponse|Réponse|Antwort|respuesta|Respuesta|Ответ|ответ|الجواب|الإجابة|answer")
ARABIC_DIGITS = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def prose_case(rng: random.Random, lang: str) -> list[dict]:
    noun, unit = rng.choice(THINGS[lang])
    ops = ["+", "-", "×", "/"] if lang not in ("zh", "ja") else ["+", "-", "×", "÷", "/", "*"]
    op1, op2 = rng.choice(ops), rng.choice(ops)
    a, b, c = two_numbers(rng, op1)
    # the last chain starts from the working's result c, or is a fresh pair
    if rng.random() < 0.5 and op2 in "+-×*":
        d = rng.randint(2, 30)
        if op2 == "-" and d >= c:
            op2 = "+"
        e = OPS[op2](c, d)
        chain_a, chain_b, ans = c, d, e
    else:
        chain_a, chain_b, ans = two_numbers(rng, op2)
    chain = f"{chain_a} {op2} {chain_b} = {ans}" if rng.random() < 0.7 else f"{chain_a}{op2}{chain_b}={ans}"
    if rng.random() < 0.25 and op2 in "+×*":  # a three-step chain: 4 + 7 = 11 written as a sum of three
        extra = rng.randint(2, 20)
        ans2 = ans + extra if op2 == "+" else ans * extra
        chain = f"{chain_a} {op2} {chain_b} {op2} {extra} = {ans2}"
        ans = ans2
    steps = []
    if rng.random() < 0.85:
        steps.append(rng.choice(STEP[lang]).format(a=a, b=b, c=c, op=op1))
    shape = rng.random()
    unit_text = unit if unit else ""
    if lang in ("zh", "ja") and unit and not re.match(r"[A-Za-z]", unit):
        unit_text = unit
    final_template = rng.choice(FINAL[lang])
    final = final_template.format(chain=chain, ans=ans, noun=noun, unit=unit_text).replace("  ", " ").replace(" .", ".")
    cases = []
    if shape < 0.12:  # a sentence that rejects a value before giving the answer
        x = rng.choice([c, ans + 1, ans - 1, ans * 10])
        if x == ans:
            x = ans + 2
        final = REJECT[lang].format(x=x, ans=ans)
        response = "\n".join(steps + [final])
        cases.append((str(ans), response, True, "reject"))
        cases.append((str(x), response, False, "reject"))
        return [case(lang, *c_) for c_ in cases]
    if shape < 0.22 and "{ans}" in final_template and CUE_RE.search(final_template):  # a comparison after the answer
        dd = rng.randint(2, 9)
        closed = final if final.rstrip()[-1:] in ".。" else final.rstrip() + ("。" if lang in ("zh", "ja") else ".")
        response = "\n".join(steps + [closed + ("" if lang in ("zh", "ja") else " ") + AFTER[lang].format(d=dd, unit=unit_text)])
        cases.append((str(ans), response, True, "after"))
        cases.append((str(dd), response, False, "after"))
        return [case(lang, *c_) for c_ in cases]
    if lang == "ar" and rng.random() < 0.3:  # Arabic-Indic digits in the final sentence
        final = final.translate(ARABIC_DIGITS)
    response = "\n".join(steps + [final])
    cases.append((str(ans), response, True, "final"))
    # the near-miss twin: an operand of the last chain, the working's result, or off by one/ten
    wrong = rng.choice(["operand", "working", "off"]) if "{chain}" in final_template else rng.choice(["working", "off", "off"])
    if wrong == "operand":
        gold = chain_b if chain_b != ans else ans + 1
    elif wrong == "working" and steps and c != ans:
        gold = c
    else:
        gold = rng.choice([ans + 1, ans - 1, ans * 10, ans + 10])
    cases.append((str(gold), response, False, wrong))
    return [case(lang, *c_) for c_ in cases]


def case(lang: str, gold: str, response: str, equal: bool, how: str) -> dict:
    row = {"group": f"round3_prose/{lang}", "equal": equal, "gold": gold, "response": response}
    if not equal:
        row["shape"] = "near_miss"
    return row


def build_prose() -> str:
    rng = random.Random(1903)
    rows: list[dict] = []
    for lang, count in (("zh", 32), ("ja", 18), ("fr", 22), ("de", 20), ("es", 20), ("ru", 18), ("ar", 18), ("en", 10)):
        for _ in range(count):
            rows += prose_case(rng, lang)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


# --- GSM8K notation --------------------------------------------------------------------------

ANNOTATION_RE = re.compile(r"<<[^<>]*>>")
RESULT_RE = re.compile(r"<<[^<>=]*=([^<>]*)>>")
NEXT_QUESTIONS = [
    "Q: Tom has 5 apples and buys 12 more. How many apples does he have?",
    "Q: A train travels 60 miles per hour for 3 hours. How far does it go?\nA: 60 * 3 = <<60*3=180>>180 miles",
    "Question: Sara bakes 24 cookies and eats 4. How many are left?",
    "Q: There are 15 trees in the grove. Grove workers will plant trees today. After they are done, there will be 21 trees.",
]


def model_solution(rng: random.Random, working: list[str]) -> list[str]:
    """The key's working as a model trained on it writes it: annotations kept or dropped."""
    mode = rng.random()
    if mode < 0.55:
        return working[:]
    if mode < 0.8:
        return [ANNOTATION_RE.sub("", line) for line in working]
    # some lines keep them, some not
    return [line if rng.random() < 0.5 else ANNOTATION_RE.sub("", line) for line in working]


def ending(rng: random.Random, value: str, money: bool) -> str:
    forms = ["A: {v}", "#### {v}", "The answer is {v}.", "A: {v}", "Answer: {v}", "**A: {v}**", "#### {v}", "A:{v}"]
    if money:
        forms += ["A: ${v}", "#### ${v}", "A: {v} dollars", "The answer is ${v}."]
    return rng.choice(forms).format(v=value)


def gsm8k_rows(rng: random.Random, rows: list[dict]) -> list[dict]:
    out: list[dict] = []
    picked = [r for r in rows if "<<" in r["answer"]]
    money = [r for r in picked if "$" in r["answer"]]
    plain = [r for r in picked if "$" not in r["answer"]]
    chosen = rng.sample(money, 70) + rng.sample(plain, 50)
    for row in chosen:
        key = row["answer"]
        working, _, gold = key.rpartition("####")
        gold = gold.strip().replace(",", "")
        working_lines = [line for line in working.strip().split("\n") if line.strip()]
        is_money = "$" in key
        results = [m.strip().rstrip(".").replace(",", "") for m in RESULT_RE.findall(working)]
        try:
            gold_value = float(gold)
        except ValueError:
            continue
        intermediates = [x for x in results if re.fullmatch(r"-?\d+(?:\.\d+)?", x) and float(x) != gold_value]
        gold_form = gold if rng.random() < 0.75 else key  # the pack's bare number, or the whole key
        kind = "numeric" if rng.random() < 0.8 else None
        lines = model_solution(rng, working_lines)
        shape = rng.random()
        if shape < 0.15:  # few-shot style: 'A:' opens the reasoning, "The answer is N." closes it
            response = "A: " + "\n".join(lines) + f"\nThe answer is {gold}."
        elif shape < 0.3:  # a base model continues with the next few-shot question
            response = "\n".join(lines) + f"\nA: {gold}\n\n" + rng.choice(NEXT_QUESTIONS)
        else:
            response = "\n".join(lines) + "\n" + ending(rng, gold, is_money)
        out.append({"group": "round3_gsm8k", "equal": True, "gold": gold_form, "response": response, **({"kind": kind} if kind else {})})
        # the near-miss twin: the same working, ending on another number
        wrong_value = None
        if intermediates and rng.random() < 0.6:
            wrong_value = rng.choice(intermediates)   # a number from the working, the round-two false positive
        if wrong_value is None:
            step = rng.choice([1, -1, 10, 2])
            wrong_value = str(int(gold_value) + step) if gold_value == int(gold_value) else str(gold_value + step)
        if shape < 0.15:
            wrong = "A: " + "\n".join(lines) + f"\nThe answer is {wrong_value}."
        elif shape < 0.3:
            wrong = "\n".join(lines) + f"\nA: {wrong_value}\n\n" + rng.choice(NEXT_QUESTIONS)
        else:
            wrong = "\n".join(lines) + "\n" + ending(rng, wrong_value, is_money)
        out.append({"group": "round3_gsm8k", "equal": False, "gold": gold_form, "response": wrong,
                    "shape": "near_miss", **({"kind": kind} if kind else {})})
    return out


# hand-shaped GSM8K-notation lines from the issue and their twins
GSM8K_BY_HAND = [
    ("21", "A: 21", True), ("21", "A: 24", False), ("21", "A: 12", False),
    ("21", "Then subtract the discount: $24.00 - $3.00 = $<<24-3=21.00>>21.00\nSo she pays $21.\nA: 21", True),
    ("24", "Then subtract the discount: $24.00 - $3.00 = $<<24-3=21.00>>21.00\nSo she pays $21.\nA: 21", False),
    ("3", "Then subtract the discount: $24.00 - $3.00 = $<<24-3=21.00>>21.00\nSo she pays $21.\nA: 21", False),
    ("18", "She makes 9 * 2 = $<<9*2=18>>18 every day.\nA: $18", True),
    ("9", "She makes 9 * 2 = $<<9*2=18>>18 every day.\nA: $18", False),
    ("2", "She makes 9 * 2 = $<<9*2=18>>18 every day.\nA: $18", False),
    ("540", "He runs 9*60=<<9*60=540>>540 meters", True),
    ("60", "He runs 9*60=<<9*60=540>>540 meters", False),
    ("9", "He runs 9*60=<<9*60=540>>540 meters", False),
]


def build_gsm8k(rows: list[dict]) -> str:
    rng = random.Random(1904)
    out = [{"group": "round3_gsm8k", "equal": eq, "gold": g, "response": r, "kind": "numeric",
            **({} if eq else {"shape": "near_miss"})} for g, r, eq in GSM8K_BY_HAND]
    out += gsm8k_rows(rng, rows)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out)


def read_gsm8k() -> list[dict]:
    return [json.loads(line) for line in gsm8k_path().read_text(encoding="utf-8").splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a file is out of date")
    args = parser.parse_args(argv)
    outputs = {PROSE_OUT: build_prose()}
    if gsm8k_path().exists():
        outputs[GSM8K_OUT] = build_gsm8k(read_gsm8k())
    else:
        print(f"GSM8K data absent ({gsm8k_path()}): {GSM8K_OUT.name} left as it is", file=sys.stderr)
    stale = [p for p, text in outputs.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if args.check:
        for p in stale:
            print(f"{p.name} is out of date: run {Path(__file__).name}", file=sys.stderr)
        return 1 if stale else 0
    for p, text in outputs.items():
        p.write_text(text, encoding="utf-8")
        print(f"wrote {p.name}: {text.count(chr(10))} pairs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
