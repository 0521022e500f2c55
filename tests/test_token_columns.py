"""TokenColumns takes each logprob entry apart as it arrives (flat lists, one per column) instead
of keeping the parsed entries and converting them in batches through one nested Arrow struct.
These tests hold the new path to the old one: the same Arrow columns for every well-formed entry,
and for malformed ones the old clean-up's rules (a bad field null, a non-object alternative
dropped), entry by entry."""
from __future__ import annotations

import math
import sys
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalsuite.store import TokenColumns, token_schema


# ----------------------------------------------------------------------------- the old path, as it was

def _wire_type():
    alt = [("token", pa.string()), ("bytes", pa.list_(pa.uint8())), ("id", pa.int32()), ("logprob", pa.float64())]
    return pa.struct(alt + [("top_logprobs", pa.list_(pa.struct(alt)))])


def _to_binary(lists):
    return pa.array([None if v is None else bytes(v) for v in lists.to_pylist()], pa.binary())


def _old_columns(entries: list[dict], parts: list[str]):
    """The struct conversion the client used before (tokens.py up to 2026-12-02)."""
    wire = pa.array(entries, type=_wire_type())
    top = pa.concat_arrays([wire.field("top_logprobs")])
    offsets = top.offsets
    alts = top.values

    def listed(values):
        return pa.ListArray.from_arrays(offsets, values)

    cols = [wire.field("token"), _to_binary(wire.field("bytes")), wire.field("id"),
            wire.field("logprob").cast(pa.float32(), safe=False), pa.array(parts, pa.string()),
            listed(alts.field("token")), listed(_to_binary(alts.field("bytes"))), listed(alts.field("id")),
            listed(alts.field("logprob").cast(pa.float32(), safe=False))]
    return pa.RecordBatch.from_arrays(cols, schema=token_schema())


def _clean_value(entry: dict) -> dict:
    """The old clean-up of a malformed entry's fields (tokens._clean_value up to 2026-12-02)."""
    token, raw, token_id, lp = entry.get("token"), entry.get("bytes"), entry.get("id"), entry.get("logprob")
    try:
        b = bytes(raw) if isinstance(raw, (list, tuple, bytes, bytearray)) else None
    except (TypeError, ValueError):
        b = None
    number = isinstance(lp, (int, float)) and not isinstance(lp, bool)
    return {"token": token if isinstance(token, str) else None,
            "bytes": None if b is None else list(b),
            "id": token_id if type(token_id) is int and -2**31 <= token_id < 2**31 else None,
            # past float32's range a double is +-inf in the column, as the double cast makes it
            # (the old clean-up nulled |lp| >= 1e308 only, but made 1e300 inf: one rule now)
            "logprob": float(lp) if number and abs(lp) <= sys.float_info.max else None}


def _clean_entry(entry: dict) -> dict:
    top = entry.get("top_logprobs")
    return dict(_clean_value(entry), top_logprobs=[_clean_value(t) for t in (top if isinstance(top, list) else ())
                                                   if isinstance(t, dict)])


def _new_columns(entries: list[Any], part: str = "reasoning", batch: int | None = None):
    cols = type("SmallBatches", (TokenColumns,), {"__slots__": (), "BATCH": batch})() if batch else TokenColumns()
    for i in range(0, len(entries), 4):   # a smaller BATCH: several conversions in one test
        cols.extend(entries[i:i + 4], part)
    return cols.to_arrow()


def _same(a, b) -> bool:
    """Equal column by column, NaN equal to NaN."""
    for name in token_schema().names:
        x, y = a.column(name).to_pylist(), b.column(name).to_pylist()
        if _nan_key(x) != _nan_key(y):
            return False
    return True


def _nan_key(values):
    if isinstance(values, list):
        return [_nan_key(v) for v in values]
    if isinstance(values, float) and math.isnan(values):
        return "nan"
    return values


# ----------------------------------------------------------------------------- entries as servers send them

texts = st.text(max_size=6)
byte_lists = st.lists(st.integers(0, 255), max_size=6)
ids = st.integers(-2**31, 2**31 - 1)
logprobs = st.one_of(st.floats(allow_nan=False, allow_infinity=False, width=64), st.integers(-50, 0))


def alternative(token=texts, raw=byte_lists, token_id=ids, lp=logprobs):
    return st.fixed_dictionaries({}, optional={"token": token, "bytes": raw, "id": token_id, "logprob": lp})


well_formed = st.lists(st.builds(lambda a, top: dict(a, top_logprobs=top), alternative(), st.lists(alternative(), max_size=6)),
                       max_size=40)

# anything JSON can give in a field's place, and a few out-of-range values
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(width=64), texts,
                         st.lists(st.integers(-3, 300), max_size=3), st.just({"a": 1}), st.just(3.5), st.just(2.0))
odd_alternative = alternative(json_scalars, json_scalars, json_scalars, json_scalars)
odd_entries = st.lists(st.one_of(
    st.builds(lambda a, top: dict(a, top_logprobs=top), odd_alternative,
              st.one_of(st.lists(st.one_of(odd_alternative, json_scalars), max_size=5), json_scalars)),
    json_scalars), max_size=30)


