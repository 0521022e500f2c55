"""Compare finished runs on the same items: accuracy, paired tests, reasoning length, sweeps.

`evalsuite compare RUN_A RUN_B [RUN_C ...]` prints, in order: the item check, accuracy with
Wilson intervals and an exact McNemar test of each run against the first, per-subset
deltas, the reasoning-length table (tokens, thinking share, speed, time-to-solution) and a
one-line verdict. `--sweep KEY` adds one table of all runs in the order of a setting.


The rooms: ../run_stats.py (one run's figures), ../paired.py (each run against the first),
sweep.py (--sweep KEY); here, the items the runs share, the comparison assembled from
those, and its one-line verdict. tables.py and ../plots.py draw it.

Reads run folders only (docs/records.md); never calls an endpoint. See docs/compare.md.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from ...store import Run, bulky, load_run
from ..paired import Paired, paired
from ..run_stats import TIME_PER_ITEM, RunStats, decode_source, paired_speed, paired_tokens, run_stats

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
    # runs[1:] each against runs[0], paired by item: (time per item, decode speed) run_stats.PairedRatio or None
    speed: tuple[tuple[Any, Any], ...] = ()
    # runs[1:] each against runs[0]: completion tokens per item, paired (run_stats.PairedRatio or None):
    # a quant that writes longer answers says so with its interval (docs/compare.md)
    tokens: tuple[Any, ...] = ()

    @property
    def subset_names(self) -> list[str]:
        return sorted({s.subset for r in self.runs for s in r.subsets})

    def verdict(self) -> str:
        return verdict_line(self)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for run, data in zip(self.runs, out["runs"]):
            data.update(accuracy=run.accuracy, ci95=list(run.ci95), time_per_correct=run.time_per_correct)
            data["tokens"].pop("completion_tokens", None)
        for pair, data in zip(self.pairs, out["pairs"]):
            data["delta_pp"] = pair.delta_pp
        out["speed"] = [{"run": run.name, "time_per_item": None if t is None else t.to_dict(),
                         "decode_speed": None if d is None else d.to_dict()}
                        for run, (t, d) in zip(self.runs[1:], self.speed)]
        out["tokens_per_item"] = [{"run": run.name, "ratio": None if t is None else t.to_dict()}
                                  for run, t in zip(self.runs[1:], self.tokens)]
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
    # one decode source for every run, as one time source: runs compared are timed alike
    decode_from = decode_source([[r.by_id[i] for i in alignment.ids] for r in runs])
    stats = tuple(run_stats(r, alignment.ids, n, decode_from=decode_from) for r, n in zip(runs, names))
    if len({s.tokens.tts_source for s in stats}) > 1:
        # one run timed by its server, another by the client: time them all by the client
        stats = tuple(run_stats(r, alignment.ids, n, server_time=False, decode_from=decode_from)
                      for r, n in zip(runs, names))
    pairs = tuple(paired(runs[0], r, alignment.ids, names[0], n) for r, n in zip(runs[1:], names[1:]))
    source = stats[0].tokens.tts_source   # one source for every run (above)
    speed = tuple(paired_speed(runs[0].by_id, r.by_id, alignment.ids, source, alpha, decode_from) for r in runs[1:])
    tokens = tuple(paired_tokens(runs[0].by_id, r.by_id, alignment.ids, alpha) for r in runs[1:])
    return Comparison(alignment=alignment, runs=stats, pairs=pairs, alpha=alpha,
                      settings=settings_against_first(runs, names), speed=speed, tokens=tokens)


def settings_against_first(runs: Sequence[Run], names: Sequence[str]) -> tuple[Any, ...]:
    """How each later run's settings differ from the first's (the gate's rules: docs/gate.md)."""
    from ..gate.settings import settings_differences

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


def speed_words(cmp: Comparison, index: int) -> str | None:
    """Run index+1 against the first on speed, paired by item (run_stats.paired_speed): "takes
    ×0.74 [0.70, 0.79] the time per item (faster, p=…)" only when the paired test says so, else
    "no significant difference"; the decode rate is named only when it differs significantly (a
    decode rate alone misleads, so never without the time per item), and the line says what
    time per item is."""
    time, decode = cmp.speed[index] if index < len(cmp.speed) else (None, None)
    if time is None:
        return None
    a, b = cmp.runs[0], cmp.runs[index + 1]
    ta, tb = a.tokens, b.tokens
    longer = ta.out_mean and tb.out_mean is not None and abs(tb.out_mean / ta.out_mean - 1) >= 0.01
    if time.low == time.high == time.ratio == 1.0 and not longer and (decode is None or not decode.significant):
        return None   # every item took exactly as long, as many tokens: nothing worth a word
    if time.significant:
        pace = "slower" if time.ratio > 1 else "faster"
        words = f"{b.name} takes {time.interval()} the time per item of {a.name} ({pace}, p={fmt_p(time.p)})"
    else:
        words = f"time per item: no significant difference ({time.interval()}, p={fmt_p(time.p)})"
    if decode is not None and decode.significant:
        change = decode.ratio - 1
        # "although" when the decode rate points one way and the time per item the other
        against = time.significant and (decode.ratio > 1) == (time.ratio > 1)
        words += (f"{', although it' if against else '; it'} decodes {abs(change) * 100:.0f}% "
                  f"{'faster' if change >= 0 else 'slower'} ({decode.interval()}, p={fmt_p(decode.p)})")
    if longer:
        words += f"{' and' if decode is not None and decode.significant else '; it'} writes " \
                 f"{fmt_ratio(tb.out_mean / ta.out_mean)} the tokens (mean)"
    return (f"{words} [paired over {time.n} items: geometric mean of per-item ratios, {100 * (1 - time.alpha):g}% "
            f"interval, paired t-test on log ratios; time per item = {TIME_PER_ITEM[ta.tts_source]}]")


def verdict_line(cmp: Comparison) -> str:
    """One line in words: for each run against the first, better / worse / no detectable
    difference (exact McNemar at alpha), plus time-to-solution when timings exist."""
    if not cmp.pairs:
        run = cmp.runs[0]
        return f"{run.name}: {fmt_pct(run.accuracy)} on {run.graded} items (one run, nothing to compare)"
    parts = []
    for index, pair in enumerate(cmp.pairs):
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
        speed = speed_words(cmp, index)
        if speed:
            sentence += f"; {speed}"
        parts.append(sentence)
    return "; ".join(parts)
