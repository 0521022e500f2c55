"""Token streams in memory: one response's generated tokens with their top-K alternatives
as Arrow columns (TokenColumns), the token_schema() every stored stream follows, and counting
the tokens that were not the server's own top-1 (the run's greedy check and the lossless diff
both read it)."""
from __future__ import annotations

import math
from itertools import chain, repeat
from typing import Any, Iterable, Sequence

# A token is "not its own top-1" only when an alternative beats it by more than float rounding.
NOT_TOP1_EPS = 1e-5


class TokenColumns:
    """One response's generated tokens with their top-K alternatives, as the server sent them
    (chat-API logprob entries: token, bytes, id, logprob, top_logprobs) plus the part of the
    text each belongs to. Collecting is one append per token (the client's hot path); every
    BATCH tokens are converted to Arrow columns in one call, so a long response holds few
    Python objects (which also keeps the garbage collector's scans short). A `bytes` value that
    is the UTF-8 of its token's text (nearly all of them) is not converted itself: the text
    column cast to binary holds the same values (_columns_from_entries)."""

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
        """The pending entries to one Arrow batch (_columns_from_entries)."""
        if not self._raw:
            return
        self._batches.append(_columns_from_entries(self._raw, self._parts))
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


_WIRE: dict[bool, Any] = {}


def _wire_type(with_bytes: bool = True):
    """The Arrow type of a chat-API entry (token, bytes, id, logprob, top_logprobs), or of one
    without the bytes (keys not in a struct type are not read)."""
    if with_bytes not in _WIRE:
        import pyarrow as pa

        alt = [("token", pa.string())] + ([("bytes", pa.list_(pa.uint8()))] if with_bytes else []) \
            + [("id", pa.int32()), ("logprob", pa.float64())]
        _WIRE[with_bytes] = pa.struct(alt + [("top_logprobs", pa.list_(pa.struct(alt)))])
    return _WIRE[with_bytes]


def _columns_from_entries(entries: list[dict[str, Any]], parts: list[str]):
    """Chat-API entries (dicts) to one token_schema() batch. The usual batch, where every `bytes`
    value is the UTF-8 of its text, is converted without the bytes (_utf8_columns); any other
    goes through Arrow as a whole, and where that fails (values of unexpected types: bytes out of
    0..255, a non-string token ...) through _clean_entry, which keeps what is well-formed and
    nulls the rest. Both give the same columns (tests/test_token_columns.py)."""
    import pyarrow as pa

    failures = (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError)
    part_column = pa.array(parts, pa.string())
    try:
        batch = _utf8_columns(entries, part_column)
    except failures:
        batch = None   # something unexpected: Arrow on the whole entries says what is kept
    if batch is not None:
        return batch
    try:
        return _columns_from_wire(pa.array(entries, type=_wire_type()), part_column)
    except failures:
        clean = [_clean_entry(e) for e in entries]
        return _columns_from_wire(pa.array(clean, type=_wire_type()), part_column)


def _utf8_columns(entries: list[dict[str, Any]], parts):
    """The batch of `entries` when every token's and every alternative's `bytes` is the list of
    the UTF-8 bytes of its text, else None. Arrow converts the entries without their bytes (the
    lists of ints cost as much to convert as all the rest), and the binary columns are the text
    columns cast to binary (no copy): the values _columns_from_wire gives. Raises where an entry
    or alternative is not what Arrow or the check reads (the caller then converts the whole)."""
    import pyarrow as pa

    converted = pa.array(entries, type=_wire_type(with_bytes=False))
    get = dict.get   # dict.get(entry, key) over a list, in C (map): no Python code per token
    alts = list(chain.from_iterable(map(get, entries, repeat("top_logprobs"))))
    for rows in (entries, alts):
        texts = list(map(get, rows, repeat("token")))
        received = list(map(get, rows, repeat("bytes")))
        # a text seen before is looked up; the first time, _UNKNOWN (equal to nothing) fails the
        # comparison and it is learnt
        if list(map(_UTF8_LISTS.get, texts, repeat(_UNKNOWN))) != received and _utf8_lists(texts) != received:
            return None
    return _columns_from_wire(converted, parts)


# text -> its UTF-8 as the chat API spells it, a list of ints ([104, 105] for "hi"), for the
# bytes check of _utf8_columns. A run's texts repeat (its vocabulary): shared by all responses,
# emptied when it holds _UTF8_LISTS_MAX texts.
_UTF8_LISTS: dict[Any, Any] = {}
_UTF8_LISTS_MAX = 1 << 17
_NEVER = object()   # equal to no received value: for a text whose bytes must be converted as sent
_UNKNOWN = object()


