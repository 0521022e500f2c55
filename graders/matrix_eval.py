"""Matrix arithmetic written out in an answer, evaluated before it is compared.

`\\begin{pmatrix}1&0\\\\2&3\\end{pmatrix} + \\begin{pmatrix}2&1\\\\0&2\\end{pmatrix}`, `2\\begin{pmatrix}…\\end{pmatrix}`,
`A B`, `A \\cdot B`, `A^2`, `I \\cdot I` (I, the identity, when the gold is a square matrix):
the literals are replaced by placeholder names, the rest is parsed by parse.py's own parser
into a parse tree, and that tree is evaluated here entry by entry -- no string ever reaches
eval or sympy. Entries stay parse trees (exact constants are folded to rationals on the way),
and the result is a structure.Matrix compared like any other.

Bounds: at most MAX_LITERALS literals, MAX_SIDE rows and columns, integer powers up to
MAX_POWER, MAX_ENTRY_NODES nodes per resulting entry. Anything outside them, or any shape
mismatch, is "not matrix arithmetic" (None): the caller then treats the text as before.
"""
from __future__ import annotations

import re
from fractions import Fraction
from typing import Callable

from .parse import Node, ParseError, Parser, count_nodes, exact_value, symbols_of, tokenize

MAX_LITERALS = 8
MAX_SIDE = 6
MAX_POWER = 8
MAX_ENTRY_NODES = 400
LITERAL_RE = re.compile(r"\\begin\{([pbvBV]?matrix|array)\}(?:\{[lcr|]*\})?(.*?)\\end\{\1\}", re.S)
PLACEHOLDER = "Xi"          # \Xi_{k}: a Greek capital answers never use for a matrix entry name
IDENTITY = "I"

Grid = tuple[tuple[Node, ...], ...]


class NotMatrixArithmetic(Exception):
    pass


def has_matrix_arithmetic(text: str) -> bool:
    """A matrix literal with something around it (an operator, a scalar, another literal)."""
    literals = list(LITERAL_RE.finditer(text))
    if not literals:
        return False
    rest = LITERAL_RE.sub("", text).strip()
    return (bool(rest) or len(literals) > 1) and len(literals) <= MAX_LITERALS


def fold(node: Node) -> Node:
    """An exact constant as one rational literal (keeps entries small); else the node."""
    if node[0] == "num":
        return node
    value = exact_value(node) if not symbols_of(node) else None
    if value is not None:
        return ("num", value, 0)
    if count_nodes(node) > MAX_ENTRY_NODES:
        raise NotMatrixArithmetic("an entry grew too large")
    return node


def add(a: Node, b: Node) -> Node:
    return fold(("add", (a, b)))


def mul(a: Node, b: Node) -> Node:
    return fold(("mul", (a, b)))


class Identity:
    """I, whose size comes from what it is added to or multiplied with (or from the gold)."""

    def __init__(self, scale: Node = ("num", Fraction(1), 0)):
        self.scale = scale

    def grid(self, n: int) -> Grid:
        zero = ("num", Fraction(0), 0)
        return tuple(tuple(self.scale if i == j else zero for j in range(n)) for i in range(n))


def parse_cells(body: str, read_entry: Callable[[str], Node | None]) -> Grid:
    rows = [r for r in re.split(r"\\\\", body) if r.strip()]
    if not rows or len(rows) > MAX_SIDE:
        raise NotMatrixArithmetic("empty or too many rows")
    grid = []
    for row in rows:
        cells = row.split("&")
        if len(cells) > MAX_SIDE:
            raise NotMatrixArithmetic("too many columns")
        values = [read_entry(c) for c in cells]
        if any(v is None for v in values):
            raise NotMatrixArithmetic("an entry is not a number or expression")
        grid.append(tuple(fold(v) for v in values))  # type: ignore[arg-type]
    if len({len(r) for r in grid}) != 1:
        raise NotMatrixArithmetic("rows of different lengths")
    return tuple(grid)


def evaluate(text: str, identity_size: int | None = None, *,
             read_entry: Callable[[str], Node | None]) -> Grid | None:
    """The matrix the text's arithmetic gives, or None when it is no matrix arithmetic we can
    evaluate safely. Raises nothing but ParseError's TooBig from the parser.

    `read_entry(cell)` reads one entry of a literal: its parse tree, None when it is no number
    or expression. structure.py passes its matrix_entry (an entry is read like any value), so
    this module does not import structure back."""
    literals: list[Grid] = []

    def placeholder(m: re.Match) -> str:
        literals.append(parse_cells(m.group(2), read_entry))
        return f" \\{PLACEHOLDER}_{{{len(literals) - 1}}} "

    try:
        if len(LITERAL_RE.findall(text)) > MAX_LITERALS:
            return None
        expression_text = LITERAL_RE.sub(placeholder, text)
        tokens = tokenize(expression_text)
        tree = Parser(tokens).parse()
        names = symbols_of(tree)
        allowed = {f"{PLACEHOLDER}_{k}" for k in range(len(literals))} | {IDENTITY}
        if not names or not names <= allowed:
            return None
        value = _eval(tree, literals)
    except (NotMatrixArithmetic, ParseError, ZeroDivisionError):
        return None
    if isinstance(value, Identity):
        if identity_size is None:
            return None
        return value.grid(identity_size)
    return value if isinstance(value, tuple) and value and isinstance(value[0], tuple) else None


