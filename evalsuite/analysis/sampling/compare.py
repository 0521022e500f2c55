"""`compare` and `gate` on sampled runs (`run --samples N`): paired per item on success rates.

gate/decide.py (evaluate) and compare/tables.py (compare_main) hand a pair of runs here when either is sampled
(`handles`); a sampled run against a greedy one is refused with the reason. The estimators and
the test are in estimators.py and docs/sampling.md.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence, TextIO

from ..text_table import render_table
from .estimators import (ItemSamples, describe_run, figures, items_of, ks_for, paired_rates, refuse_mixed,
                       samples_of, setting_notes, is_sampled)


def handles(runs: Sequence[Any]) -> bool:
    """Whether any of these loaded runs is sampled (then this module decides, or refuses)."""
    return any(is_sampled(r.manifest, r.records) for r in runs)


def _items(run: Any) -> dict[str, ItemSamples]:
    return {it.id: it for it in items_of(run.records)}


def check_pair(base: Any, cand: Any, name_a: str = "baseline", name_b: str = "candidate") -> list[str]:
    """Raises ValueError when the two runs cannot be paired; returns notes otherwise."""
    mixed = refuse_mixed(f"the {name_a} ({base.path})", base.manifest, base.records,
                         f"the {name_b} ({cand.path})", cand.manifest, cand.records)
    if mixed:
        raise ValueError(mixed)
    if base.manifest.get("pack") != cand.manifest.get("pack"):
        raise ValueError(f"different packs: {name_a} {base.manifest.get('pack')!r} vs {name_b} "
                         f"{cand.manifest.get('pack')!r}")
    fa = (base.manifest.get("dataset") or {}).get("fingerprint")
    fb = (cand.manifest.get("dataset") or {}).get("fingerprint")
    if not fa or not fb or fa != fb:
        raise ValueError(f"different items: {name_a} fingerprint {(fa or 'none')[:12]} vs {name_b} {(fb or 'none')[:12]} "
                         f"(run both on the same pack, subsets, seed and limit)")
    for name, run in ((name_a, base), (name_b, cand)):
        planned = run.manifest.get("item_ids") or []
        n = samples_of(run.manifest)
        have = {(r["id"], r.get("sample") or 0) for r in run.records}
        missing = sum((i, j) not in have for i in planned for j in range(n))
        if missing:
            raise ValueError(f"the {name} has no record for {missing} of its {len(planned) * n} answers "
                             f"(status {run.manifest.get('status', '?')}); finish it with --resume")
    return setting_notes(base.manifest, cand.manifest, name_a, name_b)


# ---------------------------------------------------------------------------- gate


def _pp(x: float) -> str:
    return f"{x:g}" if x == int(x) else f"{x:.2f}".rstrip("0")


def _p(p: float) -> str:
    return f"{p:.3g}" if p >= 0.001 else f"{p:.1e}"


def gate_sampled(base: Any, cand: Any, s: Any) -> tuple[bool, list[tuple[str, bool, str]], str, dict[str, Any]]:
    """gate.evaluate for two sampled runs (s: its GateSettings): fails when the candidate's mean
    per-item success rate is lower by more than --max-drop points AND the paired permutation test
    over items says the drop is significant at alpha; or when more of its answers errored than
    allowed. Returns (failed, checks as (name, passed, message), the line, details); raises
    ValueError for input the gate cannot judge."""
    check_pair(base, cand)
    ia, ib = _items(base), _items(cand)
    ids = [i for i in (base.manifest.get("item_ids") or ia) if i in ia and i in ib]
    pair = paired_rates(ia, ib, ids, s.alpha)
    if pair.n_items < s.min_items:
        raise ValueError(f"too few items: {pair.n_items} paired items ({pair.errors_excluded} with every sample "
                             f"errored in either run), min-items is {s.min_items}")
    from ..gate.power import sampled_power, sampled_underpowered

    # the same rule as a greedy gate's: a drop these items and samples cannot detect is refused
    pw = sampled_power(pair, s.alpha, s.max_drop)
    weak = sampled_underpowered(pw, s)
    if weak and not s.allow_underpowered:
        from ..gate.settings import GateInputError

        raise GateInputError(weak + " (add items or samples, raise --max-drop, or pass --allow-underpowered to run "
                                    "it anyway)", {"power": pw.to_dict() if pw else None, "underpowered": weak,
                                                   "n_pairs": pair.n_items, "sampled": pair.to_dict()})
    drop = -(pair.delta_pp or 0.0)
    over = drop > s.max_drop + 1e-9
    significant = s.alpha >= 1 or pair.p < s.alpha
    lo, hi = pair.ci95_pp
    ci = "" if lo is None else f" [{lo:+.1f}, {hi:+.1f}]"
    rates = (f"candidate {100 * (pair.mean_b or 0):.1f}% vs baseline {100 * (pair.mean_a or 0):.1f}% mean per-item "
             f"success rate on {pair.n_items} paired items ({describe_run(cand.manifest)}), Δ {-drop:+.1f} pp{ci}")
    test = f"paired permutation test over items p={_p(pair.p)}" + ("" if s.alpha >= 1 else f", α={s.alpha:g}")
    if over and significant:
        words = f"success rate dropped {drop:.1f} pp (> {_pp(s.max_drop)} pp) and significantly: {rates}; {test}"
        accuracy = ("success rate drop", False, words)
    elif over:
        words = (f"drop of {drop:.1f} pp exceeds {_pp(s.max_drop)} pp but is not significant (p={_p(pair.p)} >= "
                 f"α={s.alpha:g}): {rates}; {test}")
        accuracy = ("success rate drop", True, words)
    else:
        words = f"{rates} (max drop {_pp(s.max_drop)} pp); {test}"
        accuracy = ("success rate drop", True, words)
    ea, eb = _errors(base), _errors(cand)
    if s.max_errors is None:
        limit, rule = ea, "the baseline's"
    elif s.max_errors_percent:
        limit, rule = math.floor(s.max_errors * len(cand.records) / 100 + 1e-9), f"{_pp(s.max_errors)}% of {len(cand.records)}"
    else:
        limit, rule = int(s.max_errors), "--max-errors"
    errors_ok = eb <= limit
    error_words = (f"errored answers: candidate {eb} of {len(cand.records)}, baseline {ea}; "
                   f"{'<=' if errors_ok else '>'} {limit} allowed ({rule})")
    checks = [accuracy, ("errored answers", errors_ok, error_words)]
    if getattr(s, "diff", None) is not None:
        checks.append(distribution_check(Path(s.diff)))
    failed = [c for c in checks if c[1] is False]
    words_all = [c[2] for c in checks if c[1] is False] + [c[2] for c in checks if c[1] is not False]
    if weak:
        words_all.append("WARNING underpowered: " + weak)
    elif pw is not None and pw.mde_pp is not None:
        words_all.append(f"drop detectable with 80% power ~{pw.mde_pp:.2g} pp at α={s.alpha:g} ({pw.n_pairs} items × "
                         f"{pw.samples} samples; at best {pw.best_case_pp:.2g} pp)")
    if pair.moved:
        words_all.append("moved most: " + ", ".join(f"{m['id']} {m['baseline']}->{m['candidate']}" for m in pair.moved[:3]))
    # how the runs' settings differ is said by the gate itself (gate.check_settings), as for greedy runs
    line = ("FAIL: " if failed else "PASS: ") + "; ".join(words_all)
    details = {"sampled": pair.to_dict(), "n_pairs": pair.n_items, "n_items": len(ids), "delta_pp": pair.delta_pp,
               "p": pair.p, "errors_baseline": ea, "errors_candidate": eb, "underpowered": weak,
               "power": pw.to_dict() if pw is not None else None}
    return bool(failed), checks, line, details


def distribution_check(path: Path) -> tuple[str, bool, str]:
    """--diff with sampled runs: the JSON of `evalsuite diff` of two sampled runs; fails when its
    verdict is "differs"."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"diff JSON {path} cannot be read ({e})") from None
    if not isinstance(data, dict) or not data.get("sampled") or not isinstance(data.get("verdict"), str):
        raise ValueError(f"--diff {path} is not the JSON of `evalsuite diff` of two sampled runs (for sampled runs "
                         f"the diff tests the distribution of the answers)")
    verdict = data["verdict"]
    return ("same distribution", not verdict.startswith("differs"), f"distribution check ({path.name}): {verdict}")


