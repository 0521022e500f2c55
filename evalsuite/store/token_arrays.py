"""A decoded token table (token_schema(), one or many items: a whole row group of
tokens.parquet) as numpy arrays, made once, and per-item views that slice them.

A large `diff` asks the same few questions of every item (are the ids and bytes the same on
both sides, do the bytes spell the text, how many tokens were not their own top-1, are the
numbers on the common prefix the same); asked of Arrow slices item by item they cost ~40
Arrow calls an item, more than reading the file. Here each question is a numpy slice of
arrays built once per row group. Every answer is what the Arrow computation gives; where a
shape is unusual (nulls, NaN) a view answers None and the caller takes the Arrow path.
"""
from __future__ import annotations

from typing import Any

_TOP = ("top_token", "top_bytes", "top_id", "top_logprob")


def _chunk(table: Any, name: str) -> Any:
    import pyarrow as pa

    column = table.column(name)
    if column.num_chunks == 1:
        return column.chunk(0)
    return pa.concat_arrays(column.chunks) if column.num_chunks else pa.array([], column.type)


def _binary(arr: Any) -> tuple[Any, Any, Any]:
    """(valid bool[n], offsets int32[n+1] (a view of the Arrow buffer), data bytes) of a binary
    or string array."""
    import numpy as np

    n = len(arr)
    valid = _valid(arr)
    bufs = arr.buffers()
    if bufs[1] is None:
        return valid, np.zeros(n + 1, np.int32), b""
    offsets = np.frombuffer(bufs[1], dtype=np.int32)[arr.offset:arr.offset + n + 1]
    data = memoryview(bufs[2]) if bufs[2] is not None else memoryview(b"")
    return valid, offsets, data


def _values(arr: Any, fill: Any) -> Any:
    """arr.fill_null(fill) as numpy: the Arrow buffer itself (read-only) where there is no null."""
    if arr.null_count == 0:
        return arr.to_numpy(zero_copy_only=False)
    return arr.fill_null(fill).to_numpy(zero_copy_only=False)


def _valid(arr: Any) -> Any:
    import numpy as np
    import pyarrow.compute as pc

    if arr.null_count == 0:
        return np.ones(len(arr), bool)
    return pc.is_valid(arr).to_numpy(zero_copy_only=False)


def _list_lengths(arr: Any) -> Any:
    """pc.list_value_length(arr) with nulls as 0, int64: from the offsets where no list is null."""
    import numpy as np
    import pyarrow.compute as pc

    if arr.null_count == 0:
        return np.diff(arr.offsets.to_numpy(zero_copy_only=False).astype(np.int64))
    return pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False).astype(np.int64)


def _same_offsets(a: Any, b: Any) -> bool:
    """Two list arrays with no null list that read their offsets from the same memory: the same
    list lengths, row for row."""
    if a.null_count or b.null_count or len(a) != len(b) or a.offset != b.offset:
        return False
    oa, ob = a.buffers()[1], b.buffers()[1]
    return oa is not None and ob is not None and oa.address == ob.address


def _same_buffers(a: Any, b: Any) -> bool:
    """Two binary/string arrays with no null that read their offsets and data from the same
    memory: the same bytes, value for value (a decoded group's top_bytes where every
    alternative's bytes are its text's UTF-8: the texts' own buffers, store.token_files)."""
    if a.null_count or b.null_count or len(a) != len(b) or a.offset != b.offset:
        return False
    (_, oa, da), (_, ob, db) = a.buffers(), b.buffers()
    if oa is None or ob is None or da is None or db is None:
        return False
    return oa.address == ob.address and da.address == db.address


