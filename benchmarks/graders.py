"""Grader benchmark: labelled cases and MATH-500 self-consistency, speed and error counts.

    python benchmarks/graders.py                 # both parts
    python benchmarks/graders.py --cases-only    # only tests/grader_cases
    python benchmarks/graders.py --show-errors   # list every misgraded case
    python benchmarks/graders.py --cases-only --only round3_   # one batch of case files
    python benchmarks/graders.py --shapes-only   # only the generated answer shapes
    python benchmarks/graders.py --shapes-only --per-cell 20 --show-errors
    python benchmarks/graders.py --gsm8k-cost --against /tmp/before   # a GSM8K grade per item, beside other graders

Part 1, labelled cases (tests/grader_cases/*.txt and *.jsonl): accuracy, false-negative rate
(equal pairs graded not equal) and false-positive rate (unequal pairs graded equal, undecided
counts as not equal), per kind of answer shape and overall, as a markdown table; the same
counts per rule that decided (the Verdict's method, and how the answer was extracted), so a
false positive is charged to the rule that accepted it; and p50/p99 latency per pair warm.
Part 2, MATH-500 (shared/data/math500/test.jsonl or $EVALSUITE_DATA_DIR): each gold answer
against the last \\boxed{} of its own reference solution (all should be equal), and against a
shuffled gold (nearly all should be unequal). Reports verdicts/s and p50/p99 latency on one
core (one thread; the sympy worker pool is warmed up first and its start is not timed).
Part 4 (`--gsm8k-cost [--against DIR]`): the CPU of a GSM8K grade per item, as a run grades the stub's
answers, beside a copy of other graders timed in the same process.
Part 3, answer shapes (tests/answer_shapes.py): real GSM8K working whose final sentence is
generated in the shapes chat models write (units, contrasts in both orders, hedges, number words,
other scripts and digits, template debris; nineteen languages), graded with kind="numeric":
false negatives and false positives per shape and per language, beside the corpus figures.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CASES_DIR = REPO / "tests" / "grader_cases"


# The kinds of answer shapes the corpus is reported by, in order: 13 kinds of answers real
# models and answer keys write, false positives, and answers stated before their explanation.
# Files without an @group line (the first cases) report as earlier/<file name>.
GROUPS = ("gold_solution", "last_math_span", "labelled", "several_answers", "escaped_latex",
          "choice_text", "sets", "numbers", "intervals", "approx", "percent_words",
          "mixed_numbers", "notation", "false_positives", "answer_first",
          # round three (issue 19, part A): commas inside brackets, equations as golds, decimal
          # commas and stray signs, labelled and listed golds, percent and units, matrix arithmetic
          "bracket_commas", "equation_golds", "number_formats", "labelled_lists", "percent_units",
          "matrix_arithmetic")
# wrong answers that must never be accepted; a case names its shape with @shape / "shape"
FALSE_POSITIVE_SHAPES = ("abs", "sqrt_square", "tiny_offset", "percent_vs_plain", "bracket_type",
                         "near_miss", "wrong_sign", "swapped_tuple", "subset",
                         # (7,300) is a pair, not 7300; a relation x - 2y + 4z = 0 is not its right side 0
                         "bracket_comma", "relation_rhs")


@dataclass(frozen=True)
class Case:
    category: str            # the file it comes from (its stem)
    line: int
    gold: str
    response: str
    equal: bool
    kind: str | None         # passed to grade(); None lets the grader infer it
    group: str = ""          # the answer shape it tests (GROUPS), or earlier/<file name>
    shape: str | None = None  # for wrong answers: the false-positive shape it is an instance of
    choices: tuple[str, ...] = ()  # option texts in letter order (JSONL "choices"), passed to grade()
    first_sight: object = "absent"  # a batch's verdict before any change for it (JSONL "first_sight")


def load_cases(folder: Path = CASES_DIR) -> list[Case]:
    """Every *.txt and *.jsonl case file in the folder (see the folder's README)."""
    cases: list[Case] = []
    for path in sorted([*folder.glob("*.txt"), *folder.glob("*.jsonl")]):
        cases += load_jsonl(path) if path.suffix == ".jsonl" else load_txt(path)
    return cases


def load_txt(path: Path) -> list[Case]:
    """`+ GOLD ||| RESPONSE` / `- GOLD ||| RESPONSE` lines; `@kind`, `@group`, `@shape` set
    the grading kind, the reported group (default earlier/<file name>) and the false-positive
    shape for the lines below (a bare `@kind` / `@shape` clears it); `⏎` stands for a newline."""
    cases = []
    kind, group, shape = None, f"earlier/{path.stem}", None
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("@"):
            key, _, value = line[1:].partition(" ")
            value = value.strip() or None
            if key == "kind":
                kind = value
            elif key == "group":
                group = value or f"earlier/{path.stem}"
            elif key == "shape":
                shape = value
            else:
                raise ValueError(f"{path.name}:{n}: unknown directive @{key}")
            continue
        if line[:2] not in ("+ ", "- ") or " ||| " not in line and not line.endswith(" |||"):
            raise ValueError(f"{path.name}:{n}: expected '+ GOLD ||| RESPONSE', got {line!r}")
        gold, _, response = line[2:].partition(" |||")
        response = response[1:] if response.startswith(" ") else response
        cases.append(Case(path.stem, n, gold.strip().replace("⏎", "\n"), response.replace("⏎", "\n"),
                          line[0] == "+", kind, group, shape if line[0] == "-" else None))
    return cases


def load_jsonl(path: Path) -> list[Case]:
    """One JSON object a line: gold, response, equal (bool); optional kind, group, shape, choices."""
    cases = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
            gold, response, equal = row["gold"], row["response"], row["equal"]
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path.name}:{n}: expected a JSON object with gold, response, equal ({e})") from None
        if not isinstance(gold, str) or not isinstance(response, str) or not isinstance(equal, bool):
            raise ValueError(f"{path.name}:{n}: gold and response must be strings, equal a boolean")
        choices = row.get("choices", [])
        if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
            raise ValueError(f"{path.name}:{n}: choices must be a list of strings")
        cases.append(Case(path.stem, n, gold, response, equal, row.get("kind"),
                          row.get("group") or path.stem, row.get("shape"), tuple(choices), row.get("first_sight", "absent")))
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


