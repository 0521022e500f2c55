"""Intervals as exact sets: bounds, unions merged, ∩ and \\setminus, linear inequalities in one
variable solved, |x - a| < b read as an interval (structure.py builds them, equivalence.py compares).
"""
from __future__ import annotations

from fractions import Fraction

from .nodes import Node, ParseError, symbols_of
from .parse import Parser
from .shapes import Expr, Interval, Intervals, Items, Value


def expression(tokens: list[tuple[str, str]]) -> Node:
    if not tokens:
        raise ParseError("empty expression")
    return Parser(list(tokens)).parse()


def is_infinite(node: Node) -> bool:
    while node[0] == "neg":
        node = node[1]
    return node == ("const", "oo")


SET_OPS = ("CUP", "CAP", "SETMINUS")
Bound = tuple[float, Fraction]   # (kind, value): kind -1 for -oo, 0 finite, 1 for +oo


def _bound(node: Node) -> Bound | None:
    from .parse import exact_value
    if is_infinite(node):
        return (-1 if node[0] == "neg" else 1, Fraction(0))
    value = exact_value(node)
    return None if value is None else (0, value)


def _node(bound: Bound) -> Node:
    if bound[0]:
        return ("const", "oo") if bound[0] > 0 else ("neg", ("const", "oo"))
    return ("num", bound[1], 0)


def exact_intervals(parts: list[Interval]) -> list[tuple[Bound, Bound, bool, bool]] | None:
    out = []
    for p in parts:
        lo, hi = _bound(p.lo), _bound(p.hi)
        if lo is None or hi is None:
            return None
        out.append((lo, hi, p.lo_closed and not lo[0], p.hi_closed and not hi[0]))
    return out


def canonical_intervals(parts: list[Interval]) -> list[Interval]:
    """Merge overlapping or touching intervals and drop empty ones, when every endpoint is an
    exact number or infinity: [1, 3] U [2, 5] = [1, 5], (0, 1] U (1, 2) = (0, 2). Otherwise
    the parts are returned as they are."""
    exact = exact_intervals(parts)
    if exact is None:
        return list(parts)
    exact = [e for e in exact if e[0] < e[1] or (e[0] == e[1] and e[2] and e[3])]
    exact.sort(key=lambda e: (e[0], not e[2]))
    merged: list[list] = []
    for lo, hi, lo_c, hi_c in exact:
        if merged:
            last = merged[-1]
            if lo < last[1] or (lo == last[1] and (last[3] or lo_c)):
                if hi > last[1] or (hi == last[1] and hi_c):
                    last[1], last[3] = hi, hi_c or (hi == last[1] and last[3])
                continue
        merged.append([lo, hi, lo_c, hi_c])
    return [Interval(_node(lo), _node(hi), lo_c, hi_c) for lo, hi, lo_c, hi_c in merged]


def set_operation(op: str, left: list[Interval], right: list[Interval]) -> list[Interval]:
    """A U B, A n B, A \\ B on interval lists (a finite set is a list of points [a, a])."""
    if op == "CUP":
        return canonical_intervals(left + right) if exact_intervals(left + right) is not None else left + right
    a, b = exact_intervals(canonical_intervals(left)), exact_intervals(canonical_intervals(right))
    if a is None or b is None:
        raise ParseError("intersection or difference of sets with symbolic ends")
    if op == "SETMINUS":  # A \ B = A n (complement of B)
        gaps, lo, lo_c = [], (-1, Fraction(0)), False
        for s_lo, s_hi, s_lo_c, s_hi_c in b:
            gaps.append((lo, s_lo, lo_c, not s_lo_c))
            lo, lo_c = s_hi, not s_hi_c
        gaps.append((lo, (1, Fraction(0)), lo_c, False))
        b = gaps
    out = []
    for lo1, hi1, lc1, hc1 in a:
        for lo2, hi2, lc2, hc2 in b:
            lo, lc = (lo1, lc1) if lo1 > lo2 else (lo2, lc2) if lo2 > lo1 else (lo1, lc1 and lc2)
            hi, hc = (hi1, hc1) if hi1 < hi2 else (hi2, hc2) if hi2 < hi1 else (hi1, hc1 and hc2)
            out.append(Interval(_node(lo), _node(hi), lc and not lo[0], hc and not hi[0]))
    return canonical_intervals(out)


def flip(op: str) -> str:
    return {"<": ">", ">": "<", "<=": ">=", ">=": "<="}[op]


