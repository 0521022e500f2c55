"""Writing records: RecordWriter (records.jsonl, one flushed line per finished item, its
token stream first), compaction to one record per id, and records.parquet.

See docs/records.md for the contract."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from .layout import (PARQUET, RECORDS, SAMPLE_FIELD, TOKEN_FIELD, TOKENS_LIVE, _AtomicFile, _is_record,
                     _parse_lines, record_key, slim)
from .record import INT_FIELDS, NESTED_FIELDS, STRING_FIELDS   # records.parquet's columns, from the record's type
from .token_files import _encode_blob, _whole_blobs_end
from .tokens import TokenColumns


_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


class RecordWriter:
    """Appends records to records.jsonl, one line each, flushed as it is written; a record's
    token streams go to tokens.arrows first, so a record on disk always has its tokens."""

    def __init__(self, path: Path, fsync: bool = False):
        self.path = Path(path)
        self._tokens_path = self.path.parent / TOKENS_LIVE
        self._repair_torn_tail()
        self._f = open(self.path, "ab")
        self._tokens = None
        self._fsync = fsync
        # Where each line this writer appends lies, for compact_records: a run that started on
        # an empty file is put in order at its end without parsing every line again. None when
        # the file already held lines (a resume): those are parsed there as before.
        self._end = self._f.tell()
        self._spans: dict[str, tuple[int, int, str, int]] | None = {} if self._end == 0 else None

    def _repair_torn_tail(self) -> None:
        # After a crash the last line may be torn (no newline). Cut it off so the next
        # record starts on its own line; its item had no complete record and is re-asked.
        if self._tokens_path.exists():
            end = _whole_blobs_end(self._tokens_path)
            if end != self._tokens_path.stat().st_size:
                os.truncate(self._tokens_path, end)
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with open(self.path, "rb+") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 1))
            if f.read(1) == b"\n":
                return
            # find the start of the last line without reading the whole file
            block, cut = 1 << 16, 0
            pos = size
            while pos > 0:
                step = min(block, pos)
                pos -= step
                f.seek(pos)
                chunk = f.read(step)
                nl = chunk.rfind(b"\n")
                if nl >= 0:
                    cut = pos + nl + 1
                    break
            f.seek(cut)
            tail = f.read()
            if _is_record(tail):
                # the crash came between the record and its newline: the record is complete and
                # readers already counted it as done, so keep it (cutting it would lose the item)
                f.seek(0, os.SEEK_END)
                f.write(b"\n")
                return
            f.truncate(cut)

    def append(self, record: dict[str, Any], tokens: TokenColumns | None = None, flush: bool = True) -> None:
        """One record line (its token streams first, flushed, so that no line reaches the disk
        before its tokens). flush=False leaves the line in the buffer for a later `flush()`."""
        key = record_key(record)
        if tokens is not None:
            if self._tokens is None:
                self._tokens = open(self._tokens_path, "ab")
            self._tokens.write(_encode_blob(key, tokens))
            self._tokens.flush()
            if self._fsync:
                os.fsync(self._tokens.fileno())
            record = {k: v for k, v in record.items() if k != "logprobs"}
            record[TOKEN_FIELD] = len(tokens)
        # _dumps_line's bytes (the stdlib's layout), from one encoder made once rather than per line
        line = _LINE_ENCODER.encode(record).encode("utf-8") + b"\n"
        self._f.write(line)
        if self._spans is not None:
            self._spans[key] = (self._end, len(line), record["id"], record.get(SAMPLE_FIELD) or 0)
        self._end += len(line)
        if flush:
            self.flush()

    def written(self) -> "WrittenLines | None":
        """Every line of the file as this writer appended it (the last per key), where the file
        was empty when it opened; None otherwise."""
        return None if self._spans is None else WrittenLines(dict(self._spans), self._end)

    def flush(self) -> None:
        self._f.flush()
        if self._fsync:
            os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()
        if self._tokens is not None:
            self._tokens.close()


@dataclass(frozen=True)
class WrittenLines:
    """The lines a RecordWriter appended to an empty records.jsonl: key -> (byte offset, byte
    length, item id, sample index) of the last line per key, and where the file then ended."""
    spans: dict[str, tuple[int, int, str, int]]
    end: int


def compact_records(run_dir: Path, order: Iterable[str] | None = None, written: WrittenLines | None = None) -> int:
    """Rewrite records.jsonl atomically with exactly one record per id (the last), in
    `order` when given (ids not in it follow in first-seen order). Streams: only each id's
    byte span is held, not the records. Returns the number of records.

    `written`: the writer's own account of the file (RecordWriter.written), used instead of
    parsing every line when the file is still exactly what it wrote (same size)."""
    path = Path(run_dir) / RECORDS
    spans: dict[str, tuple[int, int]] = {}
    position: dict[str, tuple[str, int]] = {}   # key -> (item id, sample index): samples follow their item
    if written is not None and path.exists() and path.stat().st_size == written.end:
        for key, (start, length, item_id, sample) in written.spans.items():
            spans[key] = (start, length)
            position[key] = (item_id, sample)
    else:
        for _, start, length, record in _parse_lines(path):
            key = record_key(record)
            spans[key] = (start, length)
            position[key] = (record["id"], record.get(SAMPLE_FIELD) or 0)
    ids = list(spans)
    if order is not None:
        rank = {i: n for n, i in enumerate(order)}
        ids.sort(key=lambda k: (rank.get(position[k][0], len(rank)), position[k][1]))
    with _AtomicFile(path) as tmp, open(tmp, "wb") as out, open(path, "rb") as src:
        for record_id in ids:
            start, length = spans[record_id]
            src.seek(start)
            raw = src.read(length)
            out.write(raw if raw.endswith(b"\n") else raw + b"\n")
    return len(ids)


# flat copies of the figures analyses filter on most, so a parquet reader needs no JSON
DERIVED = {"prompt_tokens": ("usage", "int64"), "completion_tokens": ("usage", "int64"),
           "reasoning_tokens": ("usage", "int64"), "ttft_s": ("timing", "float64"),
           "ttfa_s": ("timing", "float64"), "total_s": ("timing", "float64")}
KNOWN_FIELDS = set(NESTED_FIELDS) | set(STRING_FIELDS) | set(INT_FIELDS)


# json.dumps(value, ensure_ascii=False, default=str) without making an encoder per call
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the json module still works
    _orjson = None


def _json(value: Any) -> str | None:
    """A nested field as a JSON string for records.parquet. orjson writes it compact (no spaces
    after `,` and `:`), 4-5x faster than the json module: the nested fields of 8,000 records
    cost ~0.2 CPU s at the end of a run with it. The values come from parsed JSON lines; what
    orjson refuses (an integer beyond 64 bits) is written by the json module, and a non-finite
    float, which the json module would write as the invalid token NaN, is written as null."""
    if value is None:
        return None
    if _orjson is not None:
        try:
            return _orjson.dumps(value, default=str, option=_orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:
            pass
    return _ENCODER.encode(value)


def write_parquet(run_dir: Path, records: Iterable[dict[str, Any]], batch_size: int = 2000) -> None:
    """records.parquet: one row per (slim) record with a fixed schema; nested fields as JSON
    strings, plus flat token and timing columns. Written in batches (flat memory) to a
    temporary file renamed into place, and built with pyarrow alone (pa.table() would
    import pandas: 0.4 s and 40 MB)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64()}
    fields = ([pa.field(k, pa.string()) for k in STRING_FIELDS] + [pa.field(k, pa.int64()) for k in INT_FIELDS]
              + [pa.field("equal", pa.bool_())] + [pa.field(k, pa.string()) for k in NESTED_FIELDS]
              + [pa.field(k, types[t]) for k, (_, t) in DERIVED.items()] + [pa.field("extra", pa.string())])
    schema = pa.schema(fields)

    extra_names: dict[tuple[str, ...], list[str]] = {}

    def column(name: str, batch: list[dict[str, Any]]) -> list[Any]:
        if name == "messages":
            # the N samples of an item follow each other with the same prompt: encoded once
            out, last, text = [], None, None
            for r in batch:
                value = r.get(name)
                if value is None or value != last:
                    last, text = value, _json(value)
                out.append(text)
            return out
        if name in NESTED_FIELDS:
            return [_json(r.get(name)) for r in batch]
        if name in DERIVED:
            parent = DERIVED[name][0]
            return [(r.get(parent) or {}).get(name) for r in batch]
        if name == "equal":
            return [(r.get("verdict") or {}).get("equal") for r in batch]
        if name == "extra":  # fields a later schema added: kept, not dropped
            # records of one run share their keys: the extra keys are found once per key layout,
            # and an item's samples usually share their extra values (choices, item_meta)
            out, last, text = [], None, None
            for r in batch:
                layout = tuple(r)
                names = extra_names.get(layout)
                if names is None:
                    names = extra_names[layout] = [k for k in layout if k not in KNOWN_FIELDS]
                if not names:
                    out.append(None)
                    continue
                value = {k: r[k] for k in names}
                if value != last:
                    last, text = value, _json(value)
                out.append(text)
            return out
        if name in INT_FIELDS:
            return [v if isinstance(v := r.get(name), int) else None for r in batch]
        return [None if (v := r.get(name)) is None else v if type(v) is str else str(v) for r in batch]

    def write(writer, batch: list[dict[str, Any]]) -> None:
        writer.write_batch(pa.RecordBatch.from_arrays([pa.array(column(f.name, batch), type=f.type) for f in fields],
                                                      schema=schema))

    with _AtomicFile(Path(run_dir) / PARQUET) as tmp:
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            batch: list[dict[str, Any]] = []
            for record in records:
                batch.append(slim(record)[0])
                if len(batch) >= batch_size:
                    write(writer, batch)
                    batch = []
            if batch:
                write(writer, batch)
