"""The sympy side: runs only inside a sandbox worker (see sandbox.py), never in the caller.

ASTs from parse.py are turned into sympy objects by `build`, node by node, from a fixed
whitelist -- no string ever reaches sympify. Each job returns (equal, reason) with equal
True/False/None.
"""
from __future__ import annotations

import random
from typing import Any

import sympy
from sympy import E, I, Rational, Symbol, oo, pi

PROBE_POINTS = 6
PROBE_REL_TOL = 1e-10
DIGITS = 40

FUNCTIONS = {
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "cot": sympy.cot, "sec": sympy.sec,
    "csc": sympy.csc, "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan,
    "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh, "log": sympy.log,
    "log10": lambda x: sympy.log(x, 10), "exp": sympy.exp, "sqrt": sympy.sqrt, "abs": sympy.Abs,
    "floor": sympy.floor, "ceil": sympy.ceiling, "binomial": sympy.binomial,
}
CONSTANTS = {"pi": pi, "e": E, "i": I, "oo": oo}


def build(node: Any) -> sympy.Expr:
    kind = node[0]
    if kind == "num":
        return Rational(node[1].numerator, node[1].denominator)
    if kind == "sym":
        return Symbol(node[1])
    if kind == "const":
        return CONSTANTS[node[1]]
    if kind == "add":
        return sympy.Add(*[build(a) for a in node[1]])
    if kind == "mul":
        return sympy.Mul(*[build(a) for a in node[1]])
    if kind == "div":
        return build(node[1]) / build(node[2])
    if kind == "neg":
        return -build(node[1])
    if kind == "pow":
        return sympy.Pow(build(node[1]), build(node[2]))
    if kind == "fact":
        return sympy.factorial(build(node[1]))
    if kind == "func":
        return FUNCTIONS[node[1]](*[build(a) for a in node[2]])
    raise ValueError(f"cannot build node {kind!r}")


def _numeric(value: sympy.Expr) -> complex | None:
    try:
        v = complex(sympy.N(value, DIGITS))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
    if v != v or abs(v) == float("inf"):
        return None
    return v


def _close(a: complex, b: complex) -> bool:
    scale = max(abs(a), abs(b), 1e-30)
    return abs(a - b) <= PROBE_REL_TOL * scale or abs(a - b) < 1e-25


def _probe_points(symbols: list[Symbol], seed: int) -> list[dict[Symbol, Any]]:
    rng = random.Random(seed)
    # positive, non-integer points avoid most poles and branch cuts (sqrt(x^2) = x there)
    return [{s: Rational(rng.randint(1100, 2900), 1000) for s in symbols} for _ in range(PROBE_POINTS)]


def expr_equal(gold_node: Any, answer_node: Any) -> tuple[bool | None, str]:
    a, b = build(gold_node), build(answer_node)
    if a == b:
        return True, "identical as sympy expressions"
    diff = a - b
    symbols = sorted(diff.free_symbols | a.free_symbols | b.free_symbols, key=lambda s: s.name)
    agreed = 0
    if symbols:
        # cheap probes first: most wrong answers differ at the first point
        for point in _probe_points(symbols, seed=len(symbols)):
            va, vb = _numeric(a.subs(point)), _numeric(b.subs(point))
            if va is None or vb is None:
                continue
            if not _close(va, vb):
                shown = ", ".join(f"{s}={v}" for s, v in point.items())
                return False, f"differ at {shown}"
            agreed += 1
    if sympy.simplify(diff) == 0:
        return True, "simplify(gold - answer) = 0"
    if not symbols:
        va, vb = _numeric(a), _numeric(b)
        if va is None or vb is None:
            return None, "could not evaluate numerically"
        if _close(va, vb):
            return True, f"equal to {DIGITS} significant digits"
        return False, f"numerically different ({va:.6g} vs {vb:.6g})"
    if agreed >= 3:
        return True, f"equal at {agreed} random points (simplify could not show it)"
    return None, "could not decide (too few points where both sides are defined)"


def equation_equal(l1: Any, r1: Any, l2: Any, r2: Any) -> tuple[bool | None, str]:
    """Same relation: (l1 - r1) is a nonzero constant multiple of (l2 - r2)."""
    d1 = build(l1) - build(r1)
    d2 = build(l2) - build(r2)
    if d1 == 0 or d2 == 0:
        return None, "degenerate equation"
    symbols = sorted(d1.free_symbols | d2.free_symbols, key=lambda s: s.name)
    if not symbols:
        return None, "equations without variables"
    ratios = []
    for point in _probe_points(symbols, seed=7):
        v1, v2 = _numeric(d1.subs(point)), _numeric(d2.subs(point))
        if v1 is None or v2 is None or abs(v2) < 1e-20:
            continue
        ratios.append(v1 / v2)
    if len(ratios) >= 3 and all(_close(r, ratios[0]) for r in ratios) and abs(ratios[0]) > 1e-20:
        ratio = sympy.simplify(d1 / d2)
        if ratio.free_symbols:
            return True, f"same relation at {len(ratios)} random points (sides rearranged)"
        return True, f"same relation: gold = {ratio} x answer, sides rearranged"
    if ratios:
        return False, "different relations (sides are not proportional)"
    return None, "could not evaluate the equations"


def equal_pairs(pairs: list[tuple[Any, Any]]) -> list[tuple[bool | None, str]]:
    return [expr_equal(a, b) for a, b in pairs]


def ping() -> str:
    return "pong"


def spin(seconds: float) -> str:
    """A job that never finishes in time: used by the tests of the time limit."""
    import time
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return "done"


JOBS = {"expr_equal": expr_equal, "equation_equal": equation_equal, "equal_pairs": equal_pairs,
        "ping": ping, "spin": spin}
