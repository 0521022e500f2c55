"""The shape of an answer: a number/expression, an equation, intervals, a set or list, a
tuple, a matrix, a time of day, a number in another base, or plain text.

`parse_value(text)` reads normalised text (see normalise.py) into one of the frozen
dataclasses below; expressions inside are ASTs from parse.py. Raises ParseError/TooBig.
"""
from __future__ import annotations

import re
from functools import lru_cache

from .intervals import (SET_OPS, absolute_value_bounds, as_intervals, canonical_intervals, expression,  # noqa: F401
                        is_infinite, number_value, set_operation, solve_linear)
from .parse import MAX_TEXT, Node, ParseError, TooBig, symbols_of, tokenize
from .shapes import (BaseNumber, Equation, Expr, Interval, Intervals, Items, Labelled, Matrix,  # noqa: F401
                     Relation, TimeOfDay, Value)

OPENERS = {"(", "[", "{", "LSET", "LFLOOR", "LCEIL"}
CLOSERS = {")", "]", "}", "RSET", "RFLOOR", "RCEIL"}
RELATIONS = {"=", "<", ">", "<=", ">=", "!="}
MATRIX_RE = re.compile(r"^\\begin\{([pbvBV]?matrix|array)\}(?:\{[lcr|]*\})?(.*)\\end\{\1\}$", re.S)
TIME_RE = re.compile(r"^(\d{1,2}):(\d{2})(?::\d{2})?\s*(a\.?m\.?|p\.?m\.?)?$", re.I)
BASE_RE = re.compile(r"^([0-9A-Fa-f]+)_\{?(\d{1,2})\}?$")
TOKEN_BUDGET = 600


def matrix_entry(text: str) -> Node | None:
    """One entry of a matrix literal in written-out arithmetic (matrix_eval.py): read like any
    value, kept when it is a number or an expression."""
    value = parse_value(text)
    return value.node if isinstance(value, Expr) else None


# pure, and its values are frozen (plain tuples inside): remembered like normalise(); a text that
# fails to parse raises each time (lru_cache keeps no exceptions)
@lru_cache(maxsize=8192)
def parse_value(text: str) -> Value:
    text = text.strip()
    if len(text) > MAX_TEXT:
        raise TooBig(f"answer longer than {MAX_TEXT} characters")
    labelled = re.fullmatch(r"([A-Za-z](?:_\{?\w+\}?)?)\s*=\s*(\\begin\{.*)", text, re.S)
    if labelled:  # v = \begin{pmatrix} ... \end{pmatrix}
        return Labelled(labelled.group(1), parse_value(labelled.group(2)))
    from .matrix_eval import evaluate, has_matrix_arithmetic
    if has_matrix_arithmetic(text):  # A + B, 2A, A \cdot B written out: evaluated (matrix_eval.py)
        side = text.rsplit("=", 1)[-1].strip()  # a worked line's value is its last side
        if side != text and MATRIX_RE.match(side):
            return parse_value(side)
        grid = evaluate(side, read_entry=matrix_entry)
        if grid is not None:
            return Matrix(tuple(tuple(Expr(entry) for entry in row) for row in grid))
    wrapped = re.fullmatch(r"[\[(]\s*(\\begin\{.*\\end\{[a-zA-Z]+\})\s*[\])]", text, re.S)
    if wrapped:  # \left[\begin{array}...\end{array}\right]
        text = wrapped.group(1)
    m = MATRIX_RE.match(text)
    if m:
        rows = [r for r in re.split(r"\\\\", m.group(2)) if r.strip()]
        if not rows:
            raise ParseError("empty matrix")
        return Matrix(tuple(tuple(parse_value(c) for c in r.split("&")) for r in rows))
    m = TIME_RE.match(text)
    if m:
        hours, minutes, meridiem = int(m.group(1)), int(m.group(2)), m.group(3)
        if minutes < 60 and hours < 24:
            if meridiem:
                if not 1 <= hours <= 12:
                    raise ParseError("bad 12-hour time")
                hours = hours % 12 + (12 if meridiem.lower().startswith("p") else 0)
            return TimeOfDay(hours * 60 + minutes, bool(meridiem) or hours > 12 or hours == 0)
    m = BASE_RE.match(text)
    if m and int(m.group(2)) >= 2:
        return BaseNumber(m.group(1).upper(), int(m.group(2)))
    tokens = tokenize(text)
    if len(tokens) > TOKEN_BUDGET:
        raise TooBig("too many tokens")
    return parse_tokens(tokens)


