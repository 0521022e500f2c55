"""The sympy side: runs only inside a sandbox worker (see sandbox.py), never in the caller.

ASTs from parse.py are turned into sympy objects by `build`, node by node, from a fixed
whitelist -- no string ever reaches sympify. Each job returns (equal, reason) with equal
True/False/None. Variables are real symbols (answers are about real numbers, and it lets
sympy see sqrt(x^2) = |x|).

The probe rule (docs/graders.md): two expressions are evaluated at fixed pseudo-random
points -- positive, negative and near-zero reals, and complex points -- exactly where sympy
can (rational points in a rational function give exact rationals, so x + 10^-12 never
equals x) and else to PROBE_DIGITS digits.
  * a real point where both sides are real and differ decides *unequal*;
  * agreement is conclusive -- *equal* without simplify -- only when the sides agree (to
    PROBE_TOL relative) at >= MIN_REAL_POINTS real points and at every complex point, and
    differ at no real point where both are real (negative points are always probed, so |x|
    and x differ there; a point where one side is not real, like ln x at x < 0, is skipped);
  * or when they agree at >= MIN_SIGNED_POINTS negative and as many positive real points
    (variables are real: sqrt(x^2 + 2x + 1) = |x + 1| though they differ at complex points);
  * anything less (few points defined, e.g. only x > 0 for ln x, and disagreement at complex
    points) goes to simplify(gold - answer) == 0, and if that fails the verdict is undecided.
The points come from a fixed seed, and workers run with PYTHONHASHSEED=0: same verdict
on every run.
"""
from __future__ import annotations

import random
import time
from typing import Any

import sympy
from sympy import E, I, Rational, Symbol, oo, pi

from .parse import BOUND_PREFIX

PROBE_DIGITS = 60
PROBE_TOL = sympy.Float("1e-45", PROBE_DIGITS)
CONSTANT_DIGITS = 60           # constants equal to 50 significant digits are equal
CONSTANT_TOL = sympy.Float("1e-50", CONSTANT_DIGITS)
MIN_REAL_POINTS = 4
MIN_SIGNED_POINTS = 4          # real points of each sign for agreement on the real line alone
REAL_MAGNITUDES = (Rational(3, 10), Rational(7, 5), Rational(29, 10), Rational(53, 10), Rational(117, 10))

FUNCTIONS = {
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "cot": sympy.cot, "sec": sympy.sec,
    "csc": sympy.csc, "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan,
    "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh, "log": sympy.log,
    "log10": lambda x: sympy.log(x, 10), "exp": sympy.exp, "sqrt": sympy.sqrt, "abs": sympy.Abs,
    "floor": sympy.floor, "ceil": sympy.ceiling, "binomial": sympy.binomial,
    "gcd": lambda *a: sympy.gcd(list(a)), "lcm": lambda *a: sympy.lcm(list(a)), "max": sympy.Max, "min": sympy.Min,
}
CONSTANTS = {"pi": pi, "e": E, "i": I, "oo": oo}

_soft_deadline = float("inf")  # CPU time (process_time) after which remaining pairs are left undecided


def build(node: Any) -> sympy.Expr:
    kind = node[0]
    if kind == "num":
        return Rational(node[1].numerator, node[1].denominator)
    if kind == "sym":
        name = node[1]
        if BOUND_PREFIX in name:  # a sum's bound variable @0, or a name it indexes: a_@0 is a(@0)
            base, _, bound = name.rpartition("_")
            index = Symbol(bound or name, integer=True)
            return sympy.Function(base)(index) if base else index
        return Symbol(name, real=True)
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
    if kind == "bigop":  # ("bigop", "sum" | "prod", bound name, lo, hi, body)
        limits = (Symbol(node[2], integer=True), build(node[3]), build(node[4]))
        return (sympy.Sum if node[1] == "sum" else sympy.Product)(build(node[5]), limits)
    raise ValueError(f"cannot build node {kind!r}")


