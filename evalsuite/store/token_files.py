"""Token streams on disk: tokens.arrows (one Arrow IPC blob per record, appended while a run
is live), tokens.parquet (a finished run's streams, item order, in a stored form that drops what
can be derived) and TokenStreams, which reads one item's stream from whichever holds it.

See docs/records.md for the contract."""
from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any, Iterable, Iterator

from .layout import RECORDS, SAMPLE_FIELD, TOKEN_FIELD, TOKENS, TOKENS_LIVE, RunFolderError, _AtomicFile, _read, loads
from .record import bulky
from .token_arrays import ItemArrays, TokenArrays
from .tokens import TokenColumns, _entries, token_schema


# tokens.parquet stores what cannot be derived. At temperature 0 the chosen token is nearly always
# one of its own top-K alternatives (`chosen_rank`: its index there, -1 when it is not), and a
# token's bytes are nearly always the UTF-8 of its text (`bytes_flags`, two bits per slot, slot 0
# the chosen token and slot j+1 top[j]: 1 = "the UTF-8 of the text", stored as null). Both columns
# are constant over long runs, so they cost almost nothing; the chosen logprob is byte-stream-split
# before zstd, as are the alternatives' logprobs; their texts, bytes and ids are
# dictionary-encoded (pyarrow applies these options to a list's leaf path, `top_token.list.element`;
# files written before 2026-12-02 named the list columns and store the lists plain). Decoding gives
# back exactly what was stored (docs/records.md).
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


def _full_flags(lengths):
    """bytes_flags with every alternative's bit set, for rows of these alternative counts
    (the chosen token's bit 0 not included)."""
    import numpy as np

    table = np.zeros(_FLAG_SLOTS + 1, dtype=np.int64)
    for k in range(1, _FLAG_SLOTS + 1):
        table[k] = table[k - 1] | (1 << (2 * k))
    return table[np.minimum(lengths, _FLAG_SLOTS)]


# Stored columns a diff's reader leaves out of its first read of a row group (_read_group):
# top_bytes is null where every alternative's bytes are the UTF-8 of its text, and the chosen
# token's own four fields are null where every chosen token is one of its alternatives
# (chosen_rank >= 0): the common case, where reading them is ~3 of a group's ~20 ms of Parquet.
_READ_WHEN_NEEDED = ("top_bytes", "token", "bytes", "id", "logprob")

# The alternatives' lists the writer dictionary-encodes (leaf paths; see the top of this file).
_DICT_LISTS = ("top_token", "top_bytes", "top_id")


def _dictionary_leaves(parquet: Any) -> list[str]:
    """The leaf paths worth reading as Arrow dictionaries: top_token's texts where the file
    stores them dictionary-encoded (the reader then gathers each row group's texts from its
    dictionary, ~4.4 ms a 64k-row group against ~7.5 ms for plain strings; asked of a plain
    column, read_dictionary would build a dictionary instead, ~11.7 ms)."""
    meta = parquet.metadata
    if not meta.num_row_groups:
        return []
    group = meta.row_group(0)
    for i in range(group.num_columns):
        column = group.column(i)
        if column.path_in_schema == "top_token.list.element":
            return ["top_token.list.element"] if any("DICTIONARY" in e for e in column.encodings) else []
    return []


