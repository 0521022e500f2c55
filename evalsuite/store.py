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


def read_records(path: Path, drop: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The last record per id, in the order ids first appeared. `drop` leaves out bulky
    fields (messages, logprobs ...) for analyses that do not need them."""
    drop = tuple(drop)
    latest: dict[str, dict[str, Any]] = {}
    for record in iter_record_lines(path):
        for key in drop:
            record.pop(key, None)
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


def compact_records(run_dir: Path, order: Iterable[str] | None = None) -> int:
    """Rewrite records.jsonl atomically with exactly one record per id (the last), in
    `order` when given (ids not in it follow in first-seen order). Streams: only each id's
    byte span is held, not the records. Returns the number of records."""
    path = Path(run_dir) / RECORDS
    spans: dict[str, tuple[int, int]] = {}
    offset = 0
    with open(path, "rb") as f:
        for raw in f:
            if raw.endswith(b"\n") and raw.strip():
                try:
                    record_id = json.loads(raw)["id"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    raise RunFolderError(f"{path}: the line at byte {offset} is not a record") from None
                spans[record_id] = (offset, len(raw))
            offset += len(raw)  # a torn last line (no newline) is left out
    ids = list(spans)
    if order is not None:
        rank = {i: n for n, i in enumerate(order)}
        ids.sort(key=lambda i: rank.get(i, len(rank)))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out, open(path, "rb") as src:
            for record_id in ids:
                start, length = spans[record_id]
                src.seek(start)
                out.write(src.read(length))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(ids)


NESTED_FIELDS = ("messages", "verdict", "error", "usage", "timing", "server_timings", "logprobs")
STRING_FIELDS = ("id", "subset", "gold", "prompt_sha256", "prompt", "answer", "reasoning", "reasoning_source",
                 "finish_reason", "extracted", "outcome", "endpoint", "model")
INT_FIELDS = ("schema", "attempts")
# flat copies of the figures analyses filter on most, so a parquet reader needs no JSON
DERIVED = {"prompt_tokens": ("usage", "int64"), "completion_tokens": ("usage", "int64"),
           "reasoning_tokens": ("usage", "int64"), "ttft_s": ("timing", "float64"),
           "ttfa_s": ("timing", "float64"), "total_s": ("timing", "float64")}
KNOWN_FIELDS = set(NESTED_FIELDS) | set(STRING_FIELDS) | set(INT_FIELDS)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, default=str)


def write_parquet(run_dir: Path, records: Iterable[dict[str, Any]], batch_size: int = 2000) -> None:
    """records.parquet: one row per record with a fixed schema; nested fields as JSON
    strings, plus flat token and timing columns. Written in batches (flat memory), and
    built with pyarrow alone (pa.table() would import pandas: 0.4 s and 40 MB)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64()}
    fields = ([pa.field(k, pa.string()) for k in STRING_FIELDS] + [pa.field(k, pa.int64()) for k in INT_FIELDS]
              + [pa.field("equal", pa.bool_())] + [pa.field(k, pa.string()) for k in NESTED_FIELDS]
              + [pa.field(k, types[t]) for k, (_, t) in DERIVED.items()] + [pa.field("extra", pa.string())])
    schema = pa.schema(fields)

    def column(name: str, batch: list[dict[str, Any]]) -> list[Any]:
        if name in NESTED_FIELDS:
            return [_json(r.get(name)) for r in batch]
        if name in DERIVED:
            parent = DERIVED[name][0]
            return [(r.get(parent) or {}).get(name) for r in batch]
        if name == "equal":
            return [(r.get("verdict") or {}).get("equal") for r in batch]
        if name == "extra":  # fields a later schema added: kept, not dropped
            return [_json({k: v for k, v in r.items() if k not in KNOWN_FIELDS}) if set(r) - KNOWN_FIELDS else None
                    for r in batch]
        if name in INT_FIELDS:
            return [r.get(name) if isinstance(r.get(name), int) else None for r in batch]
        return [None if r.get(name) is None else str(r.get(name)) for r in batch]

    with pq.ParquetWriter(Path(run_dir) / PARQUET, schema) as writer:
        batch: list[dict[str, Any]] = []
        for record in records:
            batch.append(record)
            if len(batch) >= batch_size:
                writer.write_batch(pa.RecordBatch.from_arrays([pa.array(column(f.name, batch), type=f.type) for f in fields], schema=schema))
                batch = []
        if batch:
            writer.write_batch(pa.RecordBatch.from_arrays([pa.array(column(f.name, batch), type=f.type) for f in fields], schema=schema))
