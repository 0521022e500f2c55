"""issue32_round5b.jsonl: issue 32, round five, the second batch -- written after the fixes the
first batch (make_issue32_round5.py) called for, in other wordings again, and graded at first
sight before any change for it (docs/graders.md, "Round five"). Same format and rules as the
first batch: labelled by the mathematics, each pair with a near-miss twin, the probe words of each
shape unlisted by graders/ (checked by `listed_probes`), `first_sight` recorded once.

    python tests/grader_cases/make_issue32_round5b.py            # write the file (keeps first_sight)
    python tests/grader_cases/make_issue32_round5b.py --check    # is the file up to date?
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("make_issue32_round5", HERE / "make_issue32_round5.py")
first = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(first)

OUT = HERE / "issue32_round5b.jsonl"
PAIRS: list[dict] = []
PROBES: dict[str, tuple[str, ...]] = {}
CHOICES = ["36", "40", "42", "48"]
GROUP = "issue32_round5b"

# real GSM8K working (tests/data/gsm8k_working.jsonl)
W_EGGS = first.W_EGGS
W_WHEAT = "Each field gives 3 bushels, and there are 6 fields: 3 * 6 = 18.\n"


def add(shape: str, lang: str, gold: str, response: str, equal: bool, kind: str | None = "numeric") -> None:
    PAIRS.append({"gold": gold, "response": response, "equal": equal, "kind": kind, "group": f"{GROUP}/{shape}",
                  "lang": lang, **({"choices": CHOICES} if kind == "choice" else {})})


def twin(shape: str, lang: str, working: str, template: str, gold: str, wrong: str, kind: str | None = "numeric") -> None:
    add(shape, lang, gold, working + template.format(a=gold), True, kind)
    add(shape, lang, gold, working + template.format(a=wrong), False, kind)


PROBES["currency"] = ("MXN", "CZK", "S/", "лв", "₴", "₫", "₦", "Ksh", "Ft", "Bs", "HK$", "Kč")
for lang, tpl in [("es", "Gana MXN {a} al día."), ("cs", "Vydělá {a} CZK denně."), ("es", "Gana S/ {a} diarios."),
                  ("bg", "Печели {a} лв на ден."), ("uk", "Вона заробляє ₴{a} щодня."), ("vi", "Cô ấy kiếm được {a} ₫ mỗi ngày."),
                  ("en", "She makes ₦{a} a day."), ("en", "She earns Ksh {a} per day."), ("hu", "Naponta {a} Ft-ot keres."),
                  ("es", "Gana Bs. {a} por día."), ("en", "Daily total: HK${a}"), ("cs", "Celkem {a} Kč.")]:
    twin("currency", lang, W_EGGS, tpl, "18", "16")

PROBES["unit"] = ("bushels", "tonnes", "sq ft", "m²", "pcs", "Scheffel", "boisseaux")
for lang, tpl in [("en", "The farm yields {a} bushels of wheat."), ("en", "That is {a} tonnes in all."),
                  ("en", "The plot covers {a} sq ft."), ("en", "The area is {a} m²."), ("en", "Total: {a} pcs."),
                  ("de", "Es sind {a} Scheffel Weizen."), ("fr", "On récolte {a} boisseaux de blé.")]:
    twin("unit", lang, W_WHEAT, tpl, "18", "17")

PROBES["layout"] = ()
for lang, tpl in [("en", "**Answer**\n\n{a}"), ("en", "<b>{a}</b> bushels"), ("en", "Answer = {a}"),
                  ("en", "### {a} bushels"), ("en", "Result → {a}"), ("en", "1. Fields: 6\n2. Per field: 3\n3. **Total: {a}**"),
                  ("en", "```\n{a}\n```"), ("en", "Hence: {a}.")]:
    twin("layout", lang, W_WHEAT, tpl, "18", "19")

PROBES["number-form"] = ("XVIII",)
for lang, tpl, right, wrong in [("en", "So {a} bushels.", "18.00", "18.50"), ("de", "Also {a} €.", "18,00", "16,00"),
                                ("en", "The answer: {a}", "+18", "-18"), ("en", "That makes {a} (eighteen) bushels.", "18", "19"),
                                ("en", "The answer is eighteen ({a}).", "18", "17"), ("en", "Total is 1{a} bushels.", "8", "9")]:
    add("number-form", lang, "18", W_WHEAT + tpl.format(a=right), True)
    add("number-form", lang, "18", W_WHEAT + tpl.format(a=wrong), False)
add("number-form", "en", "18", W_WHEAT + "So 18, or XVIII in Roman numerals.", True)
add("number-form", "en", "18", W_WHEAT + "So 17, or XVII in Roman numerals.", False)
PROBES["approx"] = ("ish",)
add("approx", "en", "18", W_WHEAT + "About 18-ish bushels.", True)   # an approximate answer is its value (docs)
add("approx", "en", "18", W_WHEAT + "About 17-ish bushels.", False)

# negations in languages whose negation word the graders do not list: two values (never either),
# and a lone rejected value is no answer the graders can know is rejected -- labelled by meaning
PROBES["contrast"] = ("inte", "ikke", "mitte", "eikä", "ekki", "hindi")
for lang, s, gold, eq in [("sv", "Det är 18, inte 17.", "18", True), ("sv", "Det är 18, inte 17.", "17", False),
                          ("da", "Det er 18 og ikke 17.", "18", True), ("da", "Det er 18 og ikke 17.", "17", False),
                          ("et", "Vastus on 18, mitte 17.", "18", True), ("et", "Vastus on 18, mitte 17.", "17", False),
                          ("fi", "Vastaus on 18 eikä 17.", "18", True), ("fi", "Vastaus on 18 eikä 17.", "17", False),
                          ("is", "Svarið er 18, ekki 17.", "18", True), ("is", "Svarið er 18, ekki 17.", "17", False),
                          ("tl", "Ang sagot ay 18, hindi 17.", "18", True), ("tl", "Ang sagot ay 18, hindi 17.", "17", False),
                          ("en", "Not seventeen: 18.", "18", True), ("en", "Not seventeen: 18.", "17", False),
                          ("nl", "17? Nee, 18.", "18", True), ("nl", "17? Nee, 18.", "17", False)]:
    add("contrast", lang, gold, W_WHEAT + s, eq)
PROBES["reject-only"] = ("inte", "ekki")
for lang, s in [("sv", "17 är det inte."), ("is", "Það er ekki 17."), ("es", "17 no es."), ("it", "17 non è."),
                ("en", "It's not 17, that much is sure.")]:
    add("reject-only", lang, "17", W_WHEAT + s, False)
    add("reject-only", lang, "18", W_WHEAT + "So 18 bushels.", True)

PROBES["hedge"] = ("give or take", "anywhere from", "through")
for lang, s in [("en", "Around 18, give or take 2."), ("en", "18 ± 2 bushels."),
                ("en", "Anywhere from 16 through 20 bushels."), ("fr", "Environ 16 à 20 boisseaux."),
                ("en", "18 bushels (roughly; could be 20)."), ("de", "So 16, 18 oder so."), ("en", "18, 19, something like that.")]:
    add("hedge", lang, "18", W_WHEAT + s, False)
    add("hedge", lang, "18", W_WHEAT + {"en": "It is 18 bushels.", "fr": "Il y a 18 boisseaux.", "de": "Es sind 18."}[lang], True)

PROBES["number-words"] = ("atten", "divuit", "optsprezece", "tizennyolc", "kahdeksantoista", "вісімнадцять")
for lang, s, eq in [("da", "Det giver atten skæpper.", True), ("da", "Det giver sytten skæpper.", False),
                    ("ca", "Són divuit.", True), ("ca", "Són disset.", False),
                    ("ro", "Sunt optsprezece.", True), ("ro", "Sunt șaptesprezece.", False),
                    ("hu", "Összesen tizennyolc.", True), ("hu", "Összesen tizenhét.", False),
                    ("fi", "Yhteensä kahdeksantoista.", True), ("fi", "Yhteensä seitsemäntoista.", False),
                    ("uk", "Усього вісімнадцять.", True), ("uk", "Усього сімнадцять.", False)]:
    add("number-words", lang, "18", W_WHEAT + s, eq)

PROBES["digits"] = ()
for lang, d in [("gu", "૧૮"), ("pa", "੧੮"), ("lo", "໑໘"), ("km", "១៨"), ("bo", "༡༨"), ("te", "౧౮"), ("kn", "೧೮"),
                ("ml", "൧൮"), ("or", "୧୮"), ("mn", "᠑᠘")]:
    add("digits", lang, "18", W_WHEAT + f"= {d}", True)
    add("digits", lang, "17", W_WHEAT + f"= {d}", False)

PROBES["maths"] = ()
for gold, resp, eq in [
        ("0.75", "$\\boxed{\\dfrac{3}{4}}$", True), ("0.75", "$\\boxed{\\dfrac{4}{3}}$", False),
        ("2x + 1", "$\\boxed{y = 2x + 1}$", True), ("2x + 1", "$\\boxed{y = 2x - 1}$", False),
        ("\\frac{\\pi}{3}", "$\\boxed{60^\\circ}$", True), ("\\frac{\\pi}{3}", "$\\boxed{30^\\circ}$", False),
        ("(1, 3)", "$\\boxed{x \\in (1, 3)}$", True), ("(1, 3)", "$\\boxed{x \\in [1, 3)}$", False),
        ("\\vec{u}\\cdot\\vec{v} = 5", "$\\boxed{5}$", True), ("\\vec{u}\\cdot\\vec{v} = 5", "$\\boxed{-5}$", False),
        ("\\|\\vec{v}\\| = 5", "$\\boxed{5}$", True), ("\\|\\vec{v}\\| = 5", "$\\boxed{25}$", False),
        ("\\sin\\angle ABC = \\frac{3}{5}", "$\\boxed{\\frac35}$", True), ("\\sin\\angle ABC = \\frac{3}{5}", "$\\boxed{\\frac45}$", False),
        ("\\tan\\angle A", "$\\boxed{\\tan \\angle A}$", True), ("\\tan\\angle A", "$\\boxed{\\cot \\angle A}$", False),
        ("(2,3)oder(3,2)", "$\\boxed{(3,2),(2,3)}$", True), ("(2,3)oder(3,2)", "$\\boxed{(2,3)}$", False),
        ("|2\\vec{a}-\\vec{b}| = 2\\sqrt{3}", "$\\boxed{\\sqrt{12}}$", True),
        ("|2\\vec{a}-\\vec{b}| = 2\\sqrt{3}", "$\\boxed{2\\sqrt{2}}$", False),
        ]:
    add("maths", "math", gold, resp, eq, kind=None)

PROBES["choice"] = ("going with", "fel", "rätt", "Nope")
for lang, s, gold in [("en", "The answer is (D) 48.", "D"), ("en", "D)", "D"), ("en", "So it must be 48.", "D"),
                      ("en", "Answer: Ⓓ", "D"), ("en", "I'm going with D. Not C.", "D"), ("es", "La C no es; la D sí.", "D"),
                      ("sv", "C är fel, D är rätt.", "D"), ("en", "C: wrong. D: right.", "D"), ("en", "C? Nope. D.", "D")]:
    wrong = "C" if gold == "D" else "D"
    add("choice", lang, gold, "6 × 8 = 48.\n" + s, True, kind="choice")
    add("choice", lang, wrong, "6 × 8 = 48.\n" + s, False, kind="choice")


def listed_probes() -> list[str]:
    entries = first.lexicon_entries()
    return [w for words in PROBES.values() for w in words if w.lower() in entries]


def main(argv: list[str]) -> int:
    return first.write(argv, PAIRS, OUT, listed_probes(), ())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
