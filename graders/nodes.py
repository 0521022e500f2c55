"""What a parsed node (parse.py's plain tuples) is worth: its exact rational value, its value as a
complex float, its free symbols, its size; binding a sum's variable, expanding ±. The bounds of
parse.py hold here too: constant powers past MAX_EXPONENT or MAX_RESULT_DIGITS raise TooBig.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

Node = tuple[Any, ...]

MAX_TEXT = 2000            # characters of one answer
MAX_NODES = 400            # AST nodes of one expression
MAX_LITERAL_DIGITS = 400   # digits in one number literal
MAX_EXPONENT = 1000        # |constant exponent|, |n| of n!
MAX_RESULT_DIGITS = 5000   # estimated decimal digits of a constant power


class ParseError(ValueError):
    """The text is not an expression this parser understands."""


class TooBig(ParseError):
    """The text parses but is too large to handle safely (refused, not attempted)."""


BOUND_PREFIX = "@"          # names of bound variables (never a name a text can write)


def has_bound(node: Node) -> bool:
    """The tree holds a sum or product of its own (the depth of the next bound variable)."""
    if node[0] == "bigop":
        return True
    return any(has_bound(p) for part in node[1:] if isinstance(part, tuple) and part
               for p in ([part] if isinstance(part[0], str) else part))


def bind(body: Node, var: str, value: Node | str) -> Node:
    """The body of a sum over `var` with `var` replaced: by a number (a term of an expanded sum:
    `a_i` becomes `a_3`) or by a bound variable's name (`a_i` becomes `a_@0`, the term a(@0))."""
    def walk(node: Node) -> Node:
        kind = node[0]
        if kind == "sym":
            name = node[1]
            if name == var:
                return value if isinstance(value, tuple) else ("sym", value)
            if name.endswith(f"_{var}"):  # an indexed name: a_i
                index = value if isinstance(value, str) else str(value[1])
                return ("sym", f"{name[: -len(var)]}{index}")
            return node
        if kind == "const" and node[1] == var and var in ("i", "e"):  # \sum_{i=1}^{5} i
            return value if isinstance(value, tuple) else ("sym", value)
        if kind in ("num", "const"):
            return node
        out: list = [kind]
        for part in node[1:]:
            if isinstance(part, tuple) and part and isinstance(part[0], str):
                out.append(walk(part))
            elif isinstance(part, tuple):
                out.append(tuple(walk(p) for p in part))
            else:
                out.append(part)
        return tuple(out)

    return walk(body)


def substitute(node: Node, name: str, value: Node) -> Node:
    if node[0] == "sym":
        return value if node[1] == name else node
    if node[0] == "const" and node[1] == name and name in ("i", "e"):  # \sum_{i=1}^{5} i
        return value
    if node[0] in ("num", "const"):
        return node
    out = [node[0]]
    for part in node[1:]:
        if isinstance(part, tuple) and part and isinstance(part[0], str):
            out.append(substitute(part, name, value))
        elif isinstance(part, tuple):
            out.append(tuple(substitute(p, name, value) for p in part))
        else:
            out.append(part)
    return tuple(out)


def count_nodes(node: Node) -> int:
    n = 1
    for part in node[1:]:
        if isinstance(part, tuple) and part and isinstance(part[0], str):
            n += count_nodes(part)
        elif isinstance(part, tuple):
            n += sum(count_nodes(p) for p in part)
    return n


def check_exponent(exponent: Node, base: Node | None = None) -> None:
    """Refuse constant exponents whose size would make sympy build gigantic numbers: at most
    MAX_EXPONENT, or MAX_RESULT_DIGITS estimated digits when the base is a known integer
    (2^{2010} has 606 digits and is fine)."""
    value = constant_value(exponent)
    if value is None:
        return
    if not math.isfinite(abs(value)):
        raise TooBig("exponent too large to evaluate safely")
    if abs(value) <= MAX_EXPONENT:
        return
    b = constant_value(base) if base is not None and base[0] == "num" else None
    if b is not None and b.imag == 0 and abs(b.real) >= 2 and abs(value) * math.log10(abs(b.real)) <= MAX_RESULT_DIGITS:
        return
    raise TooBig("exponent too large to evaluate safely")


