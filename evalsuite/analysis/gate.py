"""A CI quality gate: does the candidate run lose accuracy against the baseline run?

    evalsuite gate --baseline RUN --candidate RUN --max-drop PP [--alpha A] [--min-items N]
                   [--diff DIFF_JSON --max-real K] [--junit FILE]

The candidate fails when its accuracy is lower by more than PP percentage points AND the
drop is significant at alpha by an exact McNemar test on the paired items (alpha 1 drops
the significance condition), or when a diff JSON counts more than K `real` divergences.
Exit 0 pass, 1 fail, 2 unusable input (missing runs, different items, too few items, bad
settings). One line on stdout says why. Thresholds may also live in pyproject.toml under
[tool.evalsuite.gate] (the nearest one from the working folder upward that has the table);
command-line values win. See docs/gate.md.
"""
from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, TextIO

from ..store import RunFolderError, load_run
from .compare import Paired, paired
from .stats import smallest_possible_p

PASS, FAIL, UNUSABLE = 0, 1, 2
CONFIG_KEYS = ("max_drop", "alpha", "min_items", "max_real")
DIFF_COUNT_KEYS = ("identical", "near_tie", "suspicious", "real", "undetermined", "hidden_drift")


class GateInputError(ValueError):
    """Input the gate cannot judge: exit 2 with this message."""


@dataclass(frozen=True)
class GateSettings:
    max_drop: float                 # percentage points
    alpha: float = 0.05
    min_items: int = 1
    max_real: int | None = None     # None: no divergence check
    diff: Path | None = None
    config_file: Path | None = None  # where pyproject values came from, if anywhere


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


# ---------------------------------------------------------------------------- settings