def _value(expr: sympy.Expr) -> sympy.Expr | None:
    """An exact Rational when sympy gets one, else a PROBE_DIGITS complex float; None if undefined."""
    if expr.is_Rational:
        return expr
    if expr.has(sympy.zoo, sympy.nan, oo, -oo):
        return None
    try:
        v = sympy.N(expr, PROBE_DIGITS)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, ArithmeticError):
        return None
    if not v.is_number or v.has(sympy.zoo, sympy.nan, oo, -oo):
        return None
    re_v, im_v = v.as_real_imag()
    if not (re_v.is_Number and im_v.is_Number):
        return None
    return v


def _same(a: sympy.Expr, b: sympy.Expr, tol: sympy.Float = PROBE_TOL) -> bool:
    if a.is_Rational and b.is_Rational:
        return a == b
    diff = abs(sympy.N(a - b, PROBE_DIGITS))
    scale = max(abs(sympy.N(a, PROBE_DIGITS)), abs(sympy.N(b, PROBE_DIGITS)), sympy.Float(1))
    return bool(diff <= tol * scale)


def _is_real(v: sympy.Expr) -> bool:
    if v.is_Rational:
        return True
    im = sympy.im(v)
    return bool(abs(im) <= PROBE_TOL * max(abs(v), 1))


def _probe_points(symbols: list[Symbol], seed: int = 12345) -> tuple[list[dict], list[dict]]:
    """(real points, complex points), each symbol its own value at each point.

    Real points: every magnitude with all symbols positive and with all negative, then two
    with alternating signs. Values are rationals, so polynomials evaluate exactly."""
    rng = random.Random(seed)

    def value(sign: int, scale: Rational, k: int) -> Rational:
        return sign * scale * (1 + Rational(k, 7)) * Rational(rng.randint(900, 1100), 1000)

    reals = [{s: value(sign, scale, k) for k, s in enumerate(symbols)}
             for scale in REAL_MAGNITUDES for sign in (1, -1)]
    reals += [{s: value(-1 if k % 2 == 0 else 1, scale, k) for k, s in enumerate(symbols)}
              for scale in REAL_MAGNITUDES[1:3]]
    complexes = [{s: value(1, Rational(13, 10), k) + I * value(1 if k % 2 else -1, Rational(9, 10), k)
                  for k, s in enumerate(symbols)} for _ in range(3)]
    return reals, complexes


def _at(expr: sympy.Expr, point: dict) -> sympy.Expr | None:
    try:
        return _value(expr.xreplace(point))
    except (TypeError, ValueError, ZeroDivisionError, ArithmeticError):
        return None


def _show(point: dict) -> str:
    return ", ".join(f"{s}={v}" for s, v in point.items())


def constants_equal(a: sympy.Expr, b: sympy.Expr) -> tuple[bool | None, str]:
    va, vb = _value(a), _value(b)
    if va is None or vb is None:
        return None, "could not evaluate numerically"
    if _same(va, vb, CONSTANT_TOL):
        return True, "equal to 50 significant digits"
    return False, f"numerically different ({sympy.N(va, 6)} vs {sympy.N(vb, 6)})"


def evaluate_sums(expr: sympy.Expr) -> sympy.Expr:
    """Sums and products with symbolic bounds in closed form where sympy finds one
    (sum of k to n -> n(n+1)/2); those it cannot (over a(k)) stay as they are."""
    if not expr.has(sympy.Sum, sympy.Product):
        return expr
    return expr.doit()


def unevaluated(expr: sympy.Expr) -> bool:
    """Still holds a sum or product, or a function of a bound variable: no value at a point."""
    return bool(expr.has(sympy.Sum, sympy.Product) or expr.atoms(sympy.core.function.AppliedUndef))


SUM_PROBES = 3                 # concrete points tried on sums of unknown terms
SUM_PROBE_TOP = 5              # free symbols (the bounds) take integers 1..SUM_PROBE_TOP


