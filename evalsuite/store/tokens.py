"""Token streams in memory: one response's generated tokens with their top-K alternatives
as Arrow columns (TokenColumns), the token_schema() every stored stream follows, and counting
the tokens that were not the server's own top-1 (the run's greedy check and the lossless diff
both read it)."""
from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

# A token is "not its own top-1" only when an alternative beats it by more than float rounding.
NOT_TOP1_EPS = 1e-5


class TokenColumns:
    """One response's generated tokens with their top-K alternatives, as the server sent them
    (chat-API logprob entries: token, bytes, id, logprob, top_logprobs) plus the part of the
    text each belongs to.

    Collecting takes each entry apart at once into flat lists, one per column (the client's
    hot path): the parsed JSON objects are let go right after their event, so the next event
    is parsed into the same, cache-warm memory. Keeping the entries and converting them in
    batches cost about twice the CPU per token (the dicts of 32 interleaved streams spread
    over memory; docs/performance.md). Every BATCH tokens the lists become Arrow columns, so a
    long response holds few Python objects. A field of an unexpected type (bytes out of
    0..255, a non-string token, a float or bool id, a bool logprob ...) is kept as null, the
    rest of the entry as sent; a non-object alternative is dropped."""

    __slots__ = ("_token", "_bytes", "_id", "_logprob", "_part", "_top_token", "_top_bytes", "_top_id",
                 "_top_logprob", "_top_end", "_batches", "_n")
    BATCH = 256

    def __init__(self) -> None:
        self._batches: list[Any] = []
        self._n = 0
        self._reset()

    def _reset(self) -> None:
        self._token: list[Any] = []
        self._bytes: list[bytes | None] = []
        self._id: list[Any] = []
        self._logprob: list[Any] = []
        self._part: list[str] = []
        self._top_token: list[Any] = []
        self._top_bytes: list[bytes | None] = []
        self._top_id: list[Any] = []
        self._top_logprob: list[Any] = []
        self._top_end: list[int] = [0]   # list offsets: where each token's alternatives end

    def __len__(self) -> int:
        return self._n

    def extend(self, entries: Iterable[Any], part: str) -> None:
        """Chat-API entries, as received (non-objects are skipped)."""
        token, raw, ids, lps, parts = self._token, self._bytes, self._id, self._logprob, self._part
        top_token, top_bytes, top_id, top_lp, top_end = (self._top_token, self._top_bytes, self._top_id,
                                                          self._top_logprob, self._top_end)
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            get = entry.get
            token.append(get("token"))
            b = get("bytes")
            if type(b) is list:   # the wire's form: a list of byte values (inline: the hot path)
                try:
                    b = bytes(b)
                except (TypeError, ValueError):
                    b = None
            elif b is not None:
                b = _as_bytes(b)
            raw.append(b)
            ids.append(get("id"))
            lps.append(get("logprob"))
            parts.append(part)
            top = get("top_logprobs")
            if type(top) is list:
                for alt in top:
                    if type(alt) is not dict and not isinstance(alt, dict):
                        continue
                    get = alt.get
                    top_token.append(get("token"))
                    b = get("bytes")
                    if type(b) is list:
                        try:
                            b = bytes(b)
                        except (TypeError, ValueError):
                            b = None
                    elif b is not None:
                        b = _as_bytes(b)
                    top_bytes.append(b)
                    top_id.append(get("id"))
                    top_lp.append(get("logprob"))
            top_end.append(len(top_token))
            self._n += 1
        if len(token) >= self.BATCH:
            self._convert()

    def add(self, token: Any, raw: Any, token_id: Any, logprob: Any, part: str, top: Iterable[dict[str, Any]]) -> None:
        self.extend(({"token": token, "bytes": raw, "id": token_id, "logprob": logprob, "top_logprobs": list(top)},), part)

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
        """The pending lists to one Arrow batch."""
        import pyarrow as pa

        if not self._token:
            return
        offsets = pa.array(self._top_end, pa.int32())

        def listed(values):
            return pa.ListArray.from_arrays(offsets, values)

        cols = [_texts(self._token), pa.array(self._bytes, pa.binary()), _ids(self._id), _logprobs(self._logprob),
                pa.array(self._part, pa.string()), listed(_texts(self._top_token)), listed(pa.array(self._top_bytes, pa.binary())),
                listed(_ids(self._top_id)), listed(_logprobs(self._top_logprob))]
        self._batches.append(pa.RecordBatch.from_arrays(cols, schema=token_schema()))
        self._reset()

    def to_arrow(self):
        """All tokens as one token_schema() record batch."""
        import pyarrow as pa

        self._convert()
        if not self._batches:
            return pa.RecordBatch.from_pylist([], schema=token_schema())
        if len(self._batches) > 1:
            self._batches = [pa.Table.from_batches(self._batches).combine_chunks().to_batches()[0]]
        return self._batches[0]


# A column of one field: Arrow converts it in one call where every value has the expected type
# (checked first: Arrow itself would read 3.5 as the id 3 and True as the logprob 1.0); otherwise
# each value is kept or nulled by itself.
_NONE = type(None)
_TEXT_TYPES = frozenset((str, _NONE))
_NUMBER_TYPES = frozenset((float, int, _NONE))


def _texts(values: list[Any]):
    import pyarrow as pa

    if _TEXT_TYPES.issuperset(map(type, values)):
        return pa.array(values, pa.string())
    return pa.array([v if isinstance(v, str) else None for v in values], pa.string())


def _ids(values: list[Any]):
    import pyarrow as pa

    try:
        # inferred: int64 only where every value is an int or None (a float makes it double, a
        # bool beside an int raises); int32's range checked by the cast
        inferred = pa.array(values)
        if inferred.type == pa.int64() or inferred.type == pa.null():
            return inferred.cast(pa.int32())
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        pass
    return pa.array([_clean_id(v) for v in values], pa.int32())


def _logprobs(values: list[Any]):
    import pyarrow as pa

    if _NUMBER_TYPES.issuperset(map(type, values)):
        try:
            return pa.array(values, pa.float32())   # a double rounded to the nearest float32
        except (pa.ArrowInvalid, OverflowError):   # an int past 2**24 or int64: float() below
            pass
    return pa.array([_clean_float(v) for v in values], pa.float64()).cast(pa.float32(), safe=False)


def _clean_id(value: Any) -> int | None:
    return value if type(value) is int and -2**31 <= value < 2**31 else None


def _clean_float(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:   # an int too large for a float
            return None
    return None


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
