"""Writes own_questions.jsonl: 200 hand-templated questions of four kinds, the test suite's
"your own questions" file (tests/test_own_data_llama.py). Run: python make_own_questions.py"""
import json
import random
from pathlib import Path

rng = random.Random(23)
rows = []
for n in range(50):   # numeric: answers are integers
    a, b = rng.randint(2, 90), rng.randint(2, 90)
    rows.append({"id": f"numeric-{n}", "topic": "numeric", "kind": "numeric",
                 "question": f"A crate holds {a} apples and another holds {b}. How many apples are there in all?",
                 "answer": str(a + b)})
for n in range(50):   # LaTeX answers: fractions and roots
    if n % 2:
        q = rng.choice([3, 5, 7, 11, 13])
        p = rng.choice([k for k in range(1, q) if k != q])
        rows.append({"id": f"latex-{n}", "topic": "latex", "kind": "math",
                     "question": f"Write $\\frac{{{2 * p}}}{{{2 * q}}}$ in lowest terms.",
                     "answer": f"\\frac{{{p}}}{{{q}}}"})
    else:
        p, q = rng.randint(2, 9), rng.choice([2, 3, 5, 6, 7])
        rows.append({"id": f"latex-{n}", "topic": "latex", "kind": "math",
                     "question": f"Simplify $\\sqrt{{{p * p * q}}}$.", "answer": f"{p}\\sqrt{{{q}}}"})
capitals = [("France", "Paris"), ("Japan", "Tokyo"), ("Kenya", "Nairobi"), ("Peru", "Lima"), ("Egypt", "Cairo"),
            ("Canada", "Ottawa"), ("Norway", "Oslo"), ("Chile", "Santiago"), ("India", "New Delhi"), ("Spain", "Madrid")]
for n in range(50):   # choice with A-D fields; the answer a letter
    country, capital = capitals[n % len(capitals)]
    others = [c for _, c in capitals if c != capital]
    options = rng.sample(others, 3) + [capital]
    rng.shuffle(options)
    rows.append({"id": f"choice-{n}", "topic": "choice", "kind": "choice",
                 "question": f"Which city is the capital of {country}? (item {n})",
                 "A": options[0], "B": options[1], "C": options[2], "D": options[3],
                 "answer": "ABCD"[options.index(capital)]})
colours = [("the sky on a clear day", "blue"), ("fresh grass", "green"), ("snow", "white"), ("coal", "black"),
           ("a ripe banana", "yellow")]
for n in range(50):   # open text answers
    thing, colour = colours[n % len(colours)]
    rows.append({"id": f"text-{n}", "topic": "text", "kind": "text",
                 "question": f"In one word, what colour is {thing}? (item {n})", "answer": colour})
with open(Path(__file__).with_name("own_questions.jsonl"), "w", encoding="utf-8") as f:
    for row in rows:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
