"""Re-grade a stored run with the current graders: no endpoint, the run folder is not changed.

Each record's `answer` (the response with reasoning removed, exactly what the grader saw)
is graded again by the pack's own `grade(item, answer)`, and every verdict whose decision
(`equal`) or extracted answer differs from the stored one is listed.

Items: the pack's items are loaded again when a data folder is known (the `data_dir` given
here, else the manifest's `load.data_dir`), so packs that need more than the gold (option
texts for choice packs) grade exactly as in the run. Otherwise items are rebuilt from the
record fields id / subset / gold, which is all that gsm8k and math500 need.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..store import load_run


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_items(pack: Any, manifest: dict[str, Any], data_dir: str | os.PathLike | None) -> dict[str, Any]:
    """The run's items by id from the pack's data, or {} when no data folder is known."""
    from evalsuite.tasks import LoadOptions

    load = manifest.get("load") or {}
    folder = data_dir or load.get("data_dir")
    if not folder:
        return {}
    opts = LoadOptions(data_dir=Path(folder), subsets=tuple(load.get("subsets") or ()),
                       fewshot=int(load.get("fewshot") or 0), per_subset=load.get("per_subset"),
                       seed=int(load.get("seed") or 0), skip_bad_rows=True)
    return {item.id: item for item in pack.load(opts)}


def regrade(run_dir: str | os.PathLike, data_dir: str | os.PathLike | None = None) -> list[ChangedVerdict]:
    """Every verdict of the run that the current graders decide differently."""
    from evalsuite.tasks import Item, get_pack

    run = load_run(run_dir)
    pack_name = run.manifest.get("pack")
    if not pack_name:
        raise ValueError(f"{Path(run_dir) / 'manifest.json'} names no pack")
    pack = get_pack(pack_name)
    items = load_items(pack, run.manifest, data_dir)
    changed: list[ChangedVerdict] = []
    for record in run.records:
        answer = record.get("answer")
        if record.get("outcome") == "error" or answer is None:
            continue
        item = items.get(record["id"]) or Item(id=record["id"], subset=record.get("subset", ""),
                                               question="", gold=str(record.get("gold", "")))
        new = pack.grade(item, answer)
        old = record.get("verdict") or {}
        if old.get("equal") != new.equal or old.get("extracted") != new.extracted:
            changed.append(ChangedVerdict(record["id"], item.gold, old.get("equal"), new.equal,
                                          old.get("extracted"), new.extracted, old.get("method"),
                                          new.method, new.reason))
    return changed


def summarise(changes: list[ChangedVerdict], n_records: int) -> str:
    now_right = sum(c.new_equal is True and c.old_equal is not True for c in changes)
    now_wrong = sum(c.old_equal is True and c.new_equal is not True for c in changes)
    return (f"{len(changes)} of {n_records} verdicts changed: {now_right} now correct, "
            f"{now_wrong} no longer correct, {len(changes) - now_right - now_wrong} other")
