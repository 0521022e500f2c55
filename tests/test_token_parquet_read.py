"""tokens.parquet is read without its top_bytes column where every alternative's bytes are the
UTF-8 of its text (those bytes are derived); a row group where some are not (a partial UTF-8
byte, a missing bytes list) reads the column after all: every item reads back exactly as
written, whichever kind of group it sits in, and the read-ahead path agrees."""
from __future__ import annotations

import pyarrow as pa

from evalsuite.store import TOKENS, TokenColumns, TokenParquetWriter, TokenStreams


def entry(word, wid, value, alts):
    top = [{"token": word, "bytes": list(word.encode()), "id": wid, "logprob": value}] + alts
    return {"token": word, "bytes": list(word.encode()), "id": wid, "logprob": value, "part": "answer", "top": top}


def plain(n, seed):
    return [entry(f" w{seed}_{p}", seed * 100 + p, -0.25 * (p % 4),
                  [{"token": f" a{p}", "bytes": list(f" a{p}".encode()), "id": 9000 + p, "logprob": -2.0 - p % 3}])
            for p in range(n)]


def odd(n, seed):
    """Alternatives whose bytes are not their text's UTF-8: a partial byte of "é", and none."""
    out = plain(n, seed)
    out[1]["top"].append({"token": "\ufffd", "bytes": [0xC3], "id": 7001, "logprob": -5.0})
    out[2]["top"].append({"token": "x", "bytes": None, "id": 7002, "logprob": -6.0})
    return out


ITEMS = {"p0": plain(6, 1), "p1": plain(5, 2), "odd": odd(6, 3), "p2": plain(7, 4), "p3": plain(4, 5)}


def write(run_dir):
    written = {}
    with TokenParquetWriter(run_dir / TOKENS, rows_per_group=10) as w:
        for item_id, entries in ITEMS.items():
            table = pa.Table.from_batches([TokenColumns.from_entries(entries).to_arrow()])
            written[item_id] = table
            w.add(item_id, table)
    return written


def test_every_item_reads_back_as_written_with_or_without_derived_top_bytes(tmp_path):
    written = write(tmp_path)
    counts = {i: len(e) for i, e in ITEMS.items()}
    for ahead in (False, True):
        streams = TokenStreams(tmp_path, counts)
        if ahead:
            streams.read_ahead()
        try:
            for item_id, table in written.items():
                got = streams.table(item_id)
                assert got.num_rows == table.num_rows, item_id
                assert got.combine_chunks().equals(table.combine_chunks()), \
                    (item_id, got.column("top_bytes").to_pylist(), table.column("top_bytes").to_pylist())
        finally:
            streams.close()
    odd_top = streams.table("odd").column("top_bytes").to_pylist()
    assert odd_top[1][-1] == b"\xc3" and odd_top[2][-1] is None
