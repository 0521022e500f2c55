"""Re-grade a stored run with the current graders: no endpoint, the run folder is not changed.

Each record's `answer` (the response with reasoning removed, exactly what the grader saw)
is graded again by the pack's own `grade(item, answer)`, and every verdict whose decision
(`equal`) or extracted answer differs from the stored one is listed.

Items: the pack's items are loaded again when a data folder is known (the `data_dir` given
here, else the manifest's `load.data_dir`). Otherwise they are rebuilt from the record: id,
subset, gold, and the fields `item_fields` adds to every record (the option texts, and the
item's small metadata such as kind, lang and a preset's pack), so choice packs, AGIEval's
cloze items and presets grade exactly as in the run. A record from an older evalsuite without
those fields is refused, naming --data-dir, when its item needs them.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..store import load_run
from ..store.record import MAX_META_BYTES, META_SKIPPED, item_fields, verdict_outcome  # noqa: F401  (the record's own fields)

CHOICE_GOLD = frozenset("ABCDEFGHIJ")
EQUAL_WORDS = {True: "equal to the gold", False: "not equal", None: "undecided"}   # a verdict's `equal`


def item_from_record(record: dict[str, Any], pack_name: str) -> Any:
    """The item as the run graded it, rebuilt from its record; ValueError when the record is
    too old to hold what its grading needs."""
    from evalsuite.tasks import Item

    gold = str(record.get("gold", ""))
    if "choices" not in record or "item_meta" not in record:
        # a gold of option letters: the grader would lose its option-text matching (an answer
        # naming the option's text); other items that need metadata fail in grading (KeyError)
        if gold and len(gold) <= len(CHOICE_GOLD) and set(gold) <= CHOICE_GOLD:
            raise ValueError(f"item {record['id']}: the record holds no option texts or item metadata (recorded by an "
                             f"older evalsuite), which {pack_name} needs to grade; pass --data-dir with the pack's data")
        return Item(id=record["id"], subset=record.get("subset", ""), question="", gold=gold)
    return Item(id=record["id"], subset=record.get("subset", ""), question="", gold=gold,
                choices=tuple(record.get("choices") or ()), meta=dict(record.get("item_meta") or {}))


@dataclass(frozen=True)
class ChangedVerdict:
    id: str
    gold: str
    old_equal: bool | None
    new_equal: bool | None
    old_extracted: str | None
    new_extracted: str | None
    old_method: str | None
    new_method: str
    reason: str
    old_outcome: str | None = None      # the record's outcome, in `run`'s words
    new_outcome: str | None = None      # the same rule applied to the new verdict

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_items(pack: Any, manifest: dict[str, Any], data_dir: str | os.PathLike | None) -> dict[str, Any]:
    """The run's items by id from the pack's data, or {} when no data folder is known."""
    from evalsuite.tasks import LoadOptions

    load = manifest.get("load") or {}
    folder = data_dir or load.get("data_dir")
    if not folder or manifest.get("pack_spec"):   # a user's file: its records hold what grading needs
        return {}
    opts = LoadOptions(data_dir=Path(folder), subsets=tuple(load.get("subsets") or ()),
                       fewshot=int(load.get("fewshot") or 0), per_subset=load.get("per_subset"),
                       seed=int(load.get("seed") or 0), skip_bad_rows=True)
    return {item.id: item for item in pack.load(opts)}


def regrade(run_dir: str | os.PathLike, data_dir: str | os.PathLike | None = None) -> list[ChangedVerdict]:
    """Every verdict of the run that the current graders decide differently."""
    from evalsuite.tasks import pack_for_manifest

    run = load_run(run_dir)
    pack_name = run.manifest.get("pack")
    if not pack_name:
        raise ValueError(f"{Path(run_dir) / 'manifest.json'} names no pack")
    pack = pack_for_manifest(run.manifest)   # a file pack from the spec its manifest kept
    items = load_items(pack, run.manifest, data_dir)
    changed: list[ChangedVerdict] = []
    for record in run.records:
        answer = record.get("answer")
        if record.get("outcome") == "error" or answer is None:
            continue
        item = items.get(record["id"]) or item_from_record(record, pack_name)
        try:
            new = pack.grade(item, answer)
        except KeyError as e:
            raise ValueError(f"item {record['id']}: grading needs {e} which neither the record nor a data folder "
                             f"gave; pass --data-dir with the pack's data") from None
        old = record.get("verdict") or {}
        if old.get("equal") != new.equal or old.get("extracted") != new.extracted:
            changed.append(ChangedVerdict(record["id"], item.gold, old.get("equal"), new.equal,
                                          old.get("extracted"), new.extracted, old.get("method"),
                                          new.method, new.reason, record.get("outcome"),
                                          verdict_outcome(new.equal, new.extracted, record.get("finish_reason"))))
    return changed


def summarise(changes: list[ChangedVerdict], n_records: int) -> str:
    now_right = sum(c.new_equal is True and c.old_equal is not True for c in changes)
    now_wrong = sum(c.old_equal is True and c.new_equal is not True for c in changes)
    return (f"{len(changes)} of {n_records} verdicts changed: {now_right} now correct, "
            f"{now_wrong} no longer correct, {len(changes) - now_right - now_wrong} other")


def regrade_main(run_dir: Path, data_dir: Path | None = None, json_out: Path | None = None, judge: Any = None,
                 echo: Any = print) -> int:
    """The `evalsuite regrade` command: every changed verdict, then the count; `judge(run_dir,
    changes)` (evalsuite.judge.regrade_judge, with --judge-endpoint) adds the judge's verdicts,
    printed beside the rule verdicts. 2 when the folder, the data or the judge is unusable."""
    import json
    import sys

    from ..errors import UsageError
    from ..store import RunFolderError
    from .outputs import OutputError, check_writable

    try:
        if json_out:
            check_writable(json_out, "--json")
        n_records = len(load_run(run_dir).records)
        changes = regrade(run_dir, data_dir=data_dir)
    except (RunFolderError, OutputError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for c in changes:
        moved = f"{c.old_outcome} -> {c.new_outcome}"
        if c.old_outcome == c.new_outcome:   # the same word, another verdict: say which
            moved += f" ({EQUAL_WORDS[c.old_equal]} -> {EQUAL_WORDS[c.new_equal]})"
        echo(f"{c.id}\t{moved}\t{c.old_extracted!r} -> {c.new_extracted!r}\t[{c.new_method}] {c.reason}")
    echo(summarise(changes, n_records))
    judged = None
    if judge is not None:
        try:
            judged = judge(run_dir, changes)
        except UsageError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        for j in judged:
            echo(f"judge\t{j['id']}\trules: {j['rule_outcome']}\tjudge: {j['verdict']}{' (cached)' if j['cached'] else ''}\t{j['reason']}")
        echo(f"judge: {len(judged)} item(s), {sum(j['cached'] for j in judged)} from the cache; "
             f"{sum(j['verdict'] == 'correct' for j in judged)} correct, "
             f"{sum(j['verdict'] == 'incorrect' for j in judged)} incorrect, "
             f"{sum(j['verdict'] == 'undecided' for j in judged)} undecided (beside the rule verdicts, not over them)")
    if json_out:
        data = [c.to_dict() for c in changes]
        Path(json_out).write_text(json.dumps(data if judged is None else {"changes": data, "judge": judged},
                                             ensure_ascii=False, indent=2), encoding="utf-8")
    return 0