def _not_top1(table: Any, cols: dict[str, Any], top_len: Any, top_lp: Any) -> Any:
    """tokens.not_top1_mask of the table, in numpy where every id is there (no opaque token)
    and no alternative's logprob is null: the best alternative of each row (the max is the
    same in float32), above the chosen logprob + NOT_TOP1_EPS, the chosen one not NaN/null."""
    import numpy as np
    import pyarrow as pa

    from .tokens import NOT_TOP1_EPS, not_top1_mask

    top = cols["top_logprob"]
    if cols["id"].null_count or top.null_count or top.values.null_count:
        return not_top1_mask(pa.RecordBatch.from_arrays([cols[f.name] for f in table.schema], schema=table.schema))
    best = np.full(len(top_len), -np.inf)
    has = top_len > 0
    width = int(top_len[0]) if len(top_len) else 0
    if width and top_lp.size == width * len(top_len) and bool((top_len == width).all()):
        # every row lists the same number of alternatives (the common case): a row-wise max,
        # ~5x faster than reduceat, taken column by column (np.max along a short last axis is
        # ~4x slower still: ~3 ms a 64k-row group); np.maximum passes a NaN on as np.max does
        rows = top_lp.reshape(len(top_len), width)
        best = rows[:, 0].copy()
        for slot in range(1, width):
            np.maximum(best, rows[:, slot], out=best)
        best = best.astype(np.float64)
    elif top_lp.size:
        starts = np.concatenate(([0], np.cumsum(top_len)[:-1]))
        best[has] = np.maximum.reduceat(top_lp, starts[has]).astype(np.float64)
    chosen = _values(cols["logprob"], np.nan).astype(np.float64)
    with np.errstate(invalid="ignore"):
        beaten = best > chosen + NOT_TOP1_EPS
    return beaten & ~np.isnan(chosen)


def _equal(x: Any, y: Any) -> bool:
    """np.array_equal of two arrays of one dtype holding no NaN: as bytes first (a memcmp,
    ~1 us against ~5 us for 2,500 values), by value only where the bytes differ (-0.0 == 0.0)."""
    return x.shape == y.shape and (x.tobytes() == y.tobytes() or bool((x == y).all()))


class TokenArrays:
    """The columns of a token_schema() table, as numpy, for slicing by item; the masks (nulls,
    NaN, not-top-1 ...) are counted over an item's range of rows."""

    def __init__(self, table: Any, part_codes: Any = None):
        """`part_codes`: the table's part column as read dictionary-encoded from Parquet (an
        Arrow DictionaryArray), which the text layout reads instead of encoding it again."""
        import numpy as np
        import pyarrow.compute as pc

        self.table = table
        self._part_codes = part_codes
        self.n = n = table.num_rows
        cols = {name: _chunk(table, name) for name in table.column_names}
        self.cols = cols

        id_valid = _valid(cols["id"])
        self.id_null = ~id_valid
        self.ids = _values(cols["id"], 0)
        bytes_valid, self.bytes_off, self.bytes_data = _binary(cols["bytes"])
        self.bytes_null = ~bytes_valid
        self.bytes_len = np.diff(self.bytes_off)
        lp_valid = _valid(cols["logprob"])
        self.lp_valid = lp_valid
        self.lp = _values(cols["logprob"], 0)
        with np.errstate(invalid="ignore"):
            self.lp_odd = ~lp_valid | np.isnan(self.lp)
        self.list_nulls = sum(cols[name].null_count for name in _TOP)
        self.top_len = _list_lengths(cols["top_logprob"])
        ragged = np.zeros(n, bool)
        for name in _TOP[:3]:
            # a decoded row group's four lists share one offsets buffer (store.token_files):
            # then they list as many alternatives row for row, without comparing
            if not _same_offsets(cols[name], cols["top_logprob"]):
                ragged |= _list_lengths(cols[name]) != self.top_len
        self.ragged = ragged
        self.top_off = np.zeros(n + 1, np.int64)
        np.cumsum(self.top_len, out=self.top_off[1:])
        self.flat = {name: pc.list_flatten(cols[name]) for name in _TOP}
        top_lp = self.flat["top_logprob"]
        top_lp_valid = _valid(top_lp)
        self.top_lp = _values(top_lp, 0)
        with np.errstate(invalid="ignore"):
            nan = np.isnan(self.top_lp)
            self.top_lp_odd = top_lp_valid & (nan | (self.top_lp == np.inf))   # NaN / +inf alternatives
            self.top_lp_bad = ~top_lp_valid | nan
        self.not_top1 = _not_top1(table, cols, self.top_len, self.top_lp) if n else np.zeros(0, bool)
        top_id = self.flat["top_id"]
        self.top_id_null = ~_valid(top_id)
        self.top_id = _values(top_id, 0)
        top_bytes_valid, self.top_bytes_off, self.top_bytes_data = _binary(self.flat["top_bytes"])
        self.top_bytes_null = ~top_bytes_valid
        self.top_bytes_are_texts = _same_buffers(self.flat["top_bytes"], self.flat["top_token"])
        self._text: tuple[Any, Any, list[Any]] | None = None
        self._runs: dict[int, tuple[Any, Any]] = {}
        self._measured: Any = None

    def held(self, mask: Any, lo: int, hi: int) -> int:
        """np.count_nonzero(mask[lo:hi]) for one of this group's masks (an attribute, held as
        long as the group): 0 at once where the group holds none, the common case; else from the
        mask's running count, made on first use. (A diff asks ~25 such counts an item: one numpy
        call each was ~1/6 of its per-item time.)"""
        import numpy as np

        entry = self._runs.get(id(mask))
        if entry is None or entry[0] is not mask:
            entry = self._runs[id(mask)] = (mask, np.cumsum(mask, dtype=np.int64) if mask.any() else None)
        run = entry[1]
        hi = min(hi, len(mask))
        if run is None or hi <= lo:
            return 0
        return int(run[hi - 1]) - (int(run[lo - 1]) if lo else 0)

    def count_ahead(self) -> None:
        """Make the running counts of the masks that usually hold rows (not-top-1, drift's
        positions) now: in a read-ahead thread, off the walk's."""
        for mask in (self.not_top1, self.measured_mask()):
            self.held(mask, 0, 0)

    def measured_mask(self) -> Any:
        """Rows with a top-K list and a finite logprob (drift's positions), made on first use."""
        if self._measured is None:
            import numpy as np

            self._measured = (self.top_len > 0) & self.lp_valid & np.isfinite(self.lp)
        return self._measured

    def text_layout(self) -> tuple[Any, Any, list[Any]]:
        """(the length in characters of each token's text, 0 for none; each token's part as a code; the
        part of each code, "" for none), made on first use (divergent items only)."""
        if self._text is None:
            import numpy as np
            import pyarrow.compute as pc

            token = self.cols["token"]
            valid, offsets, data = _binary(token)
            if not (np.frombuffer(data, np.uint8) >= 0x80).any():   # ASCII texts: a character a byte
                lengths = np.where(valid, np.diff(offsets), 0)
            else:
                lengths = pc.fill_null(pc.utf8_length(token), 0).to_numpy(zero_copy_only=False).astype(np.int64)
            parts = self._part_codes
            if parts is None or parts.null_count or parts.dictionary.null_count or len(parts) != self.n:
                parts = pc.dictionary_encode(pc.fill_null(self.cols["part"], ""))
            self._text = (lengths, parts.indices.to_numpy(zero_copy_only=False), parts.dictionary.to_pylist())
        return self._text

    def item(self, start: int, count: int) -> "ItemArrays":
        return ItemArrays(self, start, count)


