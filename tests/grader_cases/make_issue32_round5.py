"""issue32_round5.jsonl: issue 32, round five -- a fresh batch written after parts A and B were
merged, in shapes and words the graders do not list, graded at first sight before any change
for it (docs/graders.md, "Round five"). Each pair is labelled by the mathematics and has a
near-miss twin (the same sentence with a wrong value, or the contrast turned round).

The words a template probes (a currency, a unit, a contrast word, a hedge) are listed with it
in PROBES; `unlisted_probes()` checks that none of them is an entry of a grader lexicon (a word
the graders list teaches nothing about generalisation), and tests/test_graders_round5.py keeps
that true after the fixes. `first_sight` is the verdict of the graders before round five
(2c2f530): True, False or None (undecided), recorded once by `--record-first-sight` and kept.

    python tests/grader_cases/make_issue32_round5.py            # write the file (keeps first_sight)
    python tests/grader_cases/make_issue32_round5.py --check    # is the file up to date?
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "issue32_round5.jsonl"
GRADERS = HERE.parents[1] / "graders"

# real GSM8K working (tests/data/gsm8k_working.jsonl), the final '#### N' line dropped
W_ROBE = "It takes 2/2=<<2/2=1>>1 bolt of white fiber\nSo the total amount of fabric is 2+1=<<2+1=3>>3 bolts of fabric\n"
W_EGGS = "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = 18 dollars every day at the farmer's market.\n"
W_SPRINT = "He sprints 3*3=9 times\nSo he runs 9*60=540 meters\n"
W_FLOUR = "Each loaf needs 2 kg of flour, and she bakes 7 loaves: 2 * 7 = 14.\n"
W_FEES = "The tickets cost 3 * 4 = 12 and the snacks 2 more, so 12 + 2 = 14.\n"

PAIRS: list[dict] = []
CHOICES = ["36", "40", "42", "48"]   # the options of the choice pairs (A-D)
PROBES: dict[str, tuple[str, ...]] = {}   # shape -> the unlisted words its templates use
# Words the batch was written with that a stricter check (every string constant and regex
# alternative of graders/, after first sight) found listed after all: normalise.py's currency codes
# (since replaced by their shape, three capitals), fuzzy.py's 'perhaps' (the text grader), and
# choice.py's 'option'. Their pairs stay (they were graded at first sight); docs/graders.md gives the
# figure without them too. No other probe word may become a lexicon entry.
LISTED_AT_FIRST_SIGHT = ("USD", "EUR", "CHF", "GBP", "perhaps", "Option")


def add(shape: str, lang: str, gold: str, response: str, equal: bool, kind: str | None = "numeric") -> None:
    PAIRS.append({"gold": gold, "response": response, "equal": equal, "kind": kind,
                  "group": f"issue32_round5/{shape}", "lang": lang, **({"choices": CHOICES} if kind == "choice" else {})})


def twin(shape: str, lang: str, working: str, template: str, gold: str, wrong: str, kind: str | None = "numeric") -> None:
    """The template with the gold (equal) and with a near miss (unequal)."""
    add(shape, lang, gold, working + template.format(a=gold), True, kind)
    add(shape, lang, gold, working + template.format(a=wrong), False, kind)


def turned(shape: str, lang: str, working: str, template: str, gold: str, wrong: str) -> None:
    """A contrast: '{a} <contrast> {b}' asserts a and rejects b; turned round, it is wrong."""
    add(shape, lang, gold, working + template.format(a=gold, b=wrong), True)
    add(shape, lang, gold, working + template.format(a=wrong, b=gold), False)


# --- numeric: currency signs and codes before or after the number --------------------------------
PROBES["currency"] = ("USD", "EUR", "Rs", "AED", "kr", "zł", "R$", "₹", "₩", "₺", "CHF", "NOK", "GBP")
for lang, tpl in [("en", "So Janet earns USD {a} a day."), ("en", "Janet makes EUR {a} per day."),
                  ("en", "Final answer: Rs. {a}"), ("en", "She takes home AED {a} daily."),
                  ("en", "She earns {a} CHF a day."), ("en", "That is ₹{a} per day."),
                  ("de", "Sie verdient {a} € am Tag."), ("fr", "Elle gagne {a} € par jour."),
                  ("es", "Gana {a}€ al día."), ("pt", "Ela ganha R$ {a} por dia."),
                  ("pl", "Zarabia {a} zł dziennie."), ("sv", "Hon tjänar {a} kr per dag."),
                  ("ko", "하루에 ₩{a}을 법니다."), ("tr", "Günde {a} ₺ kazanır."),
                  ("en", "Daily income: GBP {a}.00"), ("en", "She makes {a} NOK every day."),
                  ]:
    twin("currency", lang, W_EGGS, tpl, "18", "9")

# --- numeric: a unit of measure with 'of …', apiece, each -----------------------------------------
PROBES["unit-of"] = ("kg", "litres", "apiece", "sacks", "pounds")
for lang, tpl in [("en", "She needs {a} kg of flour in all."), ("en", "That's {a} kilograms of flour."),
                  ("en", "So the baker uses {a} kg of flour, which fills about two sacks."),
                  ("fr", "Il lui faut {a} kg de farine."), ("de", "Sie braucht {a} kg Mehl."),
                  ("es", "Necesita {a} kilos de harina."), ("ru", "Ей нужно {a} кг муки."),
                  ("zh", "她一共需要{a}公斤面粉。"), ("ja", "小麦粉は全部で{a}kg必要です。")]:
    twin("unit-of", lang, W_FLOUR, tpl, "14", "7")
for lang, tpl in [("en", "The tickets and snacks come to {a} apiece."), ("en", "It comes to {a} dollars each."),
                  ("de", "Das macht {a} Euro pro Person.")]:
    twin("unit-of", lang, W_FEES, tpl, "14", "12")

# --- numeric: markdown layouts -------------------------------------------------------------------
PROBES["markdown"] = ()
for lang, tpl in [("en", "| Item | Amount |\n|---|---|\n| Eggs sold | 9 |\n| **Total earned** | **${a}** |"),
                  ("en", "## Result: {a} dollars"), ("en", "Final answer: **${a}.00**"),
                  ("en", "**Final answer: ${a}.00**"), ("en", "> **Answer** — {a}"),
                  ("en", "- Eggs left: 9\n- Money: **{a}**"), ("fr", "### Réponse finale\n**{a} dollars**"),
                  ("de", "| Posten | Betrag |\n|---|---|\n| Summe | {a} $ |"),
                  ("en", "**Total = {a}**"), ("en", "__Answer:__ `{a}`")]:
    twin("markdown", lang, W_EGGS, tpl, "18", "16")

# --- numeric: number forms: +14, 14.0, 14. at a sentence end, mixed 1.4万, scale words ----------
PROBES["number-form"] = ("K",)
for lang, working, tpl, gold, right, wrong in [
        ("en", W_ROBE, "The change is {a} bolts.", "3", "+3", "+4"), ("en", W_ROBE, "Total: {a} bolts", "3", "3.0", "2.0"),
        ("en", W_ROBE, "The robe takes {a}. That's the answer.", "3", "3", "2"),
        ("en", W_ROBE, "It takes {a}.", "3", "3", "1"),
        ("zh", "", "总利润为{a}万美元。", "70000", "7", "8"), ("zh", "", "利润是{a}万元。", "14000", "1.4", "1.3"),
        ("ja", "", "利益は{a}万ドルです。", "70000", "7", "5"),
        ("en", "", "He made a profit of ${a} million.", "70000", "0.07", "0.08"),
        ("en", "", "He made a profit of {a}K.", "70000", "70", "130"),
        ("en", "", "Profit: {a} thousand dollars.", "70000", "70", "120")]:
    add("number-form", lang, gold, working + tpl.format(a=right), True)
    add("number-form", lang, gold, working + tpl.format(a=wrong), False)

# --- numeric: ordinals ('finished 14th' is the position 14) ---------------------------------------
PROBES["ordinal"] = ("th", "rd", "place", "position")
for lang, tpl, gold, wrong in [("en", "She finished in {a} place.", "14", "13"), ("en", "So Maya is {a} in line.", "3", "4"),
                               ("en", "He ends up in {a} position.", "2", "3")]:
    suffix = {"14": "th", "13": "th", "3": "rd", "4": "th", "2": "nd"}
    add("ordinal", lang, gold, "There are 13 runners ahead of her.\n" + tpl.format(a=gold + suffix[gold]), True)
    add("ordinal", lang, gold, "There are 13 runners ahead of her.\n" + tpl.format(a=wrong + suffix[wrong]), False)

# --- numeric: contrasts in words the graders do not list -------------------------------------------
PROBES["contrast"] = ("as against", "in place of", "à la place de", "al posto di", "no lugar de", "an Stelle von",
                      "взамен", "a diferencia de", "and definitely not", "never mind")
for lang, tpl in [("en", "She needs {a} kg of flour, as against the {b} I guessed at first."),
                  ("en", "So {a} kg, in place of {b}."),
                  ("fr", "Il faut {a} kg de farine, à la place de {b}."),
                  ("it", "Servono {a} kg di farina al posto di {b}."),
                  ("pt", "São {a} kg de farinha no lugar de {b}."),
                  ("de", "Es sind {a} kg Mehl an Stelle von {b}."),
                  ("ru", "Нужно {a} кг муки взамен {b}."),
                  ("es", "Se necesitan {a} kg, a diferencia de los {b} que supuse."),
                  ("en", "The answer is {a} — and definitely not {b}."),
                  ]:
    turned("contrast", lang, W_FLOUR, tpl, "14", "7")
# the rejected value first, in other words
for lang, tpl in [("en", "Never mind {b}: she needs {a} kg."), ("en", "It isn't {b} kg; it's {a} kg."),
                  ("zh", "不是{b}公斤，应为{a}公斤。"), ("ja", "{b}kgではなくて、{a}kgが必要です。"),
                  ("de", "Statt {b} kg braucht sie {a} kg."), ("es", "En lugar de {b}, necesita {a} kg."),
                  ("ru", "Вместо {b} кг нужно {a} кг."), ("zh", "需要{a}公斤而非{b}公斤。"),
                  ("fr", "Pas {b} kg mais {a} kg."), ("en", "She needs {a} kg as opposed to {b}.")]:
    turned("contrast", lang, W_FLOUR, tpl, "14", "7")

# --- numeric: rejection-only endings and repeated final answers ------------------------------------
PROBES["reject-only"] = ()
for lang, s in [("en", "So the answer can't be 14."), ("en", "The answer is definitely not 14."),
                ("fr", "La réponse n'est certainement pas 14."), ("de", "14 ist es jedenfalls nicht."),
                ("ja", "答えは14ではありません。"), ("zh", "答案绝对不是14。")]:
    add("reject-only", lang, "14", W_FLOUR + s, False)
    add("reject-only", lang, "14", W_FLOUR + "So she needs 14 kg.", True)
PROBES["repeated"] = ()
for lang, s, eq in [("en", "The answer is 14.\n\nFinal answer: 14", True), ("en", "The answer is 14.\n\nFinal answer: 7", False),
                    ("en", "So 14 kg. Answer: 14 kg.", True), ("en", "So 14 kg. Answer: 15 kg.", False),
                    ("de", "Antwort: 14.\nAlso nochmal: 14 kg.", True), ("de", "Antwort: 14.\nAlso nochmal: 16 kg.", False),
                    ("en", "She needs 14 kg of flour.\n\nCheck: 7 loaves × 2 kg = 14 kg. ✓", True),
                    ("en", "She needs 12 kg of flour.\n\nCheck: 6 loaves × 2 kg = 12 kg. ✓", False),
                    ("en", "So the answer is 14.\n\nVerification: 14 / 2 = 7 loaves, which matches.", True),
                    ("en", "So the answer is 16.\n\nVerification: 16 / 2 = 8 loaves, close to the 7 we have.", False)]:
    add("repeated", lang, "14", W_FLOUR + s, eq)

# --- numeric: hedges written other ways (never right) ---------------------------------------------
PROBES["hedge"] = ("somewhere", "depending", "could be", "perhaps", "possibly", "vielleicht", "peut-être", "quizás",
                   "может быть", "可能", "たぶん", "ou alors")
for lang, s in [("en", "It's somewhere around 14 to 16 kg."), ("en", "She needs 14/16 kg depending on the loaf."),
                ("en", "Could be 14, could be 16."), ("en", "Perhaps 14 kg, possibly 16."),
                ("de", "Vielleicht 14, vielleicht 16 kg."), ("fr", "Peut-être 14 kg, peut-être 16."),
                ("es", "Quizás 14, quizás 16 kilos."), ("ru", "Может быть, 14, а может быть, 16 кг."),
                ("zh", "可能是14公斤，也可能是16公斤。"), ("ja", "たぶん14kg、たぶん16kgです。"),
                ("en", "The answer is 14 (or 16 if the recipe changes)."), ("fr", "Il faut 14 kg, ou alors 16 kg.")]:
    add("hedge", lang, "14", W_FLOUR + s, False)
    add("hedge", lang, "14", W_FLOUR + re.sub(r"\b16\b", "14", s), None)  # placeholder, replaced below
for i, p in enumerate(PAIRS):  # the twin of a hedge: the firm statement of the gold
    if p["group"] == "issue32_round5/hedge" and p["equal"] is None:
        p["response"], p["equal"] = W_FLOUR + {"en": "She needs 14 kg.", "de": "Sie braucht 14 kg.",
                                               "fr": "Il faut 14 kg.", "es": "Necesita 14 kilos.",
                                               "ru": "Нужно 14 кг.", "zh": "需要14公斤。", "ja": "14kgです。"}[p["lang"]], True

# --- numeric: number words in more languages; other digits ---------------------------------------
PROBES["number-words"] = ("quatorze", "catorce", "vierzehn", "quattordici", "catorze", "veertien", "on dört",
                          "δεκατέσσερα", "चौदह", "fjorton", "čtrnáct", "十四", "fourteen")
for lang, s, eq in [("fr", "Il lui faut quatorze kilos.", True), ("fr", "Il lui faut seize kilos.", False),
                    ("es", "Necesita catorce kilos de harina.", True), ("es", "Necesita doce kilos de harina.", False),
                    ("it", "Servono quattordici chili.", True), ("it", "Servono sedici chili.", False),
                    ("pt", "São catorze quilos.", True), ("pt", "São quinze quilos.", False),
                    ("nl", "Ze heeft veertien kilo nodig.", True), ("nl", "Ze heeft zestien kilo nodig.", False),
                    ("tr", "On dört kilo un gerekiyor.", True), ("tr", "On iki kilo un gerekiyor.", False),
                    ("el", "Χρειάζεται δεκατέσσερα κιλά.", True), ("el", "Χρειάζεται δεκαέξι κιλά.", False),
                    ("hi", "उसे चौदह किलो आटा चाहिए।", True), ("hi", "उसे बारह किलो आटा चाहिए।", False),
                    ("sv", "Hon behöver fjorton kilo.", True), ("sv", "Hon behöver sexton kilo.", False),
                    ("cs", "Potřebuje čtrnáct kilogramů.", True), ("cs", "Potřebuje dvanáct kilogramů.", False),
                    ("ja", "全部で十四キロです。", True), ("ja", "全部で十六キロです。", False),
                    ("en", "She needs a total of fourteen kilograms.", True), ("en", "She needs a total of forty kilograms.", False)]:
    add("number-words", lang, "14", W_FLOUR + s, eq)
PROBES["digits"] = ()
for lang, s, eq in [("fa", "پاسخ ۱۴ کیلوگرم است.", True), ("fa", "پاسخ ۱۶ کیلوگرم است.", False),
                    ("bn", "উত্তর হল ১৪ কেজি।", True), ("bn", "উত্তর হল ১২ কেজি।", False),
                    ("th", "ต้องใช้แป้ง ๑๔ กิโลกรัม", True), ("th", "ต้องใช้แป้ง ๑๒ กิโลกรัม", False),
                    ("my", "အဖြေမှာ ၁၄ ကီလိုဖြစ်သည်။", True), ("my", "အဖြေမှာ ၁၇ ကီလိုဖြစ်သည်။", False),
                    ("ta", "விடை ௧௪ கிலோ.", True), ("ta", "விடை ௧௫ கிலோ.", False)]:
    add("digits", lang, "14", W_FLOUR + s, eq)

# --- maths: equivalence shapes ----------------------------------------------------------------------
PROBES["maths"] = ()
for gold, resp, eq in [
        ("\\frac{1}{2}", "The probability is $0.5$.", True), ("\\frac{1}{2}", "The probability is $0.25$.", False),
        ("0.5", "So the answer is $\\boxed{\\tfrac12}$.", True), ("0.5", "So the answer is $\\boxed{\\tfrac13}$.", False),
        ("x = 3", "The answer is $\\boxed{3}$.", True), ("x = 3", "The answer is $\\boxed{-3}$.", False),
        ("3", "Solving gives $\\boxed{x = 3}$.", True), ("3", "Solving gives $\\boxed{x = 4}$.", False),
        ("90^\\circ", "The angle is $\\boxed{90}$ degrees.", True), ("90^\\circ", "The angle is $\\boxed{80^\\circ}$.", False),
        ("\\frac{\\pi}{2}", "The angle is $\\boxed{\\frac{\\pi}{2}}$ radians.", True),
        ("\\frac{\\pi}{2}", "The angle is $\\boxed{\\frac{\\pi}{3}}$ radians.", False),
        ("(2, \\infty)", "The solution set is all $x$ greater than $2$, i.e. $\\boxed{(2,\\infty)}$.", True),
        ("(2, \\infty)", "The solution set is $\\boxed{[2,\\infty)}$.", False),
        ("\\vec{v} = (1, 2)", "So $\\boxed{(1,2)}$.", True), ("\\vec{v} = (1, 2)", "So $\\boxed{(2,1)}$.", False),
        ("|\\vec{a}+\\vec{b}| = \\sqrt{7}", "$\\boxed{\\sqrt{7}}$", True),
        ("|\\vec{a}+\\vec{b}| = \\sqrt{7}", "$\\boxed{\\sqrt{5}}$", False),
        ("\\vec{a}\\cdot\\vec{b}", "$\\boxed{\\vec{b}\\cdot\\vec{a}}$", True),
        ("\\vec{a}\\cdot\\vec{b}", "$\\boxed{\\vec{a}\\times\\vec{b}}$", False),
        ("\\cos\\angle BAC = \\frac{1}{3}", "$\\boxed{\\frac{1}{3}}$", True),
        ("\\cos\\angle BAC = \\frac{1}{3}", "$\\boxed{\\frac{2}{3}}$", False),
        ("\\cos\\angle BAC", "$\\boxed{\\cos \\angle BAC}$", True), ("\\cos\\angle BAC", "$\\boxed{\\sin \\angle BAC}$", False),
        ("\\frac{1}{3}", "Hence $\\cos\\angle BAC = \\boxed{\\frac{1}{3}}$.", True),
        ("\\frac{1}{3}", "Hence $\\cos\\angle BAC = \\boxed{\\frac{1}{4}}$.", False),
        ("(11,7)or(7,11)", "$\\boxed{(7,11),(11,7)}$", True), ("(11,7)or(7,11)", "$\\boxed{(7,11)}$", False),
        ("(11,7) \\text{ or } (7,11)", "The pairs are $(11,7)$ and $(7,11)$: $\\boxed{(11,7),(7,11)}$", True),
        ("(11,7) \\text{ or } (7,11)", "$\\boxed{(11,7),(7,12)}$", False),
        ("25\\%", "The rate is $\\boxed{25\\%}$.", True), ("25\\%", "The rate is $\\boxed{20\\%}$.", False),
        ("2.5", "The ratio is $\\boxed{\\frac{5}{2}}$.", True), ("2.5", "The ratio is $\\boxed{\\frac{2}{5}}$.", False),
        ]:
    add("maths", "math", gold, resp, eq, kind=None)

# --- choice: letter shapes ---------------------------------------------------------------------
PROBES["choice"] = ("Option", "correct one")
for lang, s, gold in [("en", "The answer is (C) 42.", "C"), ("en", "Option C is the right one.", "C"),
                      ("en", "C) 42", "C"), ("en", "So the answer is 42.", "C"),
                      ("en", "Answer: \u24b8", "C"), ("en", "**\U0001d402**", "C"),
                      ("en", "C is not right, D is.", "D"), ("en", "I'd go with D, not C.", "D"),
                      ("fr", "C n'est pas juste ; c'est D.", "D"), ("de", "C stimmt nicht, D stimmt.", "D"),
                      ("es", "La C no es correcta, la D sí.", "D"), ("zh", "C不对，D才对。", "D")]:
    wrong = {"C": "B", "D": "C"}[gold]
    add("choice", lang, gold, "Let's compute 6 × 7 = 42.\n" + s, True, kind="choice")
    add("choice", lang, wrong, "Let's compute 6 × 7 = 42.\n" + s, False, kind="choice")


def lexicon_entries() -> set[str]:
    """Every string constant of graders/*.py but docstrings (lexicon entries, regexes), and each
    alternative of a regex, lower-cased: the words the graders list."""
    import ast

    entries: set[str] = set()
    for path in GRADERS.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                entries.add(node.value.removeprefix("~").lower())
                entries.update(re.sub(r"\\[sbw]\S?|[()?:*+\\\[\]^$]", "", part).strip().lower()
                               for part in node.value.split("|"))
    return entries


def listed_probes() -> list[str]:
    """The probe words that are entries of a grader lexicon (should be none)."""
    entries = lexicon_entries()
    return [w for words in PROBES.values() for w in words if w.lower() in entries]


def write(argv: list[str], pairs: list[dict], out: Path, listed: list[str], known_listed: tuple[str, ...]) -> int:
    """Write (or with --check compare) a batch; `--record-first-sight` grades it with the graders
    of the day and keeps their verdicts, otherwise the recorded ones are kept."""
    previous = {}
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            previous[(r["gold"], r["response"])] = r.get("first_sight")
    if "--record-first-sight" in argv:
        sys.path.insert(0, str(HERE.parents[1]))
        from evalsuite.graders import grade
        previous = {(p["gold"], p["response"]): grade(p["gold"], p["response"], kind=p["kind"],
                                                      choices=p.get("choices", ())).equal
                    for p in pairs}
    rows = [{**p, "first_sight": previous.get((p["gold"], p["response"]))} for p in pairs]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if "--check" in argv:
        return 0 if out.exists() and out.read_text(encoding="utf-8") == text else 1
    unknown = [w for w in listed if w not in known_listed]
    if unknown:
        print(f"probe words the graders list (choose others): {unknown}")
        return 1
    out.write_text(text, encoding="utf-8")
    print(f"{out.name}: {len(pairs)} pairs ({sum(p['equal'] for p in pairs)} equal)")
    return 0


def main(argv: list[str]) -> int:
    return write(argv, PAIRS, OUT, listed_probes(), LISTED_AT_FIRST_SIGHT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