def split_top(tokens: list[tuple[str, str]], seps: set[str], with_separators: bool = False):
    """Split at separators outside any brackets (intervals like [1,2) count as brackets) and
    absolute-value bars; with_separators=True also returns the separators used, in order."""
    parts: list[list[tuple[str, str]]] = [[]]
    used: list[str] = []
    depth = 0
    abs_open = False
    for tok in tokens:
        kind = tok[0]
        if kind in OPENERS:
            depth += 1
        elif kind in CLOSERS:
            depth -= 1
        elif kind == "|":
            abs_open = not abs_open
        if depth == 0 and not abs_open and kind in seps:
            parts.append([])
            used.append(kind)
        else:
            parts[-1].append(tok)
    return (parts, used) if with_separators else parts


def wraps_whole(tokens: list[tuple[str, str]]) -> bool:
    """True when the first token opens a bracket that the last token closes."""
    if len(tokens) < 2 or tokens[0][0] not in OPENERS or tokens[-1][0] not in CLOSERS:
        return False
    depth = 0
    for n, tok in enumerate(tokens):
        if tok[0] in OPENERS:
            depth += 1
        elif tok[0] in CLOSERS:
            depth -= 1
            if depth == 0 and n != len(tokens) - 1:
                return False
    return depth == 0


def interval_from(tokens: list[tuple[str, str]], lo: Node, hi: Node) -> Interval:
    return Interval(lo, hi, tokens[0][0] == "[", tokens[-1][0] == "]")


def parse_tokens(tokens: list[tuple[str, str]]) -> Value:
    if not tokens:
        raise ParseError("empty answer")
    # unions, intersections and differences of sets and intervals, left to right
    pieces, ops = split_top(tokens, set(SET_OPS), with_separators=True)
    if ops:
        result = as_intervals(parse_tokens(pieces[0]))
        for op, piece in zip(ops, pieces[1:]):
            result = set_operation(op, result, as_intervals(parse_tokens(piece)))
        return Intervals(tuple(result))
    # x \in S
    pieces = split_top(tokens, {"IN"})
    if len(pieces) == 2 and len(pieces[0]) >= 1:
        value = parse_tokens(pieces[1])
        if isinstance(value, Items) and len(value.items) == 2 and value.brackets in ("()", "[]", "(]", "[)"):
            return Intervals(tuple(as_intervals(value)))
        return value
    # \{...\}: a set
    if tokens[0][0] == "LSET" and wraps_whole(tokens):
        inner = tokens[1:-1]
        items = [] if not inner else [parse_tokens(p) for p in split_top(inner, {",", ";"})]
        return Items(tuple(items), ordered=False, brackets="{}")
    # {1, 4} written without the backslashes: a set too (a lone {5} is a group)
    if tokens[0][0] == "{" and wraps_whole(tokens) and len(split_top(tokens[1:-1], {",", ";"})) > 1:
        return Items(tuple(parse_tokens(p) for p in split_top(tokens[1:-1], {",", ";"})), ordered=False, brackets="{}")
    # (a, b, ...) / [a, b): tuple, point or interval
    if tokens[0][0] in ("(", "[") and wraps_whole(tokens):
        inner = tokens[1:-1]
        pieces = split_top(inner, {","})
        if len(pieces) == 1:  # (1;2), (0;0;0): points and intervals written with ';'
            pieces = split_top(inner, {";"})
        if len(pieces) > 1:
            brackets = tokens[0][0] + tokens[-1][0]
            if len(pieces) == 2 and (brackets in ("(]", "[)") or any(is_infinite_tokens(p) for p in pieces)):
                return Intervals((interval_from(tokens, expression(pieces[0]), expression(pieces[1])),))
            return Items(tuple(parse_tokens(p) for p in pieces), ordered=True, brackets=brackets)
    # "a=3,b=1;a=5,b=1": ';' between solutions, ',' between the labelled parts of each
    groups = split_top(tokens, {";"})
    if len(groups) > 1 and all(labelled_group(g) for g in groups):
        return Items(tuple(parse_tokens(g) for g in groups), ordered=False, brackets="")
    # a bare list: "3, 5, 7" (solutions, order-free)
    pieces = split_top(tokens, {",", ";"})
    if len(pieces) > 1:
        values = [parse_tokens(p) for p in pieces if p]
        if values and all(isinstance(v, Intervals) for v in values):
            return Intervals(tuple(i for v in values for i in v.parts))
        return Items(tuple(values), ordered=False, brackets="")
    # relations
    chain, ops = split_top(tokens, RELATIONS, with_separators=True)
    if len(chain) > 1:
        if all(op == "=" for op in ops):
            return equality(chain)
        return relation(tokens, chain, ops)
    # a ratio 5 : 8 is the number 5/8; a : b : c is an ordered triple
    parts = split_top(tokens, {":"})
    if len(parts) == 2:
        return Expr(("div", expression(parts[0]), expression(parts[1])))
    if len(parts) > 2:
        return Items(tuple(Expr(expression(p)) for p in parts), ordered=True, brackets=":")
    return Expr(expression(tokens))


