"""issue32_fresh2.jsonl: whole chat-style responses (markdown steps, bullet lists, bold, headings,
LaTeX, closings, other languages) whose final statement is prose, written by hand after the
rules of issue32_fresh.jsonl were in place and graded before any change for them
(docs/graders.md). Run it after editing: python tests/grader_cases/make_issue32_fresh2.py"""
import json
from pathlib import Path

STEPS = ("To solve this, let's break it down step by step.\n\n"
         "**Step 1: Eggs left after breakfast and baking**\n- Janet's ducks lay 16 eggs per day.\n"
         "- She eats 3 and uses 4 for muffins: 16 - 3 - 4 = 9 eggs.\n\n"
         "**Step 2: Money from selling eggs**\n- She sells each egg for $2: 9 × $2 = $18.\n\n")
MATH = ("We need the number of positive divisors of $36$. Since $36 = 2^2 \\cdot 3^2$, the number of divisors is "
        "$(2+1)(2+1) = 9$.\n\n")
ZH = "首先，16 - 3 - 4 = 9 个鸡蛋。\n然后，9 × 2 = 18 美元。\n\n"
DE = "Zuerst: 16 - 3 - 4 = 9 Eier.\nDann: 9 · 2 € = 18 €.\n\n"
RU = "Сначала: 16 − 3 − 4 = 9 яиц.\nЗатем: 9 × 2 = 18 долларов.\n\n"
cases = []


def add(gold, response, equal):
    cases.append({"gold": gold, "response": response, "equal": equal, "group": "issue32_fresh2"})


for ending in ["### Final Answer\nJanet makes **$18** every day at the farmers' market.",
               "**Final answer:** Janet makes $18 per day.",
               "So, Janet makes **18 dollars** a day. Let me know if you'd like me to explain any step!",
               "---\n\n**Answer:** $18 per day",
               "Therefore, she earns $\\$18$ every day.",
               "Janet makes $18 every day. That's $126 a week if she sells every day — but the question only asks about one day, so the answer is $18.",
               "**Janet makes $18 daily.**\n\nI hope this explanation helps! 😊",
               "In summary:\n- Eggs sold: 9\n- Price per egg: $2\n- **Daily earnings: $18**",
               "Thus the amount she makes every day is eighteen dollars ($18).",
               "She makes 18 dollars, not 9.",
               ]:
    add("18", STEPS + ending, True)
for ending in ["In summary:\n- Eggs sold: 9\n- Price per egg: $2",
               "### Final Answer\nJanet makes **$9** every day at the farmers' market.",
               "So she makes $16 or $18, depending on whether she keeps one egg.",
               "She makes roughly $15–$20 a day.",
               "**Final answer:** $18? No — she sells 10 eggs, so $20.",
               "She makes 9 dollars, not 18.",
               "Janet makes at least $18 per day.",
               "The answer is $18 per day, or $126 per week.",
               ]:
    add("18", STEPS + ending, False)
for ending, gold, eq in [("The number of positive divisors of 36 is 9.", "9", True),
                         ("So $36$ has $9$ positive divisors.", "9", True),
                         ("Hence there are nine divisors.", "9", True),
                         ("Hence there are 9 divisors, not 6.", "9", True),
                         ("So $36$ has $9$ positive divisors.", "36", False),
                         ("Hence there are 9 or 10 divisors.", "9", False),
                         ("Hence there are 6 divisors (not 9).", "9", False),
                         ]:
    add(gold, MATH + ending, eq)
for ending, gold, eq in [("所以，珍妮特每天能赚18美元。", "18", True), ("答：她每天赚18美元。", "18", True),
                         ("因此答案是十八美元。", "18", True), ("所以她每天赚9美元，不是18美元。", "18", False),
                         ("所以她每天赚16或18美元。", "18", False), ("所以她每天至少赚18美元。", "18", False)]:
    add(gold, ZH + ending, eq)
for ending, gold, eq in [("**Antwort:** Janet verdient jeden Tag 18 €.", "18", True),
                         ("Sie verdient also täglich achtzehn Euro.", "18", True),
                         ("Sie verdient also 18 € und nicht 9 €.", "18", True),
                         ("Sie verdient also 9 € und nicht 18 €.", "18", False),
                         ("Sie verdient also zwischen 16 und 18 €.", "18", False)]:
    add(gold, DE + ending, eq)
for ending, gold, eq in [("**Ответ:** 18 долларов в день.", "18", True), ("Итак, Джанет зарабатывает восемнадцать долларов в день.", "18", True),
                         ("Итак, она зарабатывает 18 долларов, а не 9.", "18", True),
                         ("Итак, она зарабатывает 9 долларов, а не 18.", "18", False),
                         ("Итак, она зарабатывает 16 или 18 долларов.", "18", False)]:
    add(gold, RU + ending, eq)
# other GSM8K items, endings as chat models write them
LOAN = "Monthly payment: 1200 / 12 = 100 dollars.\nInterest: 100 × 0.05 = 5 dollars.\n\n"
for ending, gold, eq in [("He pays a total of $105 per month.", "105", True),
                         ("He pays $105/month.", "105", True),
                         ("The monthly payment comes to $105.00 (that's $100 + $5 interest).", "105", True),
                         ("He pays 105 USD each month.", "105", True),
                         ("Each month he pays one hundred and five dollars.", "105", True),
                         ("He pays $100 per month, plus $5 interest.", "105", False),
                         ("He pays $100 a month.", "105", False),
                         ("He pays about $100–$110 a month.", "105", False),
                         ]:
    add(gold, LOAN + ending, eq)
TRAIN = "Distance = speed × time = 60 km/h × 2.5 h = 150 km.\n\n"
for ending, gold, eq in [("The train travels 150 km.", "150", True), ("So the distance is 150 kilometres.", "150", True),
                         ("The train covers 150 km in 2.5 hours.", "150", True), ("Le train parcourt 150 km.", "150", True),
                         ("El tren recorre 150 km en 2,5 horas.", "150", True), ("電車は150キロ進みます。", "150", True),
                         ("The train travels 60 km/h for 2.5 hours.", "150", False),
                         ("The train travels 150 km or 93 miles.", "150", False),
                         ("The train travels 2.5 hours.", "150", False)]:
    add(gold, TRAIN + ending, eq)
OUT = Path(__file__).with_name("issue32_fresh2.jsonl")


def build() -> str:
    return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)


if __name__ == "__main__":
    OUT.write_text(build(), encoding="utf-8")
    print(len(cases), sum(c["equal"] for c in cases))
