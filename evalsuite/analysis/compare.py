"""Compare finished runs on the same items: accuracy, paired tests, reasoning length, sweeps.

`evalsuite compare RUN_A RUN_B [RUN_C ...]` prints, in order: the item check, accuracy with
Wilson intervals and an exact McNemar test of each run against the first, per-subset
deltas, the reasoning-length table (tokens, thinking share, speed, time-to-solution) and a
one-line verdict. `--sweep KEY` adds one table of all runs in the order of a setting.


The rooms: run_stats.py (one run's figures), paired.py (each run against the first),
compare_sweep.py (--sweep KEY); here, the items the runs share, the comparison assembled from
those, and its one-line verdict. compare_tables.py and plots.py draw it.

Reads run folders only (docs/records.md); never calls an endpoint. See docs/compare.md.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from ..store import Run, bulky, load_run
from .paired import Paired, paired
from .run_stats import RunStats, run_stats

class CompareError(ValueError):
    """Runs that cannot be compared (no items in common, a sweep key a run lacks, ...)."""


# ---------------------------------------------------------------------------- items


@dataclass(frozen=True)
class Alignment:
    """Which items the comparison uses, and why not all of them."""

    ids: tuple[str, ...]            # compared ids, in the first run's order
    same_items: bool                # one fingerprint and every run has a record for every item
    notes: tuple[str, ...] = ()     # sentences saying what was left out and why


def _fingerprint(run: Run) -> str | None:
    return (run.manifest.get("dataset") or {}).get("fingerprint")


def align(runs: Sequence[Run]) -> Alignment:
    """The ids every run has a record for. Different fingerprints (different item sets)
    give their intersection, and a note says so; so do missing records (an unfinished run)
    and ids whose gold answer differs between runs (not the same question after all)."""
    if not runs:
        raise CompareError("no runs to compare")
    notes: list[str] = []
    fingerprints = [_fingerprint(r) for r in runs]
    same_fingerprint = None not in fingerprints and len(set(fingerprints)) == 1
    if not same_fingerprint:
        described = ", ".join(f"{r.name}: {(f or 'none')[:12]} ({len(r.records)} records)"
                              for r, f in zip(runs, fingerprints))
        notes.append(f"different item sets (fingerprints {described})")
    by_id = [r.by_id for r in runs]
    common = [i for i in by_id[0] if all(i in ids for ids in by_id[1:])]
    if same_fingerprint:
        for run, ids in zip(runs, by_id):
            expected = run.manifest.get("item_ids") or list(ids)
            missing = sum(1 for i in expected if i not in ids)
            if missing:
                notes.append(f"{run.name} has no record for {missing} of its {len(expected)} items "
                             f"(status {run.manifest.get('status', '?')})")
    gold_differs = [i for i in common if len({str(b[i].get("gold")) for b in by_id}) > 1]
    if gold_differs:
        notes.append(f"{len(gold_differs)} shared ids have different gold answers and are left out "
                     f"(e.g. {gold_differs[0]})")
        skip = set(gold_differs)
        common = [i for i in common if i not in skip]
    if not common:
        raise CompareError("the runs have no items in common: " + "; ".join(notes or ["no records"]))
    if notes and (not same_fingerprint or len(common) < max(len(b) for b in by_id)):
        notes.append(f"comparing the {len(common)} items all runs share")
    return Alignment(ids=tuple(common), same_items=same_fingerprint and not notes, notes=tuple(notes))


# ---------------------------------------------------------------------------- the comparison


@dataclass(frozen=True)
class Comparison:
    alignment: Alignment
    runs: tuple[RunStats, ...]
    pairs: tuple[Paired, ...]           # runs[1:] each against runs[0]
    alpha: float
    settings: tuple[Any, ...] = ()      # gate_settings.SettingsDifferences of runs[1:] each against runs[0]

    @property
    def subset_names(self) -> list[str]:
        return sorted({s.subset for r in self.runs for s in r.subsets})

    def verdict(self) -> str:
        return verdict_line(self)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for run, data in zip(self.runs, out["runs"]):
            data.update(accuracy=run.accuracy, ci95=list(run.ci95))
            data["tokens"].pop("completion_tokens", None)
        for pair, data in zip(self.pairs, out["pairs"]):
            data["delta_pp"] = pair.delta_pp
        out["verdict"] = self.verdict()
        return out


def unique_names(runs: Sequence[Run]) -> list[str]:
    """Run names: the label, else the folder name. Runs that would share a name are told apart by
    the end of their folder paths, as far back as they differ (`lossless1/candidate` and
    `lossless2/candidate`: `lossless` labels its two runs only "baseline" and "candidate"),
    after the label when the label is not the folder name."""
    names = [run.name for run in runs]
    out = list(names)
    for name in set(names):
        group = [i for i, n in enumerate(names) if n == name]
        if len(group) < 2:
            continue
        parts = [Path(runs[i].path).resolve().parts for i in group]
        depth = 1
        while depth < max(map(len, parts)) and len({p[-depth:] for p in parts}) < len(parts):
            depth += 1
        for i, p in zip(group, parts):
            where = "/".join(p[-depth:])
            out[i] = where if name == Path(runs[i].path).name else f"{name} ({where})"
    for i, name in enumerate(out):   # the same folder given twice
        if out.index(name) != i:
            out[i] = f"{name} #{i + 1}"
    return out


def compare_runs(runs: Sequence[Run], alpha: float = 0.05) -> Comparison:
    alignment = align(runs)
    names = unique_names(runs)
    stats = tuple(run_stats(r, alignment.ids, n) for r, n in zip(runs, names))
    if len({s.tokens.tts_source for s in stats}) > 1:
        # one run timed by its server, another by the client: time them all by the client
        stats = tuple(run_stats(r, alignment.ids, n, server_time=False) for r, n in zip(runs, names))
    pairs = tuple(paired(runs[0], r, alignment.ids, names[0], n) for r, n in zip(runs[1:], names[1:]))
    return Comparison(alignment=alignment, runs=stats, pairs=pairs, alpha=alpha,
                      settings=settings_against_first(runs, names))


def settings_against_first(runs: Sequence[Run], names: Sequence[str]) -> tuple[Any, ...]:
    """How each later run's settings differ from the first's (the gate's rules: docs/gate.md)."""
    from .gate_settings import settings_differences

    return tuple(settings_differences(runs[0].manifest, r.manifest, names[0], n) for r, n in zip(runs[1:], names[1:]))


def settings_lines(names: Sequence[str], diffs: Sequence[Any]) -> list[str]:
    """One line per later run whose settings differ from the first's: what changes the answers
    (the comparison then measures that too) and what the comparison is across."""
    lines = []
    for name, d in zip(names[1:], diffs):
        if d.refused:
            lines.append(f"{name} vs {names[0]}: made with settings that change the answers, so the comparison "
                         f"measures them too: " + "; ".join(d.refused))
        if d.shown:
            lines.append(f"{name} vs {names[0]}: compared across " + "; ".join(d.shown))
    return lines


# What a comparison never reads; `server_timings` is kept: time/item comes from it (token_stats).
COMPARE_DROP = bulky(keep=("answer", "reasoning", "server_timings"))


def load_runs(paths: Sequence[str | Path], drop: Sequence[str] = ()) -> list[Run]:
    """The runs `compare` and `report` read, loaded alike so that both time them alike
    (`drop`: bulky fields the caller does not show, never `server_timings`)."""
    return [load_run(p, drop=tuple(drop)) if drop else load_run(p) for p in paths]


# ---------------------------------------------------------------------------- words


def fmt_pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{100 * x:.{digits}f}%"


def fmt_num(x: float | None, digits: int = 1) -> str:
    if x is None:
        return "n/a"
    return f"{x:,.{digits}f}"


def fmt_p(p: float) -> str:
    return f"{p:.3g}" if p >= 0.001 else f"{p:.1e}"


def fmt_ratio(x: float | None) -> str:
    return "n/a" if x is None else f"×{x:.2f}"


def speed_words(a: RunStats, b: RunStats) -> str | None:
    """"B decodes 23% faster but writes ×2.70 the tokens: ×2.20 the time to solve" — the
    decode rate alone misleads, so it is never said without the time to solution."""
    ta, tb = a.tokens, b.tokens
    if not (ta.tts_total and tb.tts_total):
        return None
    time_ratio = (tb.tts_mean or 0) / ta.tts_mean if ta.tts_mean else None
    if time_ratio is None:
        return None
    token_ratio = tb.out_mean / ta.out_mean if ta.out_mean and tb.out_mean is not None else None
    decode_ratio = tb.decode_tps / ta.decode_tps if ta.decode_tps and tb.decode_tps else None
    if all(x is None or abs(x - 1) < 0.01 for x in (time_ratio, token_ratio, decode_ratio)):
        return None   # same speed, same length: nothing worth a word
    parts = []
    decode_differs = decode_ratio is not None and abs(decode_ratio - 1) >= 0.01
    if decode_differs:
        change = decode_ratio - 1
        parts.append(f"decodes {abs(change) * 100:.0f}% {'faster' if change >= 0 else 'slower'}")
    if token_ratio is not None:
        parts.append(f"writes {fmt_ratio(token_ratio)} the tokens")
    pace = "slower" if time_ratio > 1 else "faster"
    # "but" when the decode rate points one way and the time to solve the other
    conflict = decode_differs and (decode_ratio > 1) == (time_ratio > 1)
    head = f"{b.name} " + ((" but " if conflict else " and ").join(parts) if parts else "")
    return f"{head}: {fmt_ratio(time_ratio)} the time per item ({pace} to solve)".replace(" :", ":")


def verdict_line(cmp: Comparison) -> str:
    """One line in words: for each run against the first, better / worse / no detectable
    difference (exact McNemar at alpha), plus time-to-solution when timings exist."""
    if not cmp.pairs:
        run = cmp.runs[0]
        return f"{run.name}: {fmt_pct(run.accuracy)} on {run.graded} items (one run, nothing to compare)"
    parts = []
    for pair, b in zip(cmp.pairs, cmp.runs[1:]):
        m = pair.mcnemar
        delta = pair.delta_pp
        if m.n_pairs == 0:
            parts.append(f"{pair.b} vs {pair.a}: nothing to compare (every item errored in one run or the other)")
            continue
        stats = (f"{delta:+.1f} pp on {m.n_pairs} paired items, only {pair.a} right {m.b}, only {pair.b} right {m.c}, "
                 f"p={fmt_p(m.p)}" if delta is not None else "no paired items")
        if delta is not None and m.significant(cmp.alpha) and m.b != m.c:
            word = "worse than" if m.b > m.c else "better than"
            sentence = f"{pair.b} is {word} {pair.a} ({stats}; significant at α={cmp.alpha:g})"
        else:
            sentence = f"{pair.b} vs {pair.a}: no detectable difference ({stats}; not significant at α={cmp.alpha:g})"
        speed = speed_words(cmp.runs[0], b)
        if speed:
            sentence += f"; {speed}"
        parts.append(sentence)
    return "; ".join(parts)
