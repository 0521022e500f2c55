"""A small safe parser for maths answers: text -> an AST of plain tuples.

Model output is untrusted, so nothing here calls eval, sympify or parse_expr (they run
Python). The tokenizer accepts a whitelist of tokens; the recursive-descent parser builds
tuples that only the code in this package interprets:

    ("num", Fraction, decimal_digits)  -- significant digits of a decimal literal, 0 if exact   ("sym", name)        ("const", "pi"|"e"|"i"|"oo")
    ("add", (a, b, ...))            ("mul", (a, ...))    ("div", a, b)
    ("pow", base, exponent)         ("neg", a)           ("func", name, (args...))
    ("fact", a)                     ("pm", a, b)         -- a ± b, expanded by the caller

Size is bounded: the input length, the number of nodes, the digits of a literal, and the
magnitude of constant exponents (so `10**10**10**10` and `x**(10**9)` are refused here,
before sympy could try to build them). Refusals raise TooBig, bad syntax ParseError.
The text given here is already normalised (see normalise.py): ASCII plus LaTeX commands.
"""
from __future__ import annotations

import re
from fractions import Fraction
from typing import Any
from .nodes import (BOUND_PREFIX, MAX_EXPONENT, MAX_LITERAL_DIGITS, MAX_NODES, MAX_RESULT_DIGITS, MAX_TEXT,  # noqa: F401
                    Node, ParseError, TooBig, bind, check_exponent, constant_value, contains_pm, count_nodes, exact_value,
                    expand_pm, has_bound, substitute, symbols_of)

# LaTeX commands -> token kinds. Anything not listed is refused.
FUNCTIONS = {
    "sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "sinh", "cosh",
    "tanh", "log", "ln", "exp", "sqrt", "abs", "floor", "ceil", "lg", "gcd", "lcm", "max", "min",
}
MULTI_ARG = {"gcd", "lcm", "max", "min"}
INVERSE_NAMES = {"sin": "asin", "cos": "acos", "tan": "atan"}
GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta",
    "vartheta", "iota", "kappa", "lambda", "mu", "nu", "xi", "rho", "sigma", "tau", "upsilon",
    "phi", "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Sigma",
    "Phi", "Psi", "Omega",
}
COMMAND_TOKENS = {
    "frac": "FRAC", "dfrac": "FRAC", "tfrac": "FRAC", "cfrac": "FRAC", "binom": "BINOM",
    "dbinom": "BINOM", "tbinom": "BINOM", "sqrt": "SQRT",
    "cdot": "*", "times": "*", "ast": "*", "div": "/",
    "le": "<=", "leq": "<=", "leqslant": "<=", "ge": ">=", "geq": ">=", "geqslant": ">=",
    "lt": "<", "gt": ">", "ne": "!=", "neq": "!=", "pm": "PM", "mp": "MP", "in": "IN",
    "cup": "CUP", "cap": "CAP", "setminus": "SETMINUS", "smallsetminus": "SETMINUS", "backslash": "SETMINUS", "infty": "OO", "infinity": "OO", "pi": "PI",
    "lfloor": "LFLOOR", "rfloor": "RFLOOR", "lceil": "LCEIL", "rceil": "RCEIL",
    "lvert": "|", "rvert": "|", "vert": "|", "mid": "|",
    "approx": "=", "equiv": "=", "sum": "SUM", "prod": "PROD", "choose": "CHOOSE", "colon": ":", "ratio": ":",
}
# Multi-letter words allowed without a backslash ("sqrt(2)", "pi", "sin x").
BARE_WORDS = {"sqrt": "FUNC", "pi": "PI", "oo": "OO", "inf": "OO", "infinity": "OO", "infty": "OO",
              **{f: "FUNC" for f in FUNCTIONS}}
BARE_WORD_RE = re.compile("|".join(sorted(BARE_WORDS, key=len, reverse=True)))
GLUED_FUNCTION_RE = re.compile(f"({'|'.join(sorted(FUNCTIONS, key=len, reverse=True))})([A-Z]{{1,4}})")