def _is_grid(v) -> bool:
    return isinstance(v, tuple) and bool(v) and isinstance(v[0], tuple) and bool(v[0]) and isinstance(v[0][0], tuple)


def _shape(g: Grid) -> tuple[int, int]:
    return len(g), len(g[0])


def _eval(node: Node, literals: list[Grid]):
    """A grid (tuple of rows of entry nodes), an Identity, or a scalar node."""
    kind = node[0]
    if kind == "sym":
        if node[1] == IDENTITY:
            return Identity()
        return literals[int(node[1].split("_", 1)[1])]
    if not symbols_of(node):
        return fold(node)
    if kind == "neg":
        return _scale(("num", Fraction(-1), 0), _eval(node[1], literals))
    if kind == "add":
        total = _eval(node[1][0], literals)
        for part in node[1][1:]:
            total = _add(total, _eval(part, literals))
        return total
    if kind == "mul":
        total = _eval(node[1][0], literals)
        for part in node[1][1:]:
            total = _mul(total, _eval(part, literals))
        return total
    if kind == "div":
        denominator = _eval(node[2], literals)
        if _is_grid(denominator) or isinstance(denominator, Identity):
            raise NotMatrixArithmetic("division by a matrix")
        return _scale(fold(("div", ("num", Fraction(1), 0), denominator)), _eval(node[1], literals))
    if kind == "pow":
        base, exponent = _eval(node[1], literals), exact_value(node[2])
        if exponent is None or exponent.denominator != 1 or not 1 <= exponent <= MAX_POWER:
            raise NotMatrixArithmetic("a matrix power other than a small positive integer")
        out = base
        for _ in range(int(exponent) - 1):
            out = _mul(out, base)
        return out
    raise NotMatrixArithmetic(f"{kind} of a matrix")


def _scale(c: Node, v):
    if isinstance(v, Identity):
        return Identity(mul(c, v.scale))
    if _is_grid(v):
        return tuple(tuple(mul(c, x) for x in row) for row in v)
    return mul(c, v)


def _add(a, b):
    if isinstance(a, Identity) and isinstance(b, Identity):
        return Identity(add(a.scale, b.scale))
    if isinstance(a, Identity) and _is_grid(b):
        a = a.grid(_square(b))
    if isinstance(b, Identity) and _is_grid(a):
        b = b.grid(_square(a))
    if _is_grid(a) and _is_grid(b):
        if _shape(a) != _shape(b):
            raise NotMatrixArithmetic("sum of matrices of different shapes")
        return tuple(tuple(add(x, y) for x, y in zip(r, s)) for r, s in zip(a, b))
    raise NotMatrixArithmetic("a number added to a matrix")


def _mul(a, b):
    a_matrix, b_matrix = _is_grid(a) or isinstance(a, Identity), _is_grid(b) or isinstance(b, Identity)
    if not a_matrix:
        return _scale(a, b)
    if not b_matrix:
        return _scale(b, a)
    if isinstance(a, Identity):
        return _scale(a.scale, b)
    if isinstance(b, Identity):
        return _scale(b.scale, a)
    (n, k), (k2, m) = _shape(a), _shape(b)
    if k != k2:
        raise NotMatrixArithmetic("product of matrices whose shapes do not fit")
    out = []
    for i in range(n):
        row = []
        for j in range(m):
            entry: Node = ("num", Fraction(0), 0)
            for t in range(k):
                entry = add(entry, mul(a[i][t], b[t][j]))
            row.append(entry)
        out.append(tuple(row))
    return tuple(out)


def _square(g: Grid) -> int:
    n, m = _shape(g)
    if n != m:
        raise NotMatrixArithmetic("the identity added to a matrix that is not square")
    return n


def identity_expression(node: Node, size: int) -> Grid | None:
    """`I`, `2I`, `I \\cdot I`, `I^2` (the only name being I) as a size x size matrix, for a
    square matrix gold; None otherwise."""
    if symbols_of(node) != {IDENTITY} or not 1 <= size <= MAX_SIDE:
        return None
    try:
        value = _eval(node, [])
    except (NotMatrixArithmetic, ZeroDivisionError, ParseError):
        return None
    return value.grid(size) if isinstance(value, Identity) else None
