"""The run folder: manifest.json, records.jsonl, the token streams, records.parquet, summary.json.

See docs/records.md for the contract. Writers append one line per finished item and flush
it; readers tolerate a torn last line and take the last record per id.

Token logprobs (`--logprobs K`) are ~100x bulkier than the rest of a record and only `diff`
reads them, so they live beside the records, column by column: while a run is live in
`tokens.arrows` (one Arrow IPC blob per record, appended and flushed before the record's line),
and in a finished run in `tokens.parquet` (item order, dictionary-encoded text, int32 ids,
float32 logprobs). A record says how many token entries it has (`logprob_tokens`); `load_run`
returns slim records and `Run.with_logprobs(record)` reads one item's tokens when asked. Run
folders from before the side file (logprobs inline in records.jsonl) load through the same API.
"""
from __future__ import annotations

import json
import os
import struct
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Iterator

try:  # 2-3x faster to parse; the stdlib reads what it refuses (NaN, -Infinity)
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"
PARQUET = "records.parquet"
SUMMARY = "summary.json"
TOKENS_LIVE = "tokens.arrows"
TOKENS = "tokens.parquet"
RECORD_SCHEMA = 2
MANIFEST_SCHEMA = 1
TOKEN_FIELD = "logprob_tokens"   # in a record: how many token entries the side file holds for it
SAMPLE_FIELD = "sample"          # in a record of a sampled run (`run --samples N`): the sample index, 0..N-1
SAMPLE_SEP = "\x1f"              # between an item id and a sample index in a record key (never in an id)


def sample_key(item_id: str, sample: int | None) -> str:
    """The key of one answer: the item id for sample 0 (and for every record of an unsampled
    run), `id<US>j` for sample j > 0. Resume, "the last record wins", compaction and the token
    streams all follow this key (docs/sampling.md)."""
    return item_id if not sample else f"{item_id}{SAMPLE_SEP}{int(sample)}"


def record_key(record: dict[str, Any]) -> str:
    return sample_key(record["id"], record.get(SAMPLE_FIELD))


class RunFolderError(ValueError):
    """A run folder that is missing, unreadable or corrupt; the message names the file."""


def loads(raw: bytes | str) -> Any:
    if _orjson is not None:
        try:
            return _orjson.loads(raw)
        except _orjson.JSONDecodeError:
            pass  # NaN / Infinity, which json.dumps writes and orjson refuses
    return json.loads(raw)


# ----------------------------------------------------------------------------- records

def _parse_lines(path: Path) -> Iterator[tuple[int, int, int, dict[str, Any]]]:
    """(line number, byte offset, byte length, record) for every record line, streamed. A
    torn last line (crash mid-write) is skipped; an unparseable line anywhere else is an
    error naming the line."""
    if not path.exists():
        return
    pending: tuple[int, str] | None = None   # a bad line, an error only if another line follows
    offset = 0
    with open(path, "rb") as f:
        for n, raw in enumerate(f):
            start, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            if pending is not None:
                raise RunFolderError(f"{path}: line {pending[0]} is not valid JSON ({pending[1]})")
            try:
                record = loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                pending = (n + 1, str(e))
                continue
            if not isinstance(record, dict) or "id" not in record:
                raise RunFolderError(f"{path}: line {n + 1} is not a record (no 'id')")
            yield n + 1, start, len(raw), record


def iter_record_lines(path: Path) -> Iterator[dict[str, Any]]:
    """Every record line in order, as written (old folders: logprobs inline)."""
    for _, _, _, record in _parse_lines(Path(path)):
        yield record


