"""TokenColumns' conversion of a batch of chat-API entries: the usual batch, where every `bytes`
value is the UTF-8 of its text, is converted without its bytes (store/tokens.py,
_utf8_columns); every batch must come out exactly as Arrow converting the whole entries gives
it (the conversion before that fast path), down to the record blob's bytes."""
from __future__ import annotations

import copy

import pyarrow as pa
import pytest

import evalsuite.store.tokens as tokens_module
from evalsuite.store import TokenColumns, _encode_blob
from evalsuite.store.tokens import _clean_entry, _columns_from_entries, _columns_from_wire, _utf8_columns, _wire_type


def whole_conversion(entries, parts):
    """The conversion of every batch before the fast path: Arrow on the whole entries, or on the
    cleaned entries where that fails."""
    part_column = pa.array(parts, pa.string())
    try:
        return _columns_from_wire(pa.array(entries, type=_wire_type()), part_column)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return _columns_from_wire(pa.array([_clean_entry(e) for e in entries], type=_wire_type()), part_column)


def entry(text, raw="utf8", token_id=7, logprob=-0.5, top=None):
    """A chat-API entry as llama-server streams it; raw "utf8": the text's own UTF-8 list."""
    def value(t, r, i, lp):
        return {"id": i, "token": t, "bytes": list(t.encode()) if r == "utf8" else r, "logprob": lp}
    alts = top if top is not None else [value(text, raw, token_id, logprob), value(" z", "utf8", 99, -3.0)]
    return dict(value(text, raw, token_id, logprob), top_logprobs=alts)


def same_as_whole(entries):
    parts = ["reasoning"] * (len(entries) // 2) + ["answer"] * (len(entries) - len(entries) // 2)
    expected = whole_conversion(copy.deepcopy(entries), parts)
    got = _columns_from_entries(entries, parts)
    assert got.equals(expected)
    assert got.to_pylist() == expected.to_pylist()
    cols = TokenColumns()
    cols.extend(entries, "answer")
    reference = TokenColumns()
    reference._batches = [whole_conversion(copy.deepcopy(entries), ["answer"] * len(entries))]
    reference._n = len(entries)
    # the record blob (tokens.arrows) byte for byte: tokens.parquet and its digests follow from it
    assert _encode_blob("x", cols) == _encode_blob("x", reference)
    return got


def fast(entries):
    return _utf8_columns(entries, pa.array(["answer"] * len(entries), pa.string())) is not None


def test_bytes_that_are_the_utf8_of_the_text_take_the_fast_path_and_give_the_same_columns():
    entries = [entry(t, token_id=i) for i, t in enumerate([" w1", "é", "中文", "", " 🙂", "\t\n", "a" * 40])]
    assert fast(entries)
    batch = same_as_whole(entries)
    assert batch.column("bytes").to_pylist()[1] == "é".encode()
    assert batch.column("top_bytes").to_pylist()[2][0] == "中文".encode()


@pytest.mark.parametrize("odd", [
    pytest.param(entry("", [228]), id="partial UTF-8, empty text"),
    pytest.param(entry("\ufffd", [228, 184]), id="partial UTF-8 shown as U+FFFD"),
    pytest.param(entry("<0xE4>", [228]), id="byte-fallback token"),
    pytest.param(entry(" a", None), id="bytes null"),
    pytest.param({"token": " a", "id": 3, "logprob": -0.1, "top_logprobs": [{"token": " a", "logprob": -0.1}]},
                 id="no bytes key (OpenAI-like alternatives)"),
    pytest.param(entry(" a", [32, 97, 0]), id="bytes longer than the text"),
    pytest.param(entry("a", [97], top=[{"token": "\ufffd", "bytes": [240, 159], "id": 5, "logprob": -2.0}]),
                 id="an alternative's partial UTF-8 only"),
    pytest.param(entry("\x01", [True]), id="a boolean equal to byte 1"),
    pytest.param(entry("\x00", [False]), id="a boolean equal to byte 0"),
    pytest.param(entry("h", [300]), id="a byte out of range"),
    pytest.param(entry("h", "h"), id="bytes as a string"),
    pytest.param(entry(5, [53]), id="a text that is not a string"),
])
def test_any_other_batch_is_converted_whole_and_keeps_its_bytes_exactly(odd):
    entries = [entry(" w1", token_id=1), odd, entry(" w2", token_id=2)]
    assert not _safe_fast(entries), "a batch whose bytes are not all the UTF-8 of their texts took the fast path"
    same_as_whole(entries)


@pytest.mark.parametrize("odd", [
    # Arrow reads 104.0 as the byte 104 and True as the logprob 1.0 (the whole conversion keeps
    # them): the fast path may take these, with the same result
    pytest.param(entry("h", [104.0]), id="a float equal to the byte"),
    pytest.param(dict(entry("h"), logprob=True), id="a boolean logprob"),
    pytest.param(entry("h", top=[None]), id="an alternative that is null"),
    pytest.param(dict(entry("h"), top_logprobs=None), id="alternatives null"),
    pytest.param(dict(entry("h"), top_logprobs={"not": "a list"}), id="alternatives not a list"),
    pytest.param(dict(entry("h"), id=2**40), id="an id out of int32"),
    pytest.param(dict(entry("h"), id=True), id="a boolean id"),
    pytest.param(dict(entry("h"), token=["un", "hashable"]), id="an unhashable text"),
])
def test_values_of_unexpected_types_come_out_as_the_whole_conversion_gives_them(odd):
    same_as_whole([entry(" w1", token_id=1), odd, entry(" w2", token_id=2)])


def _safe_fast(entries):
    try:
        return fast(entries)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return False


def test_partial_utf8_bytes_round_trip_through_token_columns():
    # a CJK character split over two tokens, and a byte-fallback token: bytes as received
    entries = [entry("", [228, 184]), entry("\ufffd", [173]), entry("<0x0A>", [10]), entry(" ok")]
    cols = TokenColumns()
    cols.extend(entries, "answer")
    assert [e["bytes"] for e in cols.entries()] == [[228, 184], [173], [10], [32, 111, 107]]
    assert [e["top"][0]["bytes"] for e in cols.entries()] == [[228, 184], [173], [10], [32, 111, 107]]


def test_a_long_response_in_batches_matches_the_whole_conversion():
    entries = [entry(f" w{i % 50}", token_id=i % 50, logprob=-i / 1000) for i in range(TokenColumns.BATCH * 3 + 17)]
    entries[300] = entry("", [228])   # one batch of the four has a partial UTF-8 token
    cols = TokenColumns()
    for e in entries:
        cols.extend([e], "reasoning")
    expected = pa.Table.from_batches([whole_conversion(copy.deepcopy(entries[i:i + TokenColumns.BATCH]),
                                                       ["reasoning"] * len(entries[i:i + TokenColumns.BATCH]))
                                      for i in range(0, len(entries), TokenColumns.BATCH)]).combine_chunks()
    assert cols.to_arrow().equals(expected.to_batches()[0])


def test_the_utf8_table_is_emptied_when_full(monkeypatch):
    monkeypatch.setattr(tokens_module, "_UTF8_LISTS", {})
    monkeypatch.setattr(tokens_module, "_UTF8_LISTS_MAX", 8)
    for n in range(5):
        entries = [entry(f" t{n}-{i}") for i in range(6)]
        assert fast(entries)
        same_as_whole(entries)
        assert len(tokens_module._UTF8_LISTS) <= 8
