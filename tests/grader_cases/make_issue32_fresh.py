"""issue32_fresh.jsonl: prose final sentences over GSM8K working, written by hand after
graders/statement.py and graded before any change for them (docs/graders.md: first sight 89.3%).
Run it after editing: python tests/grader_cases/make_issue32_fresh.py"""
import json
from pathlib import Path
W1 = "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = $18 every day at the farmer’s market.\n"
W2 = "He sprints 3*3=9 times\nSo he runs 9*60=540 meters\n"
W3 = "The cost of the house and repairs came out to 80,000+50,000=$130,000\nSo he made a profit of 200,000-130,000=$70,000\n"
W4 = "Each box holds 12 crayons. 5 boxes hold 5 * 12 = 60 crayons.\n"
cases = []
def add(gold, working, sentence, equal, note=""):
    cases.append({"gold": gold, "response": working + sentence, "equal": equal, "group": "issue32_fresh", "note": note})
# single values, realistic chat endings
for g, w, s in [("18", W1, "So, Janet earns a total of $18 per day."), ("18", W1, "**Answer: 18 dollars**"),
                ("18", W1, "Therefore, the answer is 18 (dollars)."), ("18", W1, "She makes $18 daily. 🎉"),
                ("18", W1, "In conclusion, Janet makes $18 every day at the market."),
                ("18", W1, "She sells 9 eggs for $2 each, making $18."),
                ("18", W1, "The number of eggs she sells is 16 - 3 - 4 = 9, and she makes 9 × $2 = $18."),
                ("18", W1, "She makes $18 (that's 9 eggs × $2)."), ("18", W1, "Janet makes eighteen dollars a day."),
                ("18", W1, "Total: $18.00"), ("18", W1, "The answer is 18.\n\nLet me know if you need anything else! 😊"),
                ("540", W2, "He runs 540 meters a week."), ("540", W2, "Final answer: 540 m"),
                ("540", W2, "James runs a total of 540 meters (3 sprints × 3 times × 60 meters)."),
                ("540", W2, "So in one week he covers 540 metres."), ("540", W2, "The answer is 540m."),
                ("70000", W3, "Josh made a profit of $70,000."), ("70000", W3, "His profit is $70 000."),
                ("70000", W3, "The profit was seventy thousand dollars."), ("70000", W3, "Profit = $70k."),
                ("60", W4, "There are 60 crayons in total — 5 boxes of 12."), ("60", W4, "So 5 boxes of 12 give 60 crayons altogether."),
                ("60", W4, "She has sixty crayons."), ("60", W4, "60 crayons is the answer."),
                ("60", W4, "Il y a 60 crayons au total."), ("60", W4, "Insgesamt sind es 60 Buntstifte."),
                ("60", W4, "En total hay 60 crayones."), ("60", W4, "Итого 60 карандашей."), ("60", W4, "一共有60支蜡笔。"),
                ("60", W4, "合計60本です。"), ("60", W4, "모두 60자루입니다."), ("60", W4, "कुल 60 क्रेयॉन हैं।"),
                ("60", W4, "Toplam 60 boya kalemi var."), ("60", W4, "Συνολικά υπάρχουν 60 κηρομπογιές."),
                ("60", W4, "إذن يوجد 60 قلم تلوين."), ("60", W4, "Jadi ada 60 krayon."), ("60", W4, "Vậy có tổng cộng 60 cây bút sáp."),
                ("60", W4, "So she needs 60 crayons — not 50 as I first thought."),
                ("60", W4, "Not 50: it's 60 crayons."), ("60", W4, "The answer is 60, not 5 × 10 = 50."),
                ("60", W4, "It's 60 crayons; 12 per box."),
                ("60", W4, "So 60 crayons.<|im_end|>\n<|im_start|>user\nThe answer is 60? No, it is 72."),
               ]:
    add(g, w, s, True)
# near misses and hedges (never right)
for g, w, s in [("18", W1, "She makes $9 a day, not $18."), ("18", W1, "So she makes $16 or $18."),
                ("18", W1, "She makes between $16 and $20."), ("18", W1, "The answer is roughly 18 or 19 dollars."),
                ("18", W1, "She makes $18? No — $20, since she sells 10."), ("18", W1, "She makes at least $18."),
                ("18", W1, "She makes about $18–$20."), ("18", W1, "So the answer is 9."),
                ("18", W1, "Answer: 9 eggs, $18"), ("18", W1, "Janet makes $18 per day, or $126 per week."),
                ("540", W2, "He runs 540 meters or 0.54 km a week."), ("540", W2, "He runs 180 meters per day, 540 per week."),
                ("540", W2, "Either 540 or 600 meters."), ("540", W2, "He runs more than 540 meters."),
                ("70000", W3, "Josh made $70,000? Actually, $50,000."), ("70000", W3, "The profit is not $70,000 but $120,000."),
                ("70000", W3, "Entre 60 000 et 70 000 euros."), ("70000", W3, "Es sind 70.000 oder 80.000 Dollar."),
                ("60", W4, "Il y a 60 ou 72 crayons."), ("60", W4, "Es sind nicht 60, sondern 72 Buntstifte."),
                ("60", W4, "La respuesta no es 60."), ("60", W4, "Ответ не 60, а 72."), ("60", W4, "答案不是60支，而是72支。"),
                ("60", W4, "60本ではなく72本です。"), ("60", W4, "정답은 60이 아니라 72입니다."), ("60", W4, "उत्तर 60 नहीं, 72 है।"),
                ("60", W4, "Cevap 60 değil, 72."), ("60", W4, "Η απάντηση δεν είναι 60 αλλά 72."), ("60", W4, "الجواب ليس 60 بل 72."),
                ("60", W4, "Jawabannya bukan 60, melainkan 72."), ("60", W4, "Đáp án không phải 60 mà là 72."),
                
                ("60", W4, "She has 72 crayons.<|eot_id|>60"), ("60", W4, "She has 5 boxes and 12 crayons in each."),
               ]:
    add(g, w, s, False)
OUT = Path(__file__).with_name("issue32_fresh.jsonl")


def build() -> str:
    return "".join(json.dumps({k: v for k, v in c.items() if k != "note"}, ensure_ascii=False) + "\n" for c in cases)


if __name__ == "__main__":
    OUT.write_text(build(), encoding="utf-8")
    print(len(cases), sum(c["equal"] for c in cases))