def score(cases: list[Case], said: list[bool]) -> dict:
    """Accuracy, false-negative rate (equal pairs graded not equal), false-positive rate."""
    pos = [s for c, s in zip(cases, said) if c.equal]
    neg = [s for c, s in zip(cases, said) if not c.equal]
    fn, fp = pos.count(False), neg.count(True)
    return {"cases": len(cases), "equal": len(pos), "unequal": len(neg),
            "accuracy": (len(cases) - fn - fp) / max(len(cases), 1),
            "false_negative_rate": fn / max(len(pos), 1), "false_positive_rate": fp / max(len(neg), 1),
            "false_negatives": fn, "false_positives": fp}


def group_order(group: str) -> tuple[int, str]:
    return (GROUPS.index(group), group) if group in GROUPS else (len(GROUPS), group)


def table(rows: dict[str, dict]) -> str:
    """The per-group results as a markdown table (for docs/graders.md)."""
    lines = ["| kind | pairs | equal / unequal | accuracy | false negatives | false positives |",
             "|---|---|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['cases']} | {r['equal']} / {r['unequal']} | {100 * r['accuracy']:.1f}% | "
                     f"{100 * r['false_negative_rate']:.1f}% ({r['false_negatives']}) | "
                     f"{100 * r['false_positive_rate']:.1f}% ({r['false_positives']}) |")
    return "\n".join(lines)


# Finer rules inside a method, told apart by the words their reasons use (graders' reasons are
# fixed sentences): the first marker found names the rule, else the method alone.
RULE_MARKERS = (
    ("decimal comma", "decimal-comma"), ("gold is a percent", "percent-gold"),
    ("h:mm read as a ratio", "ratio-from-time"), ("I read as the", "identity-matrix"),
    ("the gold's value after '='", "gold-worked-line"), ("value after the last '='", "answer-worked-line"),
    ("every form", "same-answer-twice"), ("decimal within relative", "decimal-tolerance"),
    ("both solved for", "solved-for"), ("same relation", "relation"), ("approximation sign", "approx"),
    ("different labels", "labels"), ("vector vs tuple", "vector-tuple"), ("12-hour clock", "time-of-day"),
    ("base subscript", "base-number"), ("last sentence", "text-in-sentence"), ("gives the text of option", "choice-text"),
    ("last number in the response", "last-number"),
)


def rule_of(verdict) -> str:
    reason = verdict.reason or ""
    for marker, name in RULE_MARKERS:
        if marker in reason:
            return f"{verdict.method}/{name}"
    return verdict.method