def _errors(run: Any) -> int:
    return sum(1 for r in run.records if r.get("outcome") == "error")


# ---------------------------------------------------------------------------- compare


def compare_sampled(runs: Sequence[Any], alpha: float = 0.05) -> dict[str, Any]:
    """Each run's avg@N, pass@k, maj@N; each later run paired per item against the first."""
    first = runs[0]
    names = [r.name for r in runs]
    notes: list[str] = []
    for run, name in zip(runs[1:], names[1:]):
        notes += check_pair(first, run, names[0], name)
    from ..compare.comparison import settings_against_first, settings_lines

    notes += settings_lines(names, settings_against_first(runs, names))
    ks = ks_for(min(samples_of(r.manifest) for r in runs))
    per_items = [_items(r) for r in runs]
    out_runs = []
    for run, name, items in zip(runs, names, per_items):
        out_runs.append({"name": name, "path": str(run.path), "samples": samples_of(run.manifest),
                         "temperature": (run.manifest.get("decoding") or {}).get("temperature"),
                         **figures(list(items.values()), ks)})
    ids = [i for i in (first.manifest.get("item_ids") or per_items[0]) if all(i in its for its in per_items)]
    pairs = [dict(paired_rates(per_items[0], its, ids, alpha).to_dict(), run=name)
             for its, name in zip(per_items[1:], names[1:])]
    return {"sampled": True, "alpha": alpha, "ks": ks, "runs": out_runs, "pairs": pairs, "notes": notes}


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"