def _utf8_lists(texts: list[Any]) -> list[Any]:
    """The UTF-8 lists of `texts`, in order (TypeError for an unhashable text)."""
    known = list(map(_UTF8_LISTS.get, texts, repeat(_UNKNOWN)))
    if len(_UTF8_LISTS) + len(texts) > _UTF8_LISTS_MAX:
        _UTF8_LISTS.clear()
    for i, text in enumerate(texts):
        if known[i] is _UNKNOWN:
            known[i] = _UTF8_LISTS[text] = _utf8_list(text)
    return known


def _utf8_list(text: Any) -> Any:
    """_NEVER where `text` is not a string, not encodable (a lone surrogate, which the stdlib's
    JSON reader lets through), or holds U+0000 or U+0001: `false` and `true` equal 0 and 1 in a
    list, and Arrow refuses booleans, so such bytes must go through Arrow as received."""
    if type(text) is not str:
        return _NEVER
    try:
        utf8 = text.encode("utf-8")
    except UnicodeEncodeError:
        return _NEVER
    return _NEVER if b"\x00" in utf8 or b"\x01" in utf8 else list(utf8)


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
    alts = top.values if top.values is not None else pa.array([], entries.type.field("top_logprobs").type.value_type)

    def listed(values):
        return pa.ListArray.from_arrays(offsets, values)

    def binary(struct):   # without a bytes field: every bytes value is the UTF-8 of its text
        if struct.type.get_field_index("bytes") < 0:
            return struct.field("token").cast(pa.binary())
        return _to_binary(struct.field("bytes"))

    cols = [entries.field("token"), binary(entries), entries.field("id"),
            entries.field("logprob").cast(pa.float32(), safe=False), parts,
            listed(alts.field("token")), listed(binary(alts)), listed(alts.field("id")),
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


def _float(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if isinstance(value, (int, float)) and value == -math.inf:
        return -math.inf
    return None


def not_top1_count(entries: Sequence[dict[str, Any]] | None) -> int:
    """Positions of a logprob stream (record["logprobs"]) where the emitted token is not the
    server's own top-1: an alternative beats it by more than NOT_TOP1_EPS nats. At temperature 0
    that means the server did not decode greedily (llama-cpp-python's default repeat_penalty 1.1
    does this). An emitted partial-byte token that reads "" is skipped: llama-cpp-python merges
    every such token into one "" entry, so its rank cannot be read."""
    count = 0
    for e in entries or ():
        if not isinstance(e, dict):
            continue
        lp = _float(e.get("logprob"))
        if lp is None or (e.get("token") in ("", None) and e.get("id") is None and e.get("bytes") is None):
            continue
        best = max((v for v in (_float(t.get("logprob")) for t in (e.get("top") or ()) if isinstance(t, dict))
                    if v is not None), default=None)
        if best is not None and best > lp + NOT_TOP1_EPS:
            count += 1
    return count


def not_top1_in_columns(batch: Any) -> int:
    """not_top1_count over a token_schema() Arrow batch, vectorised: the
    run's hot path must not build a Python object per token."""
    import numpy as np

    return int(np.count_nonzero(not_top1_mask(batch)))


def not_top1_mask(batch: Any) -> Any:
    """Per position of a token_schema() Arrow batch: is the emitted token not its own top-1
    (not_top1_count's test, as a numpy bool array)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    top = batch.column("top_logprob")
    lengths = pc.fill_null(pc.list_value_length(top), 0).to_numpy(zero_copy_only=False)
    values = pc.fill_null(pc.list_flatten(top), -np.inf).to_numpy(zero_copy_only=False).astype(np.float64)
    best = np.full(len(batch), -np.inf)
    has = lengths > 0
    if values.size:
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        best[has] = np.maximum.reduceat(values, starts[has])
    chosen = pc.fill_null(batch.column("logprob").cast(pa.float64()), np.nan).to_numpy(zero_copy_only=False)
    # a "" partial-byte token with no id and no bytes cannot be ranked (llama-cpp-python merges them)
    opaque = (pc.fill_null(pc.equal(batch.column("token"), ""), True).to_numpy(zero_copy_only=False)
              & pc.is_null(batch.column("id")).to_numpy(zero_copy_only=False)
              & pc.is_null(batch.column("bytes")).to_numpy(zero_copy_only=False))
    with np.errstate(invalid="ignore"):
        beaten = best > chosen + NOT_TOP1_EPS
    return beaten & ~np.isnan(chosen) & ~opaque