def by_rule(cases: list[Case], verdicts: list, key) -> dict[str, dict]:
    """The pairs each rule decided (key(verdict): the Verdict's method, or how the answer was
    extracted): how many, and the false negatives / false positives among them. A false
    positive is charged to the rule that accepted; a false negative to the rule that refused
    (or the step that found nothing)."""
    rows: dict[str, dict] = {}
    for case, verdict in zip(cases, verdicts):
        row = rows.setdefault(key(verdict) or "none", {"pairs": 0, "said_equal": 0, "false_negatives": 0,
                                                       "false_positives": 0, "equal": 0, "unequal": 0})
        said = verdict.equal is True
        row["pairs"] += 1
        row["said_equal"] += said
        row["equal" if case.equal else "unequal"] += 1
        row["false_negatives"] += case.equal and not said
        row["false_positives"] += said and not case.equal
    for row in rows.values():
        row["accuracy"] = 1 - (row["false_negatives"] + row["false_positives"]) / row["pairs"]
    return dict(sorted(rows.items(), key=lambda kv: -kv[1]["pairs"]))


def rule_table(rows: dict[str, dict], title: str) -> str:
    lines = [f"| {title} | pairs | equal / unequal | said equal | accuracy | false negatives | false positives |",
             "|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['pairs']} | {r['equal']} / {r['unequal']} | {r['said_equal']} | "
                     f"{100 * r['accuracy']:.1f}% | {r['false_negatives']} | {r['false_positives']} |")
    return "\n".join(lines)


def run_cases(show_errors: bool, only: str | None = None) -> dict:
    from evalsuite.graders import grade

    cases = load_cases()
    if only:  # e.g. --only round3_ : the files whose name starts so
        cases = [c for c in cases if c.category.startswith(only)]
    times, said, errors, verdicts = [], [], [], []
    for case in cases:
        verdict, dt = timed(lambda: grade(case.gold, case.response, case.kind, choices=case.choices))
        times.append(dt)
        verdicts.append(verdict)
        said.append(verdict.equal is True)
        if said[-1] != case.equal:
            errors.append((case, verdict))
    groups = sorted({c.group for c in cases}, key=group_order)
    by_group = {g: score([c for c in cases if c.group == g], [s for c, s in zip(cases, said) if c.group == g])
                for g in groups}
    for name, keep in (("all new kinds", lambda c: c.group in GROUPS), ("all earlier", lambda c: c.group not in GROUPS)):
        picked = [(c, s) for c, s in zip(cases, said) if keep(c)]
        if picked:
            by_group[name] = score([c for c, _ in picked], [s for _, s in picked])
    by_group["all"] = score(cases, said)
    print(table(by_group))
    print("\n" + first_sight_table(cases, said))
    methods = by_rule(cases, verdicts, lambda v: v.method)
    extractions = by_rule(cases, verdicts, lambda v: v.extraction)
    rules = by_rule(cases, verdicts, rule_of)
    print("\n" + rule_table(methods, "method"))
    print("\n" + rule_table(rules, "method/rule"))
    print("\n" + rule_table(extractions, "extraction"))
    if show_errors:
        for case, verdict in sorted(errors, key=lambda e: group_order(e[0].group)):
            print(f"  MISGRADED [{case.group}] {case.category}:{case.line} {'+' if case.equal else '-'} "
                  f"{case.gold[-80:]!r} vs {case.response[-100:]!r} -> {verdict.equal} [{verdict.method}] "
                  f"{verdict.reason[:120]}")
    latency = {"p50_ms": 1000 * percentile(times, 0.5), "p99_ms": 1000 * percentile(times, 0.99),
               "max_ms": 1000 * max(times)}
    print(f"\nlatency per pair, warm, one thread: p50 {latency['p50_ms']:.2f} ms, p99 {latency['p99_ms']:.1f} ms, "
          f"max {latency['max_ms']:.0f} ms")
    return {**by_group["all"], **latency, "by_group": by_group, "by_method": methods, "by_rule": rules,
            "by_extraction": extractions}


def first_sight_table(cases: list[Case], said: list[bool]) -> str:
    """The batches that recorded their first sight (the graders' verdict before any change for
    them): pairs, first-sight accuracy, FN, FP, and the same now."""
    lines = ["| batch | pairs | equal / unequal | first sight: accuracy, FN, FP | now: accuracy, FN, FP |",
             "|---|---|---|---|---|"]
    batches = sorted({c.category for c in cases if c.first_sight != "absent"})
    for batch in batches:
        picked = [(c, s) for c, s in zip(cases, said) if c.category == batch]
        first = score([c for c, _ in picked], [c.first_sight is True for c, _ in picked])
        now = score([c for c, _ in picked], [s for _, s in picked])
        lines.append(f"| {batch} | {first['cases']} | {first['equal']} / {first['unequal']} | {100 * first['accuracy']:.1f}%, "
                     f"{first['false_negatives']}, {first['false_positives']} | {100 * now['accuracy']:.1f}%, "
                     f"{now['false_negatives']}, {now['false_positives']} |")
    return "\n".join(lines)


