"""Answer extraction and equivalence: pure functions that return a Verdict with its reason."""
from .verdict import METHODS, Verdict

__all__ = ["METHODS", "Verdict"]