class NotExact(Exception):
    pass


def exact_value(node: Node) -> Fraction | None:
    """The exact rational value of a constant rational AST, else None."""
    try:
        return _exact(node)
    except (NotExact, ZeroDivisionError, OverflowError, ValueError):
        return None


def _exact(node: Node) -> Fraction:
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "neg":
        return -_exact(node[1])
    if kind == "add":
        return sum((_exact(a) for a in node[1]), Fraction(0))
    if kind == "mul":
        out = Fraction(1)
        for a in node[1]:
            out *= _exact(a)
        return out
    if kind == "div":
        return _exact(node[1]) / _exact(node[2])
    if kind == "pow":
        base, exponent = _exact(node[1]), _exact(node[2])
        if exponent.denominator != 1 or abs(exponent) > 20 * MAX_EXPONENT:
            raise NotExact
        size = max(abs(base.numerator), base.denominator)
        if size > 1 and math.log10(size) * abs(exponent) > MAX_RESULT_DIGITS:
            raise NotExact
        return base ** int(exponent)
    if kind == "fact":
        n = _exact(node[1])
        if n.denominator != 1 or not 0 <= n <= MAX_EXPONENT:
            raise NotExact
        return Fraction(math.factorial(int(n)))
    if kind == "func" and node[1] in ("gcd", "lcm", "max", "min"):
        args = [_exact(a) for a in node[2]]
        if node[1] in ("max", "min"):
            return max(args) if node[1] == "max" else min(args)
        if any(a.denominator != 1 for a in args):
            raise NotExact
        ints = [int(a) for a in args]
        return Fraction(math.gcd(*ints) if node[1] == "gcd" else math.lcm(*ints))
    if kind == "func" and node[1] == "sqrt":
        inner = _exact(node[2][0])
        if inner >= 0:
            num, den = math.isqrt(inner.numerator), math.isqrt(inner.denominator)
            if num * num == inner.numerator and den * den == inner.denominator:
                return Fraction(num, den)
    raise NotExact


def constant_value(node: Node) -> complex | None:
    """A quick float value for a constant subtree, None if it has symbols or fails.

    Used only for size checks and the float fast path; overflow gives inf, not a hang,
    because exponents were already capped when the subtree was built.
    """
    import cmath

    def ev(n: Node) -> complex:
        kind = n[0]
        if kind == "num":
            return complex(float(n[1]))
        if kind == "const":
            return {"pi": math.pi, "e": math.e, "i": 1j, "oo": math.inf}[n[1]]
        if kind == "sym":
            raise LookupError
        if kind == "add":
            return sum((ev(a) for a in n[1]), 0j)
        if kind == "mul":
            out = 1 + 0j
            for a in n[1]:
                out *= ev(a)
            return out
        if kind == "div":
            return ev(n[1]) / ev(n[2])
        if kind == "neg":
            return -ev(n[1])
        if kind == "pow":
            base, exponent = ev(n[1]), ev(n[2])
            if base == 0:
                return 0j if exponent.real > 0 else complex(math.inf)
            if exponent.imag == 0 and exponent.real == int(exponent.real) and base.imag == 0:
                return complex(float(base.real) ** int(exponent.real))
            if base.imag == 0 and base.real > 0 and exponent.imag == 0:
                return complex(base.real ** exponent.real)
            return cmath.exp(exponent * cmath.log(base))
        if kind == "fact":
            x = ev(n[1])
            if x.imag or x.real != int(x.real) or x.real < 0 or x.real > 170:
                raise ValueError
            return complex(math.factorial(int(x.real)))
        if kind == "pm":
            raise LookupError
        if kind == "func":
            args = [ev(a) for a in n[2]]
            return FLOAT_FUNCTIONS[n[1]](*args)
        raise LookupError

    try:
        return ev(node)
    except LookupError:
        return None
    except (ValueError, ZeroDivisionError, OverflowError, KeyError, TypeError):
        return complex(math.nan)