def run_math500() -> dict | None:
    from evalsuite.graders import grade_math
    from evalsuite.graders.region import find_boxed

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


def run_choice_generators(rounds: int = 3, seed: int = 32) -> dict:
    """Issue 32 part B: the choice generators (tests/grader_cases/choice_generators.py): negated,
    corrected and hedged letters in sixteen languages, look-alike letters, template debris.
    Right / not right per shape and per language, as a markdown table; "not right" cases graded
    equal are false positives, right ones graded otherwise false negatives."""
    import importlib.util

    from evalsuite.graders import grade

    spec = importlib.util.spec_from_file_location("choice_generators", CASES_DIR / "choice_generators.py")
    gen = importlib.util.module_from_spec(spec)
    sys.modules["choice_generators"] = gen  # dataclasses look their module up
    spec.loader.exec_module(gen)
    cases = gen.cases(seed=seed, rounds=rounds)
    said = [grade(c.gold, c.response, "choice").equal is True for c in cases]
    as_cases = [Case("choice_generators", n, c.gold, c.response, c.right, "choice") for n, c in enumerate(cases)]
    rows = {}
    for key in [f"shape/{s}" for s in gen.SHAPES] + [f"language/{lang}" for lang in gen.LANGUAGES]:
        kind, _, name = key.partition("/")
        picked = [n for n, c in enumerate(cases) if (c.shape if kind == "shape" else c.language) == name]
        if picked:
            rows[key] = score([as_cases[n] for n in picked], [said[n] for n in picked])
    rows["all"] = score(as_cases, said)
    print("\nchoice generators, a regression test of the lexicons (right / not right in the equal / unequal columns):")
    print(table(rows))
    return rows
