"""A loaded run folder: its manifest and last record per id, slim (token streams stay on disk
until asked for, one item at a time)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable

from .layout import RECORDS, TOKEN_FIELD, RunFolderError, _read, read_manifest, record_key, sample_key
from .token_files import TokenStreams


@dataclass
class Run:
    path: Path
    manifest: dict[str, Any]
    records: list[dict[str, Any]]   # last record per id, in first-seen order; no token logprobs
    _inline: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)
    _tokens: "TokenStreams | None" = field(default=None, repr=False)

    @cached_property
    def by_id(self) -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in self.records}

    @property
    def name(self) -> str:
        return self.manifest.get("label") or self.path.name

    @property
    def tokens(self) -> "TokenStreams":
        if self._tokens is None:
            self._tokens = TokenStreams(self.path, {record_key(r): r.get(TOKEN_FIELD) for r in self.records}, self._inline)
        return self._tokens

    def logprobs(self, record: dict[str, Any]) -> list[dict[str, Any]] | None:
        """One item's token entries as docs/records.md lists them; None when none were kept."""
        if record.get(TOKEN_FIELD) is None:
            return None
        return self.tokens.entries(record_key(record))

    def with_logprobs(self, record: dict[str, Any]) -> dict[str, Any]:
        """A copy of the record with its `logprobs` read from the side file (one item at a time:
        memory stays flat however many items are walked)."""
        return dict(record, logprobs=self.logprobs(record))


def load_run(run_dir: str | os.PathLike, drop: Iterable[str] = ()) -> Run:
    """The manifest and the last record per id, slim (token logprobs stay on disk: see
    `Run.with_logprobs`). Reads records.jsonl line by line."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunFolderError(f"no run folder at {run_dir}")
    manifest = read_manifest(run_dir)
    latest, inline = _read(run_dir / RECORDS, drop)
    return Run(run_dir, manifest, list(latest.values()), inline)


def finish_pending(run: Run) -> str | None:
    """Why a run folder is not finished although every planned item is recorded (the process
    died in its finishing step), or None."""
    planned = run.manifest.get("item_ids") or []
    if run.manifest.get("status") in ("finished",) or not planned:
        return None
    recorded = {record_key(r) for r in run.records}
    samples = int(run.manifest.get("samples") or 1)
    if all(sample_key(i, j) in recorded for i in planned for j in range(samples)):
        return (f"every item is recorded but the run's finishing step has not completed (status "
                f"{run.manifest.get('status')!r}); unless a process is still finishing it, the run command "
                f"with `--resume {run.path}` finishes it without asking anything")
    return None