def labelled_group(tokens: list[tuple[str, str]]) -> bool:
    """'a=3,b=1': two or more comma-separated parts, each `label = value`."""
    parts = split_top(tokens, {","})
    return len(parts) > 1 and all(
        len(chain) == 2 and label_text(chain[0]) is not None
        for chain in (split_top(p, {"="}) for p in parts))


LABEL_TOKENS = {"SYM", "NUM", "_", "{", "}", "(", ")", ",", ":", "'"}


def label_text(tokens: list[tuple[str, str]]) -> str | None:
    """The text of a name on the left of '=': `k`, `AB`, `V_1`, `f(x)`, `(p, q)`, `V_1 : V_2`
    (letters, subscripts, a function of letters, a tuple of names); None for an expression."""
    if tokens and tokens[0][0] == "FUNC" and (len(tokens) == 1 or tokens[1][0] == "("):
        tokens = [("SYM", tokens[0][1])] + tokens[1:]  # \gcd = 6, \max(a, b) = 7
    text = "".join(t[1] for t in tokens)
    if "^{-1}" in text or "^-1" in text:  # an inverse function f^{-1}(x)
        tokens = [t for t in tokens if t[1] not in ("^", "-", "1")]
        tokens = [t for n, t in enumerate(tokens) if not (t[0] == "{" and n + 1 < len(tokens) and tokens[n + 1][0] == "}")
                  and not (t[0] == "}" and n > 0 and tokens[n - 1][0] == "{")]
    if not tokens or len(tokens) > 24 or any(t[0] not in LABEL_TOKENS for t in tokens):
        return None
    if tokens[0][0] not in ("SYM", "("):
        return None
    # a function call holds letters only: f(x), not f(2)
    depth = 0
    for t in tokens:
        depth += t[0] == "("
        depth -= t[0] == ")"
        if depth and t[0] == "NUM":
            return None
    return text


FUNCTION_VALUE_RE = re.compile(r"[A-Za-z](?:_\{?\w+\}?)?'*\((?:-?\d+(?:\.\d+)?|[A-Za-z])(?:,(?:-?\d+(?:\.\d+)?|[A-Za-z]))*\)")


def function_value_label(tokens: list[tuple[str, str]]) -> str | None:
    """`f(3)`, `g(-1)`, `f'(2)`, `P(1, 2)`, `\\sin\\theta`: a function's value at given points is
    a label too (only on the left of '='; `f(2) < 5` stays a product in an inequality)."""
    if tokens and tokens[0][0] == "FUNC" and 1 < len(tokens) <= 8 and tokens[1][0] in ("SYM", "(") \
            and all(t[0] in LABEL_TOKENS for t in tokens[1:]):
        return "\\" + "".join(t[1] for t in tokens)  # \sin\theta, \cos(A), \tan x
    text = "".join(t[1] for t in tokens)
    return text if FUNCTION_VALUE_RE.fullmatch(text) else None


