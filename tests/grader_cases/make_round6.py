"""round6_formats.jsonl, round6_formats_b.jsonl: issue 43 -- replies in the formats chat models of
2024 write (an answer inside a JSON object or on the line after its cue, an answer stated before
its explanation, Unicode maths, units inside the box, another name for the same constant, a stated
answer disowned later), written by hand as a chat model would word them, not from the graders'
word lists. Each pair is labelled by the mathematics; most have a near-miss twin.

`first_sight` is the verdict of the graders before any change for the batch: True, False or None
(undecided), recorded once with `--record-first-sight` by whichever graders the interpreter imports
(batch A: /work/main's, run with the base interpreter; batch B: this branch after batch A's fixes)
and kept by a plain run.

    python tests/grader_cases/make_round6.py            # write the files (keeps first_sight)
    python tests/grader_cases/make_round6.py --check    # are the files up to date?
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BATCHES: dict[str, list[dict]] = {"round6_formats": [], "round6_formats_b": []}
LETTERS4 = ["1", "2", "3", "4"]


def add(batch: str, shape: str, gold: str, response: str, equal: bool, kind: str | None = None,
        choices: list[str] | None = None) -> None:
    BATCHES[batch].append({"gold": gold, "response": response, "equal": equal, "kind": kind,
                           "group": f"{batch}/{shape}", **({"choices": choices} if choices else {})})


def twin(batch: str, shape: str, template: str, gold: str, wrong: str, kind: str | None = None,
         choices: list[str] | None = None) -> None:
    """The template with the gold (equal) and with a near miss (unequal)."""
    add(batch, shape, gold, template.replace("{a}", gold), True, kind, choices)
    add(batch, shape, gold, template.replace("{a}", wrong), False, kind, choices)


A = "round6_formats"
BOXES = "There are 9 boxes and each box holds 3 pens, so 9 × 3 = 27 pens.\n\n"

# --- 1. the answer inside a JSON object, or on the line after its cue ---------------------------
for tpl in ['The final answer is:\n\n```json\n{"reasoning": "9 boxes of 3", "answer": "{a}"}\n```',
            '```json\n{\n  "steps": ["9 boxes", "3 pens each", "9 * 3"],\n  "answer": {a}\n}\n```',
            'Here is the result in the requested format:\n{"final_answer": "{a}", "confidence": "high"}',
            'Output:\n```\n{"answer": "{a} pens"}\n```',
            '{"explanation": "Multiply the number of boxes by the pens per box.", "answer": "{a}"}',
            "Final answer:\n\n{a}",
            "The answer is:\n\n**{a}**",
            "So the total number of pens comes out as\n\n$$ {a} $$",
            "**Answer**\n\n{a} pens",
            "Therefore, the final answer is\n\\[\n\\boxed{{a}}\n\\]",
            "#### Final Answer\n{a}"]:
    twin(A, "json-and-cue-line", BOXES + tpl, "27", "26", "numeric")
twin(A, "json-and-cue-line", 'I worked it out step by step.\n```json\n{"answer": "{a}", "work": "x^2 = 9 so x = 3"}\n```',
     "\\frac{3}{4}", "\\frac{4}{3}")
add(A, "json-and-cue-line", "27", BOXES + '```json\n{"reasoning": "27 would be 9 x 3, but one box is empty", "answer": "24"}\n```',
    False, "numeric")
add(A, "json-and-cue-line", "27", BOXES + '```json\n{"answer": null, "reasoning": "cannot tell"}\n```', False, "numeric")
twin(A, "json-and-cue-line", 'Based on the analysis, here is my response:\n{"answer": "{a}", "reason": "Only this option fits."}',
     "C", "B", "choice", LETTERS4)
twin(A, "json-and-cue-line", "After comparing the four options, the correct one is:\n\n**({a})** 3", "C", "D", "choice", LETTERS4)

# --- 2. the stated answer first, then the explanation that discusses the other options -----------
ZH_B = "答案：B\n\n解析：选项A中的说法不对，故A错误；选项C与题意不符，C错误；选项D也不满足条件。"
add(A, "answer-first", "B", ZH_B, True, "choice", LETTERS4)
add(A, "answer-first", "C", ZH_B, False, "choice", LETTERS4)
for tpl in ["【答案】{a}\n【解析】A项把时间说反了，排除；B项偷换了概念；D项于文无据。",
            "正确答案是{a}。\n\n分析：\nA. 该项混淆了因果关系。\nB. 原文并未提及。\nD. 范围扩大了。",
            "答案：{a}\n\n解析：本题考查函数的单调性。对于A，在区间上先增后减；对于B，是减函数；对于D，不是连续函数。",
            "Answer: {a}\n\nExplanation: Option A mixes up cause and effect. Option B overstates the passage's claim, "
            "and D brings in something the author never says.",
            "**Answer: {a}**\n\nWhy the others fail:\n- (A) reverses the timeline.\n- (B) is too broad.\n- (D) is not supported.",
            "The correct choice is {a}.\n\nA would require the current to double, B ignores the resistance, and D has the wrong unit.",
            "选{a}。\n解析：A项“所有”说法绝对；B项无中生有；D项曲解文意。"]:
    add(A, "answer-first", "C", tpl.replace("{a}", "C"), True, "choice", LETTERS4)
    add(A, "answer-first", "B", tpl.replace("{a}", "C"), False, "choice", LETTERS4)
# (the near miss states 12 and then rejects it for 15: labelled unequal when written, it is the reply
# disowning its stated answer; relabelled equal after first sight, see docs/graders.md)
add(A, "answer-first", "15", "答案：15\n解析：小明每组放3个，一共5组，3×5=15个，而不是12个。", True, "numeric")
add(A, "answer-first", "15", "答案：12\n解析：小明每组放3个，一共5组，3×5=15个，而不是12个。", True, "numeric")
add(A, "answer-first", "AC", "答案：AC\n解析：B项错误，因为该反应不可逆；D项错误，条件不足。", True, "choice", LETTERS4)
add(A, "answer-first", "A", "答案：AC\n解析：B项错误，因为该反应不可逆；D项错误，条件不足。", False, "choice", LETTERS4)

# --- 3. Unicode maths ---------------------------------------------------------------------------
for tpl, gold, wrong in [("So the length of the diagonal is √{a}.", "47", "46"),
                         ("The distance between the two points is {a}.", "2√11", "2√13"),
                         ("Hence |AB| = {a} units.", "4√7", "7√4"),
                         ("The exact value is {a}.", "3√3/2", "3√2/2"),
                         ("Therefore x = {a}.", "5√2", "2√5"),
                         ("The side length is {a} cm.", "∛2", "√2"),
                         ("That gives an area of {a}.", "9π/4", "4π/9")]:
    g = {"47": "\\sqrt{47}", "2√11": "2\\sqrt{11}", "4√7": "4\\sqrt{7}", "3√3/2": "\\frac{3\\sqrt{3}}{2}",
         "5√2": "5\\sqrt{2}", "∛2": "\\sqrt[3]{2}", "9π/4": "\\frac{9\\pi}{4}"}[gold]
    add(A, "unicode-maths", g, tpl.replace("{a}", gold), True)
    add(A, "unicode-maths", g, tpl.replace("{a}", wrong), False)
twin(A, "unicode-maths", "We need the inverse of 3 modulo 1250: 3 × 417 = 1251 ≡ 1, so 3⁻¹ ≡ {a} (mod 1250).", "417", "418")
twin(A, "unicode-maths", "The inverse we want is 3⁻¹ ≡ {a} (mod 1250).", "417", "833")
add(A, "unicode-maths", "x^2 - 5x + 6", "So f(x) = x² − 5x + 6.", True)
add(A, "unicode-maths", "x^2 - 5x + 6", "So f(x) = x² + 5x + 6.", False)
add(A, "unicode-maths", "10^{-3}", "The concentration is 10⁻³.", True)
add(A, "unicode-maths", "10^{-3}", "The concentration is 10⁻².", False)

# --- 4. units inside the box ---------------------------------------------------------------------
for box, gold, equal in [("6.2\\times10^{-3}\\,\\text{erg s}^{-1}", "6.2\\times 10^{-3}", True),
                         ("6.2\\times10^{-4}\\,\\text{erg s}^{-1}", "6.2\\times 10^{-3}", False),
                         ("9.8\\ \\text{m/s}^2", "9.8", True), ("9.6\\ \\text{m/s}^2", "9.8", False),
                         ("3.0 \\times 10^{8}\\ \\mathrm{m\\,s^{-1}}", "3\\times 10^8", True),
                         ("3.0 \\times 10^{6}\\ \\mathrm{m\\,s^{-1}}", "3\\times 10^8", False),
                         ("25\\,\\text{km}\\,\\text{h}^{-1}", "25", True), ("52\\,\\text{km}\\,\\text{h}^{-1}", "25", False),
                         ("1.2\\ \\text{kg}\\cdot\\text{m}^2", "1.2", True), ("2.1\\ \\text{kg}\\cdot\\text{m}^2", "1.2", False),
                         ("2.5\\times 10^{4}\\ \\text{N/C}", "2.5\\times10^4", True),
                         ("2.5\\times 10^{5}\\ \\text{N/C}", "2.5\\times10^4", False),
                         ("4.5\\,\\mathrm{J\\,K^{-1}\\,mol^{-1}}", "4.5", True), ("5.4\\,\\mathrm{J\\,K^{-1}\\,mol^{-1}}", "4.5", False),
                         ("300\\,\\mathrm{K}", "300", True), ("7.1 \\text{ eV}", "7.1", True), ("1.7 \\text{ eV}", "7.1", False)]:
    add(A, "units-in-box", gold, f"Putting the numbers in, the result is\n$$\\boxed{{{box}}}$$", equal)

# --- 5. notation that names the same thing -------------------------------------------------------
for answer, gold, equal in [("y = c\\,e^{2x}", "y = C e^{2x}", True), ("y = c\\,e^{-2x}", "y = C e^{2x}", False),
                            ("y = c_1 e^{x} + c_2 e^{-x}", "y = C_1 e^{x} + C_2 e^{-x}", True),
                            ("y = c_1 e^{x} + c_2 e^{x}", "y = C_1 e^{x} + C_2 e^{-x}", False),
                            ("y = \\frac{x^3}{3} + c", "y = \\frac{x^3}{3} + C", True),
                            ("y = \\frac{x^3}{3} + c", "y = \\frac{x^2}{2} + C", False),
                            ("\\ln|x| + c", "\\ln|x| + C", True),
                            ("I(t) = I(0)\\, e^{-t/\\tau}", "I(t) = I_0 e^{-t/\\tau}", True),
                            ("I(t) = I(0)\\, e^{t/\\tau}", "I(t) = I_0 e^{-t/\\tau}", False),
                            ("N(t) = N_0 e^{-\\lambda t}", "N(t) = N(0) e^{-\\lambda t}", True),
                            ("xy = 1", "y = \\frac{1}{x}", True), ("xy = 2", "y = \\frac{1}{x}", False),
                            ("y = \\frac{6 - 2x}{3}", "2x + 3y = 6", True), ("y = \\frac{6 - 3x}{2}", "2x + 3y = 6", False),
                            ("x^2 = 4 - y^2", "x^2 + y^2 = 4", True), ("x^2 = 4 + y^2", "x^2 + y^2 = 4", False)]:
    add(A, "notation", gold, f"Solving gives\n$$\\boxed{{{answer}}}$$", equal)
add(A, "notation", "y = C e^{2x}", "$$\\boxed{y = C e^{2x} + 1}$$", False)
add(A, "notation", "x^2 + y^2 = 4", "So the curve is $$\\boxed{y = \\sqrt{4 - x^2}}$$", False)

# --- 6. a stated answer disowned later -----------------------------------------------------------
OPTS10 = [str(n) for n in range(10, 20)]
add(A, "disowned", "G", "The answer is (G).\n\nLet me double-check G: if it were 16, the remainder would be 4, which fails the "
    "second condition. So G does not work after all; the value must be 17, which is (H).", False, "choice", OPTS10)
add(A, "disowned", "H", "The answer is (G).\n\nLet me double-check G: if it were 16, the remainder would be 4, which fails the "
    "second condition. So G does not work after all; the value must be 17, which is (H).", True, "choice", OPTS10)
add(A, "disowned", "G", "The answer is (G).\n\nChecking G: 16 leaves a remainder of 1 when divided by 3 and of 0 when divided "
    "by 4, exactly as required. So (G) holds.", True, "choice", OPTS10)
add(A, "disowned", "B", "The answer is B.\n\nHmm, on reflection B can't be it: the passage says the opposite in its last "
    "paragraph. Going back over the options, D fits best.", False, "choice", LETTERS4)
add(A, "disowned", "D", "The answer is B.\n\nHmm, on reflection B can't be it: the passage says the opposite in its last "
    "paragraph. Going back over the options, D fits best.", True, "choice", LETTERS4)
add(A, "disowned", "12", "The answer is 12.\n\nVerifying: 12 × 3 = 36, but the total should be 39, so 12 falls short. "
    "Redoing the division, 39 / 3 = 13 per bag.", False, "numeric")
add(A, "disowned", "13", "The answer is 12.\n\nVerifying: 12 × 3 = 36, but the total should be 39, so 12 falls short. "
    "Redoing the division, 39 / 3 = 13 per bag.", True, "numeric")
add(A, "disowned", "12", "The answer is 12.\n\nVerifying: 12 × 3 = 36, and 36 is indeed the total. ✓", True, "numeric")


B = "round6_formats_b"
APPLES = "Each crate holds 8 apples and there are 7 crates: 8 × 7 = 56 apples.\n\n"

# --- json and the line after a cue, other wordings ---------------------------------------------------
for tpl in ['Returning the result as JSON, as asked:\n\n{"Answer": "{a}"}',
            '```\n{"explanation": "8 apples per crate times 7 crates", "final answer": {a}}\n```',
            '<output>\n{"answer": "{a} apples", "units": "apples"}\n</output>',
            'My answer:\n\n> {a}',
            "**Final result**\n\n= {a} apples",
            "ANSWER\n{a}",
            "Hence the solution is\n\n$${a}$$"]:
    twin(B, "json-and-cue-line", APPLES + tpl, "56", "54", "numeric")
add(B, "json-and-cue-line", "56", APPLES + '{"answer": "not enough information"}', False, "numeric")

# --- answer first, then an explanation that names the other options ---------------------------------
for tpl, gold, other in [
        ("Correct option: (B)\n\nReasoning: (A) confuses speed with velocity; (C) ignores friction; (D) has the wrong sign.", "B", "C"),
        ("B is the one.\n\nA is ruled out by the second sentence, C contradicts the graph, and D overgeneralizes.", "B", "A"),
        ("【答案】D\n【解析】A错，温度不变；B错，压强增大；C错，体积减小。", "D", "A"),
        ("正解：C\n\n理由：Aは時期が違う。Bは地域が違う。Dは主語が違う。", "C", "B"),
        ("Answer — A\n\nWhy not the others: B assumes a constant rate, C double counts, D drops the units.", "A", "D"),
        ("选B。\n\n【分析】A项表述片面；C项与原文相反；D项混淆了概念。", "B", "D")]:
    add(B, "answer-first", gold, tpl, True, "choice", LETTERS4)
    add(B, "answer-first", other, tpl, False, "choice", LETTERS4)

# --- disowned later ----------------------------------------------------------------------------------
add(B, "disowned", "C", "Final answer: C\n\nActually, rereading the question, C only covers the first case; D covers both, so I'll go with D.",
    False, "choice", LETTERS4)
add(B, "disowned", "D", "Final answer: C\n\nActually, rereading the question, C only covers the first case; D covers both, so I'll go with D.",
    True, "choice", LETTERS4)
add(B, "disowned", "A", "I'd pick A.\n\nOn second thought A is not right, since the passage never mentions costs.", False, "choice", LETTERS4)
add(B, "disowned", "42", "The answer is 42.\n\nHmm, 42 isn't right: I forgot the 6 that were returned. 42 + 6 = 48.", False, "numeric")
add(B, "disowned", "48", "The answer is 42.\n\nHmm, 42 isn't right: I forgot the 6 that were returned. 42 + 6 = 48.", True, "numeric")
add(B, "disowned", "42", "The answer is 42.\n\nQuick check: 6 × 7 = 42, which matches. ✓", True, "numeric")

# --- Unicode maths, other shapes ------------------------------------------------------------------------
for text, gold, equal in [("The side is √(50) cm.", "5\\sqrt{2}", True), ("The side is √(50) cm.", "\\sqrt{5}", False),
                          ("Hence r = ³√4.", "\\sqrt[3]{4}", True), ("x = −3√2", "-3\\sqrt{2}", True), ("x = −3√2", "3\\sqrt{2}", False),
                          ("The area is 4π cm².", "4\\pi", True), ("The area is 4π cm².", "2\\pi", False),
                          ("k = 2⁵ = 32", "32", True), ("k = 2⁵ = 32", "10", False), ("So 5⁻¹ ≡ 3 (mod 7).", "3", True),
                          ("So 5⁻¹ ≡ 3 (mod 7).", "5", False), ("f'(x) = 3x² − 2x", "3x^2-2x", True), ("f'(x) = 3x² − 2x", "3x^2+2x", False)]:
    add(B, "unicode-maths", gold, text, equal)

# --- units in the box, other shapes ---------------------------------------------------------------------
for box, gold, equal in [("-285.8\\ \\mathrm{kJ/mol}", "-285.8", True), ("-258.8\\ \\mathrm{kJ/mol}", "-285.8", False),
                         ("1.5 \\times 10^{-2}\\,\\mathrm{mol\\,L^{-1}}", "0.015", True), ("1.5 \\times 10^{-3}\\,\\mathrm{mol\\,L^{-1}}", "0.015", False),
                         ("12\\,\\text{N}\\cdot\\text{m}", "12", True), ("340\\ \\mathrm{m/s}", "340", True), ("430\\ \\mathrm{m/s}", "340", False)]:
    add(B, "units-in-box", gold, f"Therefore\n$$\\boxed{{{box}}}$$", equal)

# --- notation, other shapes -------------------------------------------------------------------------------
for answer, gold, equal in [("y = Ke^{-3t}", "y = Ce^{-3t}", False), ("P(t) = P_0 e^{0.02t}", "P(t) = P(0)e^{0.02t}", True),
                            ("-\\cos x + c", "-\\cos x + C", True), ("\\cos x + c", "-\\cos x + C", False),
                            ("y = \\frac{12}{x}", "xy = 12", True), ("y = \\frac{12}{x^2}", "xy = 12", False)]:
    add(B, "notation", gold, f"$$\\boxed{{{answer}}}$$", equal)


def write(argv: list[str]) -> int:
    status = 0
    for name, pairs in BATCHES.items():
        out = HERE / f"{name}.jsonl"
        previous = {}
        if out.exists():
            for line in out.read_text(encoding="utf-8").splitlines():
                r = json.loads(line)
                previous[(r["gold"], r["response"])] = r.get("first_sight")
        if f"--record-first-sight={name}" in argv:
            from evalsuite.graders import grade  # the graders this interpreter imports
            previous = {(p["gold"], p["response"]): grade(p["gold"], p["response"], kind=p["kind"],
                                                          choices=p.get("choices", ())).equal for p in pairs}
        rows = [{**p, "first_sight": previous.get((p["gold"], p["response"]))} for p in pairs]
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        if "--check" in argv:
            status |= 0 if out.exists() and out.read_text(encoding="utf-8") == text else 1
            continue
        if pairs:
            out.write_text(text, encoding="utf-8")
            print(f"{out.name}: {len(pairs)} pairs ({sum(p['equal'] for p in pairs)} equal)")
    return status


if __name__ == "__main__":
    sys.exit(write(sys.argv[1:]))
