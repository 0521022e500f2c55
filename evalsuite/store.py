"""The run folder: manifest.json, records.jsonl (append + flush), records.parquet, summary.json.

See docs/records.md for the contract. Writers append one line per finished item and
flush it; readers tolerate a torn last line and take the last record per id.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"
PARQUET = "records.parquet"
SUMMARY = "summary.json"
RECORD_SCHEMA = 1
MANIFEST_SCHEMA = 1


class RunFolderError(ValueError):
    """A run folder that is missing, unreadable or corrupt; the message names the file."""


@dataclass
class Run:
    path: Path
    manifest: dict[str, Any]
    records: list[dict[str, Any]]   # last record per id, in first-seen order

    @property
    def by_id(self) -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in self.records}

    @property
    def name(self) -> str:
        return self.manifest.get("label") or self.path.name


def iter_record_lines(path: Path) -> Iterator[dict[str, Any]]:
    """Every record line in order. A torn last line (crash mid-write) is skipped;
    an unparseable line anywhere else is an error naming the line."""
    if not path.exists():
        return
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    # a file that ends with "\n" gives a last empty element
    last_index = len(lines) - 1
    while last_index >= 0 and not lines[last_index].strip():
        last_index -= 1
    for n, raw in enumerate(lines[: last_index + 1]):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as e:
            if n == last_index:
                return  # torn last line: the item will be asked again on resume
            raise RunFolderError(f"{path}: line {n + 1} is not valid JSON ({e})") from None
        if not isinstance(record, dict) or "id" not in record:
            raise RunFolderError(f"{path}: line {n + 1} is not a record (no 'id')")
        yield record


def read_records(path: Path) -> list[dict[str, Any]]:
    """The last record per id, in the order ids first appeared."""
    latest: dict[str, dict[str, Any]] = {}
    for record in iter_record_lines(path):
        latest[record["id"]] = record
    return list(latest.values())


def read_manifest(run_dir: Path) -> dict[str, Any]:
    path = Path(run_dir) / MANIFEST
    if not path.exists():
        raise RunFolderError(f"{run_dir} is not a run folder: {MANIFEST} is missing")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise RunFolderError(f"{path} is not valid JSON ({e})") from None


def load_run(run_dir: str | os.PathLike) -> Run:
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunFolderError(f"no run folder at {run_dir}")
    manifest = read_manifest(run_dir)
    return Run(run_dir, manifest, read_records(run_dir / RECORDS))


def write_json_atomic(path: Path, data: Any) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=2, default=str)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _is_record(raw: bytes) -> bool:
    try:
        record = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return isinstance(record, dict) and "id" in record


class RecordWriter:
    """Appends records to records.jsonl, one line each, flushed as it is written."""

    def __init__(self, path: Path, fsync: bool = False):
        self.path = Path(path)
        self._repair_torn_tail()
        self._f = open(self.path, "ab")
        self._fsync = fsync

    def _repair_torn_tail(self) -> None:
        # After a crash the last line may be torn (no newline). Cut it off so the next
        # record starts on its own line; its item had no complete record and is re-asked.
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with open(self.path, "rb+") as f:
            data = f.read()
            if data.endswith(b"\n"):
                return
            cut = data.rfind(b"\n") + 1
            if _is_record(data[cut:]):
                # the crash came between the record and its newline: the record is complete and
                # readers already counted it as done, so keep it (cutting it would lose the item)
                f.seek(0, os.SEEK_END)
                f.write(b"\n")
                return
            f.truncate(cut)

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=str).encode("utf-8") + b"\n"
        self._f.write(line)
        self._f.flush()
        if self._fsync:
            os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()


def compact_records(run_dir: Path, order: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Rewrite records.jsonl atomically with exactly one record per id (the last),
    in `order` when given (ids not in it keep their place at the end)."""
    path = Path(run_dir) / RECORDS
    records = read_records(path)
    if order is not None:
        rank = {i: n for n, i in enumerate(order)}
        records.sort(key=lambda r: rank.get(r["id"], len(rank)))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False, default=str).encode("utf-8") + b"\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return records


NESTED_FIELDS = ("messages", "verdict", "error", "usage", "timing", "server_timings", "logprobs")


def write_parquet(run_dir: Path, records: list[dict[str, Any]]) -> None:
    """records.parquet: flat columns, nested fields as JSON strings (stable schema)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = []
    for r in records:
        row = {}
        for k, v in r.items():
            row[k] = json.dumps(v, ensure_ascii=False, default=str) if k in NESTED_FIELDS or isinstance(v, (dict, list)) else v
        usage = r.get("usage") or {}
        timing = r.get("timing") or {}
        row["prompt_tokens"] = usage.get("prompt_tokens")
        row["completion_tokens"] = usage.get("completion_tokens")
        row["reasoning_tokens"] = usage.get("reasoning_tokens")
        row["ttft_s"] = timing.get("ttft_s")
        row["total_s"] = timing.get("total_s")
        rows.append(row)
    columns = sorted({k for row in rows for k in row})
    table = pa.table({c: [None if row.get(c) is None else (str(row[c]) if not isinstance(row[c], (int, float, bool)) else row[c]) for row in rows] for c in columns}) if rows else pa.table({})
    pq.write_table(table, Path(run_dir) / PARQUET)