def segment_text(tokens: list[tuple[str, str]]) -> str | None:
    """`PQ`, `PF_1`, `AB`: two or more capital letters (point names), a subscript allowed."""
    text = label_text(tokens)
    if text is None or any(c in text for c in "(:,"):
        return None
    # the letters outside a subscript are the points' names: capitals, at least two
    names = [t[1] for n, t in enumerate(tokens) if t[0] == "SYM" and not (n and tokens[n - 1][0] == "_")]
    return text if len(names) >= 2 and all(name.isupper() for name in names) else None


def measure_text(tokens: list[tuple[str, str]]) -> str | None:
    """A segment, the length of one (`|PQ|`, `|PF_1|`), a norm (`\\|v\\|`) or a subscripted name
    (`S_1`, `V_{ABC}`): a quantity a ratio may be taken of."""
    if len(tokens) >= 3 and tokens[0][0] == tokens[-1][0] and tokens[0][0] in ("|", "NORM"):
        inner = tokens[1:-1]
        if tokens[0][0] == "NORM" and label_text(inner) is not None and "(" not in label_text(inner):
            return f"|{label_text(inner)}|"  # the norm of a vector named v
        if tokens[0][0] == "NORM" and any(t[0] == "SYM" for t in inner) \
                and all(t[0] in LABEL_TOKENS or t[0] in ("+", "-", "*") for t in inner) \
                and not any(t[0] in ("(", ")", ",", ":") for t in inner):
            # the length of a combination of vectors ('\\|a + 2b\\|', written |\\vec a + 2\\vec b|):
            # a quantity of the problem, as the length of one vector is
            return "|" + "".join(t[1] for t in inner) + "|"
        return f"|{segment_text(inner)}|" if segment_text(inner) else None
    segment = segment_text(tokens)
    if segment is not None:
        return segment
    name = label_text(tokens)
    return name if name is not None and "_" in name and "(" not in name and tokens[0][0] == "SYM" else None


def quantity_label(tokens: list[tuple[str, str]]) -> str | None:
    """The round-three label rule for measures: a length or norm (`|PQ|`, `\\|v\\|`) and a ratio of
    two quantities (`\\frac{AE}{EC}`, `PA/PB`, `\\frac{|PF_1|}{|PF_2|}`, `\\frac{S_1}{S_2}`) name the
    value asked for. Not an unknown: `|x| = 3`, `\\frac{x}{y} = 2` stay relations."""
    measure = measure_text(tokens)
    if measure is not None and (measure.startswith("|") or segment_text(tokens)):
        return measure if measure.startswith("|") else None  # a bare segment is label_text's
    if tokens and tokens[0][0] == "FRAC":
        parts = frac_parts(tokens)
        if parts is not None:
            num, den = (measure_text(p) for p in parts)
            return f"{num}:{den}" if num and den else None
    halves = split_top(tokens, {"/"})
    if len(halves) == 2:
        num, den = (measure_text(p) for p in halves)
        return f"{num}:{den}" if num and den else None
    return None


def frac_parts(tokens: list[tuple[str, str]]) -> tuple[list, list] | None:
    """The two groups of `\\frac{…}{…}` when they are the whole of the tokens."""
    groups, depth, start = [], 0, None
    for n, tok in enumerate(tokens[1:], 1):
        if tok[0] == "{":
            depth += 1
            if depth == 1:
                start = n
        elif tok[0] == "}":
            depth -= 1
            if depth == 0:
                groups.append((start, n))
        elif depth == 0:
            return None
    if len(groups) != 2 or groups[1][1] != len(tokens) - 1:
        return None
    (a, b), (c, d) = groups
    return tokens[a + 1: b], tokens[c + 1: d]


