"""A CI quality gate: does the candidate run lose accuracy against the baseline run?

    evalsuite gate --baseline RUN --candidate RUN --max-drop PP [--alpha A] [--min-items N]
                   [--max-errors N|P%] [--allow-underpowered] [--diff DIFF_JSON --max-real K] [--junit FILE]

The candidate fails when its accuracy is lower by more than PP percentage points AND the
drop is significant at alpha by an exact McNemar test on the paired items (alpha 1 drops
the significance condition), when more of its items errored than allowed (default: no more
than the baseline's), or when a diff JSON of these two runs counts more than K `real`
divergences. A gate too small to detect the requested drop refuses (exit 2) unless
--allow-underpowered. Exit 0 pass, 1 fail, 2 unusable input (missing runs, different items,
too few items, bad settings, an output that cannot be written). One line on stdout says why. Thresholds may also live in pyproject.toml under
[tool.evalsuite.gate] (the nearest one from the working folder upward that has the table);
command-line values win. See docs/gate.md.

With --diff the gate also fails on more than --max-undetermined undetermined items (default
0: an undetermined item may hide a real divergence); `--diff` alone (no run folders) gates on
the diff's counts only. With --equivalence-margin M it passes only when the paired accuracy
difference's (1 − 2α) interval lies inside ±M (two one-sided tests): equivalent, worse, better,
or undecided with the paired items needed. --json writes the verdict and its figures.
"""
from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, TextIO

from ..store import RunFolderError, bulky, load_run
from .compare import Paired, paired, paired_equivalence
from .stats import Equivalence, binomial_two_sided_p

PASS, FAIL, UNUSABLE = 0, 1, 2
CONFIG_KEYS = ("max_drop", "alpha", "min_items", "max_real", "max_errors", "max_undetermined", "equivalence_margin")
DIFF_COUNT_KEYS = ("identical", "near_tie", "suspicious", "real", "not_greedy", "cut_prefix", "undetermined",
                   "hidden_drift", "retokenised")


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
    max_errors: float | None = None  # errored candidate items allowed; None: no more than the baseline's
    max_errors_percent: bool = False  # max_errors is a percentage of the items
    allow_underpowered: bool = False
    max_undetermined: int | None = None  # with --diff: undetermined items allowed (default 0)
    equivalence_margin: float | None = None  # points: pass only when the paired CI lies inside ±margin
    diff_only: bool = False         # no run folders: only the diff JSON's counts are gated
    check_drop: bool = True         # False: --equivalence-margin without --max-drop (no drop check)
    use_judge: bool = False          # outcomes follow the judge where it decided (evalsuite/judge.py)


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
        if key == "max_errors" and isinstance(value, str):
            values[key] = value   # "5" or "2%": checked with the command-line value
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise GateInputError(f"{path}: [tool.evalsuite.gate] {raw_key} must be a number, got {value!r}")
        values[key] = value
    return values