@settings(max_examples=300, deadline=None)
@given(well_formed, st.sampled_from([None, 1, 7]))
def test_well_formed_entries_give_the_old_columns(entries, batch):
    old = _old_columns(entries, ["reasoning"] * len(entries)) if entries else TokenColumns().to_arrow()
    assert _same(_new_columns(entries, batch=batch), old)


@settings(max_examples=400, deadline=None)
@given(odd_entries, st.sampled_from([None, 3]))
def test_malformed_fields_are_nulled_and_non_objects_dropped_entry_by_entry(entries, batch):
    kept = [_clean_entry(e) for e in entries if isinstance(e, dict)]
    expected = _old_columns(kept, ["answer"] * len(kept)) if kept else TokenColumns().to_arrow()
    got = _new_columns(entries, "answer", batch=batch)
    assert len(got) == len(kept)
    assert _same(got, expected)


def test_the_values_arrow_would_bend_are_nulled_not_read():
    """Arrow itself reads the id 3.5 as 3 and the logprob true as 1.0; the client keeps neither."""
    entries = [{"token": "a", "bytes": [97], "id": 3.5, "logprob": True,
                "top_logprobs": [{"token": "a", "bytes": [97], "id": True, "logprob": -0.5},
                                 {"token": b"b", "bytes": "b", "id": 2**31, "logprob": "x"},
                                 None, 7]},
               {"token": "c", "bytes": [99, 300], "id": 9, "logprob": 10**400, "top_logprobs": {"token": "c"}}]
    got = _new_columns(entries).to_pylist()
    assert [(r["token"], r["bytes"], r["id"], r["logprob"]) for r in got] == [("a", b"a", None, None), ("c", None, 9, None)]
    assert got[0]["top_token"] == ["a", None] and got[0]["top_bytes"] == [b"a", None]
    assert got[0]["top_id"] == [None, None] and got[0]["top_logprob"] == [-0.5, None]
    assert got[1]["top_token"] == [] and got[1]["top_logprob"] == []


def test_a_long_stream_is_converted_in_batches_and_reads_back_whole():
    entries = [{"token": f" w{i}", "bytes": list(f" w{i}".encode()), "id": i, "logprob": -i / 1000,
                "top_logprobs": [{"token": f" w{i}", "bytes": list(f" w{i}".encode()), "id": i, "logprob": -i / 1000},
                                 {"token": f" v{i}", "bytes": list(f" v{i}".encode()), "id": i + 1, "logprob": -9.0}]}
               for i in range(1000)]
    cols = TokenColumns()
    for i in range(0, 1000, 3):
        cols.extend(entries[i:i + 3], "reasoning" if i < 900 else "answer")
    assert len(cols) == 1000
    assert len(cols._batches) == 1000 // TokenColumns.BATCH   # converted as it went, not at the end
    batch = cols.to_arrow()
    assert batch.schema == token_schema() and len(batch) == 1000
    assert _same(batch, _old_columns(entries, ["reasoning"] * 900 + ["answer"] * 100))


def test_add_and_from_entries_take_the_same_path():
    entries = [{"token": "x", "bytes": [120], "id": 5, "logprob": -0.25, "part": "answer",
                "top": [{"token": "x", "bytes": [120], "id": 5, "logprob": -0.25}, "junk"]}]
    cols = TokenColumns.from_entries(entries)
    assert cols.entries() == [{"token": "x", "bytes": [120], "id": 5, "logprob": -0.25, "part": "answer",
                               "top": [{"token": "x", "bytes": [120], "id": 5, "logprob": -0.25}]}]


@pytest.mark.parametrize("raw", [(1, 2), bytearray(b"\x01\x02"), b"\x01\x02"])
def test_bytes_given_as_a_tuple_or_bytes_are_kept(raw):
    got = _new_columns([{"token": "t", "bytes": raw, "id": 1, "logprob": -1.0}]).to_pylist()
    assert got[0]["bytes"] == b"\x01\x02"


def test_logprobs_round_to_float32_as_the_double_cast_does():
    """The column is converted to float32 in one step; every double, random bit patterns and the
    edge cases included, gets the float32 of the old float64 -> float32 cast, bit for bit."""
    import random
    import struct

    import numpy as np

    rng = random.Random(7)
    values = [1e300, -1e300, 1e-46, 2**-149, 2**-150, 3 * 2**-151, -0.0, math.inf, -math.inf, 1 + 2**-24,
              1 + 3 * 2**-24, 3.4028235677973366e38, 16777216.0, 16777217.0, 5, -3, 2**24 + 1, 2**70]
    values += [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(20_000)]
    values += [rng.uniform(-30, 0) for _ in range(20_000)]
    got = _new_columns([{"token": "t", "logprob": v} for v in values]).column("logprob")
    want = pa.array([float(v) for v in values], pa.float64()).cast(pa.float32(), safe=False)
    g, w = got.to_numpy(zero_copy_only=False), want.to_numpy(zero_copy_only=False)
    both_nan = np.isnan(g) & np.isnan(w)
    assert ((g.view(np.uint32) == w.view(np.uint32)) | both_nan).all()
