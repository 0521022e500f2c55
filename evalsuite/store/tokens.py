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