def resolve_settings(
    *, max_drop: float | None, alpha: float | None, min_items: int | None, max_real: int | None,
    diff: str | Path | None, config_start: Path | None = None, max_errors: str | float | None = None,
    allow_underpowered: bool = False, max_undetermined: int | None = None,
    equivalence_margin: float | None = None, diff_only: bool = False,
) -> GateSettings:
    """Command-line values over pyproject values over defaults; every value checked.
    `diff_only`: no run folders were given, only --diff: --max-drop is then not needed."""
    found = find_gate_config(Path(config_start) if config_start else Path.cwd())
    config_file, config = (found[0], _config_values(*found)) if found else (None, {})
    if max_real is not None and diff is None:
        raise GateInputError("--max-real needs --diff DIFF_JSON (the `evalsuite diff --json` output)")
    if max_undetermined is not None and diff is None:
        raise GateInputError("--max-undetermined needs --diff DIFF_JSON (the `evalsuite diff --json` output)")
    if diff_only and diff is None:
        raise GateInputError("give both --baseline RUN and --candidate RUN (or --diff DIFF_JSON for a "
                             "divergence-only gate)")
    if diff_only and equivalence_margin is not None:
        raise GateInputError("--equivalence-margin needs --baseline RUN and --candidate RUN (a diff JSON holds no "
                             "per-item outcomes)")
    pick = lambda name, given: given if given is not None else config.get(name)  # noqa: E731
    max_drop = pick("max_drop", max_drop)
    alpha = pick("alpha", alpha)
    min_items = pick("min_items", min_items)
    max_real = pick("max_real", max_real)
    max_undetermined = pick("max_undetermined", max_undetermined)
    equivalence_margin = pick("equivalence_margin", equivalence_margin)
    errors_limit, errors_percent = parse_max_errors(pick("max_errors", max_errors))
    if equivalence_margin is not None and (not math.isfinite(equivalence_margin) or equivalence_margin <= 0):
        raise GateInputError(f"--equivalence-margin must be > 0 percentage points, got {equivalence_margin}")
    check_drop = True
    if max_drop is None and (diff_only or equivalence_margin is not None):
        max_drop, check_drop = 0.0, False   # unused: the equivalence test (or the diff alone) decides
    if max_drop is None:
        raise GateInputError("no --max-drop given and none in [tool.evalsuite.gate] of a pyproject.toml")
    if not math.isfinite(max_drop) or max_drop < 0:
        raise GateInputError(f"--max-drop must be >= 0 percentage points, got {max_drop}")
    alpha = 0.05 if alpha is None else alpha
    if not 0 < alpha <= 1:
        raise GateInputError(f"--alpha must be in (0, 1], got {alpha}")
    if equivalence_margin is not None and not diff_only and alpha >= 0.5:
        raise GateInputError(f"--equivalence-margin needs --alpha below 0.5 (each one-sided test at α; got {alpha:g})")
    min_items = 1 if min_items is None else min_items
    if int(min_items) != min_items or min_items < 1:
        raise GateInputError(f"--min-items must be a whole number >= 1, got {min_items}")
    if max_real is not None and (int(max_real) != max_real or max_real < 0):
        raise GateInputError(f"--max-real must be a whole number >= 0, got {max_real}")
    if max_undetermined is not None and (int(max_undetermined) != max_undetermined or max_undetermined < 0):
        raise GateInputError(f"--max-undetermined must be a whole number >= 0, got {max_undetermined}")
    if diff is not None and max_real is None:
        max_real = 0   # a diff given without a limit: any real divergence fails
    if diff is not None and max_undetermined is None:
        max_undetermined = 0   # an undetermined item may hide a real divergence: a lossless gate allows none
    # a max_real in pyproject without --diff is simply unused: the diff check is opt-in per run
    return GateSettings(max_drop=float(max_drop), alpha=float(alpha), min_items=int(min_items),
                        max_real=None if diff is None else int(max_real), diff=Path(diff) if diff else None,
                        config_file=config_file, max_errors=errors_limit, max_errors_percent=errors_percent,
                        allow_underpowered=allow_underpowered,
                        max_undetermined=None if diff is None else int(max_undetermined),
                        equivalence_margin=None if equivalence_margin is None else float(equivalence_margin),
                        diff_only=diff_only, check_drop=check_drop)


def parse_max_errors(value: str | float | None) -> tuple[float | None, bool]:
    """--max-errors N (items) or P% (of the items): (limit, is_percent); (None, False) unset."""
    if value is None:
        return None, False
    text = str(value).strip()
    percent = text.endswith("%")
    try:
        number = float(text[:-1] if percent else text)
    except ValueError:
        raise GateInputError(f"--max-errors must be a count of items or a percentage like 2%, got {value!r}") from None
    if not math.isfinite(number) or number < 0 or (percent and number > 100) or (not percent and number != int(number)):
        raise GateInputError(f"--max-errors must be a whole number of items >= 0 or a percentage in [0, 100], "
                             f"got {value!r}")
    return number, percent


# ---------------------------------------------------------------------------- power


def smallest_significant_loss(alpha: float) -> int:
    """The fewest net-lost items that can ever be significant at alpha: all discordant pairs
    one way (b lost, none gained), exact McNemar p = 2 / 2**b < alpha."""
    b = 1
    while binomial_two_sided_p(b, b) >= alpha:
        b += 1
    return b


@dataclass(frozen=True)
class Power:
    """What these paired items can detect at alpha, at best (every discordant pair a loss)."""
    n_pairs: int
    min_loss: int                     # items
    min_detectable_pp: float          # the smallest drop that could be significant here
    items_needed: int | None          # paired items for the requested --max-drop to be detectable

    def to_dict(self) -> dict[str, Any]:
        return {"n_pairs": self.n_pairs, "min_significant_loss": self.min_loss,
                "min_detectable_drop_pp": self.min_detectable_pp, "items_needed": self.items_needed}


