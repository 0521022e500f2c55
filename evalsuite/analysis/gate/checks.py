"""The gate's checks, each a JUnit test case with the words of the one-line summary: the
accuracy drop (exact McNemar), equivalence (TOST), errored items and the diff JSON's counts."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..paired import Paired, paired_equivalence
from .settings import GateInputError, GateSettings
from ..stats import Equivalence

DIFF_COUNT_KEYS = ("identical", "near_tie", "suspicious", "real", "not_greedy", "cut_prefix", "undetermined",
                   "hidden_drift", "retokenised")


@dataclass(frozen=True)
class Check:
    """One JUnit test case: passed True/False, or None when it could not be judged."""

    name: str
    passed: bool | None
    message: str


@dataclass(frozen=True)
class GateResult:
    code: int
    line: str
    checks: tuple[Check, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)



# ---------------------------------------------------------------------------- checks


def read_diff_json(path: Path) -> dict[str, Any]:
    """The diff tool's JSON (`evalsuite diff --json`)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GateInputError(f"--diff {path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise GateInputError(f"--diff {path}: cannot be read as a diff's JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("counts"), dict):
        raise GateInputError(f"--diff {path}: not a diff's JSON (no top-level 'counts' object; `evalsuite diff --json` writes one)")
    return data


def diff_counts(data: dict[str, Any], path: Path, required: tuple[str, ...] = ("real", "undetermined")) -> dict[str, int]:
    """`counts` from the diff JSON. `real` and `undetermined` are required (both are gated);
    the rest are reported if present."""
    counts = data["counts"]
    for key in required:
        value = counts.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise GateInputError(f"--diff {path}: counts.{key} must be a whole number, got {value!r}")
    return {k: v for k, v in counts.items() if k in DIFF_COUNT_KEYS and isinstance(v, int)}


def divergence_checks(counts: Mapping[str, int], s: GateSettings) -> list[tuple[Check, str]]:
    """The diff JSON's checks: real divergences, then undetermined items. An undetermined item
    is one whose divergence could not be classified (no logprobs at it, an error, ...): it may
    hide a real divergence, so a lossless gate allows none unless told otherwise."""
    name = s.diff.name if s.diff else "diff"
    real_ok = counts["real"] <= (s.max_real or 0)
    words = f"real divergences {counts['real']} {'<=' if real_ok else '>'} {s.max_real} ({name})"
    if counts.get("not_greedy"):
        words += (f"; {counts['not_greedy']} item(s) not greedy (a run did not decode greedily: "
                  f"see the diff's notes)")
    limit = s.max_undetermined or 0
    und_ok = counts["undetermined"] <= limit
    und_words = (f"undetermined items {counts['undetermined']} {'<=' if und_ok else '>'} {limit} "
                 f"(--max-undetermined{', default 0 for a lossless gate' if s.max_undetermined in (None, 0) else ''}"
                 f": an undetermined item may hide a real divergence)")
    return [(Check("real divergences", real_ok, words), words),
            (Check("undetermined items", und_ok, und_words), und_words)]


def _pp(x: float) -> str:
    return f"{x:g}" if x == int(x) else f"{x:.2f}".rstrip("0")


def _p(p: float) -> str:
    return f"{p:.3g}" if p >= 0.001 else f"{p:.1e}"


def accuracy_check(pair: Paired, s: GateSettings) -> tuple[Check, str]:
    """(the JUnit check, the words for the one-line summary)."""
    m = pair.mcnemar
    drop = -(pair.delta_pp or 0.0)
    # Compare in exact fractions of items so 2.0 pp on 100 items is not "more than 2.0".
    over = (m.b - m.c) * 100 > s.max_drop * m.n_pairs + 1e-9 * m.n_pairs
    significant = s.alpha >= 1 or m.p < s.alpha
    test = f"McNemar b={m.b} c={m.c} p={_p(m.p)}" + ("" if s.alpha >= 1 else f", α={s.alpha:g}")
    accuracies = (f"candidate {100 * (pair.acc_b or 0):.1f}% vs baseline {100 * (pair.acc_a or 0):.1f}% "
                  f"on {m.n_pairs} paired items")
    if over and significant:
        why = "" if s.alpha >= 1 else " and significantly"
        words = f"accuracy dropped {drop:.1f} pp (> {_pp(s.max_drop)} pp){why}: {accuracies}; {test}"
        return Check("accuracy drop", False, words), words
    if over:
        words = (f"drop of {drop:.1f} pp exceeds {_pp(s.max_drop)} pp but is not significant "
                 f"(p={_p(m.p)} >= α={s.alpha:g}): {accuracies}; {test}")
    else:
        words = f"{accuracies} ({-drop:+.1f} pp, max drop {_pp(s.max_drop)} pp); {test}"
    return Check("accuracy drop", True, words), words


def equivalence_check(pair: Paired, s: GateSettings) -> tuple[Check, str, Equivalence]:
    """Pass only on "equivalent": the (1 − 2α) interval of candidate − baseline inside ±margin."""
    assert s.equivalence_margin is not None
    eq = paired_equivalence(pair, s.alpha, s.equivalence_margin)
    words = "equivalence: " + eq.words()
    return Check("equivalence", eq.verdict == "equivalent", words), words, eq



def _errors(run: Any) -> int:
    return sum(1 for r in run.records if r.get("outcome") == "error")


def errors_check(base: Any, cand: Any, s: GateSettings) -> tuple[Check, str]:
    """Errored items count: a gate never passes on the items that happened to answer."""
    n = len(cand.records)
    eb, ec = _errors(base), _errors(cand)
    if s.max_errors is None:
        limit, rule = eb, "the baseline's"
    elif s.max_errors_percent:
        limit, rule = math.floor(s.max_errors * n / 100 + 1e-9), f"{_pp(s.max_errors)}% of {n}"
    else:
        limit, rule = int(s.max_errors), "--max-errors"
    ok = ec <= limit
    words = (f"errored items: candidate {ec} of {n} ({100 * ec / n:.1f}%), baseline {eb}; "
             f"{'<=' if ok else '>'} {limit} allowed ({rule})") if n else "no items"
    return Check("errored items", ok, words), words