def find_gate_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest pyproject.toml from `start` upward with a [tool.evalsuite.gate] table."""
    try:
        import tomllib
    except ModuleNotFoundError:   # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    for folder in [start, *start.parents]:
        path = folder / "pyproject.toml"
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise GateInputError(f"{path} cannot be read ({e})") from None
        table = data.get("tool", {}).get("evalsuite", {}).get("gate")
        if table is not None:
            if not isinstance(table, dict):
                raise GateInputError(f"{path}: [tool.evalsuite.gate] must be a table")
            return path, table
    return None


def _config_values(path: Path, table: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("-", "_")
        if key not in CONFIG_KEYS:
            raise GateInputError(f"{path}: unknown key {raw_key!r} in [tool.evalsuite.gate] "
                                 f"(known: {', '.join(CONFIG_KEYS)})")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise GateInputError(f"{path}: [tool.evalsuite.gate] {raw_key} must be a number, got {value!r}")
        values[key] = value
    return values


def resolve_settings(
    *, max_drop: float | None, alpha: float | None, min_items: int | None, max_real: int | None,
    diff: str | Path | None, config_start: Path | None = None,
) -> GateSettings:
    """Command-line values over pyproject values over defaults; every value checked."""
    found = find_gate_config(Path(config_start) if config_start else Path.cwd())
    config_file, config = (found[0], _config_values(*found)) if found else (None, {})
    if max_real is not None and diff is None:
        raise GateInputError("--max-real needs --diff DIFF_JSON (the `evalsuite diff --json` output)")
    pick = lambda name, given: given if given is not None else config.get(name)  # noqa: E731
    max_drop = pick("max_drop", max_drop)
    alpha = pick("alpha", alpha)
    min_items = pick("min_items", min_items)
    max_real = pick("max_real", max_real)
    if max_drop is None:
        raise GateInputError("no --max-drop given and none in [tool.evalsuite.gate] of a pyproject.toml")
    if not math.isfinite(max_drop) or max_drop < 0:
        raise GateInputError(f"--max-drop must be >= 0 percentage points, got {max_drop}")
    alpha = 0.05 if alpha is None else alpha
    if not 0 < alpha <= 1:
        raise GateInputError(f"--alpha must be in (0, 1], got {alpha}")
    min_items = 1 if min_items is None else min_items
    if int(min_items) != min_items or min_items < 1:
        raise GateInputError(f"--min-items must be a whole number >= 1, got {min_items}")
    if max_real is not None and (int(max_real) != max_real or max_real < 0):
        raise GateInputError(f"--max-real must be a whole number >= 0, got {max_real}")
    if diff is not None and max_real is None:
        max_real = 0   # a diff given without a limit: any real divergence fails
    # a max_real in pyproject without --diff is simply unused: the diff check is opt-in per run
    return GateSettings(max_drop=float(max_drop), alpha=float(alpha), min_items=int(min_items),
                        max_real=None if diff is None else int(max_real), diff=Path(diff) if diff else None,
                        config_file=config_file)


# ---------------------------------------------------------------------------- checks


def read_diff_counts(path: Path) -> dict[str, int]:
    """`counts` from the diff tool's JSON: {identical, near_tie, suspicious, real,
    undetermined, hidden_drift}. Only `real` is required; the rest are reported if present."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GateInputError(f"diff JSON {path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise GateInputError(f"diff JSON {path} cannot be read ({e})") from None
    counts = data.get("counts") if isinstance(data, dict) else None
    if not isinstance(counts, dict):
        raise GateInputError(f"diff JSON {path} has no top-level 'counts' object")
    real = counts.get("real")
    if isinstance(real, bool) or not isinstance(real, int) or real < 0:
        raise GateInputError(f"diff JSON {path}: counts.real must be a whole number, got {real!r}")
    return {k: v for k, v in counts.items() if k in DIFF_COUNT_KEYS and isinstance(v, int)}


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
        if smallest_possible_p(m.n_pairs) >= s.alpha:
            words += f" — note: no drop on {m.n_pairs} items can be significant at α={s.alpha:g}; raise --min-items"
    else:
        words = f"{accuracies} ({-drop:+.1f} pp, max drop {_pp(s.max_drop)} pp); {test}"
    return Check("accuracy drop", True, words), words


def evaluate(baseline: str | Path, candidate: str | Path, s: GateSettings) -> GateResult:
    try:
        base = load_run(baseline, drop=("messages", "prompt", "server_timings"))
    except RunFolderError as e:
        raise GateInputError(f"baseline: {e}") from None
    try:
        cand = load_run(candidate, drop=("messages", "prompt", "server_timings"))
    except RunFolderError as e:
        raise GateInputError(f"candidate: {e}") from None
    fp_b = (base.manifest.get("dataset") or {}).get("fingerprint")
    fp_c = (cand.manifest.get("dataset") or {}).get("fingerprint")
    if not fp_b or not fp_c:
        raise GateInputError(f"{'baseline' if not fp_b else 'candidate'} manifest has no dataset.fingerprint")
    if fp_b != fp_c:
        raise GateInputError(f"different items: baseline fingerprint {fp_b[:12]} vs candidate {fp_c[:12]} "
                             f"(run both on the same pack, subsets, seed and limit)")
    ids_b, ids_c = base.by_id, cand.by_id
    if set(ids_b) != set(ids_c):
        short, run = (("baseline", base) if len(ids_b) < len(ids_c) else ("candidate", cand))
        raise GateInputError(f"same items but the {short} has records for {len(run.records)} of "
                             f"{len(run.manifest.get('item_ids') or [])} (status {run.manifest.get('status', '?')}); "
                             f"finish it with --resume")
    ids = [r["id"] for r in base.records]
    pair = paired(base, cand, ids, "baseline", "candidate")
    if pair.mcnemar.n_pairs < s.min_items:
        raise GateInputError(f"too few items: {pair.mcnemar.n_pairs} paired items "
                             f"({pair.errors_excluded} errored in either run), min-items is {s.min_items}")
    accuracy, words = accuracy_check(pair, s)
    checks = [accuracy]
    all_words = [words]
    counts: dict[str, int] = {}
    if s.diff is not None:
        counts = read_diff_counts(s.diff)
        real_ok = counts["real"] <= (s.max_real or 0)
        divergence_words = f"real divergences {counts['real']} {'<=' if real_ok else '>'} {s.max_real} ({s.diff.name})"
        checks.append(Check("real divergences", real_ok, divergence_words))
        all_words.append(divergence_words)
    failed = [c for c in checks if c.passed is False]
    if pair.errors_excluded:
        all_words.append(f"{pair.errors_excluded} items errored in either run and were left out")
    code = FAIL if failed else PASS
    line = ("FAIL: " if failed else "PASS: ") + "; ".join(all_words)
    details = {"b": pair.mcnemar.b, "c": pair.mcnemar.c, "p": pair.mcnemar.p, "n_pairs": pair.mcnemar.n_pairs,
               "delta_pp": pair.delta_pp, "errors_excluded": pair.errors_excluded, "diff_counts": counts}
    return GateResult(code=code, line=line, checks=tuple(checks), details=details)


# ---------------------------------------------------------------------------- JUnit


def junit_xml(result: GateResult, baseline: str | Path, candidate: str | Path) -> bytes:
    """A JUnit XML report CI systems display: one test case per check, an <error> case for
    unusable input."""
    import xml.etree.ElementTree as ET

    checks = result.checks or (Check("gate input", None, result.line),)
    suite = ET.Element("testsuite", {
        "name": "evalsuite.gate",
        "tests": str(len(checks)),
        "failures": str(sum(1 for c in checks if c.passed is False)),
        "errors": str(sum(1 for c in checks if c.passed is None)),
        "skipped": "0",
    })
    props = ET.SubElement(suite, "properties")
    for name, value in (("baseline", str(baseline)), ("candidate", str(candidate)), ("exit_code", str(result.code))):
        ET.SubElement(props, "property", {"name": name, "value": value})
    for check in checks:
        case = ET.SubElement(suite, "testcase", {"classname": "evalsuite.gate", "name": check.name})
        if check.passed is False:
            ET.SubElement(case, "failure", {"message": check.message, "type": "GateFailure"}).text = check.message
        elif check.passed is None:
            ET.SubElement(case, "error", {"message": check.message, "type": "UnusableInput"}).text = check.message
        else:
            ET.SubElement(case, "system-out").text = check.message
    root = ET.Element("testsuites")
    root.append(suite)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


# ---------------------------------------------------------------------------- command


def gate_main(
    baseline: str | Path | None,
    candidate: str | Path | None,
    *,
    max_drop: float | None = None,
    alpha: float | None = None,
    min_items: int | None = None,
    diff: str | Path | None = None,
    max_real: int | None = None,
    junit: str | Path | None = None,
    config_start: str | Path | None = None,
    out: TextIO | None = None,
) -> int:
    """The `evalsuite gate` command. Prints one line; returns 0 pass, 1 fail, 2 unusable."""
    out = out or sys.stdout
    try:
        if not baseline or not candidate:
            raise GateInputError("give both --baseline RUN and --candidate RUN")
        settings = resolve_settings(max_drop=max_drop, alpha=alpha, min_items=min_items, max_real=max_real,
                                    diff=diff, config_start=Path(config_start) if config_start else None)
        result = evaluate(baseline, candidate, settings)
    except GateInputError as e:
        result = GateResult(code=UNUSABLE, line=f"UNUSABLE: {e}",
                            checks=(Check("gate input", None, str(e)),))
    print(result.line, file=out)
    if junit:
        Path(junit).write_bytes(junit_xml(result, baseline or "", candidate or ""))
    return result.code
