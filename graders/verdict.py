"""The one value every grader returns: a decision, the answer it read, and why."""
from __future__ import annotations

from dataclasses import dataclass, field, asdict
from typing import Any

# How a verdict was reached. "exact" and "normalised" are plain string rules; every
# other method is a "rescue" worth auditing when it says equal.
METHODS = (
    "exact",        # byte-identical after strip
    "normalised",   # equal after light string normalisation
    "numeric",      # equal as numbers (rationals exactly, floats within tolerance)
    "symbolic",     # equal by a sympy check (simplify, equation, numeric probing)
    "interval",     # equal as intervals / inequalities
    "set",          # equal as sets, tuples, lists or matrices
    "fuzzy",        # rapidfuzz score over the threshold
    "choice",       # choice letters
    "rules",        # rule checks a pack decides itself (e.g. an SVG's stated requirements)
    "none",         # nothing decided (no answer, undecidable, timed out)
)


@dataclass(frozen=True)
class Verdict:
    """`equal` is True/False when decided, None when the grader could not decide.

    `extracted` is the answer read from the response (None: nothing found).
    `method` is one of METHODS; `reason` is a sentence a person can read.
    `extraction` says how the answer was found (e.g. "boxed", "answer-is", "last-number").
    """

    equal: bool | None
    extracted: str | None
    method: str = "none"
    reason: str = ""
    extraction: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.equal)

    @property
    def rescued(self) -> bool:
        """Accepted by a rule looser than string equality: list these for audit."""
        return bool(self.equal) and self.method not in ("exact", "normalised", "choice", "rules")

    def to_dict(self) -> dict[str, Any]:
        # asdict's deep copy costs ~15 us a verdict (once per recorded answer); details of plain
        # JSON values are copied by hand, anything else goes through asdict as before
        try:
            details = _plain(self.details)
        except _NotPlain:
            return asdict(self)
        return {"equal": self.equal, "extracted": self.extracted, "method": self.method, "reason": self.reason,
                "extraction": self.extraction, "details": details}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Verdict":
        return cls(**{k: data.get(k) for k in ("equal", "extracted", "method", "reason", "extraction")},
                   details=data.get("details") or {})


class _NotPlain(Exception):
    pass


_ATOMS = (str, int, float, bool, type(None))


def _plain(value: Any) -> Any:
    """A copy of nested dicts and lists of JSON atoms, as asdict makes it; _NotPlain otherwise."""
    kind = type(value)
    if kind is dict:
        return {_plain(k): _plain(v) for k, v in value.items()}
    if kind is list:
        return [_plain(v) for v in value]
    if kind in _ATOMS:
        return value
    raise _NotPlain


def verdict(equal: bool | None, answer: str, method: str, reason: str, how: str, **details) -> Verdict:
    return Verdict(equal, answer, method, reason, how, details=dict(details))
