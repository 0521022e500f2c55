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

The rooms: settings.py (values and their checks), checks.py (each check and the
result), power.py (what the items can detect), junit.py (the JUnit report); here, the
decision over two runs (or a diff alone) and the command.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from ...store import RunFolderError, bulky, load_run
from ..paired import paired
from .checks import (Check, GateResult, _errors, accuracy_check, diff_counts, divergence_checks,
                          equivalence_check, errors_check, read_diff_json)
from .junit import junit_xml
from .power import power, underpowered
from .settings import GateInputError, GateSettings, SettingsDifferences, resolve_settings, settings_differences

PASS, FAIL, UNUSABLE = 0, 1, 2


def evaluate(baseline: str | Path, candidate: str | Path, s: GateSettings) -> GateResult:
    try:
        base = load_run(baseline, drop=bulky(keep=("answer", "reasoning")))
    except RunFolderError as e:
        raise GateInputError(f"baseline: {e}") from None
    try:
        cand = load_run(candidate, drop=bulky(keep=("answer", "reasoning")))
    except RunFolderError as e:
        raise GateInputError(f"candidate: {e}") from None
    from ..sampling.compare import check_pair, gate_sampled, handles

    if handles((base, cand)):   # sampled runs: paired on success rates (docs/sampling.md)
        try:
            check_pair(base, cand)
            settings_check = check_settings(base, cand, s)
            failed, sampled_checks, line, details = gate_sampled(base, cand, s)
        except GateInputError:
            raise
        except ValueError as e:
            raise GateInputError(str(e)) from None
        return with_settings(GateResult(code=FAIL if failed else PASS, line=line,
                                        checks=tuple(Check(*c) for c in sampled_checks), details=details),
                             settings_check)
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
    settings_check = check_settings(base, cand, s)
    from ..judged import judge_note

    (base, cand), judge_words = judge_note([base, cand], s.use_judge)
    ids_b, ids_c = base.by_id, cand.by_id
    if set(ids_b) != set(ids_c):
        short, run = (("baseline", base) if len(ids_b) < len(ids_c) else ("candidate", cand))
        raise GateInputError(f"same items but the {short} has records for {len(run.records)} of "
                             f"{len(run.manifest.get('item_ids') or [])} (status {run.manifest.get('status', '?')}); "
                             f"finish it with --resume")
    diff_data = read_diff_json(s.diff) if s.diff is not None else None
    if diff_data is not None:
        from ...lossless.diff_json import diff_json_mismatch

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
        raise GateInputError(weak + " (add items, raise --max-drop, or pass --allow-underpowered to run it anyway)",
                             {"power": pw.to_dict() if pw else None, "underpowered": weak,
                              "n_pairs": pair.mcnemar.n_pairs})
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
    return with_settings(GateResult(code=code, line=line, checks=tuple(checks), details=details), settings_check)


def check_settings(base: Any, cand: Any, s: GateSettings) -> tuple[SettingsDifferences, str | None]:
    """The runs' own settings (docs/gate.md, "Runs made with other settings"): a difference
    that changes the answers (other items, another prompt, other decoding) makes the
    comparison meaningless, exit 2 unless --allow-settings-mismatch; the point of a comparison
    (endpoint, model, engine, speculation flags) is said, never refused. Returns the
    differences and the words the line ends with (None: the same settings)."""
    diffs = settings_differences(base.manifest, cand.manifest)
    if diffs.refused and not s.allow_settings_mismatch:
        raise GateInputError("the runs were made with settings that change the answers, so their accuracies do not "
                             "compare: " + "; ".join(diffs.refused) + " (make both runs with the same settings, or pass "
                             "--allow-settings-mismatch to gate them anyway)", {"settings": diffs.to_dict()})
    if not diffs:
        return diffs, None
    words = []
    if diffs.refused:
        words.append("WARNING settings differ (--allow-settings-mismatch): " + "; ".join(diffs.refused))
    if diffs.shown:
        words.append("compared across: " + "; ".join(diffs.shown))
    return diffs, "; ".join(words)


def with_settings(result: GateResult, settings_check: tuple[SettingsDifferences, str | None]) -> GateResult:
    """The result with the settings' words at the end of its line, a JUnit case `run settings`
    (passed: a difference allowed or shown is noted, not failed) and `details.settings`."""
    diffs, words = settings_check
    if not words:
        return result
    return GateResult(code=result.code, line=f"{result.line}; {words}",
                      checks=result.checks + (Check("run settings", True, words),),
                      details={**result.details, "settings": diffs.to_dict()})


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
    allow_settings_mismatch: bool = False,
) -> int:
    """The `evalsuite gate` command. Prints one line; returns 0 pass, 1 fail, 2 unusable."""
    from ..outputs import OutputError, check_writable

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
        if use_judge or allow_settings_mismatch:
            from dataclasses import replace

            settings = replace(settings, use_judge=use_judge, allow_settings_mismatch=allow_settings_mismatch)
        result = evaluate_diff_only(settings) if diff_only else evaluate(baseline, candidate, settings)
    except GateInputError as e:
        result = GateResult(code=UNUSABLE, line=f"UNUSABLE: {e}",
                            checks=(Check("gate input", None, str(e)),), details=e.details)
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