def sums_differ(a: sympy.Expr, b: sympy.Expr) -> str | None:
    """A concrete point where two sums of unknown terms differ, else None. The terms a(k) become
    quadratics in k with fixed pseudo-random rational coefficients and the free symbols small
    integers, so the sums are finite: equal sums agree at every such point, so a difference
    proves them unequal (agreement proves nothing and goes on to simplify)."""
    undefined = sorted({f.func for f in a.atoms(sympy.core.function.AppliedUndef)
                        | b.atoms(sympy.core.function.AppliedUndef)}, key=str)
    free = sorted((a.free_symbols | b.free_symbols) - {s for s in a.free_symbols | b.free_symbols
                                                       if BOUND_PREFIX in s.name}, key=lambda s: s.name)
    rng = random.Random(4321)
    x = Symbol("x")
    for _ in range(SUM_PROBES):
        if time.process_time() > _soft_deadline:
            return None
        terms = {f: sympy.Lambda(x, Rational(rng.randint(-9, 9), 7) + Rational(rng.randint(1, 9), 5) * x
                                 + Rational(rng.randint(-9, 9), 11) * x ** 2) for f in undefined}
        values = {s: rng.randint(1, SUM_PROBE_TOP) for s in free}
        try:
            sides = []
            for side in (a, b):
                for f, term in terms.items():
                    side = side.replace(f, term)
                sides.append(side.subs(values).doit())
        except (TypeError, ValueError, ZeroDivisionError, ArithmeticError):
            continue
        va, vb = (_value(s) for s in sides)
        if va is not None and vb is not None and not _same(va, vb):
            shown = ", ".join(f"{s}={v}" for s, v in values.items()) or "the terms"
            return f"{shown} and the terms a(k) as fixed quadratics"
    return None


def expr_equal(gold_node: Any, answer_node: Any) -> tuple[bool | None, str]:
    a, b = build(gold_node), build(answer_node)
    if a == b:
        return True, "identical as sympy expressions"
    a, b = evaluate_sums(a), evaluate_sums(b)
    if a == b:
        return True, "identical as sympy expressions once the sums are evaluated"
    if unevaluated(a) or unevaluated(b):
        # summands of unknown terms a_i: differ at a concrete point -> unequal; else simplify
        point = sums_differ(a, b)
        if point:
            return False, f"differ with {point} (probe rule for sums)"
        if sympy.simplify(a - b) == 0:
            return True, "simplify(gold - answer) = 0 (sums over the same bounds)"
        return None, "undecided: sums or products that sympy could neither evaluate nor show equal"
    symbols = sorted(a.free_symbols | b.free_symbols, key=lambda s: s.name)
    if not symbols:
        return constants_equal(a, b)
    reals, complexes = _probe_points(symbols)
    real_agreed = negative_agreed = 0
    for point in reals:
        va, vb = _at(a, point), _at(b, point)
        if va is None or vb is None or not (_is_real(va) and _is_real(vb)):
            continue
        if not _same(va, vb):
            return False, f"differ at {_show(point)} (probe rule)"
        real_agreed += 1
        negative_agreed += any(v < 0 for v in point.values())
    complex_agreed = 0
    for point in complexes:
        va, vb = _at(a, point), _at(b, point)
        if va is not None and vb is not None and _same(va, vb):
            complex_agreed += 1
    if real_agreed >= MIN_REAL_POINTS and complex_agreed == len(complexes):
        return True, (f"agree to 45 digits at {real_agreed} real points ({negative_agreed} negative) and "
                      f"{complex_agreed} complex points (probe rule)")
    if negative_agreed >= MIN_SIGNED_POINTS and real_agreed - negative_agreed >= MIN_SIGNED_POINTS:
        # variables are real: agreement over both signs settles it even where complex points
        # differ (sqrt(x^2 + 2x + 1) and |x + 1|, which differ only off the real line)
        return True, (f"agree to 45 digits at {real_agreed} real points of both signs ({negative_agreed} "
                      f"negative); variables are real (probe rule)")
    if sympy.simplify(a - b) == 0:
        return True, "simplify(gold - answer) = 0"
    return None, (f"undecided: agree at {real_agreed} real and {complex_agreed} of {len(complexes)} complex "
                  f"points, and simplify could not show equality (probe rule: not conclusive)")