def solve_linear(sides: list[Node], op: str) -> Value | None:
    """a*x + b < c*x + d with rational coefficients and one variable -> an interval."""
    from fractions import Fraction
    from .parse import exact_value, substitute

    names = symbols_of(sides[0]) | symbols_of(sides[1])
    if len(names) != 1:
        return None
    name = names.pop()
    diff: Node = ("add", (sides[0], ("neg", sides[1])))
    values = [exact_value(substitute(diff, name, ("num", Fraction(k), 0))) for k in (0, 1, 2)]
    if any(v is None for v in values) or values[2] - values[1] != values[1] - values[0] or values[1] == values[0]:
        return None
    slope, intercept = values[1] - values[0], values[0]
    bound: Node = ("num", -intercept / slope, 0)
    if slope < 0:
        op = flip(op)
    # now: x op bound
    lo, hi = ("neg", ("const", "oo")), ("const", "oo")
    if op in ("<", "<="):
        return Intervals((Interval(lo, bound, False, op == "<="),))
    return Intervals((Interval(bound, hi, op == ">=", False),))


def absolute_value_bounds(chain: list[list[tuple[str, str]]], ops: list[str]) -> Value | None:
    """`2 <= |z| <= 5` -> [-5, -2] U [2, 5]; `|x| < 3` -> (-3, 3); `|x| > 3` -> (-oo, -3) U (3, oo)."""
    from .parse import exact_value

    sides = []
    for p in chain:
        try:
            sides.append(expression(p))
        except ParseError:
            return None
    at = [n for n, s in enumerate(sides) if s[0] == "func" and s[1] == "abs" and linear_form(s[2][0]) is not None]
    if len(at) != 1 or any(symbols_of(s) for n, s in enumerate(sides) if n != at[0]):
        return None
    k = at[0]
    slope, intercept = linear_form(sides[k][2][0])  # type: ignore[misc]
    # normalise to lower/upper bounds on |x|
    lower = upper = None  # (value, closed)
    for n, op in enumerate(ops):
        left, right = sides[n], sides[n + 1]
        if op in (">", ">="):
            left, right, op = right, left, flip(op)
        closed = op == "<="
        if right is sides[k]:
            lower = (left, closed)
        elif left is sides[k]:
            upper = (right, closed)
    oo: Node = ("const", "oo")
    neg = lambda n: ("neg", n)  # noqa: E731
    if lower is not None and exact_value(lower[0]) is not None and exact_value(lower[0]) < 0:
        lower = None
    if upper is not None and lower is None:
        parts = [Interval(neg(upper[0]), upper[0], upper[1], upper[1])]
    elif lower is not None and upper is None:
        parts = [Interval(neg(oo), neg(lower[0]), False, lower[1]), Interval(lower[0], oo, lower[1], False)]
    elif lower is not None and upper is not None:
        parts = [Interval(neg(upper[0]), neg(lower[0]), upper[1], lower[1]),
                 Interval(lower[0], upper[0], lower[1], upper[1])]
    else:
        return None
    if (slope, intercept) == (1, 0):
        return Intervals(tuple(parts))
    # |m x + q| bounds on u = m x + q: x = (u - q) / m, ends swapped when m < 0
    def to_x(u: Node) -> Node:
        if is_infinite(u):
            return u if slope > 0 else (u[1] if u[0] == "neg" else ("neg", u))
        return ("div", ("add", (u, ("num", -intercept, 0))), ("num", slope, 0))
    mapped = []
    for p in parts:
        lo, hi = to_x(p.lo), to_x(p.hi)
        mapped.append(Interval(lo, hi, p.lo_closed, p.hi_closed) if slope > 0 else Interval(hi, lo, p.hi_closed, p.lo_closed))
    return Intervals(tuple(mapped))


def linear_form(node: Node) -> tuple[Fraction, Fraction] | None:
    """(m, q) when node is m*x + q in one symbol with rational m != 0, q; else None."""
    from .parse import exact_value, substitute

    names = symbols_of(node)
    if len(names) != 1:
        return None
    name = names.pop()
    values = [exact_value(substitute(node, name, ("num", Fraction(k), 0))) for k in (0, 1, 2)]
    if any(v is None for v in values) or values[2] - values[1] != values[1] - values[0] or values[1] == values[0]:
        return None
    return values[1] - values[0], values[0]  # type: ignore[operator]


def as_intervals(value: Value) -> list[Interval]:
    """An interval-shaped value as intervals; a 2-tuple (a, b) reads as an open interval."""
    if isinstance(value, Intervals):
        return list(value.parts)
    if isinstance(value, Items) and value.ordered and len(value.items) == 2 and all(isinstance(i, Expr) for i in value.items):
        lo, hi = value.items
        return [Interval(lo.node, hi.node, value.brackets[0] == "[", value.brackets[1] == "]")]
    if isinstance(value, Items) and value.brackets == "{}":
        # a point set {a} inside a union: the degenerate closed interval [a, a]
        out = []
        for item in value.items:
            if not isinstance(item, Expr):
                raise ParseError("not an interval")
            out.append(Interval(item.node, item.node, True, True))
        return out
    raise ParseError("not an interval")


def number_value(value: Value) -> Fraction | None:
    """The exact rational value of a plain number answer, else None."""
    if isinstance(value, Expr):
        from .parse import exact_value
        return exact_value(value.node)
    return None
