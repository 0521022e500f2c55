"""The whole contract between a task pack and the core: Item and Pack.

A pack is one file in tasks/ that ends with `PACK = Pack(...)`. It loads items, turns an
item into a prompt, and grades the answer text with evalsuite.graders. It never imports
the core (evalsuite.*), so the floors stay: graders <- tasks <- core.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..graders.verdict import Verdict


@dataclass(frozen=True)
class Item:
    """One question. `id` is stable across runs and machines ("<subset>/<index-in-file>")."""

    id: str
    subset: str
    question: str                  # the text the prompt template is filled with
    gold: str                      # the reference answer, as a string ("C", "AD", "18", "\\frac{1}{2}")
    choices: tuple[str, ...] = ()  # option texts for multiple choice, in letter order
    meta: Mapping[str, Any] = field(default_factory=dict)  # anything else the pack needs

    def fingerprint_fields(self) -> dict[str, Any]:
        return {"id": self.id, "subset": self.subset, "question": self.question,
                "gold": self.gold, "choices": list(self.choices)}


class BadDataError(ValueError):
    """A data file or row the pack cannot use; the message names the file and row."""


@dataclass(frozen=True)
class LoadOptions:
    data_dir: Path | None = None            # offline folder laid out like shared/data
    subsets: tuple[str, ...] = ()           # empty: all
    skip_bad_rows: bool = False
    fewshot: int = 0
    per_subset: int | None = None           # seeded stratified subsample
    seed: int = 0
    # with skip_bad_rows: each row a loader skipped, (where, why), appended by skip_row() (the
    # run says them and keeps them in its manifest; dataclasses.replace shares the list)
    skipped: list[tuple[str, str]] = field(default_factory=list, compare=False, repr=False)


def skip_row(opts: LoadOptions, where: str, why: str) -> None:
    """A bad row left out under --skip-bad-rows: noted, never silent."""
    opts.skipped.append((where, why))


@dataclass(frozen=True)
class Pack:
    name: str
    version: str
    description: str
    template: str                                       # hashed into the manifest
    load: Callable[[LoadOptions], list[Item]]
    prompt: Callable[[Item], list[dict[str, str]]]       # chat messages for this item
    grade: Callable[[Item, str], Verdict]                # answer text (reasoning removed) -> Verdict
    subsets: Sequence[str] = ()
    categories: Mapping[str, str] = field(default_factory=dict)  # subset -> category
    source: str = ""                                     # where the data comes from (hub id / files)
    count: int | None = None                             # items in the full split, for `evalsuite tasks`
    system: str | None = None
    max_tokens: int = 1024                               # default --max-tokens for this pack
    # grading may need the sympy worker (symbolic answers): the runner calls
    # evalsuite.graders.sandbox.prestart() when a run starts, so item one does not wait ~1.5 s
    needs_sympy: bool = False
    # the golds written with decimals are rounded values (physics, astronomy): grade() with
    # rounded_golds=True accepts an answer that rounds to the gold at its last place; maths stays exact
    rounded_golds: bool = False
    # a pack made from a user's file or hub dataset (tasks/file.py): everything that describes it
    # (fields, kind, template, the file's sha256), kept in the manifest so regrade can rebuild it
    spec: Mapping[str, Any] | None = None
    # what the pack reads under a data folder (`evalsuite tasks` says whether it is there);
    # () for a pack with no data files, None for one that does not say
    data_paths: tuple[str, ...] | None = None
    # those of data_paths the package carries a copy of (tasks/data/): read without a data folder
    bundled: tuple[str, ...] = ()

    def template_hash(self, fewshot: int = 0) -> str:
        return hashlib.sha256(f"{self.template}\x00fewshot={fewshot}".encode()).hexdigest()[:16]


def prompt_text(messages: Sequence[Mapping[str, str]]) -> str:
    """Plain text of chat messages, for `--api completions` and hashing."""
    return "\n\n".join(m["content"] for m in messages)


def default_data_dir(explicit: str | os.PathLike | None = None) -> Path | None:
    """--data-dir, else EVALSUITE_DATA_DIR, else None (the hub)."""
    value = explicit or os.environ.get("EVALSUITE_DATA_DIR")
    return Path(value) if value else None


def seeded_sample(ids: Sequence[str], n: int, seed: int) -> list[str]:
    """Choose n ids the same way on any machine and Python version.

    Ranks ids by sha256(seed:id) instead of random.sample, whose results are not promised
    to stay the same across Python versions.
    """
    ranked = sorted(ids, key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())
    return ranked[:n]


def dataset_fingerprint(items: Sequence[Item]) -> str:
    h = hashlib.sha256()
    for item in sorted(items, key=lambda i: i.id):
        h.update(json.dumps(item.fingerprint_fields(), ensure_ascii=False, sort_keys=True).encode())
        h.update(b"\n")
    return h.hexdigest()
