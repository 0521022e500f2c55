"""Fast numeric comparison in the calling process: no sympy, no worker.

Exact rationals via fractions.Fraction for +, -, *, /, integer powers and n!; a double
precision complex value for anything constant (pi, sqrt, sin ...). Most answers are
decided here in microseconds; only what these cannot settle goes to the sympy worker.
The exact value of an AST (exact_value) is parse.py's, beside its double-precision
constant_value: the parser needs it for the bounds of a sum, so it sits below this module.

Tolerance (documented in docs/graders.md): two values that are both exact rationals must
be equal exactly (10000 vs 10001 is wrong, however close). A decimal is accepted for a
value it cannot write exactly (1/3, sqrt(2), pi) when the relative difference is at most
FLOAT_REL_TOL and the decimal is written to at least MIN_DECIMAL_DIGITS significant
digits (a rounded 3.14 or 37.7 is not accepted for pi or 12 pi).
"""
from __future__ import annotations

import math
from fractions import Fraction

from .parse import Node, constant_value, exact_value

FLOAT_REL_TOL = 1e-4        # decimal answer vs an irrational / non-terminating gold
SAME_DOUBLE_REL_TOL = 1e-9  # two closed forms whose doubles agree this well go to sympy to confirm
MIN_DECIMAL_DIGITS = 4      # 37.7 is not 12*pi; 0.3333 is 1/3
CLEARLY_DIFFERENT = 1e-6    # doubles further apart than this: unequal without sympy


def decimal_digits(node: Node) -> int:
    """The fewest significant digits of any decimal literal in the AST; 0 if none."""
    if node[0] == "num":
        return node[2]
    found = [d for part in node[1:] if isinstance(part, tuple) and part
             for d in ([decimal_digits(part)] if isinstance(part[0], str) else [decimal_digits(p) for p in part])
             if d]
    return min(found) if found else 0


def has_decimal(node: Node) -> bool:
    return decimal_digits(node) > 0


def close_enough(gold: Node, answer: Node, diff: float) -> bool:
    """The decimal tolerance rule: within FLOAT_REL_TOL and written to MIN_DECIMAL_DIGITS."""
    digits = [d for d in (decimal_digits(gold), decimal_digits(answer)) if d]
    return diff <= FLOAT_REL_TOL and bool(digits) and min(digits) >= MIN_DECIMAL_DIGITS


def terminating(value: Fraction) -> bool:
    """True if the rational has a finite decimal expansion (denominator 2^a 5^b)."""
    d = value.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def rel_diff(a: complex, b: complex) -> float:
    scale = max(abs(a), abs(b))
    if scale == 0:
        return 0.0
    return abs(a - b) / scale


def compare_numbers(gold: Node, answer: Node) -> tuple[bool | None, str]:
    """(True/False, reason) when decided here, (None, reason) when sympy must decide."""
    g_exact, a_exact = exact_value(gold), exact_value(answer)
    if g_exact is not None and a_exact is not None:
        if g_exact == a_exact:
            return True, f"equal as exact rationals ({g_exact})"
        # a decimal for a value that has no finite decimal (1/3 ~ 0.3333)
        decimal_side = has_decimal(answer) or has_decimal(gold)
        if decimal_side and not (terminating(g_exact) and terminating(a_exact)):
            diff = rel_diff(complex(g_exact), complex(a_exact))
            if close_enough(gold, answer, diff):
                return True, f"decimal within relative {FLOAT_REL_TOL:g} of {g_exact} (diff {diff:.1e})"
        return False, f"different numbers ({g_exact} vs {a_exact})"
    g_float, a_float = constant_value(gold), constant_value(answer)
    if g_float is None or a_float is None:
        return None, "has symbols"
    if any(math.isnan(v.real) or math.isnan(v.imag) for v in (g_float, a_float)):
        return None, "not a finite number in double precision"
    if any(math.isinf(abs(v)) for v in (g_float, a_float)):
        if g_float == a_float:
            return True, "both infinite with the same sign"
        return False, "infinite vs different value"
    if max(abs(g_float), abs(a_float)) < 1e-12:
        return None, "both within 1e-12 of zero in double precision; needs an exact check"
    diff = rel_diff(g_float, a_float)
    if has_decimal(answer) or has_decimal(gold):
        if close_enough(gold, answer, diff):
            return True, f"decimal within relative {FLOAT_REL_TOL:g} of the exact value (diff {diff:.1e})"
        if diff <= SAME_DOUBLE_REL_TOL:  # tan 135° vs -1.0: the closed form may be exactly the decimal
            return None, f"equal in double precision (diff {diff:.1e}); needs an exact check"
        return False, f"numerically different ({_show(g_float)} vs {_show(a_float)})"
    if diff > CLEARLY_DIFFERENT:
        return False, f"numerically different ({_show(g_float)} vs {_show(a_float)})"
    return None, f"equal in double precision (diff {diff:.1e}); needs an exact check"


def _show(v: complex) -> str:
    return f"{v.real:.6g}" if v.imag == 0 else f"{v.real:.6g}{v.imag:+.6g}i"
