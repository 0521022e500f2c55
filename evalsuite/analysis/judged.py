"""Reading judge verdicts from records (written by evalsuite/judge.py): counted apart from the
rule verdicts in `show` and `report`, and used by `compare` / `gate` only with --use-judge.
Pure functions over records: no endpoint is called here."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Mapping, Sequence

VERDICTS = ("correct", "incorrect", "undecided")


def judged(record: Mapping[str, Any]) -> dict[str, Any] | None:
    j = record.get("judge")
    return j if isinstance(j, dict) and j.get("verdict") in VERDICTS else None


def judge_summary(records: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The judge's part of a summary: counts apart from the rules' accuracy, and the items to review."""
    items = []
    for r in records:
        j = judged(r)
        if j is None:
            continue
        items.append({"id": r["id"], "outcome": r.get("outcome"), "judge": j["verdict"],
                      "reason": str(j.get("reason") or "")[:200], "model": j.get("model")})
    if not items:
        return None
    count = lambda v: sum(1 for i in items if i["judge"] == v)  # noqa: E731
    return {"n_judged": len(items), "n_correct": count("correct"), "n_incorrect": count("incorrect"),
            "n_undecided": count("undecided"),
            "n_overruled": sum(1 for i in items if (i["judge"] == "correct") != (i["outcome"] == "correct")
                               and i["judge"] != "undecided"),
            "items": items}


def format_judge_summary(js: Mapping[str, Any] | None, limit: int = 50) -> str:
    if not js:
        return ""
    lines = [f"judge: {js['n_judged']} item(s) judged ({js['n_correct']} correct, {js['n_incorrect']} incorrect, "
             f"{js['n_undecided']} undecided; {js['n_overruled']} differ from the rules) -- not in the accuracy "
             f"above (rule verdicts); review:"]
    for i in js["items"][:limit]:
        lines.append(f"  {i['id']}\trules: {i['outcome']}\tjudge: {i['judge']}\t{i['reason']}")
    if len(js["items"]) > limit:
        lines.append(f"  ... {len(js['items']) - limit} more (evalsuite show --format json)")
    return "\n".join(lines)


def with_judge(run: Any) -> tuple[Any, int]:
    """A copy of a loaded Run whose outcomes follow the judge where it decided (--use-judge), and
    how many outcomes it changed. The run folder is not touched."""
    records, changed = [], 0
    for r in run.records:
        j = judged(r)
        if j is not None and j["verdict"] in ("correct", "incorrect") and r.get("outcome") != "error":
            outcome = "correct" if j["verdict"] == "correct" else "wrong"
            if outcome != r.get("outcome"):
                changed += 1
            r = dict(r, outcome=outcome, rule_outcome=r.get("outcome"))
        records.append(r)
    new = replace(run, records=records)
    new.__dict__.pop("by_id", None)
    return new, changed


def count_judged(run: Any) -> int:
    return sum(1 for r in run.records if (judged(r) or {}).get("verdict") in ("correct", "incorrect"))


def judge_note(runs: Sequence[Any], use_judge: bool) -> tuple[list[Any], str | None]:
    """For compare and gate: the runs as they are (rule verdicts) or with the judge's outcomes
    (--use-judge), and one sentence saying which, when any run holds judge verdicts."""
    decided = [count_judged(r) for r in runs]
    if not use_judge:
        if not any(decided):
            return list(runs), None
        return list(runs), (f"rule verdicts only: {sum(decided)} judge-decided item(s) not used "
                            f"(--use-judge to use them)")
    out, changed = [], 0
    for r in runs:
        new, n = with_judge(r)
        out.append(new)
        changed += n
    return out, (f"--use-judge: outcomes follow the judge on {sum(decided)} judge-decided item(s) "
                 f"({changed} differ from the rules)")