def _decode_tokens(table, read_stored=None):
    """The stored form -> token_schema() columns, exactly as written. `read_stored`: for a table
    read without some of its stored columns (_READ_WHEN_NEEDED), what reads one of them by name
    (called only where its values are needed: some alternative's bytes not the UTF-8 of its
    text, some chosen token not among its alternatives)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = {name: table.column(name).chunk(0) if table.column(name).num_chunks == 1 else table.column(name).combine_chunks()
            for name in table.column_names}

    def stored_column(name: str) -> Any:
        if name not in cols:
            cols[name] = read_stored(name)
        return cols[name]
    flags = cols["bytes_flags"].to_numpy(zero_copy_only=False).astype(np.int64)
    rank = cols["chosen_rank"].to_numpy(zero_copy_only=False).astype(np.int64)
    top = {k: cols[f"top_{k}"].flatten() for k in ("token", "id", "logprob")}
    if pa.types.is_dictionary(top["token"].type):     # read as a dictionary (_dictionary_leaves)
        top["token"] = top["token"].dictionary.take(top["token"].indices)
    lengths = cols["top_token"].value_lengths().fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # The common case: every alternative's bytes are the UTF-8 of its text (all its flag bits
    # set), so the column is the texts' own buffers; else the flags are read slot by slot.
    full = _full_flags(lengths)
    bytes_are_texts = bool(lengths.size and lengths.max() <= _FLAG_SLOTS and np.array_equal(flags & full, full))
    if bytes_are_texts:
        top_bytes = pc.cast(top["token"], pa.binary())
    else:
        top["bytes"] = stored_column("top_bytes").flatten()
        _, parent, slot = _list_layout(cols["top_token"])
        top_flag = (np.right_shift(flags[parent], 2 * (np.minimum(slot, _FLAG_SLOTS - 1) + 1)) & 1).astype(bool) & (slot < _FLAG_SLOTS)
        top_bytes = pc.if_else(pa.array(top_flag), pc.cast(top["token"], pa.binary()), top["bytes"])
    out = {"part": cols["part"]}
    derived = rank >= 0
    at = pa.array(np.where(derived, offsets[:-1] + np.maximum(rank, 0), 0))
    every = bool(derived.all())
    mask = pa.array(derived)
    for k, values in (("token", top["token"]), ("bytes", top_bytes), ("id", top["id"]), ("logprob", top["logprob"])):
        if not len(values):
            out[k] = stored_column(k)
        elif k == "bytes" and every and bytes_are_texts:
            # every chosen token is an alternative whose bytes are its text's UTF-8: the chosen
            # texts' own buffers (no second copy of the strings)
            out[k] = pc.cast(out["token"], pa.binary())
        else:   # every row derived: the chosen token is always one of its alternatives (greedy runs)
            out[k] = pc.take(values, at) if every else pc.if_else(mask, pc.take(values, at), stored_column(k))
    utf8 = ~derived & (flags & 1).astype(bool)
    if utf8.any():
        out["bytes"] = pc.if_else(pa.array(utf8), pc.cast(out["token"], pa.binary()), out["bytes"])
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


# The footer's per-item digests (optional: files written before them have none). For each
# item: [blake2b-128 of its token table as written (Arrow IPC), sha256-128 of its bytes joined
# (null when an id or a bytes value is missing), tokens not their own top-1, positions with a
# top-K and a finite logprob, whether every number and key is there (no null, no NaN, no
# ragged alternatives)]. Two runs' items with equal digests hold the same tokens and numbers:
# `diff` decides them without reading the row group (lossless/runs.py).
DIGESTS = "evalsuite.digests"


def item_digests(group: Any, ids: list[str], counts: list[int], tables: list[Any]) -> dict[str, list[Any]]:
    """DIGESTS entries of the items of one row group (`group`: their token_schema() rows in order)."""
    import hashlib

    arrays = TokenArrays(group)
    out, start = {}, 0
    for item_id, n, table in zip(ids, counts, tables):
        v = arrays.item(start, n)
        spelled = (hashlib.sha256(v.spelled()).hexdigest()[:32]
                   if v.ids_complete() and v.bytes_complete() else None)
        out[item_id] = [content_digest(table), spelled, v.not_top1(), v.measured(n), bool(n) and v.numbers_plain(n)]
        start += n
    return out


def content_digest(table: Any) -> str:
    """blake2b-128 of a token_schema() table's content. Equal digests mean equal content;
    equal content written apart may digest apart (then `diff` just reads the rows). Arrays
    that start at offset 0 (a response's own columns) are hashed buffer by buffer with their
    types, lengths and null counts, which then fix every value; anything else (a slice, also one
    at offset 0 over a longer array; several chunks) as the Arrow IPC serialisation of a fresh
    copy, so equal rows agree wherever they sat."""
    import hashlib
    import struct

    import pyarrow as pa

    h = hashlib.blake2b(digest_size=16)
    h.update(b"buffers\0" + struct.pack("<q", table.num_rows))
    for name in table.column_names:
        column = table.column(name)
        if column.num_chunks != 1:
            return _ipc_digest(table)
        arr = column.chunk(0)
        layout, stack = [], [arr]
        while stack:
            a = stack.pop()
            if a.offset or _views_a_longer_array(a):
                return _ipc_digest(table)
            layout.append(f"{a.type}|{len(a)}|{a.null_count}")
            if isinstance(a, pa.ListArray):
                stack.append(a.values)
        h.update((name + ";" + ";".join(layout) + "\0").encode())
        for buf in arr.buffers():
            h.update(b"-" if buf is None else struct.pack("<q", buf.size))
            if buf is not None:
                h.update(buf)
    return h.hexdigest()


def _views_a_longer_array(a: Any) -> bool:
    """A slice at offset 0 (the first item of a row group): its offsets or values hold more rows
    than it has, which hashing its buffers would read."""
    import pyarrow as pa

    buffers = a.buffers()
    if len(buffers) < 2 or buffers[1] is None:
        return False
    if pa.types.is_list(a.type) or pa.types.is_string(a.type) or pa.types.is_binary(a.type):
        return buffers[1].size > (len(a) + 1) * 4
    width = getattr(a.type, "bit_width", 0) // 8
    return width > 0 and buffers[1].size > len(a) * width


def _ipc_digest(table: Any) -> str:
    import hashlib

    import pyarrow as pa

    # copied to fresh arrays first: the IPC of a slice depends on where it sat in its buffers
    # (combine_chunks keeps a lone chunk as it is), so the same rows at another offset or in
    # other chunks would digest apart
    columns = [pa.concat_arrays(c.chunks) if table.num_rows else pa.array([], c.type) for c in table.columns]
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(pa.Table.from_arrays(columns, schema=table.schema))
    h = hashlib.blake2b(digest_size=16)
    h.update(b"ipc\0")
    h.update(sink.getvalue())
    return h.hexdigest()


def text_digest(text: str) -> str:
    """The DIGESTS form of a text's UTF-8 (compared with an item's joined bytes)."""
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class _Group:
    """One decoded row group of tokens.parquet, and its numpy arrays once asked for.
    `part_codes`: its part column as read, dictionary-encoded (TokenArrays reads the codes)."""

    def __init__(self, table: Any, part_codes: Any = None):
        self.table = table
        self._part_codes = part_codes
        self._arrays: TokenArrays | None = None

    def arrays(self) -> TokenArrays:
        if self._arrays is None:
            self._arrays = TokenArrays(self.table, self._part_codes)
            self._part_codes = None
        return self._arrays


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
        self._digests: dict[str, list[Any]] = {}
        self._group: tuple[int, _Group] | None = None
        self._pool: Any = None          # read_ahead()'s thread
        self._ahead: tuple[int, Any] | None = None
        self._text_ahead = False
        parquet = self.run_dir / TOKENS
        if parquet.exists():
            import pyarrow.parquet as pq

            try:
                # part (a couple of values) read as a dictionary: ~1.5 ms a row group less to
                # decode, and the codes the text layout needs (decoded back to strings in the table)
                self._parquet = pq.ParquetFile(parquet, read_dictionary=["part"])
                leaves = _dictionary_leaves(self._parquet)
                if leaves:
                    self._parquet = pq.ParquetFile(parquet, read_dictionary=["part"] + leaves,
                                                   metadata=self._parquet.metadata)
                meta = self._parquet.metadata.metadata or {}
                self._pq_index = {k: tuple(v) for k, v in json.loads(meta[b"evalsuite.items"]).items()}
                self._digests = json.loads(meta[DIGESTS.encode()]) if DIGESTS.encode() in meta else {}
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
            return self._decoded(group).table.slice(start, count)
        if n == 0:
            return token_schema().empty_table()
        raise RunFolderError(f"{self.run_dir}: item {item_id} has {n} token entries but none are stored "
                             f"({TOKENS}, {TOKENS_LIVE})")

    def arrays(self, item_id: str) -> "ItemArrays | None":
        """The item's tokens as numpy views (store/token_arrays.py), or None when none are
        stored: for tokens.parquet a slice of its row group's arrays, built once per group."""
        if self.counts.get(item_id) is not None and item_id in self._pq_index and item_id not in self.inline \
                and item_id not in self._live:
            group, start, count = self._pq_index[item_id]
            return self._decoded(group).arrays().item(start, count)
        return ItemArrays.of(self.table(item_id))

    def digest(self, item_id: str) -> list[Any] | None:
        """The item's DIGESTS entry when tokens.parquet serves it and has one, else None."""
        if item_id in self.inline or item_id in self._live or item_id not in self._pq_index:
            return None
        entry = self._digests.get(item_id)
        if not isinstance(entry, list) or len(entry) != 5 or self.counts.get(item_id) != self._pq_index[item_id][2]:
            return None
        return entry

    def read_ahead(self, text_layout: bool = False) -> None:
        """Items will be asked for in file order (a diff): decode the next row group in a
        background thread while this one is walked (Parquet reading, Arrow and numpy
        release the GIL), with its arrays (and their text layout, when asked: the baseline's,
        which a divergent item reads). At most two groups are held."""
        self._text_ahead = text_layout
        if self._parquet is not None and self._parquet.metadata.num_row_groups > 1 and self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tokens-read-ahead")

    def _decoded(self, group: int) -> "_Group":
        if self._group is not None and self._group[0] == group:
            return self._group[1]
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == group:
            decoded = ahead[1].result()
        elif self._pool is not None:    # one reader thread: the ParquetFile is never read by two at once
            decoded = self._pool.submit(self._read_group, group, True).result()
        else:
            decoded = self._read_group(group, False)
        self._group = (group, decoded)
        if self._pool is not None and group + 1 < self._parquet.metadata.num_row_groups:
            self._ahead = (group + 1, self._pool.submit(self._read_group, group + 1, True))
        return decoded

    def _read_group(self, group: int, with_arrays: bool) -> "_Group":
        import pyarrow as pa

        # the columns that are all null in the common case are read only where needed
        columns = [name for name in self._parquet.schema_arrow.names if name != "item" and name not in _READ_WHEN_NEEDED]
        # read ahead, each run's reader is a thread of its own: no pool of column threads on top
        threads = not with_arrays

        def read_stored(name: str) -> Any:
            return self._parquet.read_row_group(group, columns=[name], use_threads=threads).column(0).combine_chunks()
        stored = self._parquet.read_row_group(group, columns=columns, use_threads=threads)
        part = stored.column("part")
        part = part.chunk(0) if part.num_chunks == 1 and pa.types.is_dictionary(part.type) else None
        decoded = _Group(_decode_tokens(stored, read_stored), part)
        if with_arrays:
            arrays = decoded.arrays()
            arrays.count_ahead()
            if self._text_ahead:
                arrays.text_layout()
        return decoded

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool, self._ahead = None, None

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
            use_dictionary=["item", "token", "bytes", "part", "id"] + [f"{name}.list.element" for name in _DICT_LISTS],
            use_byte_stream_split=["logprob", "top_logprob.list.element"])
        self._schema = pa.schema([("item", pa.string())] + list(token_schema()))
        self.rows_per_group = rows_per_group
        self.index: dict[str, list[int]] = {}
        self.digests: dict[str, list[Any]] = {}
        self._pending: list[Any] = []
        self._pending_ids: list[str] = []
        self._rows = self._group = 0

    def add(self, item_id: str, table) -> None:
        """One item's tokens (a token_schema() table)."""
        pa = self._pa
        n = table.num_rows
        self.index[item_id] = [self._group, self._rows, n]
        self._pending.append(table.add_column(0, "item", pa.array([item_id] * n, pa.string())).cast(self._schema))
        self._pending_ids.append(item_id)
        self._rows += n
        if self._rows >= self.rows_per_group:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            group = self._pa.concat_tables(self._pending)
            self._writer.write_table(_encode_tokens(group), row_group_size=self._rows + 1)
            self.digests.update(item_digests(group.drop_columns(["item"]), self._pending_ids,
                                             [t.num_rows for t in self._pending], [t.drop_columns(["item"]) for t in self._pending]))
            self._pending, self._pending_ids, self._rows, self._group = [], [], 0, self._group + 1

    def __enter__(self) -> "TokenParquetWriter":
        return self

    def __exit__(self, kind, value, tb) -> None:
        try:
            if kind is None:
                self._flush()
                self._writer.add_key_value_metadata({"evalsuite.items": json.dumps(self.index, separators=(",", ":")),
                                                     DIGESTS: json.dumps(self.digests, separators=(",", ":"))})
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
    latest, inline = _read(run_dir / RECORDS, drop=bulky(keep=("server_timings",)) + ("verdict",))
    streams = TokenStreams(run_dir, {i: r.get(TOKEN_FIELD) for i, r in latest.items()}, inline)
    rank = {i: n for n, i in enumerate(order)}
    ids = sorted((i for i, r in latest.items() if r.get(TOKEN_FIELD) is not None and i not in inline),
                 key=lambda i: (rank.get(latest[i]["id"], len(rank)), latest[i].get(SAMPLE_FIELD) or 0))
    with TokenParquetWriter(run_dir / TOKENS) as writer:
        for item_id in ids:
            writer.add(item_id, streams.table(item_id))
    live.unlink()