TOKEN_RE = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+(?![\d.]))?)
  | (?P<cmd>\\[a-zA-Z]+)
  | (?P<setbrace>\\[{}])
  | (?P<norm>\\\|)
  | (?P<op><=|>=|!=|==|\*\*|[-+*/^()\[\]{},;=<>!|_':])
  | (?P<word>[a-zA-Z]+)
""", re.VERBOSE)


def tokenize(text: str) -> list[tuple[str, str]]:
    """(kind, text) pairs. Unknown characters or commands raise ParseError."""
    if len(text) > MAX_TEXT:
        raise TooBig(f"answer longer than {MAX_TEXT} characters")
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = TOKEN_RE.match(text, pos)
        if not m:
            raise ParseError(f"unexpected character {text[pos]!r}")
        pos = m.end()
        kind, value = m.lastgroup, m.group()
        if kind == "ws":
            continue
        if kind == "num":
            digits = sum(c.isdigit() for c in value)
            if digits > MAX_LITERAL_DIGITS:
                raise TooBig(f"number literal with {digits} digits")
            tokens.append(("NUM", value))
        elif kind == "cmd":
            name = value[1:]
            if name in COMMAND_TOKENS:
                tokens.append((COMMAND_TOKENS[name], name))
            elif name in FUNCTIONS:
                tokens.append(("FUNC", name))
            elif name in GREEK:
                tokens.append(("SYM", name))
            elif name in ("left", "right", "bigl", "bigr", "Bigl", "Bigr", "big", "Big", "displaystyle", "limits",
                          "nolimits"):
                continue
            elif name in ("lVert", "rVert", "Vert"):
                tokens.append(("NORM", value))
            else:
                glued = GLUED_FUNCTION_RE.fullmatch(name)
                if glued is None:
                    raise ParseError(f"unsupported command \\{name}")
                # "\cos\angle BAC" normalised to "\cosBAC": the function of a named angle
                tokens.append(("FUNC", glued.group(1)))
                tokens.extend(("SYM", c) for c in glued.group(2))
        elif kind == "norm":  # \| v \|: a norm, read as an absolute value
            tokens.append(("NORM", value))
        elif kind == "setbrace":
            tokens.append(("LSET" if value == "\\{" else "RSET", value))
        elif kind == "op":
            tokens.append(("^" if value == "**" else "=" if value == "==" else value, value))
        else:  # letters: known words, else one symbol per letter (implicit product)
            i = 0
            while i < len(value):
                w = BARE_WORD_RE.match(value, i)
                if w:
                    word = w.group()
                    kind_ = BARE_WORDS[word]
                    tokens.append((kind_, word))
                    i = w.end()
                else:
                    tokens.append(("SYM", value[i]))
                    i += 1
    return tokens


ATOM_START = {"NUM", "SYM", "PI", "OO", "(", "{", "FRAC", "SQRT", "FUNC", "BINOM", "LFLOOR", "LCEIL",
              "SUM", "PROD"}
MAX_SUM_TERMS = 100        # \sum_{k=1}^{n} with numeric bounds is expanded term by term


class Parser:
    """Recursive descent over tokens for one expression (no relations, no commas)."""

    def __init__(self, tokens: list[tuple[str, str]]):
        self.tokens = tokens
        self.pos = 0
        self.nodes = 0
        self.abs_depth = 0

    # --- helpers -------------------------------------------------------------
    def peek(self, offset: int = 0) -> str | None:
        i = self.pos + offset
        return self.tokens[i][0] if i < len(self.tokens) else None

    def take(self, kind: str | None = None) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise ParseError("unexpected end of expression")
        tok = self.tokens[self.pos]
        if kind is not None and tok[0] != kind:
            raise ParseError(f"expected {kind!r}, found {tok[1]!r}")
        self.pos += 1
        return tok

    def node(self, *parts: Any) -> Node:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise TooBig(f"expression with more than {MAX_NODES} nodes")
        return tuple(parts)

    # --- grammar -------------------------------------------------------------
    def parse(self) -> Node:
        tree = self.expr()
        if self.pos != len(self.tokens):
            raise ParseError(f"unexpected {self.tokens[self.pos][1]!r}")
        return tree

    def expr(self) -> Node:
        left = self.term()
        while self.peek() in ("+", "-", "PM", "MP"):
            op = self.take()[0]
            right = self.term()
            if op == "+":
                left = self.node("add", (left, right))
            elif op == "-":
                left = self.node("add", (left, self.node("neg", right)))
            else:
                left = self.node("pm", left, right if op == "PM" else self.node("neg", right))
        return left

    def term(self) -> Node:
        left = self.unary()
        while True:
            kind = self.peek()
            if kind == "*":
                self.take()
                left = self.node("mul", (left, self.unary()))
            elif kind == "/":
                self.take()
                left = self.node("div", left, self.unary())
            elif kind == "FRAC" and self.mixed_number_whole(left):
                # 3\frac{1}{4} is the mixed number 13/4, not 3 times 1/4
                frac = self.power()
                if self.proper_fraction(frac):
                    left = (self.node("neg", self.node("add", (left[1], frac))) if left[0] == "neg"
                            else self.node("add", (left, frac)))
                else:
                    left = self.node("mul", (left, frac))
            elif kind in ATOM_START and not (kind == "NUM" and self.last_was_number(left)):
                left = self.node("mul", (left, self.power()))
            elif kind == "|" and self.abs_depth == 0:  # 2|x|: an absolute value opens here
                left = self.node("mul", (left, self.power()))
            else:
                return left

    def mixed_number_whole(self, left: Node) -> bool:
        prev = self.tokens[self.pos - 1] if self.pos else None
        whole = left[1] if left[0] == "neg" else left
        return whole[0] == "num" and whole[2] == 0 and prev is not None and prev[0] == "NUM"

    @staticmethod
    def proper_fraction(node: Node) -> bool:
        if node[0] != "div" or node[1][0] != "num" or node[2][0] != "num":
            return False
        num, den = node[1][1], node[2][1]
        return num.denominator == 1 and den.denominator == 1 and 0 < num < den

    @staticmethod
    def last_was_number(left: Node) -> bool:
        # "2 3" is not 6: two literals side by side are refused, not multiplied.
        while left[0] == "mul":
            left = left[1][-1]
        return left[0] == "num"

    def unary(self) -> Node:
        if self.peek() == "-":
            self.take()
            return self.node("neg", self.unary())
        if self.peek() == "+":
            self.take()
            return self.unary()
        if self.peek() in ("PM", "MP"):
            self.take()
            return self.node("pm", self.node("num", Fraction(0), False), self.unary())
        return self.power()

    def power(self) -> Node:
        base = self.postfix()
        if self.peek() == "^":
            self.take()
            exponent = self.unary() if self.peek() != "{" else self.group()
            check_exponent(exponent, base)
            base = self.node("pow", base, exponent)
            base = self.factorials(base)
        return base

    def postfix(self) -> Node:
        return self.factorials(self.atom())

    def factorials(self, base: Node) -> Node:
        while self.peek() in ("!", "'"):
            if self.take()[0] == "'":
                raise ParseError("primes (derivatives) are not supported")
            value = constant_value(base)
            if value is None or value.imag != 0 or abs(value.real) > MAX_EXPONENT:
                raise TooBig("factorial of a large or symbolic value")
            base = self.node("fact", base)
        return base

    def group(self) -> Node:
        self.take("{")
        inner = self.expr()
        self.take("}")
        return inner

    def argument(self) -> Node:
        """A LaTeX argument: {group}, or a single token (\\frac12 takes digits one by one)."""
        kind = self.peek()
        if kind == "{":
            return self.group()
        if kind == "NUM":
            text = self.tokens[self.pos][1]
            if len(text) > 1 and text.isdigit():  # \frac12 -> 1 then 2
                self.tokens[self.pos] = ("NUM", text[1:])
                return self.node("num", Fraction(int(text[0])), False)
            self.take()
            return self.number(text)
        if kind in ("SYM", "PI", "OO"):
            return self.atom()
        if kind in ("SQRT", "FRAC"):
            return self.atom()
        raise ParseError("missing argument")

    def number(self, text: str) -> Node:
        # the third field: significant digits written, for decimals ("0.3333" -> 4); 0 otherwise
        if "." in text or "e" in text.lower():
            mantissa = text.lower().split("e")[0].replace(".", "").lstrip("0")
            return self.node("num", Fraction(text), max(len(mantissa), 1))
        return self.node("num", Fraction(text), 0)

    def atom(self) -> Node:
        kind, text = self.take()
        if kind == "NUM":
            return self.number(text)
        if kind == "SYM":
            name = text
            if self.peek() == "_":  # subscripted symbol: a_1, x_{n}
                self.take()
                sub = self.take()
                if sub[0] == "{":
                    parts = []
                    while self.peek() not in ("}", None):
                        parts.append(self.take()[1])
                    self.take("}")
                    sub = ("", "".join(parts))
                if not re.fullmatch(r"[A-Za-z0-9]{1,8}", sub[1]):
                    raise ParseError("unsupported subscript")
                name = f"{name}_{sub[1]}"
            if name == "e":
                return self.node("const", "e")
            if name == "i":
                return self.node("const", "i")
            return self.node("sym", name)
        if kind == "PI":
            return self.node("const", "pi")
        if kind == "OO":
            return self.node("const", "oo")
        if kind == "(":
            inner = self.expr()
            self.take(")")
            return inner
        if kind == "{":
            inner = self.expr()
            if self.peek() == "CHOOSE":  # {n \choose k}
                self.take()
                k = self.expr()
                self.take("}")
                for part in (inner, k):
                    value = constant_value(part)
                    if value is not None and abs(value) > MAX_EXPONENT:
                        raise TooBig("binomial of a large value")
                return self.node("func", "binomial", (inner, k))
            self.take("}")
            return inner
        if kind in ("|", "NORM"):
            self.abs_depth += 1
            inner = self.expr()
            self.take(kind)
            self.abs_depth -= 1
            return self.node("func", "abs", (inner,))
        if kind in ("LFLOOR", "LCEIL"):
            inner = self.expr()
            self.take("RFLOOR" if kind == "LFLOOR" else "RCEIL")
            return self.node("func", "floor" if kind == "LFLOOR" else "ceil", (inner,))
        if kind == "FRAC":
            num = self.argument()
            den = self.argument()
            return self.node("div", num, den)
        if kind == "BINOM":
            n = self.argument()
            k = self.argument()
            for part in (n, k):
                value = constant_value(part)
                if value is not None and abs(value) > MAX_EXPONENT:
                    raise TooBig("binomial of a large value")
            return self.node("func", "binomial", (n, k))
        if kind == "SQRT":
            index = None
            if self.peek() == "[":
                self.take()
                index = self.expr()
                self.take("]")
            radicand = self.argument() if self.peek() != "(" else self.atom()
            if index is None:
                return self.node("func", "sqrt", (radicand,))
            check_exponent(index)
            return self.node("pow", radicand, self.node("div", self.node("num", Fraction(1), False), index))
        if kind == "FUNC":
            return self.function(text)
        if kind in ("SUM", "PROD"):
            return self.big_operator(kind)
        raise ParseError(f"unexpected {text!r}")

    def big_operator(self, kind: str) -> Node:
        """\\sum_{k=1}^{5} body / \\prod ...: numeric bounds only, expanded term by term."""
        self.take("_")
        self.take("{")
        var = self.take("SYM")[1]
        self.take("=")
        lo = self.expr()
        self.take("}")
        self.take("^")
        hi = self.argument()
        body = self.power()
        while self.peek() in ATOM_START and self.peek() not in ("FUNC", "SUM", "PROD"):
            body = self.node("mul", (body, self.power()))
        lo_v, hi_v = exact_value(lo), exact_value(hi)
        if lo_v is None or hi_v is None:
            # symbolic bounds: kept whole, the bound variable renamed by its depth so that the
            # same sum over another letter is the same tree (sympy evaluates it in the worker)
            if any(v is not None and v.denominator != 1 for v in (lo_v, hi_v)):
                raise ParseError("a sum or product with bounds that are not integers")
            bound = f"{BOUND_PREFIX}{sum(1 for part in (lo, hi, body) if has_bound(part))}"
            return self.node("bigop", "sum" if kind == "SUM" else "prod", bound, lo, hi, bind(body, var, bound))
        if lo_v.denominator != 1 or hi_v.denominator != 1:
            raise ParseError("a sum or product with bounds that are not integers")
        if hi_v - lo_v + 1 > MAX_SUM_TERMS:
            raise TooBig(f"a sum or product of more than {MAX_SUM_TERMS} terms")
        terms = tuple(bind(body, var, ("num", Fraction(k), 0)) for k in range(int(lo_v), int(hi_v) + 1))
        if not terms:
            return self.node("num", Fraction(0 if kind == "SUM" else 1), 0)
        self.nodes += len(terms) * count_nodes(body)
        if self.nodes > MAX_NODES * 4:
            raise TooBig("expanded sum too large")
        return self.node("add" if kind == "SUM" else "mul", terms)

    def function(self, name: str) -> Node:
        name = {"ln": "log", "lg": "log10", "arcsin": "asin", "arccos": "acos", "arctan": "atan"}.get(name, name)
        base = None
        if name == "log" and self.peek() == "_":
            self.take()
            base = self.argument()
        power = None
        if self.peek() == "^":  # \sin^2 x
            self.take()
            power = self.argument()
            check_exponent(power)
            if name in INVERSE_NAMES and exact_value(power) == -1:
                name, power = INVERSE_NAMES[name], None  # \sin^{-1} x is arcsin x, not 1/sin x
        if name in MULTI_ARG:
            self.take("(")
            args = [self.expr()]
            while self.peek() == ",":
                self.take()
                args.append(self.expr())
            self.take(")")
            return self.node("func", name, tuple(args))
        if self.peek() == "(":
            self.take()
            arg = self.expr()
            self.take(")")
        elif self.peek() == "|" and self.abs_depth == 0:  # \ln|x|
            arg = self.atom()
        elif self.peek() in ATOM_START:
            # \sin 2x is sin(2x): the argument runs over an implicit product
            arg = self.power()
            while self.peek() in ATOM_START and self.peek() != "FUNC":
                arg = self.node("mul", (arg, self.power()))
        else:
            raise ParseError(f"{name} without an argument")
        result = self.node("func", name, (arg,))
        if base is not None:
            result = self.node("div", result, self.node("func", "log", (base,)))
        if power is not None:
            result = self.node("pow", result, power)
        return result


def parse_expression(text: str) -> Node:
    """One expression (no relations or commas) -> AST. Raises ParseError / TooBig."""
    tokens = tokenize(text)
    if not tokens:
        raise ParseError("empty expression")
    return Parser(tokens).parse()