def equality(chain: list[list[tuple[str, str]]]) -> Value:
    """a = b (= c ...): a label and its value, an equation, or a worked line whose value is last.

    The label rule: the right side is the value only when the left side is a label -- a name
    (`k`, `AB`, `\\theta`), subscripted or primed (`a_{10}`, `x'`), a function value (`f(x)`,
    `f(3)`), a ratio or tuple of names (`V_1 : V_2`, `(p, q)`). Anything else on the left (a sum,
    product with coefficients or power of unknowns: `x - 2y + 4z = 0`, `3p + q = 5`) makes an
    equation, compared as a relation."""
    label = label_text(chain[0]) or function_value_label(chain[0]) or quantity_label(chain[0])
    if label is not None:
        value = parse_tokens(chain[-1])
        if len(chain[0]) == 1 and chain[0][0][0] == "SYM" and isinstance(value, Expr):
            return Equation(expression(chain[0]), value.node)      # x = 5, y = 2x + 3
        names = split_top(chain[0][1:-1], {","}) if chain[0][0][0] == "(" and wraps_whole(chain[0]) else []
        if len(names) > 1 and isinstance(value, Items) and len(value.items) == len(names):
            # (p, q) = (3, 7) -> p = 3, q = 7, in this order
            return Items(tuple(Labelled("".join(t[1] for t in n), v) for n, v in zip(names, value.items)),
                         ordered=True, brackets="=")
        return Labelled(label, value)
    sides = [expression(p) for p in chain]
    if len(sides) == 2:
        return Equation(sides[0], sides[1])
    if not symbols_of(sides[-1]):
        return Expr(sides[-1])                                      # 2 + 3 = 5 = 5.0
    return Equation(sides[0], sides[-1])


def is_infinite_tokens(tokens: list[tuple[str, str]]) -> bool:
    return [t[0] for t in tokens if t[0] not in ("-", "+")] == ["OO"]


def relation(tokens: list[tuple[str, str]], chain: list[list[tuple[str, str]]], ops: list[str]) -> Value:
    text = " ".join(t[1] for t in tokens)
    if ops == ["!="] and len(chain) == 2:  # x != 2: everything but one point
        try:
            lhs, rhs = expression(chain[0]), expression(chain[1])
        except ParseError:
            return Relation(text)
        if lhs[0] == "sym" and not symbols_of(rhs):
            return Intervals((Interval(("neg", ("const", "oo")), rhs, False, False),
                              Interval(rhs, ("const", "oo"), False, False)))
    if "=" in ops or "!=" in ops:
        return Relation(text)
    # |z| between two bounds, or above/below one: a union of intervals
    abs_form = absolute_value_bounds(chain, ops)
    if abs_form is not None:
        return abs_form
    # inequalities on one variable (a name like g(x) counts as one) -> an interval
    sides = [("sym", label_text(p)) if len(p) > 1 and label_text(p) and "(" in label_text(p) else expression(p)
             for p in chain]
    lone = [n for n, s in enumerate(sides) if s[0] == "sym"]
    constants = all(not symbols_of(s) for n, s in enumerate(sides) if n not in lone)
    if len(lone) != 1 and len(chain) == 2:
        solved = solve_linear(sides, ops[0])
        if solved is not None:
            return solved
    if len(lone) != 1 or not constants:
        return Relation(text)
    k = lone[0]
    lo: Node = ("neg", ("const", "oo"))
    hi: Node = ("const", "oo")
    lo_closed = hi_closed = False
    for n, op in enumerate(ops):
        left, right = sides[n], sides[n + 1]
        # normalise to "a < b" / "a <= b"
        if op in (">", ">="):
            left, right = right, left
            op = "<" if op == ">" else "<="
        closed = op == "<="
        if right is sides[k]:        # bound < x : a lower bound
            lo, lo_closed = left, closed
        elif left is sides[k]:       # x < bound : an upper bound
            hi, hi_closed = right, closed
        else:
            return Relation(text)
    if len(ops) == 2 and not (ops[0] in ("<", "<=")) == (ops[1] in ("<", "<=")):
        return Relation(text)  # 1 < x > 2 is not an interval
    return Intervals((Interval(lo, hi, lo_closed, hi_closed),))


