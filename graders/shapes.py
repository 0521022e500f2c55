"""The shapes an answer is read into (structure.py reads them, equivalence.py compares them):
frozen dataclasses holding parse.py's ASTs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .nodes import Node, symbols_of


@dataclass(frozen=True)
class Expr:
    node: Node


@dataclass(frozen=True)
class Equation:
    lhs: Node
    rhs: Node

    @property
    def solved_for(self) -> str | None:
        """'x' for `x = 5` / `y = 2x + 3`: a lone symbol on the left, absent on the right."""
        if self.lhs[0] == "sym" and self.lhs[1] not in symbols_of(self.rhs):
            return self.lhs[1]
        return None


@dataclass(frozen=True)
class Labelled:
    """`AB = 4`, `f(x) = 4x - 1`, `V_1 : V_2 = 5 : 8`: a value with the name it was given.

    Compared with an unlabelled answer the label is dropped; against another label it
    must be the same label.
    """
    label: str
    value: "Value"


@dataclass(frozen=True)
class Interval:
    lo: Node
    hi: Node
    lo_closed: bool
    hi_closed: bool


@dataclass(frozen=True)
class Intervals:
    parts: tuple[Interval, ...]   # a union, order-free


@dataclass(frozen=True)
class Items:
    items: tuple["Value", ...]
    ordered: bool                 # tuples/vectors yes; sets and bare lists of solutions no
    brackets: str                 # "()", "[]", "{}" or "" (bare list)


@dataclass(frozen=True)
class Matrix:
    rows: tuple[tuple["Value", ...], ...]


@dataclass(frozen=True)
class Relation:
    text: str                     # an inequality we cannot turn into an interval


@dataclass(frozen=True)
class TimeOfDay:
    minutes: int                  # since midnight (12-hour values without am/pm: < 12*60)
    has_meridiem: bool


@dataclass(frozen=True)
class BaseNumber:
    digits: str
    base: int


Value = Union[Expr, Equation, Labelled, Intervals, Items, Matrix, Relation, TimeOfDay, BaseNumber]