def power(n_pairs: int, alpha: float, max_drop: float) -> Power | None:
    """None when alpha is 1 (no significance condition: any drop over --max-drop fails)."""
    if alpha >= 1:
        return None
    loss = smallest_significant_loss(alpha)
    detectable = 100.0 * loss / n_pairs if n_pairs else math.inf
    needed = math.ceil(100.0 * loss / max_drop - 1e-9) if max_drop > 0 else None
    return Power(n_pairs, loss, detectable, needed)


def underpowered(pw: Power | None, s: GateSettings) -> str | None:
    """Why this gate cannot fail on the drop it was asked to catch (None when it can)."""
    if pw is None:
        return None
    if pw.min_loss > pw.n_pairs:
        return (f"this gate cannot fail: on {pw.n_pairs} paired items no drop is significant at α={s.alpha:g} "
                f"(it takes {pw.min_loss} items lost and none gained)"
                + (f"; a {_pp(s.max_drop)} pp drop needs >= {pw.items_needed} paired items" if pw.items_needed else ""))
    # a drop just over --max-drop must be able to be significant: 100 * min_loss <= max_drop * n
    if s.max_drop > 0 and 100 * pw.min_loss > s.max_drop * pw.n_pairs + 1e-9 * pw.n_pairs:
        return (f"a {_pp(s.max_drop)} pp drop is undetectable here: the smallest drop {pw.n_pairs} paired items can "
                f"show significant at α={s.alpha:g} is {pw.min_detectable_pp:.2g} pp ({pw.min_loss} items lost, none "
                f"gained); a {_pp(s.max_drop)} pp drop needs >= {pw.items_needed} paired items")
    return None


# ---------------------------------------------------------------------------- checks