def _integer(x: complex) -> int:
    if x.imag != 0 or x.real != int(x.real):
        raise ValueError
    return int(x.real)


def _real(x: complex) -> float:
    if x.imag != 0:
        raise ValueError
    return x.real


def _real_only(f):
    def wrapped(x: complex) -> complex:
        if x.imag != 0:
            raise ValueError
        return complex(f(x.real))
    return wrapped


FLOAT_FUNCTIONS = {
    "sqrt": lambda x: (complex(math.sqrt(x.real)) if x.imag == 0 and x.real >= 0
                       else __import__("cmath").sqrt(complex(x.real, 0.0) if x.imag == 0 else x)),  # sqrt(-1) = +i
    "sin": _real_only(math.sin), "cos": _real_only(math.cos), "tan": _real_only(math.tan),
    "cot": _real_only(lambda v: 1 / math.tan(v)), "sec": _real_only(lambda v: 1 / math.cos(v)),
    "csc": _real_only(lambda v: 1 / math.sin(v)), "asin": _real_only(math.asin),
    "acos": _real_only(math.acos), "atan": _real_only(math.atan), "sinh": _real_only(math.sinh),
    "cosh": _real_only(math.cosh), "tanh": _real_only(math.tanh), "log": _real_only(math.log),
    "log10": _real_only(math.log10), "exp": _real_only(math.exp), "abs": lambda x: complex(abs(x)),
    "floor": _real_only(math.floor), "ceil": _real_only(math.ceil),
    "gcd": lambda *a: complex(math.gcd(*[_integer(x) for x in a])),
    "lcm": lambda *a: complex(math.lcm(*[_integer(x) for x in a])),
    "max": lambda *a: complex(max(_real(x) for x in a)),
    "min": lambda *a: complex(min(_real(x) for x in a)),
    "binomial": lambda n, k: complex(math.comb(int(n.real), int(k.real))) if n.imag == 0 and k.imag == 0 and n.real == int(n.real) and k.real == int(k.real) and n.real >= 0 and k.real >= 0 else (_ for _ in ()).throw(ValueError()),  # noqa: E501
}


def symbols_of(node: Node) -> set[str]:
    """The free symbols: a sum's bound variable and the names it indexes (`a_@0`) are not."""
    if node[0] == "sym":
        return set() if BOUND_PREFIX in node[1] else {node[1]}
    found: set[str] = set()
    for part in node[1:]:
        if isinstance(part, tuple) and part:
            if isinstance(part[0], str):
                found |= symbols_of(part)
            else:
                for p in part:
                    found |= symbols_of(p)
    return found


def expand_pm(node: Node) -> list[Node]:
    """a ± b -> [a + b, a - b]; at most 8 variants (several ± multiply)."""
    kind = node[0]
    if kind == "pm":
        out = []
        for a in expand_pm(node[1]):
            for b in expand_pm(node[2]):
                out += [("add", (a, b)), ("add", (a, ("neg", b)))]
        return out[:8]
    if kind in ("add", "mul"):
        variants: list[list[Node]] = [[]]
        for child in node[1]:
            variants = [v + [c] for v in variants for c in expand_pm(child)][:8]
        return [(kind, tuple(v)) for v in variants]
    if kind in ("div", "pow"):
        return [(kind, a, b) for a in expand_pm(node[1]) for b in expand_pm(node[2])][:8]
    if kind in ("neg", "fact"):
        return [(kind, a) for a in expand_pm(node[1])]
    if kind == "func":
        return [("func", node[1], (a,) + node[2][1:]) for a in expand_pm(node[2][0])][:8] if node[2] else [node]
    return [node]


def contains_pm(node: Node) -> bool:
    if node[0] == "pm":
        return True
    for part in node[1:]:
        if isinstance(part, tuple) and part:
            if isinstance(part[0], str):
                if contains_pm(part):
                    return True
            elif any(contains_pm(p) for p in part):
                return True
    return False
