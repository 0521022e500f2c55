"""Are two parsed answers (structure.py values) the same? -> Decision(equal, method, reason).

Numbers are settled in this process (numeric.py); whatever needs sympy (expressions with
symbols, closed forms that agree in double precision, equations) goes to the sandbox in
one batch per answer. A sympy step that overruns its time limit gives equal=None.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from . import sandbox
from .numeric import compare_numbers
from .parse import Node, ParseError, constant_value, contains_pm, expand_pm, parse_expression, symbols_of
from .structure import (BaseNumber, Equation, Expr, Intervals, Items, Labelled, Matrix, Relation,
                        TimeOfDay, Value, as_intervals, canonical_intervals)
from .normalise import plain_key


@dataclass(frozen=True)
class Decision:
    equal: bool | None
    method: str
    reason: str


def undecided(reason: str) -> Decision:
    return Decision(None, "none", reason)


FLOAT_PROBES = (Fraction(7316, 10000), Fraction(19271, 10000))
FLOAT_PROBE_TOL = 1e-6


def fingerprint(node: Node) -> tuple[complex, ...] | None:
    """Double-precision values at two fixed positive points (each symbol its own value)."""
    import math
    from .parse import substitute

    names = sorted(symbols_of(node))
    values = []
    for base in FLOAT_PROBES:
        point = node
        for k, name in enumerate(names):
            point = substitute(point, name, ("num", base + Fraction(113 * (k + 1), 1000), 0))
        v = constant_value(point)
        if v is None or math.isnan(v.real) or math.isnan(v.imag) or math.isinf(abs(v)):
            return None
        values.append(v)
    return tuple(values)


def fingerprints_differ(f: tuple[complex, ...] | None, g: tuple[complex, ...] | None) -> bool:
    if f is None or g is None:
        return False
    return any(abs(a - b) > FLOAT_PROBE_TOL * max(abs(a), abs(b), 1e-3) for a, b in zip(f, g))


def float_probe(gold: Node, answer: Node) -> tuple[bool | None, str]:
    """The cheap in-process check before sympy: two expressions whose values at a fixed
    positive point differ by more than FLOAT_PROBE_TOL (relative) are different. It can only
    say *unequal*; agreement goes on to the exact probes in the worker."""
    if fingerprints_differ(fingerprint(gold), fingerprint(answer)):
        return False, "differ at a fixed positive probe point (double precision)"
    return None, "agree in double precision"


def compare_pairs(pairs: list[tuple[Node, Node]]) -> list[tuple[bool | None, str, str]]:
    """Each (gold, answer) expression pair -> (equal, method, reason); sympy in one batch."""
    results: list[tuple[bool | None, str, str] | None] = []
    pending: list[int] = []
    for n, (g, a) in enumerate(pairs):
        if g == a:
            results.append((True, "numeric" if not symbols_of(g) else "symbolic", "same expression"))
            continue
        equal, reason = compare_numbers(g, a)
        if equal is None and (symbols_of(g) or symbols_of(a)):
            equal, reason = float_probe(g, a)
        if equal is not None:
            results.append((equal, "numeric" if equal or not (symbols_of(g) or symbols_of(a)) else "symbolic", reason))
        else:
            results.append(None)
            pending.append(n)
    if pending:
        try:
            answers = sandbox.run("equal_pairs", [pairs[n] for n in pending])
        except sandbox.SandboxTimeout as e:
            answers = [(None, f"undecided: {e}")] * len(pending)
        except sandbox.SandboxError as e:
            answers = [(None, f"undecided: sympy failed ({e})")] * len(pending)
        for n, (equal, reason) in zip(pending, answers):
            results[n] = (equal, "symbolic" if equal is not None else "none", reason)
    return results  # type: ignore[return-value]


def compare_expr(gold: Node, answer: Node, gold_percent: bool = False) -> Decision:
    if contains_pm(gold) or contains_pm(answer):
        return compare_items(Items(tuple(Expr(n) for n in expand_pm(gold)), False, "{}"),
                             Items(tuple(Expr(n) for n in expand_pm(answer)), False, "{}"))
    candidates = [(gold, answer)]
    if gold_percent:  # 50% may be answered 50 or 0.5
        candidates.append((("div", gold, ("num", Fraction(100), False)), answer))
    results = compare_pairs(candidates)
    for n, (equal, method, reason) in enumerate(results):
        if equal:
            if n == 1:
                reason = f"the gold is a percent; answer equals it as a fraction ({reason})"
            return Decision(True, method, reason)
    equal, method, reason = results[0]
    if equal is None and gold_percent and results[1][0] is False:
        equal, method, reason = results[0]
    return Decision(equal, method, reason)


def _match(n: int, allowed: list[list[bool]]) -> bool:
    """A perfect matching gold i -> answer j with allowed[i][j] (augmenting paths)."""
    owner = [-1] * n

    def try_assign(i: int, seen: list[bool]) -> bool:
        for j in range(n):
            if allowed[i][j] and not seen[j]:
                seen[j] = True
                if owner[j] < 0 or try_assign(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return all(try_assign(i, [False] * n) for i in range(n))


def compare_items(gold: Items, answer: Items, ordered: bool | None = None) -> Decision:
    ordered = gold.ordered if ordered is None else ordered
    g_items, a_items = gold.items, answer.items
    if len(g_items) != len(a_items):
        return Decision(False, "set", f"{len(g_items)} elements in the gold, {len(a_items)} in the answer")
    if len(g_items) > 16:
        return undecided("undecided: more than 16 elements")
    kind = "tuple" if ordered else "set"
    if ordered:
        for n, (g, a) in enumerate(zip(g_items, a_items)):
            d = compare(g, a)
            if d.equal is not True:
                return Decision(d.equal, "set" if d.equal is False else "none",
                                f"{kind} element {n + 1}: {d.reason}")
        return Decision(True, "set", f"equal as ordered {kind}s, element by element")
    # order-free: plain expressions in one batch, anything else pairwise
    n = len(g_items)
    if all(isinstance(v, Expr) for v in g_items + a_items):
        # fingerprints first: only pairs that agree in double precision go on (256 -> ~16 for 16 x 16)
        g_prints = [fingerprint(g.node) for g in g_items]  # type: ignore[union-attr]
        a_prints = [fingerprint(a.node) for a in a_items]  # type: ignore[union-attr]
        symbolic = [bool(symbols_of(v.node)) for v in g_items + a_items]  # type: ignore[union-attr]
        candidates = [(i, j) for i in range(n) for j in range(n)
                      if not (symbolic[i] or symbolic[n + j]) or not fingerprints_differ(g_prints[i], a_prints[j])]
        flat = compare_pairs([(g_items[i].node, a_items[j].node) for i, j in candidates])  # type: ignore[union-attr]
        table = [[False] * n for _ in range(n)]
        for (i, j), result in zip(candidates, flat):
            table[i][j] = result[0]
    else:
        table = [[compare(g, a).equal for a in a_items] for g in g_items]
    if _match(n, [[v is True for v in row] for row in table]):
        return Decision(True, "set", f"equal as sets of {n} elements (order ignored)")
    if _match(n, [[v is not False for v in row] for row in table]):
        return undecided("undecided: some set elements could not be compared")
    return Decision(False, "set", "the sets differ (no one-to-one matching of equal elements)")


def compare_intervals(gold: list, answer: list) -> Decision:
    gold, answer = canonical_intervals(gold), canonical_intervals(answer)
    if len(gold) != len(answer):
        return Decision(False, "interval", f"{len(gold)} intervals in the gold, {len(answer)} in the answer")
    def endpoints_equal(g, a) -> bool | None:
        if (g.lo_closed, g.hi_closed) != (a.lo_closed, a.hi_closed):
            return False
        results = compare_pairs([(g.lo, a.lo), (g.hi, a.hi)])
        if all(r[0] is True for r in results):
            return True
        return False if any(r[0] is False for r in results) else None
    n = len(gold)
    table = [[endpoints_equal(g, a) for a in answer] for g in gold]
    if _match(n, [[v is True for v in row] for row in table]):
        return Decision(True, "interval", "same intervals (endpoints and open/closed ends)")
    if _match(n, [[v is not False for v in row] for row in table]):
        return undecided("undecided: some interval endpoints could not be compared")
    return Decision(False, "interval", "different intervals (an endpoint or an open/closed end differs)")


def compare_equations(gold: Equation, answer: Equation) -> Decision:
    if gold.solved_for and gold.solved_for == answer.solved_for:
        d = compare_expr(gold.rhs, answer.rhs)
        return Decision(d.equal, d.method, f"both solved for {gold.solved_for}: {d.reason}")
    try:
        equal, reason = sandbox.run("equation_equal", gold.lhs, gold.rhs, answer.lhs, answer.rhs)
    except (sandbox.SandboxTimeout, sandbox.SandboxError) as e:
        return undecided(f"undecided: {e}")
    return Decision(equal, "symbolic" if equal is not None else "none", reason)


def expand_items(items: Items) -> Items:
    out: list[Value] = []
    for item in items.items:
        if isinstance(item, Expr) and contains_pm(item.node):
            out.extend(Expr(n) for n in expand_pm(item.node))
        else:
            out.append(item)
    return Items(tuple(out), items.ordered, items.brackets)


def vector_items(m: Matrix) -> Items | None:
    if len(m.rows) == 1:
        return Items(m.rows[0], True, "()")
    if all(len(r) == 1 for r in m.rows):
        return Items(tuple(r[0] for r in m.rows), True, "()")
    return None


def label_of(value: Value) -> tuple[str, Value] | None:
    """(label, value) of a labelled answer: `AB = 4`, and `x = 5` (a symbol given a value)."""
    if isinstance(value, Labelled):
        return value.label, value.value
    if isinstance(value, Equation) and value.solved_for:
        return value.solved_for, Expr(value.rhs)
    return None


def _as_curves(gold: tuple[str, Value], answer: tuple[str, Value]) -> tuple[Equation, Equation] | None:
    """Two labelled values whose labels are expressions in single-letter variables ('y', 'xy') and
    whose sides name the same two or three variables: the equations of two curves, not two labels."""
    out = []
    for label, value in (gold, answer):
        if not isinstance(value, Expr) or not re.fullmatch(r"[a-z]{1,3}", label):
            return None
        try:
            out.append(Equation(parse_expression(label), value.node))
        except ParseError:
            return None
    names = [symbols_of(e.lhs) | symbols_of(e.rhs) for e in out]
    return (out[0], out[1]) if names[0] == names[1] and 2 <= len(names[0]) <= 3 else None


def label_key(label: str) -> str:
    """x_1 and x_2 name roots of x: the index is dropped when labels are matched; y, f(x),
    g(x), y(x) all name the value of a function of x."""
    key = re.sub(r"_\{?\d+\}?", "", plain_key(label))
    return "y" if re.fullmatch(r"[fghpqy]\(x\)", key) else key


def all_labelled(value: Value) -> bool:
    return isinstance(value, Items) and bool(value.items) and all(label_of(v) for v in value.items)


def unlabelled(items: Items) -> Items:
    return Items(tuple(label_of(v)[1] for v in items.items), True, "()")  # type: ignore[index]


def dedupe(items: Items) -> Items:
    """A set written with a repeated element ({1, 1, 4}) is the set without the repeat."""
    out: list[Value] = []
    for item in items.items:
        if item not in out:
            out.append(item)
    return Items(tuple(out), items.ordered, items.brackets)


def compare(gold: Value, answer: Value, gold_percent: bool = False) -> Decision:
    """The structural comparison; see the module docstring."""
    if isinstance(gold, Expr) and isinstance(answer, Expr):
        return compare_expr(gold.node, answer.node, gold_percent)
    # labels: both labelled -> the labels must match; one side labelled -> compared without
    g_label, a_label = label_of(gold), label_of(answer)
    if isinstance(gold, Labelled) or isinstance(answer, Labelled):
        if g_label and a_label:
            if label_key(g_label[0]) != label_key(a_label[0]):
                curves = _as_curves(g_label, a_label)
                if curves is not None:  # 'xy = 1' and 'y = 1/x': one relation between the same variables
                    return compare_equations(*curves)
                return Decision(False, "set", f"different labels ({g_label[0]} vs {a_label[0]})")
            d = compare(g_label[1], a_label[1], gold_percent)
            return Decision(d.equal, d.method, f"{g_label[0]}: {d.reason}")
        if g_label:
            return compare(g_label[1], answer, gold_percent)
        if a_label:
            return compare(gold, a_label[1], gold_percent)
    if isinstance(gold, Items) and isinstance(answer, Items):
        # `p = 3, q = 7` against `(3, 7)`: the labels give the order
        if all_labelled(gold) and not all_labelled(answer) and answer.ordered:
            return compare_items(unlabelled(gold), answer, ordered=True)
        if all_labelled(answer) and not all_labelled(gold) and gold.ordered:
            return compare_items(gold, unlabelled(answer), ordered=True)
        if all_labelled(gold) and all_labelled(answer):
            return compare_items(Items(gold.items, False, ""), Items(answer.items, False, ""), ordered=False)
    # 13:10 reads as a time of day; against a number it is the ratio 13 : 10
    if isinstance(gold, TimeOfDay) != isinstance(answer, TimeOfDay) and isinstance(gold if isinstance(answer, TimeOfDay) else answer, Expr):
        t = gold if isinstance(gold, TimeOfDay) else answer
        if not t.has_meridiem or t.minutes // 60 > 12:  # type: ignore[union-attr]
            ratio = Expr(("div", ("num", Fraction(t.minutes // 60), 0), ("num", Fraction(t.minutes % 60), 0)))  # type: ignore[union-attr]
            d = compare(ratio, answer) if t is gold else compare(gold, ratio)
            return Decision(d.equal, d.method, f"h:mm read as a ratio: {d.reason}")
    if isinstance(gold, Equation) and isinstance(answer, Expr) and not symbols_of(gold.lhs) and not symbols_of(gold.rhs):
        # a key written as a worked line, "4 \\cdot 3 = 12": its value is the last side
        d = compare(Expr(gold.rhs), answer, gold_percent)
        return Decision(d.equal, d.method, f"the gold's value after '=': {d.reason}")
    if isinstance(gold, Equation) and isinstance(answer, Expr) and not gold.solved_for:
        # the label rule (docs/graders.md): a gold whose left side is no label (a sum, product
        # or power of unknowns: x - 2y + 4z = 0, 3p + q = 5) is a relation, not its right side
        return Decision(False, "none", "the gold is an equation (a relation), the answer a single value")
    if isinstance(answer, Equation) and isinstance(gold, Expr) and not answer.solved_for:
        # "a + b = 7", "4 \\cdot 3 = 12": a worked line; its value is after the last '='
        d = compare(gold, Expr(answer.rhs), gold_percent)
        return Decision(d.equal, d.method, f"value after the last '=': {d.reason}")
    # x = 5 vs 5, y = 2x + 3 vs 2x + 3
    if isinstance(gold, Equation) and isinstance(answer, Equation):
        return compare_equations(gold, answer)
    # "9 \\cdot 2 = 18": a worked line whose sides are numbers; its value is the last side
    if isinstance(answer, Equation) and not symbols_of(answer.lhs) and not symbols_of(answer.rhs):
        return compare(gold, Expr(answer.rhs), gold_percent)
    if isinstance(gold, Equation) and gold.solved_for and not isinstance(answer, Equation):
        return compare(Expr(gold.rhs), answer, gold_percent)
    if isinstance(answer, Equation) and answer.solved_for:
        return compare(gold, Expr(answer.rhs), gold_percent)
    # intervals, inequalities, and (a, b) read as an open interval
    if isinstance(gold, Intervals) or isinstance(answer, Intervals):
        try:
            return compare_intervals(as_intervals(gold), as_intervals(answer))
        except ValueError:
            return Decision(False, "interval", "an interval compared with something that is not one")
    if isinstance(gold, Matrix) and isinstance(answer, Expr) and len({len(r) for r in gold.rows} | {len(gold.rows)}) == 1:
        # I, 2I, I \cdot I against a square matrix: the identity of the gold's size
        from .matrix_eval import identity_expression
        grid = identity_expression(answer.node, len(gold.rows))
        if grid is not None:
            d = compare_matrices(gold, Matrix(tuple(tuple(Expr(x) for x in row) for row in grid)))
            return Decision(d.equal, d.method, f"I read as the {len(gold.rows)} x {len(gold.rows)} identity: {d.reason}")
    if isinstance(gold, Matrix) or isinstance(answer, Matrix):
        return compare_matrices(gold, answer)
    if isinstance(gold, Items) and isinstance(answer, Items):
        ordered = gold.ordered and answer.brackets != "{}"
        pair = {gold.brackets, answer.brackets}
        if "{}" in pair and pair & {"()", "[]"} and len(gold.items) == 2:
            return Decision(False, "set", "a set compared with a pair or an interval")
        if ordered and pair == {"()", "[]"} and len(gold.items) == 2:
            # [a, b] and (a, b) are different intervals, never the same pair
            return Decision(False, "interval", f"bracket types differ: {gold.brackets[0]}a, b{gold.brackets[1]} "
                                              f"vs {answer.brackets[0]}a, b{answer.brackets[1]}")
        if not ordered:  # {1 ± √5, -2} has three elements
            gold, answer = dedupe(expand_items(gold)), dedupe(expand_items(answer))
        return compare_items(gold, answer, ordered=ordered)
    if isinstance(gold, Items) and len(gold.items) == 1:
        return compare(gold.items[0], answer, gold_percent)
    if isinstance(answer, Items) and len(answer.items) == 1:
        return compare(gold, answer.items[0], gold_percent)
    if isinstance(gold, Items) and not gold.ordered and not isinstance(answer, (Items, Intervals)) \
            and 1 < len(gold.items) <= 4 and not (isinstance(answer, Expr) and contains_pm(answer.node)):
        # a key that boxes one answer in two forms ("15\\frac{39}{40} = \\boxed{\\frac{639}{40}}")
        decisions = [compare(item, answer, gold_percent) for item in gold.items]
        if all(d.equal is True for d in decisions):
            return Decision(True, decisions[0].method, f"every form in the gold equals the answer: {decisions[0].reason}")
        return Decision(False if any(d.equal is False for d in decisions) else None, "set",
                        f"the gold has {len(gold.items)} answers, the response one")
    if isinstance(answer, Items) and not answer.ordered and not isinstance(gold, (Items, Intervals)) and 1 < len(answer.items) <= 4 \
            and not (isinstance(gold, Expr) and contains_pm(gold.node)):
        # "\\frac{1}{2} or 0.5": the same answer written twice counts; two different answers do not
        decisions = [compare(gold, item, gold_percent) for item in answer.items]
        if all(d.equal is True for d in decisions):
            return Decision(True, decisions[0].method, f"every form listed equals the gold: {decisions[0].reason}")
        return Decision(False if any(d.equal is False for d in decisions) else None, "set",
                        f"{len(answer.items)} answers given where the gold has one")
    if isinstance(gold, Expr) and isinstance(answer, Items) and contains_pm(gold.node):
        return compare_items(Items(tuple(Expr(n) for n in expand_pm(gold.node)), False, "{}"), answer)
    if isinstance(gold, Items) and isinstance(answer, Expr) and contains_pm(answer.node):
        return compare_items(gold, Items(tuple(Expr(n) for n in expand_pm(answer.node)), False, "{}"))
    if isinstance(gold, TimeOfDay) and isinstance(answer, TimeOfDay):
        if gold.minutes == answer.minutes:
            return Decision(True, "numeric", "same time of day")
        if not (gold.has_meridiem and answer.has_meridiem) and gold.minutes % 720 == answer.minutes % 720:
            return Decision(True, "numeric", "same time on a 12-hour clock (am/pm not given on one side)")
        return Decision(False, "numeric", "different times of day")
    if isinstance(gold, BaseNumber):
        if isinstance(answer, BaseNumber):
            equal = gold.digits == answer.digits and gold.base == answer.base
            return Decision(equal, "normalised", "same digits and base" if equal else "different digits or base")
        if isinstance(answer, Expr) and answer.node[0] == "num" and not answer.node[2]:
            equal = str(answer.node[1]) == gold.digits.lstrip("0") or (gold.digits == "0" and answer.node[1] == 0)
            return Decision(equal, "normalised", "same digits, base subscript left out" if equal else "different digits")
    if isinstance(gold, Relation) and isinstance(answer, Relation):
        equal = plain_key(gold.text) == plain_key(answer.text)
        return Decision(equal, "normalised", "same relation text" if equal else "different relations")
    return Decision(False, "none", f"different kinds of answer ({_kind(gold)} vs {_kind(answer)})")


def as_matrix(value: Value) -> Value:
    """[[1, 2], [3, 4]] (rows as lists) is a matrix."""
    if isinstance(value, Items) and value.ordered and len(value.items) > 1 and all(
            isinstance(r, Items) and r.ordered for r in value.items) and len({len(r.items) for r in value.items}) == 1:  # type: ignore[union-attr]
        return Matrix(tuple(tuple(r.items) for r in value.items))  # type: ignore[union-attr]
    return value


def compare_matrices(gold: Value, answer: Value) -> Decision:
    gold, answer = as_matrix(gold), as_matrix(answer)
    if isinstance(gold, Matrix) and isinstance(answer, Matrix):
        g_shape = (len(gold.rows), {len(r) for r in gold.rows})
        a_shape = (len(answer.rows), {len(r) for r in answer.rows})
        if g_shape != a_shape:
            return Decision(False, "set", "matrices of different shapes")
        flat_g = Items(tuple(v for r in gold.rows for v in r), True, "()")
        flat_a = Items(tuple(v for r in answer.rows for v in r), True, "()")
        d = compare_items(flat_g, flat_a, ordered=True)
        return Decision(d.equal, d.method, d.reason.replace("tuple", "matrix"))
    vec_g = vector_items(gold) if isinstance(gold, Matrix) else gold
    vec_a = vector_items(answer) if isinstance(answer, Matrix) else answer
    if isinstance(vec_g, Items) and isinstance(vec_a, Items):
        d = compare_items(vec_g, vec_a, ordered=True)
        return Decision(d.equal, d.method, f"vector vs tuple: {d.reason}")
    return Decision(False, "set", "a matrix compared with something that is not one")


def _kind(value: Value) -> str:
    return {Expr: "expression", Equation: "equation", Labelled: "labelled value", Intervals: "interval", Items: "list/set",
            Matrix: "matrix", Relation: "relation", TimeOfDay: "time", BaseNumber: "based number"}.get(type(value), "?")