def read_diff_json(path: Path) -> dict[str, Any]:
    """The diff tool's JSON (`evalsuite diff --json`)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GateInputError(f"diff JSON {path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise GateInputError(f"diff JSON {path} cannot be read ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("counts"), dict):
        raise GateInputError(f"diff JSON {path} has no top-level 'counts' object")
    return data


def diff_counts(data: dict[str, Any], path: Path, required: tuple[str, ...] = ("real", "undetermined")) -> dict[str, int]:
    """`counts` from the diff JSON. `real` and `undetermined` are required (both are gated);
    the rest are reported if present."""
    counts = data["counts"]
    for key in required:
        value = counts.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise GateInputError(f"diff JSON {path}: counts.{key} must be a whole number, got {value!r}")
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


def evaluate(baseline: str | Path, candidate: str | Path, s: GateSettings) -> GateResult:
    try:
        base = load_run(baseline, drop=bulky(keep=("answer", "reasoning")))
    except RunFolderError as e:
        raise GateInputError(f"baseline: {e}") from None
    try:
        cand = load_run(candidate, drop=bulky(keep=("answer", "reasoning")))
    except RunFolderError as e:
        raise GateInputError(f"candidate: {e}") from None
    from .sampling_compare import gate_sampled, handles

    if handles((base, cand)):   # sampled runs: paired on success rates (docs/sampling.md)
        try:
            failed, sampled_checks, line, details = gate_sampled(base, cand, s)
        except ValueError as e:
            raise GateInputError(str(e)) from None
        return GateResult(code=FAIL if failed else PASS, line=line, checks=tuple(Check(*c) for c in sampled_checks),
                          details=details)
    fp_b = (base.manifest.get("dataset") or {}).get("fingerprint")
    fp_c = (cand.manifest.get("dataset") or {}).get("fingerprint")
    if not fp_b or not fp_c:
        raise GateInputError(f"{'baseline' if not fp_b else 'candidate'} manifest has no dataset.fingerprint")
    pack_b, pack_c = base.manifest.get("pack"), cand.manifest.get("pack")
    if pack_b != pack_c:
        raise GateInputError(f"different packs: baseline {pack_b!r} vs candidate {pack_c!r} (a gate compares "
                             f"two runs of the same pack)")
    if fp_b != fp_c:
        raise GateInputError(f"different items: baseline fingerprint {fp_b[:12]} vs candidate {fp_c[:12]} "
                             f"(run both on the same pack, subsets, seed and limit)")
    from .judged import judge_note

    (base, cand), judge_words = judge_note([base, cand], s.use_judge)
    ids_b, ids_c = base.by_id, cand.by_id
    if set(ids_b) != set(ids_c):
        short, run = (("baseline", base) if len(ids_b) < len(ids_c) else ("candidate", cand))
        raise GateInputError(f"same items but the {short} has records for {len(run.records)} of "
                             f"{len(run.manifest.get('item_ids') or [])} (status {run.manifest.get('status', '?')}); "
                             f"finish it with --resume")
    diff_data = read_diff_json(s.diff) if s.diff is not None else None
    if diff_data is not None:
        from ..lossless.diff_json import diff_json_mismatch

        diff_counts(diff_data, s.diff, required=("real",))

        mismatch = diff_json_mismatch(diff_data, base, cand)
        if mismatch:
            raise GateInputError(f"--diff {s.diff}: {mismatch}")
    ids = [r["id"] for r in base.records]
    pair = paired(base, cand, ids, "baseline", "candidate")
    if pair.mcnemar.n_pairs < s.min_items:
        raise GateInputError(f"too few items: {pair.mcnemar.n_pairs} paired items "
                             f"({pair.errors_excluded} errored in either run), min-items is {s.min_items}")
    pw = power(pair.mcnemar.n_pairs, s.alpha, s.max_drop) if s.check_drop else None
    weak = underpowered(pw, s)
    if weak and not s.allow_underpowered:
        raise GateInputError(weak + " (add items, raise --max-drop, or pass --allow-underpowered to run it anyway)")
    checks, check_words = [], []
    if s.check_drop:
        accuracy, words = accuracy_check(pair, s)
        checks.append(accuracy)
        check_words.append(words)
    eq = None
    if s.equivalence_margin is not None:
        eq_check, eq_words, eq = equivalence_check(pair, s)
        checks.append(eq_check)
        check_words.append(eq_words)
    errors, error_words = errors_check(base, cand, s)
    checks.append(errors)
    check_words.append(error_words)
    counts: dict[str, int] = {}
    if diff_data is not None:
        counts = diff_counts(diff_data, s.diff)
        for check, check_text in divergence_checks(counts, s):
            checks.append(check)
            check_words.append(check_text)
    # the line leads with what decided: the failed checks first, then the ones that passed
    all_words = ([w for c, w in zip(checks, check_words) if c.passed is False]
                 + [w for c, w in zip(checks, check_words) if c.passed is not False])
    if weak:
        all_words.append("WARNING underpowered: " + weak)
    elif pw is not None:
        all_words.append(f"smallest detectable drop {pw.min_detectable_pp:.2g} pp at α={s.alpha:g}")
    failed = [c for c in checks if c.passed is False]
    if pair.errors_excluded:
        all_words.append(f"{pair.errors_excluded} items errored in either run and were left out of the paired test")
    if judge_words:
        all_words.append(judge_words)
    code = FAIL if failed else PASS
    line = ("FAIL: " if failed else "PASS: ") + "; ".join(all_words)
    details = {"b": pair.mcnemar.b, "c": pair.mcnemar.c, "p": pair.mcnemar.p, "n_pairs": pair.mcnemar.n_pairs,
               "delta_pp": pair.delta_pp, "errors_excluded": pair.errors_excluded, "diff_counts": counts,
               "errors_baseline": _errors(base), "errors_candidate": _errors(cand), "n_items": len(ids),
               "power": pw.to_dict() if pw else None, "underpowered": weak,
               "equivalence": eq.to_dict() if eq else None}
    return GateResult(code=code, line=line, checks=tuple(checks), details=details)


def evaluate_diff_only(s: GateSettings) -> GateResult:
    """`gate --diff DIFF_JSON` without run folders: the divergence counts alone decide. The JSON
    cannot be checked against the runs it names, and no accuracy is judged; the line says so."""
    assert s.diff is not None
    data = read_diff_json(s.diff)
    counts = diff_counts(data, s.diff)
    pairs = divergence_checks(counts, s)
    checks = [c for c, _ in pairs]
    failed = [c for c in checks if c.passed is False]
    words = [w for c, w in pairs if c.passed is False] + [w for c, w in pairs if c.passed is not False]
    names = []
    for role in ("baseline", "candidate"):
        side = data.get(role)
        if isinstance(side, dict) and side.get("path"):
            names.append(f"{role} {side['path']}")
    words.append("diff only: accuracy and errored items not gated and the JSON not checked against the run "
                 "folders (give --baseline and --candidate for that)" + (f"; it names {', '.join(names)}" if names else ""))
    line = ("FAIL: " if failed else "PASS: ") + "; ".join(words)
    return GateResult(code=FAIL if failed else PASS, line=line, checks=tuple(checks),
                      details={"diff_counts": counts, "diff_only": True})


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
    facts = [("baseline", str(baseline)), ("candidate", str(candidate)), ("exit_code", str(result.code))]
    d = result.details
    if d.get("diff_only"):
        facts.append(("diff_only", "true"))
    if d and "n_items" in d:
        pw = d.get("power") or {}
        facts += [("errors_baseline", str(d["errors_baseline"])), ("errors_candidate", str(d["errors_candidate"])),
                  ("n_items", str(d["n_items"])), ("n_pairs", str(d["n_pairs"]))]
        if pw:
            facts += [("min_detectable_drop_pp", f"{pw['min_detectable_drop_pp']:.4g}"),
                      ("items_needed_for_max_drop", str(pw["items_needed"]))]
        if d.get("underpowered"):
            facts.append(("underpowered", d["underpowered"]))
        eq = d.get("equivalence")
        if eq:
            facts += [("equivalence_verdict", eq["verdict"]), ("equivalence_margin_pp", f"{eq['margin_pp']:g}"),
                      ("equivalence_ci_pp", f"{eq['ci_pp'][0]:.4g},{eq['ci_pp'][1]:.4g}"),
                      ("equivalence_more_items", "" if eq["more_items"] is None else str(eq["more_items"]))]
    for name, value in facts:
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
    max_errors: str | float | None = None,
    allow_underpowered: bool = False,
    max_undetermined: int | None = None,
    equivalence_margin: float | None = None,
    json_path: str | Path | None = None,
    use_judge: bool = False,
) -> int:
    """The `evalsuite gate` command. Prints one line; returns 0 pass, 1 fail, 2 unusable."""
    from .outputs import OutputError, check_writable

    out = out or sys.stdout
    for path, option in ((junit, "--junit"), (json_path, "--json")):
        if not path:
            continue
        try:
            check_writable(path, option)
        except OutputError as e:
            # nothing can be reported where CI looks for it: say so and stop before any verdict
            print(f"UNUSABLE: {e}", file=out)
            return UNUSABLE
    try:
        if bool(baseline) != bool(candidate):
            raise GateInputError("give both --baseline RUN and --candidate RUN")
        diff_only = not baseline and not candidate
        if diff_only and diff is None:
            raise GateInputError("give both --baseline RUN and --candidate RUN (or --diff DIFF_JSON alone for a "
                                 "divergence-only gate)")
        settings = resolve_settings(max_drop=max_drop, alpha=alpha, min_items=min_items, max_real=max_real,
                                    diff=diff, config_start=Path(config_start) if config_start else None,
                                    max_errors=max_errors, allow_underpowered=allow_underpowered,
                                    max_undetermined=max_undetermined, equivalence_margin=equivalence_margin,
                                    diff_only=diff_only)
        if use_judge:
            from dataclasses import replace

            settings = replace(settings, use_judge=True)
        result = evaluate_diff_only(settings) if diff_only else evaluate(baseline, candidate, settings)
    except GateInputError as e:
        result = GateResult(code=UNUSABLE, line=f"UNUSABLE: {e}",
                            checks=(Check("gate input", None, str(e)),))
    print(result.line, file=out)
    if junit:
        try:
            Path(junit).write_bytes(junit_xml(result, baseline or "", candidate or ""))
        except OSError as e:
            print(f"UNUSABLE: --junit {junit} cannot be written ({e.strerror or e})", file=out)
            return UNUSABLE
    if json_path:
        data = {"code": result.code, "line": result.line, "baseline": str(baseline or ""),
                "candidate": str(candidate or ""),
                "checks": [{"name": c.name, "passed": c.passed, "message": c.message} for c in result.checks],
                "details": result.details}
        try:
            Path(json_path).write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
        except OSError as e:
            print(f"UNUSABLE: --json {json_path} cannot be written ({e.strerror or e})", file=out)
            return UNUSABLE
    return result.code