def format_compare_sampled(data: dict[str, Any]) -> str:
    ks = data["ks"]
    headers = ["run", "items", "N", "temp", "avg@N", "95% CI"] + [f"pass@{k}" for k in ks] + ["maj@N", "all/some/none"]
    rows = []
    for r in data["runs"]:
        lo, hi = r["avg_ci95"]
        wilson = (r.get("avg_ci_method") or "").startswith("Wilson")
        rows.append([r["name"], r["n_items"], r["samples"], r["temperature"], _pct(r["avg"]),
                     "n/a" if lo is None else f"[{100 * lo:.1f}, {100 * hi:.1f}]" + (" W" if wilson else "")]
                    + [_pct(r["pass_at_k"][str(k)]["estimate"]) for k in ks] + [_pct(r["maj"]["estimate"]),
                     f"{_pct(r['all_correct'])}/{_pct(r['some_correct'])}/{_pct(r['none_correct'])}"])
    lines = ["sampled runs: items are the unit (avg@N: mean per-item success rate, Student-t 95% interval over items, "
             "W: Wilson where every item is at 0 or every item at 1; pass@k unbiased)",
             render_table(headers, rows)]
    if data["pairs"]:
        lines.append("")
        headers = ["run vs first", "paired items", "Δ rate", "95% CI", "p (permutation)", "items moved",
                   "80%-power drop"]
        prow = []
        for p in data["pairs"]:
            lo, hi = p["ci95_pp"]
            prow.append([p["run"], p["n_items"], "n/a" if p["delta_pp"] is None else f"{p['delta_pp']:+.1f} pp",
                         "n/a" if lo is None else f"[{lo:+.1f}, {hi:+.1f}]", _p(p["p"]), p["n_moved"],
                         "n/a" if p["min_detectable_drop_pp"] is None else f"~{p['min_detectable_drop_pp']:.1f} pp"])
        lines.append(render_table(headers, prow))
        for p in data["pairs"]:
            if p["moved_most"]:
                lines.append(f"{p['run']}: items whose rate moved most: " + ", ".join(
                    f"{m['id']} {m['baseline']} -> {m['candidate']}" for m in p["moved_most"]))
        verdicts = []
        for p in data["pairs"]:
            sig = p["p"] < data["alpha"]
            verdicts.append(f"{p['run']}: " + (f"success rate {'up' if (p['delta_pp'] or 0) > 0 else 'down'} "
                                              f"{abs(p['delta_pp'] or 0):.1f} pp, significant at α={data['alpha']:g}"
                                              if sig else f"no significant change in success rate (p={_p(p['p'])})"))
        lines.append("verdict: " + "; ".join(verdicts))
    for note in data["notes"]:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def compare_sampled_main(runs: Sequence[Any], alpha: float, json_path: str | Path | None, out: TextIO,
                         err: TextIO, sweep_key: str | None = None, plots_dir: Any = None) -> int:
    if sweep_key or plots_dir:
        print("compare: --sweep and --plots are not available for sampled runs yet", file=err)
        return 2
    try:
        data = compare_sampled(runs, alpha)
    except ValueError as e:
        print(f"compare: {e}", file=err)
        return 2
    print(format_compare_sampled(data), file=out)
    if json_path is not None:
        Path(json_path).write_text(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n", encoding="utf-8")
    return 0