def equation_equal(l1: Any, r1: Any, l2: Any, r2: Any) -> tuple[bool | None, str]:
    """Same relation: (l1 - r1) is a nonzero constant multiple of (l2 - r2)."""
    d1 = build(l1) - build(r1)
    d2 = build(l2) - build(r2)
    if d1 == 0 or d2 == 0:
        return None, "degenerate equation"
    symbols = sorted(d1.free_symbols | d2.free_symbols, key=lambda s: s.name)
    if not symbols:
        return None, "equations without variables"
    reals, complexes = _probe_points(symbols)
    ratios = []
    for point in reals + complexes:
        v1, v2 = _at(d1, point), _at(d2, point)
        if v1 is None or v2 is None or v2 == 0 or abs(sympy.N(v2)) < 1e-30:
            continue
        ratios.append(v1 / v2)
    if len(ratios) >= MIN_REAL_POINTS and all(_same(r, ratios[0]) for r in ratios) and abs(sympy.N(ratios[0])) > 1e-30:
        ratio = sympy.nsimplify(sympy.N(ratios[0], 15), rational=True)
        return True, f"same relation: gold = {ratio} x answer, sides rearranged (probe rule)"
    if ratios:
        same = _same_curve(l1, r1, d2) or _same_curve(l2, r2, d1)
        if same is not None:
            return same
        return False, "different relations (sides are not proportional)"
    return None, "could not evaluate the equations"


def _same_curve(lhs: Any, rhs: Any, other: Any) -> tuple[bool, str] | None:
    """`y = 1/x` and `xy = 1`: one equation solved for a variable s (s = f), the other linear in s
    with a coefficient a that is never zero where f is defined: the same points, though the sides
    are not proportional. None when the rule does not apply (the proportional test decides)."""
    s, f = build(lhs), build(rhs)
    if not isinstance(s, sympy.Symbol) or s in f.free_symbols or s not in other.free_symbols:
        return None
    poly = sympy.Poly(sympy.expand(other), s) if other.is_polynomial(s) else None
    if poly is None or poly.degree() != 1:
        return None
    a = poly.coeff_monomial(s)
    if sympy.simplify(other.subs(s, f)) != 0:
        return None
    rest = sorted(a.free_symbols, key=lambda v: v.name)
    if len(rest) > 1:
        return None
    roots = sympy.solve(a, rest[0]) if rest else ([] if a != 0 else None)
    if roots is None or any(f.subs(rest[0], r).is_finite for r in roots):
        return None  # the coefficient vanishes where f is defined: the other equation holds more points
    return True, f"the same curve: {s} = {f} solves the other equation, linear in {s} (curve rule)"


def equal_pairs(pairs: list[tuple[Any, Any]]) -> list[tuple[bool | None, str]]:
    out = []
    for a, b in pairs:
        if time.process_time() > _soft_deadline:
            out.append((None, "undecided: the grading deadline ran out before this pair"))
            continue
        out.append(expr_equal(a, b))
    return out


def ping() -> str:
    return "pong"


def spin(seconds: float) -> str:
    """A job that never finishes in time: used by the tests of the time limit."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return "done"


JOBS = {"expr_equal": expr_equal, "equation_equal": equation_equal, "equal_pairs": equal_pairs,
        "ping": ping, "spin": spin}


def run_job(name: str, args: tuple, seconds: float) -> Any:
    """One job with `seconds` of CPU time left on the caller's deadline (batches stop short of
    it). CPU time, as the pool charges it: a verdict does not depend on the machine's load."""
    global _soft_deadline
    _soft_deadline = time.process_time() + 0.8 * seconds
    try:
        return JOBS[name](*args)
    finally:
        _soft_deadline = float("inf")
