"""smollm2_real.jsonl: a real model's own replies (SmolLM2-135M-Instruct Q4_1 under llama-server, greedy;
the lead's runs of GSM8K 200, MATH-500 100, C-Eval, AGIEval and CMMLU, 576 replies), labelled by
reading them: `equal` says whether the reply states the gold as its answer, whatever its working.
The model is mostly wrong; what the labels test is whether the graders read what a reply states.

How the replies were labelled (each rule was applied by reading the replies it covers):
  * GSM8K and MATH-500: equal where the reply's stated answer is the gold (listed in STATES_GOLD);
    a reply cut at the token limit after stating the gold several times counts as stating it.
  * Option letters: a reply that names different letters under its answer cues (a loop cycling
    through the options) states no answer; one that names one letter under its cues states it; a
    reply that only echoes the option list (or every letter) states none; a one-line reply states
    the letter it opens with; the other replies were read one by one (STATES_GOLD lists those that
    state the gold).
`first_sight` is the verdict of the graders before any change for this batch (recorded once with
`--record-first-sight`, kept by a plain run).

    python tests/grader_cases/make_smollm2_real.py RUNS_FOLDER [--record-first-sight] [--relabel]
"""
from __future__ import annotations

import json
import re
import sys
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "smollm2_real.jsonl"
PACKS = ("gsm8k", "math500", "ceval", "agieval", "cmmlu")
STATES_GOLD = {("gsm8k", "test/52"), ("gsm8k", "test/89"), ("gsm8k", "test/194"),
               ("math500", "test/prealgebra/1302.json"), ("math500", "test/algebra/24.json"),
               ("math500", "test/number_theory/515.json"), ("math500", "test/prealgebra/1747.json"),
               ("ceval", "discrete_mathematics/1"), ("agieval", "logiqa-zh/110"),
               ("cmmlu", "elementary_information_and_technology/230"), ("cmmlu", "marxist_theory/159"),
               ("cmmlu", "chinese_driving_rule/8"), ("agieval", "logiqa-en/520")}
LETTER_AFTER_CUE_RE = re.compile(r"\s*[(\[【]?\s*([A-J](?:\s*[,、]\s*[A-J])*)(?![A-Za-z])")


def stated_letters(response: str) -> str | None:
    """The one letter a reply names under its answer cues and its first line, else None ('' for a
    reply that names different letters, or none)."""
    from evalsuite.graders import region

    text = unicodedata.normalize("NFKC", response)
    named = {m.group(1) for cue in region.cues(text, joined=False) if (m := LETTER_AFTER_CUE_RE.match(text, cue.end()))}
    lines = [line.strip() for line in text.strip().split("\n") if line.strip()]
    if not named and len(lines) == 1 and re.match(r"[A-J](?![A-Za-z])", lines[0]):
        named = {lines[0][0]}
    return named.pop() if len(named) == 1 else ""


def label(pack: str, row: dict) -> bool:
    if (pack, row["id"]) in STATES_GOLD:
        return True
    if pack in ("gsm8k", "math500") or not re.fullmatch(r"[A-J]", row["gold"]):
        return False
    return stated_letters(row["answer"]) == row["gold"]


def build(runs: Path) -> list[dict]:
    from evalsuite.graders.choice_grade import gold_choice_letters

    out = []
    for pack in PACKS:
        for line in (runs / pack / "records.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("answer") is None:
                continue
            kind = "numeric" if pack == "gsm8k" else "choice" if gold_choice_letters(row["gold"]) else None
            out.append({"gold": row["gold"], "response": row["answer"], "equal": label(pack, row), "kind": kind,
                        "group": f"smollm2_real/{pack}", "id": row["id"],
                        **({"choices": row["choices"]} if kind == "choice" and row.get("choices") else {})})
    return out


def main(argv: list[str]) -> int:
    pairs = build(Path(argv[0]))
    previous, labels = {}, {}
    if OUT.exists():  # the labels were checked by reading: kept as written unless --relabel
        for r in map(json.loads, OUT.read_text(encoding="utf-8").splitlines()):
            previous[(r["group"], r["id"])], labels[(r["group"], r["id"])] = r.get("first_sight"), r["equal"]
    if "--relabel" not in argv:
        pairs = [{**p, "equal": labels.get((p["group"], p["id"]), p["equal"])} for p in pairs]
    if "--record-first-sight" in argv:
        from evalsuite.graders import grade
        previous = {(p["group"], p["id"]): grade(p["gold"], p["response"], p["kind"], choices=p.get("choices", ())).equal
                    for p in pairs}
    OUT.write_text("".join(json.dumps({**p, "first_sight": previous.get((p["group"], p["id"]))}, ensure_ascii=False) + "\n"
                           for p in pairs), encoding="utf-8")
    print(f"{OUT.name}: {len(pairs)} replies ({sum(p['equal'] for p in pairs)} state the gold)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
