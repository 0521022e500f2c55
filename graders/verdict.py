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
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Verdict":
        return cls(**{k: data.get(k) for k in ("equal", "extracted", "method", "reason", "extraction")},
                   details=data.get("details") or {})


def verdict(equal: bool | None, answer: str, method: str, reason: str, how: str, **details) -> Verdict:
    return Verdict(equal, answer, method, reason, how, details=dict(details))