def load_shapes_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("answer_shapes", REPO / "tests" / "answer_shapes.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["answer_shapes"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def shape_table(rows: dict[str, dict], title: str) -> str:
    lines = [f"| {title} | pairs | equal / unequal | accuracy | false negatives | false positives |",
             "|---|---|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['cases']} | {r['equal']} / {r['unequal']} | {100 * r['accuracy']:.1f}% | "
                     f"{100 * r['false_negative_rate']:.1f}% ({r['false_negatives']}) | "
                     f"{100 * r['false_positive_rate']:.1f}% ({r['false_positives']}) |")
    return "\n".join(lines)


def run_shapes(show_errors: bool, per_cell: int, seed: int) -> dict:
    """The generated answer shapes: the table per shape and per language (undecided counts as not
    equal), the convention shapes (CONVENTION_SHAPES) reported apart, and latency per pair."""
    from evalsuite.graders import grade

    shapes = load_shapes_module()
    cases = shapes.generate(seed=seed, per_cell=per_cell)
    times, said, errors = [], [], []
    for case in cases:
        verdict, dt = timed(grade, case.gold, case.response, "numeric")
        times.append(dt)
        said.append(verdict.equal is True)
        if said[-1] != case.equal:
            errors.append((case, verdict))
    by_shape = shapes.score(cases, said, lambda c: c.shape)
    order = [*shapes.SHAPES, "all"]
    by_shape = {k: by_shape[k] for k in order if k in by_shape}
    by_language = shapes.score(cases, said, lambda c: c.language)
    by_language = {k: by_language[k] for k in [*shapes.LANGS, "all"] if k in by_language}
    print("answer shapes, a regression test of the lexicons (243 of 256 templates use graders/words/):")
    print(shape_table(by_shape, "shape"))
    print("\n" + shape_table(by_language, "language"))
    if show_errors:
        for case, verdict in errors:
            print(f"  MISGRADED [{case.shape}/{case.language}] {'+' if case.equal else '-'} gold {case.gold!r} vs "
                  f"{case.sentence!r} -> {verdict.equal} [{verdict.method}/{verdict.extraction}] "
                  f"{verdict.extracted!r} {verdict.reason[:100]}")
    latency = {"p50_ms": 1000 * percentile(times, 0.5), "p99_ms": 1000 * percentile(times, 0.99),
               "max_ms": 1000 * max(times)}
    print(f"\nanswer shapes: {len(cases)} pairs (seed {seed}, {per_cell} a shape and language); latency per pair, warm, "
          f"one thread: p50 {latency['p50_ms']:.2f} ms, p99 {latency['p99_ms']:.1f} ms, max {latency['max_ms']:.0f} ms")
    return {**by_shape["all"], **latency, "by_shape": by_shape, "by_language": by_language}


def load_graders_copy(folder: str):
    """A copy of graders/ (e.g. `git worktree add /tmp/before <rev>`, or `git archive <rev> graders`
    unpacked) imported as a package of its own, beside evalsuite.graders, for timings in one process."""
    import importlib.util

    path = Path(folder).resolve()
    path = path / "graders" if (path / "graders" / "__init__.py").exists() else path
    spec = importlib.util.spec_from_file_location("graders_against", path / "__init__.py", submodule_search_locations=[str(path)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["graders_against"] = module
    spec.loader.exec_module(module)
    return module


def run_gsm8k_cost(against: str | None, rounds: int = 3) -> dict:
    """Part 4 (issue 45): the cost of grading a GSM8K answer as a run does, per item, CPU, one thread:
    the 1,319 test items answered as benchmarks/fixed_cost.py's stub answers ("The answer is N"), each
    item new to the process in the first pass (the graders' caches warmed on 300 other answers). The
    pack's grade: graders.grade with kind numeric, and lm-eval's strict and flexible extractions.
    `against`: a copy of other graders, timed in the same process, alternating which goes first."""
    import statistics
    import zlib

    from evalsuite import graders as current
    from evalsuite.tasks import LoadOptions, open_pack

    items = open_pack("gsm8k", None).load(LoadOptions(data_dir=str(data_dir())))
    sides = {"current": current, **({"against": load_graders_copy(against)} if against else {})}

    def grade_items(g, pairs):
        for gold, answer in pairs:
            g.grade(gold, answer, kind="numeric")
            g.extract_gsm8k_strict(answer)
            g.extract_last_number(answer)

    for g in sides.values():
        grade_items(g, [(str(7000 + i), f"The answer is {13000 + i}") for i in range(300)])
    result: dict[str, list[float]] = {name: [] for name in sides}
    for n in range(rounds):
        pairs = [(item.gold, f"The answer is {(zlib.crc32(item.id.encode()) + n) % 1000}") for item in items]
        for name in sorted(sides, reverse=n % 2 == 1):
            t0 = time.process_time()
            grade_items(sides[name], pairs)
            result[name].append(1000 * (time.process_time() - t0) / len(pairs))
    report = {name: {"ms_per_item_median": round(statistics.median(v), 4), "rounds": [round(x, 4) for x in v]}
              for name, v in result.items()}
    print(f"\nGSM8K grade cost, {len(items)} stub answers a round, CPU per item, one thread: "
          + "; ".join(f"{name} {r['ms_per_item_median']:.3f} ms" for name, r in report.items()))
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases-only", action="store_true")
    parser.add_argument("--show-errors", action="store_true")
    parser.add_argument("--only", metavar="PREFIX", help="grade only the case files whose name starts with PREFIX")
    parser.add_argument("--shapes-only", action="store_true", help="only the generated answer shapes (part 3)")
    parser.add_argument("--per-cell", type=int, default=10, help="answer shapes: cases per shape and language (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="answer shapes: the generator's seed (default 0)")
    parser.add_argument("--gsm8k-cost", action="store_true", help="only part 4: the cost of a GSM8K grade per item")
    parser.add_argument("--against", metavar="DIR", help="part 4: a copy of other graders (a folder holding graders/) "
                                                          "timed in the same process")
    args = parser.parse_args(argv)
    from evalsuite.graders import sandbox
    sandbox.prestart(block=True)  # the sympy worker starts outside the timings
    sandbox.run("ping")
    report = {}
    if args.gsm8k_cost:
        print(json.dumps(run_gsm8k_cost(args.against), indent=2))
        return 0
    if not args.shapes_only:
        report["cases"] = run_cases(args.show_errors, args.only)
        if not args.only:
            report["choice_generators"] = run_choice_generators()
    if not args.cases_only:
        report["shapes"] = run_shapes(args.show_errors, args.per_cell, args.seed)
    if not args.cases_only and not args.shapes_only:
        report["math500"] = run_math500()
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
