"""Grader benchmark: labelled cases and MATH-500 self-consistency, speed and error counts.

    python benchmarks/graders.py                 # both parts
    python benchmarks/graders.py --cases-only    # only tests/grader_cases
    python benchmarks/graders.py --show-errors   # list every misgraded case

Part 1, labelled cases (tests/grader_cases/*.txt): accuracy, false-negative rate (equal cases
graded not equal) and false-positive rate (unequal cases graded equal), per category.
Part 2, MATH-500 (shared/data/math500/test.jsonl or $EVALSUITE_DATA_DIR): each gold answer
against the last \\boxed{} of its own reference solution (all should be equal), and against a
shuffled gold (nearly all should be unequal). Reports verdicts/s and p50/p99 latency on one
core (one thread; the sympy worker pool is warmed up first and its start is not timed).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CASES_DIR = REPO / "tests" / "grader_cases"


@dataclass(frozen=True)
class Case:
    category: str
    line: int
    gold: str
    response: str
    equal: bool
    kind: str | None


def load_cases(folder: Path = CASES_DIR) -> list[Case]:
    """Read `+ GOLD ||| RESPONSE` / `- GOLD ||| RESPONSE` lines (see the folder's README)."""
    cases = []
    for path in sorted(folder.glob("*.txt")):
        kind = None
        for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("@kind"):
                kind = line.split()[1] if len(line.split()) > 1 else None
                continue
            if line[:2] not in ("+ ", "- ") or " ||| " not in line and not line.endswith(" |||"):
                raise ValueError(f"{path.name}:{n}: expected '+ GOLD ||| RESPONSE', got {line!r}")
            gold, _, response = line[2:].partition(" |||")
            response = response[1:] if response.startswith(" ") else response
            cases.append(Case(path.stem, n, gold.strip(), response.replace("⏎", "\n"), line[0] == "+", kind))
    return cases


def data_dir() -> Path:
    env = os.environ.get("EVALSUITE_DATA_DIR")
    return Path(env) if env else REPO.parent / "shared" / "data"


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_cases(show_errors: bool) -> dict:
    from evalsuite.graders import grade

    cases = load_cases()
    times, errors = [], []
    tp = tn = fp = fn = 0
    by_category: dict[str, list[int]] = {}
    for case in cases:
        verdict, dt = timed(grade, case.gold, case.response, case.kind)
        times.append(dt)
        said_equal = verdict.equal is True
        right = said_equal == case.equal
        stats = by_category.setdefault(case.category, [0, 0])
        stats[0] += right
        stats[1] += 1
        if case.equal and said_equal:
            tp += 1
        elif case.equal:
            fn += 1
        elif said_equal:
            fp += 1
        else:
            tn += 1
        if not right:
            errors.append((case, verdict))
    n_pos, n_neg = tp + fn, tn + fp
    result = {
        "cases": len(cases), "positives": n_pos, "negatives": n_neg,
        "accuracy": (tp + tn) / len(cases), "false_negative_rate": fn / max(n_pos, 1),
        "false_positive_rate": fp / max(n_neg, 1), "false_negatives": fn, "false_positives": fp,
        "p50_ms": 1000 * percentile(times, 0.5), "p99_ms": 1000 * percentile(times, 0.99),
        "max_ms": 1000 * max(times),
        "by_category": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_category.items())},
    }
    if show_errors:
        for case, verdict in errors:
            print(f"  MISGRADED {case.category}:{case.line} {'+' if case.equal else '-'} {case.gold!r} vs "
                  f"{case.response[:80]!r} -> {verdict.equal} [{verdict.method}] {verdict.reason[:120]}")
    return result


def run_math500() -> dict | None:
    from evalsuite.graders import grade_math
    from evalsuite.graders.extract import find_boxed

    path = data_dir() / "math500" / "test.jsonl"
    if not path.exists():
        print(f"MATH-500 skipped: {path} absent")
        return None
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    golds = [r["answer"] for r in rows]
    finals = [find_boxed(r["solution"]) or "" for r in rows]
    shuffled = golds[:]
    random.Random(0).shuffle(shuffled)
    same_times, wrong = [], []
    for gold, final in zip(golds, finals):
        verdict, dt = timed(grade_math, gold, final)
        same_times.append(dt)
        if verdict.equal is not True:
            wrong.append((gold, final, verdict))
    shuffled_times, accepted = [], []
    for gold, other, row_gold in zip(golds, shuffled, golds):
        verdict, dt = timed(grade_math, gold, other)
        shuffled_times.append(dt)
        if verdict.equal is True and other != gold:
            accepted.append((gold, other, verdict))
    all_times = same_times + shuffled_times
    for gold, final, verdict in wrong[:20]:
        print(f"  own solution not equal: {gold!r} vs {final!r} -> {verdict.equal} {verdict.reason[:100]}")
    for gold, other, verdict in accepted[:20]:
        print(f"  shuffled accepted: {gold!r} vs {other!r} -> {verdict.method} {verdict.reason[:100]}")
    n_identical_pairs = sum(1 for g, o in zip(golds, shuffled) if g == o)
    return {
        "items": len(rows), "own_solution_equal": len(rows) - len(wrong),
        "false_negatives": len(wrong), "shuffled_accepted": len(accepted),
        "shuffled_identical_strings": n_identical_pairs,
        "verdicts_per_s": len(all_times) / sum(all_times),
        "p50_ms": 1000 * percentile(all_times, 0.5), "p99_ms": 1000 * percentile(all_times, 0.99),
        "max_ms": 1000 * max(all_times),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases-only", action="store_true")
    parser.add_argument("--show-errors", action="store_true")
    args = parser.parse_args(argv)
    from evalsuite.graders import sandbox
    sandbox.run("ping")  # start the worker outside the timings
    report = {"cases": run_cases(args.show_errors)}
    if not args.cases_only:
        report["math500"] = run_math500()
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