def slim(record: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The record without inline token logprobs (an old-format line), and whether it had them."""
    if "logprobs" not in record:
        return record, False
    entries = record.pop("logprobs")
    if isinstance(entries, list):
        record[TOKEN_FIELD] = len(entries)
    else:
        record.setdefault(TOKEN_FIELD, None)
    return record, isinstance(entries, list)


def _read(path: Path, drop: Iterable[str]) -> tuple[dict[str, dict[str, Any]], dict[str, tuple[int, int]]]:
    """(last slim record per id in first-seen order, byte span of each winning line that holds
    its logprobs inline)."""
    drop = tuple(drop)
    latest: dict[str, dict[str, Any]] = {}
    inline: dict[str, tuple[int, int]] = {}
    for _, start, length, record in _parse_lines(path):
        record, had_inline = slim(record)
        for key in drop:
            record.pop(key, None)
        record_id = record_key(record)
        latest[record_id] = record
        if had_inline:
            inline[record_id] = (start, length)
        else:
            inline.pop(record_id, None)
    return latest, inline


def read_records(path: Path, drop: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The last record per id (slim: no token logprobs), in the order ids first appeared.
    `drop` leaves out more bulky fields (messages, answer ...) for analyses that do not need them."""
    return list(_read(Path(path), drop)[0].values())


def read_manifest(run_dir: Path) -> dict[str, Any]:
    path = Path(run_dir) / MANIFEST
    if not path.exists():
        raise RunFolderError(f"{run_dir} is not a run folder: {MANIFEST} is missing")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise RunFolderError(f"{path} is not valid JSON ({e})") from None


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


class _AtomicFile:
    """A temporary file in the target's folder, renamed onto it only when complete."""

    def __init__(self, path: Path):
        self.path = Path(path)
        fd, self.tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
        os.close(fd)

    def __enter__(self) -> str:
        return self.tmp

    def __exit__(self, kind, *_: Any) -> None:
        if kind is None:
            with open(self.tmp, "rb") as f:
                os.fsync(f.fileno())
            os.replace(self.tmp, self.path)
        else:
            Path(self.tmp).unlink(missing_ok=True)


def _dumps_line(record: dict[str, Any]) -> bytes:
    # the stdlib's layout (", " and ": "), which people grep records.jsonl for
    return json.dumps(record, ensure_ascii=False, default=str).encode("utf-8") + b"\n"


def _is_record(raw: bytes) -> bool:
    try:
        record = loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return isinstance(record, dict) and "id" in record


# ----------------------------------------------------------------------------- token streams

class TokenColumns:
    """One response's generated tokens with their top-K alternatives, as the server sent them
    (chat-API logprob entries: token, bytes, id, logprob, top_logprobs) plus the part of the
    text each belongs to. Collecting is one append per token (the client's hot path); every
    BATCH tokens are converted to Arrow columns in one call, so a long response holds few
    Python objects (which also keeps the garbage collector's scans short)."""

    __slots__ = ("_raw", "_parts", "_batches", "_n")
    BATCH = 256

    def __init__(self) -> None:
        self._raw: list[dict[str, Any]] = []
        self._parts: list[str] = []
        self._batches: list[Any] = []
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def extend(self, entries: Iterable[Any], part: str) -> None:
        """Chat-API entries, as received (non-objects are skipped)."""
        for entry in entries:
            if isinstance(entry, dict):
                self._raw.append(entry)
                self._parts.append(part)
                self._n += 1
        if len(self._raw) >= self.BATCH:
            self._convert()

    def add(self, token: Any, raw: Any, token_id: Any, logprob: Any, part: str, top: Iterable[dict[str, Any]]) -> None:
        self._raw.append({"token": token, "bytes": raw, "id": token_id, "logprob": logprob, "top_logprobs": list(top)})
        self._parts.append(part)
        self._n += 1
        if len(self._raw) >= self.BATCH:
            self._convert()

    @classmethod
    def from_entries(cls, entries: Iterable[dict[str, Any]]) -> "TokenColumns":
        """From the record contract's form (docs/records.md: `logprobs`, with `top`)."""
        cols = cls()
        for e in entries:
            cols.add(e.get("token"), e.get("bytes"), e.get("id"), e.get("logprob"), e.get("part") or "answer",
                     [t for t in (e.get("top") or []) if isinstance(t, dict)])
        return cols

    def entries(self) -> list[dict[str, Any]]:
        """The record contract's form, as the side file gives it back."""
        batch = self.to_arrow()
        return _entries(*(batch.column(name).to_pylist() for name in token_schema().names))

    def _convert(self) -> None:
        """The pending entries to one Arrow batch. Built by Arrow in one call; entries with
        unexpected types (bytes out of 0..255, a non-string token ...) take a slower path that
        keeps what is well-formed and nulls the rest."""
        import pyarrow as pa

        if not self._raw:
            return
        try:
            batch = _columns_from_wire(pa.array(self._raw, type=_wire_type()), pa.array(self._parts, pa.string()))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
            clean = [_clean_entry(e) for e in self._raw]
            batch = _columns_from_wire(pa.array(clean, type=_wire_type()), pa.array(self._parts, pa.string()))
        self._batches.append(batch)
        self._raw, self._parts = [], []

    def to_arrow(self):
        """All tokens as one token_schema() record batch."""
        import pyarrow as pa

        self._convert()
        if not self._batches:
            return pa.RecordBatch.from_pylist([], schema=token_schema())
        if len(self._batches) > 1:
            self._batches = [pa.Table.from_batches(self._batches).combine_chunks().to_batches()[0]]
        return self._batches[0]


_WIRE = None


def _wire_type():
    global _WIRE
    if _WIRE is None:
        import pyarrow as pa

        alt = [("token", pa.string()), ("bytes", pa.list_(pa.uint8())), ("id", pa.int32()), ("logprob", pa.float64())]
        _WIRE = pa.struct(alt + [("top_logprobs", pa.list_(pa.struct(alt)))])
    return _WIRE


def _to_binary(lists):
    """list<uint8> -> binary, sharing the buffers."""
    import pyarrow as pa

    if lists.offset or lists.values.offset or lists.values.null_count:
        return pa.array([None if v is None else bytes(v) for v in lists.to_pylist()], pa.binary())
    return pa.Array.from_buffers(pa.binary(), len(lists), [lists.buffers()[0], lists.buffers()[1], lists.values.buffers()[1]],
                                 null_count=lists.null_count)


def _columns_from_wire(entries, parts):
    import pyarrow as pa

    top = entries.field("top_logprobs")
    if top.offset:
        top = pa.concat_arrays([top])
    offsets = top.offsets
    alts = top.values if top.values is not None else pa.array([], _wire_type().field("top_logprobs").type.value_type)

    def listed(values):
        return pa.ListArray.from_arrays(offsets, values)

    cols = [entries.field("token"), _to_binary(entries.field("bytes")), entries.field("id"),
            entries.field("logprob").cast(pa.float32(), safe=False), parts,
            listed(alts.field("token")), listed(_to_binary(alts.field("bytes"))), listed(alts.field("id")),
            listed(alts.field("logprob").cast(pa.float32(), safe=False))]
    return pa.RecordBatch.from_arrays(cols, schema=token_schema())


def _clean_value(entry: dict[str, Any]) -> dict[str, Any]:
    token, raw, token_id, lp = entry.get("token"), entry.get("bytes"), entry.get("id"), entry.get("logprob")
    return {"token": token if isinstance(token, str) else None,
            "bytes": list(b) if (b := _as_bytes(raw)) is not None else None,
            "id": token_id if type(token_id) is int and -2**31 <= token_id < 2**31 else None,
            "logprob": float(lp) if isinstance(lp, (int, float)) and not isinstance(lp, bool) else None}


def _clean_entry(entry: dict[str, Any]) -> dict[str, Any]:
    top = entry.get("top_logprobs")
    return dict(_clean_value(entry), top_logprobs=[_clean_value(t) for t in (top if isinstance(top, list) else ())
                                                   if isinstance(t, dict)])


def _as_bytes(raw: Any) -> bytes | None:
    if raw is None:
        return None
    if isinstance(raw, (bytes, bytearray)):
        return bytes(raw)
    if not isinstance(raw, (list, tuple)):
        return None
    try:
        return bytes(raw)
    except (TypeError, ValueError):   # not a list of ints in 0..255: not kept
        return None


def _entries(token, raw, ids, lps, parts, top_token, top_bytes, top_id, top_lp) -> list[dict[str, Any]]:
    out = []
    for t, b, i, lp, part, tt, tb, ti, tl in zip(token, raw, ids, lps, parts, top_token, top_bytes, top_id, top_lp):
        out.append({"token": t, "bytes": None if b is None else list(b), "id": i, "logprob": lp, "part": part,
                    "top": [{"token": a, "bytes": None if c is None else list(c), "id": d, "logprob": e}
                            for a, c, d, e in zip(tt or (), tb or (), ti or (), tl or ())]})
    return out


_SCHEMA = None


def token_schema():
    global _SCHEMA
    if _SCHEMA is None:
        import pyarrow as pa

        _SCHEMA = pa.schema([
            ("token", pa.string()), ("bytes", pa.binary()), ("id", pa.int32()), ("logprob", pa.float32()),
            ("part", pa.string()), ("top_token", pa.list_(pa.string())), ("top_bytes", pa.list_(pa.binary())),
            ("top_id", pa.list_(pa.int32())), ("top_logprob", pa.list_(pa.float32())),
        ])
    return _SCHEMA


# tokens.parquet stores what cannot be derived. At temperature 0 the chosen token is nearly always
# one of its own top-K alternatives (`chosen_rank`: its index there, -1 when it is not), and a
# token's bytes are nearly always the UTF-8 of its text (`bytes_flags`, two bits per slot, slot 0
# the chosen token and slot j+1 top[j]: 1 = "the UTF-8 of the text", stored as null). Both columns
# are constant over long runs, so they cost almost nothing; floats are byte-stream-split before
# zstd. Decoding gives back exactly what was stored (docs/records.md).
_FLAG_SLOTS = 31


def _stored_schema():
    import pyarrow as pa

    return pa.schema([("item", pa.string())] + list(token_schema())
                     + [("chosen_rank", pa.int8()), ("bytes_flags", pa.int64())])


def _list_layout(column) -> tuple[Any, Any, Any]:
    """(offsets, parent row of each value, slot of each value) of a list column."""
    import numpy as np

    lengths = column.value_lengths().fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    parent = np.repeat(np.arange(len(lengths)), lengths)
    return offsets, parent, np.arange(offsets[-1]) - offsets[parent]


def _same(a, b):
    """Element-wise equality where two nulls are equal."""
    import pyarrow.compute as pc

    return pc.or_(pc.and_(pc.is_null(a), pc.is_null(b)), pc.fill_null(pc.equal(a, b), False))


def _encode_tokens(table):
    """token_schema() columns (+ item) -> the stored form."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = {name: table.column(name).combine_chunks() for name in table.column_names}
    n = table.num_rows
    offsets, parent, slot = _list_layout(cols["top_token"])
    top = {k: cols[f"top_{k}"].flatten() for k in ("token", "bytes", "id", "logprob")}
    flags = np.zeros(n, dtype=np.int64)
    top_utf8 = pc.fill_null(pc.equal(pc.cast(top["token"], pa.binary()), top["bytes"]), False)
    flagged = top_utf8.to_numpy(zero_copy_only=False) & (slot < _FLAG_SLOTS)
    np.bitwise_or.at(flags, parent[flagged], np.left_shift(1, 2 * (slot[flagged] + 1)))
    chosen_utf8 = pc.fill_null(pc.equal(pc.cast(cols["token"], pa.binary()), cols["bytes"]), False)
    flags |= chosen_utf8.to_numpy(zero_copy_only=False).astype(np.int64)
    # the chosen token's index among its alternatives (all four fields equal)
    rank = np.full(n, 127, dtype=np.int64)
    if len(parent):
        idx = pa.array(parent)
        match = _same(top["token"], pc.take(cols["token"], idx))
        for k in ("bytes", "id", "logprob"):
            match = pc.and_(match, _same(top[k], pc.take(cols[k], idx)))
        hit = match.to_numpy(zero_copy_only=False) & (slot < 127)
        np.minimum.at(rank, parent[hit], slot[hit])
    rank[rank == 127] = -1
    derived = pa.array(rank >= 0)
    null = {k: pa.nulls(n, cols[k].type) for k in ("token", "bytes", "id", "logprob")}

    def stored_list(values, mask):
        return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pc.if_else(mask, pa.nulls(len(values), values.type), values))

    out = dict(cols)
    out["token"] = pc.if_else(derived, null["token"], cols["token"])
    out["bytes"] = pc.if_else(pc.or_(derived, chosen_utf8), null["bytes"], cols["bytes"])
    out["id"] = pc.if_else(derived, null["id"], cols["id"])
    out["logprob"] = pc.if_else(derived, null["logprob"], cols["logprob"])
    out["top_bytes"] = stored_list(top["bytes"], pa.array(flagged))
    out["chosen_rank"] = pa.array(rank.astype(np.int8))
    out["bytes_flags"] = pa.array(flags)
    schema = _stored_schema()
    return pa.Table.from_arrays([out[f.name].cast(f.type) for f in schema], schema=schema)


def _decode_tokens(table):
    """The stored form -> token_schema() columns, exactly as written."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = {name: table.column(name).combine_chunks() for name in table.column_names}
    n = table.num_rows
    offsets, parent, slot = _list_layout(cols["top_token"])
    flags = cols["bytes_flags"].to_numpy(zero_copy_only=False).astype(np.int64)
    rank = cols["chosen_rank"].to_numpy(zero_copy_only=False).astype(np.int64)
    top = {k: cols[f"top_{k}"].flatten() for k in ("token", "bytes", "id", "logprob")}
    top_flag = (np.right_shift(flags[parent], 2 * (np.minimum(slot, _FLAG_SLOTS - 1) + 1)) & 1).astype(bool) & (slot < _FLAG_SLOTS)
    top_bytes = pc.if_else(pa.array(top_flag), pc.cast(top["token"], pa.binary()), top["bytes"])
    out = {"part": cols["part"]}
    derived = rank >= 0
    at = pa.array(np.where(derived, offsets[:-1] + np.maximum(rank, 0), 0))
    mask = pa.array(derived)
    for k, values in (("token", top["token"]), ("bytes", top_bytes), ("id", top["id"]), ("logprob", top["logprob"])):
        out[k] = pc.if_else(mask, pc.take(values, at), cols[k]) if len(values) else cols[k]
    utf8 = pa.array(~derived & (flags & 1).astype(bool))
    out["bytes"] = pc.if_else(utf8, pc.cast(out["token"], pa.binary()), out["bytes"])
    off = pa.array(offsets.astype(np.int32))
    out["top_token"] = pa.ListArray.from_arrays(off, top["token"])
    out["top_bytes"] = pa.ListArray.from_arrays(off, top_bytes)
    out["top_id"] = pa.ListArray.from_arrays(off, top["id"])
    out["top_logprob"] = pa.ListArray.from_arrays(off, top["logprob"])
    schema = token_schema()
    return pa.Table.from_arrays([out[f.name].cast(f.type) for f in schema], schema=schema)


# a blob in tokens.arrows: magic, id length, token count, payload length; then id, payload
_BLOB = struct.Struct("<4sIII")
_MAGIC = b"EVTK"


def _encode_blob(item_id: str, columns: TokenColumns) -> bytes:
    import pyarrow as pa

    batch = columns.to_arrow()
    sink = pa.BufferOutputStream()
    # zstd: half the bytes of a plain blob (~110 per token with top-5) for <1 us of CPU per token
    with pa.ipc.new_stream(sink, batch.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as w:
        w.write_batch(batch)
    payload = sink.getvalue()
    key = item_id.encode("utf-8")
    return _BLOB.pack(_MAGIC, len(key), len(columns), payload.size) + key + payload.to_pybytes()


def _scan_blobs(path: Path) -> Iterator[tuple[str, int, int, int]]:
    """(item id, token count, payload offset, payload length) of every whole blob; stops at a
    torn tail."""
    if not path.exists():
        return
    size = path.stat().st_size
    with open(path, "rb") as f:
        offset = 0
        while offset + _BLOB.size <= size:
            f.seek(offset)
            magic, key_len, n, payload_len = _BLOB.unpack(f.read(_BLOB.size))
            end = offset + _BLOB.size + key_len + payload_len
            if magic != _MAGIC or end > size:
                return
            key = f.read(key_len).decode("utf-8")
            yield key, n, offset + _BLOB.size + key_len, payload_len
            offset = end


def _whole_blobs_end(path: Path) -> int:
    end = 0
    for _, _, payload_at, payload_len in _scan_blobs(path):
        end = payload_at + payload_len
    return end


class TokenStreams:
    """One run's token streams, item by item: from tokens.parquet (finished runs), tokens.arrows
    (live or resumed runs; a later blob for an id wins when its count matches the record) and
    records.jsonl lines with logprobs inline (old folders)."""

    def __init__(self, run_dir: Path, counts: dict[str, int | None], inline: dict[str, tuple[int, int]] | None = None):
        self.run_dir = Path(run_dir)
        self.counts = counts
        self.inline = dict(inline or {})
        self._parquet = None
        self._pq_index: dict[str, tuple[int, int, int]] = {}
        self._group: tuple[int, Any] | None = None
        parquet = self.run_dir / TOKENS
        if parquet.exists():
            import pyarrow.parquet as pq

            try:
                self._parquet = pq.ParquetFile(parquet)
                meta = self._parquet.metadata.metadata or {}
                self._pq_index = {k: tuple(v) for k, v in json.loads(meta[b"evalsuite.items"]).items()}
            except Exception as e:
                raise RunFolderError(f"{parquet} is unreadable ({type(e).__name__}: {e})") from None
        self._live: dict[str, tuple[int, int]] = {}
        for item_id, n, at, length in _scan_blobs(self.run_dir / TOKENS_LIVE):
            if counts.get(item_id) == n:
                self._live[item_id] = (at, length)

    def table(self, item_id: str):
        """The item's tokens as an Arrow table (token_schema()), or None when none are stored."""
        import pyarrow as pa

        n = self.counts.get(item_id)
        if n is None:
            return None
        if item_id in self.inline:
            return pa.Table.from_batches([TokenColumns.from_entries(self._inline_entries(item_id)).to_arrow()])
        if item_id in self._live:
            at, length = self._live[item_id]
            with open(self.run_dir / TOKENS_LIVE, "rb") as f:
                f.seek(at)
                payload = f.read(length)
            return pa.ipc.open_stream(pa.py_buffer(payload)).read_all()
        if item_id in self._pq_index:
            group, start, count = self._pq_index[item_id]
            if self._group is None or self._group[0] != group:
                self._group = (group, _decode_tokens(self._parquet.read_row_group(group)))
            return self._group[1].slice(start, count)
        if n == 0:
            return token_schema().empty_table()
        raise RunFolderError(f"{self.run_dir}: item {item_id} has {n} token entries but none are stored "
                             f"({TOKENS}, {TOKENS_LIVE})")

    def _inline_entries(self, item_id: str) -> list[dict[str, Any]]:
        start, length = self.inline[item_id]
        with open(self.run_dir / RECORDS, "rb") as f:
            f.seek(start)
            return loads(f.read(length)).get("logprobs") or []

    def entries(self, item_id: str) -> list[dict[str, Any]] | None:
        if item_id in self.inline and self.counts.get(item_id) is not None:
            return self._inline_entries(item_id)   # as written: no float32 round trip
        table = self.table(item_id)
        if table is None:
            return None
        return _entries(*(table.column(name).to_pylist() for name in token_schema().names))


# ----------------------------------------------------------------------------- writing

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
        if tokens is not None:
            if self._tokens is None:
                self._tokens = open(self._tokens_path, "ab")
            self._tokens.write(_encode_blob(record_key(record), tokens))
            self._tokens.flush()
            if self._fsync:
                os.fsync(self._tokens.fileno())
            record = {k: v for k, v in record.items() if k != "logprobs"}
            record[TOKEN_FIELD] = len(tokens)
        self._f.write(_dumps_line(record))
        if flush:
            self.flush()

    def flush(self) -> None:
        self._f.flush()
        if self._fsync:
            os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()
        if self._tokens is not None:
            self._tokens.close()


def compact_records(run_dir: Path, order: Iterable[str] | None = None) -> int:
    """Rewrite records.jsonl atomically with exactly one record per id (the last), in
    `order` when given (ids not in it follow in first-seen order). Streams: only each id's
    byte span is held, not the records. Returns the number of records."""
    path = Path(run_dir) / RECORDS
    spans: dict[str, tuple[int, int]] = {}
    position: dict[str, tuple[str, int]] = {}   # key -> (item id, sample index): samples follow their item
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


class TokenParquetWriter:
    """Writes tokens.parquet item by item (row groups of whole items, ~`rows_per_group` tokens),
    to a temporary file renamed into place on a clean exit; the item index goes in the footer."""

    def __init__(self, path: Path, rows_per_group: int = 65536):
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._pa = pa
        self._atomic = _AtomicFile(path)
        self._writer = pq.ParquetWriter(
            self._atomic.tmp, _stored_schema(), compression="zstd", write_statistics=False,
            use_dictionary=["item", "token", "bytes", "part", "top_token", "top_bytes", "id", "top_id"],
            use_byte_stream_split=["logprob", "top_logprob"])
        self._schema = pa.schema([("item", pa.string())] + list(token_schema()))
        self.rows_per_group = rows_per_group
        self.index: dict[str, list[int]] = {}
        self._pending: list[Any] = []
        self._rows = self._group = 0

    def add(self, item_id: str, table) -> None:
        """One item's tokens (a token_schema() table)."""
        pa = self._pa
        n = table.num_rows
        self.index[item_id] = [self._group, self._rows, n]
        self._pending.append(table.add_column(0, "item", pa.array([item_id] * n, pa.string())).cast(self._schema))
        self._rows += n
        if self._rows >= self.rows_per_group:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._writer.write_table(_encode_tokens(self._pa.concat_tables(self._pending)), row_group_size=self._rows + 1)
            self._pending, self._rows, self._group = [], 0, self._group + 1

    def __enter__(self) -> "TokenParquetWriter":
        return self

    def __exit__(self, kind, value, tb) -> None:
        try:
            if kind is None:
                self._flush()
                self._writer.add_key_value_metadata({"evalsuite.items": json.dumps(self.index, separators=(",", ":"))})
        finally:
            self._writer.close()
            self._atomic.__exit__(kind, value, tb)


def compact_tokens(run_dir: Path, order: Iterable[str]) -> None:
    """tokens.parquet from tokens.arrows (and an earlier tokens.parquet): one stream per item
    whose record keeps one, in `order`, then tokens.arrows is removed. Streams item by item;
    written to a temporary file and renamed, so a crash leaves the old files readable."""
    run_dir = Path(run_dir)
    live = run_dir / TOKENS_LIVE
    if not live.exists():
        return
    latest, inline = _read(run_dir / RECORDS, drop=("messages", "prompt", "answer", "reasoning", "verdict"))
    streams = TokenStreams(run_dir, {i: r.get(TOKEN_FIELD) for i, r in latest.items()}, inline)
    rank = {i: n for n, i in enumerate(order)}
    ids = sorted((i for i, r in latest.items() if r.get(TOKEN_FIELD) is not None and i not in inline),
                 key=lambda i: (rank.get(latest[i]["id"], len(rank)), latest[i].get(SAMPLE_FIELD) or 0))
    with TokenParquetWriter(run_dir / TOKENS) as writer:
        for item_id in ids:
            writer.add(item_id, streams.table(item_id))
    live.unlink()


NESTED_FIELDS = ("messages", "verdict", "error", "usage", "timing", "server_timings")
STRING_FIELDS = ("id", "subset", "gold", "prompt_sha256", "prompt", "answer", "reasoning", "reasoning_source",
                 "finish_reason", "extracted", "outcome", "endpoint", "model")
INT_FIELDS = ("schema", "attempts", TOKEN_FIELD, SAMPLE_FIELD)
# flat copies of the figures analyses filter on most, so a parquet reader needs no JSON
DERIVED = {"prompt_tokens": ("usage", "int64"), "completion_tokens": ("usage", "int64"),
           "reasoning_tokens": ("usage", "int64"), "ttft_s": ("timing", "float64"),
           "ttfa_s": ("timing", "float64"), "total_s": ("timing", "float64")}
KNOWN_FIELDS = set(NESTED_FIELDS) | set(STRING_FIELDS) | set(INT_FIELDS)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, default=str)


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