class ItemArrays:
    """One item's rows [start, start + n) of a TokenArrays."""

    __slots__ = ("g", "start", "n", "_table", "_same")

    def __init__(self, group: TokenArrays, start: int, count: int):
        self.g, self.start, self.n = group, start, count
        self._table = None
        self._same: tuple[Any, int, bool] | None = None     # same_numbers' last (other, stop, answer)

    @classmethod
    def of(cls, table: Any) -> "ItemArrays | None":
        return None if table is None else TokenArrays(table).item(0, table.num_rows)

    @property
    def table(self) -> Any:
        if self._table is None:
            self._table = self.g.table.slice(self.start, self.n)
        return self._table

    def col(self, name: str, start: int = 0, stop: int | None = None) -> Any:
        """A token_schema() column of the item, rows [start, stop)."""
        stop = self.n if stop is None else stop
        return self.g.cols[name].slice(self.start + start, stop - start)

    def _stop(self, stop: int | None) -> int:
        return self.start + (self.n if stop is None else stop)

    def _flat(self, stop: int | None = None) -> tuple[int, int]:
        return int(self.g.top_off[self.start]), int(self.g.top_off[self._stop(stop)])

    def _rows_hold(self, mask: Any, stop: int | None = None) -> int:
        return self.g.held(mask, self.start, self._stop(stop))

    def _flat_hold(self, mask: Any, stop: int | None = None) -> int:
        lo, hi = self._flat(stop)
        return self.g.held(mask, lo, hi)

    def ids(self, stop: int | None = None) -> Any:
        return self.g.ids[self.start:self._stop(stop)]

    def ids_complete(self, stop: int | None = None) -> bool:
        return not self._rows_hold(self.g.id_null, stop)

    def bytes_complete(self) -> bool:
        return not self._rows_hold(self.g.bytes_null)

    def spelled(self) -> bytes:
        """The item's bytes, concatenated (bytes_complete() items)."""
        off = self.g.bytes_off
        return self.g.bytes_data[int(off[self.start]):int(off[self.start + self.n])].tobytes()

    def same_bytes(self, other: "ItemArrays") -> bool:
        """Row for row the same bytes (both bytes_complete(), the same length)."""
        import numpy as np

        return bool(np.array_equal(self.g.bytes_len[self.start:self._stop(None)],
                                   other.g.bytes_len[other.start:other._stop(None)])) and self.spelled() == other.spelled()

    def not_top1(self, stop: int | None = None) -> int:
        return self._rows_hold(self.g.not_top1, stop)

    def not_top1_mask(self) -> Any:
        return self.g.not_top1[self.start:self._stop(None)]

    def top_lengths(self) -> Any:
        return self.g.top_len[self.start:self._stop(None)]

    def ragged(self) -> bool:
        return bool(self._rows_hold(self.g.ragged))

    def odd_alternatives(self) -> bool:
        """A NaN or +inf among the alternatives' logprobs."""
        return bool(self._flat_hold(self.g.top_lp_odd))

    def flat(self, name: str, stop: int | None = None) -> Any:
        """The item's alternatives of rows [0, stop) of a top_* column, flattened (Arrow)."""
        lo, hi = self._flat(stop)
        return self.g.flat[name].slice(lo, hi - lo)

    def numbers_plain(self, stop: int) -> bool:
        """Rows [0, stop) have every number and key (no nulls, no NaN) and no null list: the
        shape numbers_equal decides exactly."""
        g = self.g
        return not (g.list_nulls or self._rows_hold(g.lp_odd, stop) or self._rows_hold(g.ragged, stop)
                    or self._flat_hold(g.top_lp_bad, stop) or self._flat_hold(g.top_id_null, stop)
                    or self._flat_hold(g.top_bytes_null, stop))

    def numbers_equal(self, other: "ItemArrays", stop: int) -> bool:
        """Rows [0, stop) carry the same logprob, top_id, top_logprob and top_bytes on both
        sides (numbers_plain() on both): Arrow's equals() of those columns."""
        a, b = self, other
        (la, ha), (lb, hb) = a._flat(stop), b._flat(stop)
        if not (_equal(a.g.top_len[a.start:a._stop(stop)], b.g.top_len[b.start:b._stop(stop)])
                and _equal(a.g.lp[a.start:a._stop(stop)], b.g.lp[b.start:b._stop(stop)])
                and _equal(a.g.top_id[la:ha], b.g.top_id[lb:hb])
                and _equal(a.g.top_lp[la:ha], b.g.top_lp[lb:hb])):
            return False
        # the alternatives' bytes: the same lengths (offsets from each item's first), then the
        # same bytes (a group-wide length array cost ~1.5 ms a group, more than its items' slices)
        oa, ob = a.g.top_bytes_off, b.g.top_bytes_off
        if not _equal(oa[la:ha + 1] - oa[la], ob[lb:hb + 1] - ob[lb]):
            return False
        # as bytes: memoryview == memoryview compares element by element (~10x slower than memcmp)
        return a.g.top_bytes_data[int(oa[la]):int(oa[ha])].tobytes() == b.g.top_bytes_data[int(ob[lb]):int(ob[hb])].tobytes()

    def same_numbers(self, other: "ItemArrays", stop: int) -> bool:
        """numbers_plain(stop) on both sides and numbers_equal(other, stop), remembered for this
        pair and stop: a divergent item's top-k check (lossless/columnar.py) and its drift
        shortcut (lossless/drift.py) ask the same of the same prefix."""
        memo = self._same
        if memo is not None and memo[0] is other and memo[1] == stop:
            return memo[2]
        answer = self.numbers_plain(stop) and other.numbers_plain(stop) and self.numbers_equal(other, stop)
        self._same = (other, stop, answer)
        return answer

    def measured(self, stop: int) -> int:
        """Rows of [0, stop) with a top-K list and a finite logprob (drift's positions)."""
        return self._rows_hold(self.g.measured_mask(), stop)

    def text_before(self, stop: int, part: str) -> tuple[Any, int]:
        """(the lengths in characters of the texts of rows [0, stop), the characters of those rows in
        `part`: a null or "" part counts as "answer")."""
        import numpy as np

        lengths, codes, names = self.g.text_layout()
        r = slice(self.start, self._stop(stop))
        in_part = np.zeros(r.stop - r.start, bool)
        for k, name in enumerate(names):        # a couple of parts: one comparison each
            if name == part or (part == "answer" and name == ""):
                in_part |= codes[r] == k
        return lengths[r], int(lengths[r][in_part].sum())
