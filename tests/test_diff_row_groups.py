"""`diff` over tokens.parquet (row groups decoded once into numpy arrays, store/token_arrays.py,
the next group read ahead in a thread) gives exactly what the per-item path gives over the
same streams kept inline in records.jsonl: every item's verdict, reason, margin, context and
drift, and the run pair's drift summary, on planted items of every kind, several to a row
group and groups split between items."""
from __future__ import annotations

import json
import random

import pyarrow as pa
from runfactory import make_run, rec

from evalsuite.lossless.runs import diff_runs
from evalsuite.store import TOKENS, TokenColumns, TokenParquetWriter, load_run

K = 3


def lp(rng, lo=0.0, hi=0.5):
    """A logprob float32 holds exactly (the inline path keeps float64, the side file float32)."""
    return -round(rng.uniform(lo, hi) * 256) / 256


def entry(word, wid, value, alts, part="answer"):
    top = [{"token": word, "bytes": list(word.encode()), "id": wid, "logprob": value}]
    top += [{"token": w, "bytes": list(w.encode()), "id": i, "logprob": v} for w, i, v in alts]
    return {"token": word, "bytes": list(word.encode()), "id": wid, "logprob": value, "part": part, "top": top}


def stream(n, seed, reasoning=0):
    rng = random.Random(seed)
    out = []
    for p in range(n):
        wid = rng.randrange(500)
        word = f" w{wid}" if wid % 5 else f" é{wid}"
        value = lp(rng)
        alts = [(f" a{p}", 5000 + p, value - 1 - lp(rng, 0, 1) * -1), (f" b{p}", 6000 + p, value - 3 + lp(rng, 0, 1))]
        out.append(entry(word, wid, value, alts, "reasoning" if p < reasoning else "answer"))
    return out


def diverge(eb, at, word, wid, seed):
    ec = [dict(e) for e in eb[:at]]
    ec.append(entry(word, wid, -1 / 128, [(eb[at]["token"], eb[at]["id"], -1 / 64)]))
    return ec + stream(len(eb) - at - 1, seed)


def drifted(entries, every, shift):
    out = []
    for n, e in enumerate(entries):
        if n % every == 0:
            top = [dict(t, logprob=t["logprob"] - shift) for t in e["top"]]
            e = dict(e, top=top, logprob=top[0]["logprob"])
        out.append(e)
    return out


def planted():
    """(id, baseline entries, candidate entries, baseline finish, candidate finish)."""
    items = []
    for n in range(4):                                   # identical, the same numbers
        s = stream(30 + 7 * n, n, reasoning=10)
        items.append((f"same/{n}", s, s, "stop", "stop"))
    s = stream(50, 10)
    items.append(("drift/0", s, drifted(s, 3, 1 / 32), "stop", "stop"))          # same text, other numbers
    s = stream(40, 11)
    s[7] = dict(s[7], top=[s[7]["top"][0], dict(s[7]["top"][1], logprob=s[7]["logprob"] + 0.25), s[7]["top"][2]])
    items.append(("not_top1/0", s, s, "stop", "stop"))                            # not its own top-1
    s = stream(60, 12, reasoning=20)
    items.append(("real/0", s, diverge(s, 33, " zzz", 99999, 13), "stop", "stop"))
    s = stream(50, 22, reasoning=30)
    items.append(("real/reasoning", s, diverge(s, 12, " rr", 77777, 23), "stop", "stop"))   # in the reasoning
    s = stream(45, 14)
    alt = s[20]["top"][1]
    s[20]["top"][1] = dict(alt, logprob=s[20]["logprob"] - 1 / 64)                 # a near tie
    items.append(("tie/0", s, diverge(s, 20, alt["token"], alt["id"], 15), "stop", "stop"))
    s = stream(55, 16)
    items.append(("real/1", s, drifted(diverge(s, 40, " qq", 88888, 17), 4, 1 / 16), "stop", "stop"))
    s = stream(35, 18)
    gap = [dict(e) for e in s]
    gap[5] = dict(gap[5], logprob=None, top=[])                                     # a number missing
    items.append(("missing/0", s, gap, "stop", "stop"))
    s = stream(30, 19)
    nan = [dict(e) for e in s]
    nan[3] = dict(nan[3], top=[nan[3]["top"][0], dict(nan[3]["top"][1], logprob=float("nan")), nan[3]["top"][2]])
    items.append(("nan/0", nan, nan, "stop", "stop"))
    s = stream(40, 20)
    items.append(("cut/0", s[:25], s, "length", "stop"))
    s = stream(20, 21)
    items.append(("same/last", s, s, "stop", "stop"))
    return items


def text(entries, part):
    return "".join(e["token"] for e in entries if e["part"] == part) or None


def inline_run(path, items, side):
    records = []
    for item_id, eb, ec, fb, fc in items:
        e, finish = (eb, fb) if side == 0 else (ec, fc)
        reasoning = text(e, "reasoning")
        records.append(rec(item_id, answer=text(e, "answer") or "", reasoning=reasoning,
                           reasoning_source="field" if reasoning else None, logprobs=e, finish_reason=finish))
    return make_run(path, records=records, decoding={"logprobs": K})


def parquet_copy(inline, path, rows_per_group):
    """The same run with its streams in tokens.parquet (slim records, as a finished run)."""
    path.mkdir()
    (path / "manifest.json").write_text((inline / "manifest.json").read_text())
    lines = []
    with TokenParquetWriter(path / TOKENS, rows_per_group=rows_per_group) as writer:
        for line in (inline / "records.jsonl").read_text().splitlines():
            r = json.loads(line)
            entries = r.pop("logprobs")
            r["logprob_tokens"] = len(entries)
            writer.add(r["id"], pa.Table.from_batches([TokenColumns.from_entries(entries).to_arrow()]))
            lines.append(json.dumps(r, ensure_ascii=False))
    (path / "records.jsonl").write_text("\n".join(lines) + "\n")
    return path


def test_row_group_arrays_give_the_per_item_verdicts_and_drift(tmp_path):
    items = planted()
    b, c = inline_run(tmp_path / "b", items, 0), inline_run(tmp_path / "c", items, 1)
    reference = diff_runs(load_run(b), load_run(c)).to_dict()
    verdicts = {i["id"]: i["class"] for i in reference["items"]}
    assert verdicts["real/0"] == "real" and verdicts["tie/0"] == "near_tie" and verdicts["cut/0"] == "cut_prefix"
    assert reference["drift"]["kl_max"] > 0 and reference["counts"]["identical"] >= 8
    for rows in (90, 250, 100_000):            # several items a group, groups split between items, one group
        pb = parquet_copy(b, tmp_path / f"pb{rows}", rows)
        pc_ = parquet_copy(c, tmp_path / f"pc{rows}", rows)
        base, cand = load_run(pb), load_run(pc_)
        assert base.tokens.inline == {} and base.tokens._parquet.metadata.num_row_groups >= (2 if rows < 1000 else 1)
        got = diff_runs(base, cand).to_dict()
        for key in ("counts", "summary", "drift", "items"):
            assert got[key] == reference[key], key


def test_items_of_one_row_group_share_its_arrays(tmp_path):
    items = planted()
    run = load_run(parquet_copy(inline_run(tmp_path / "b", items, 0), tmp_path / "p", 100_000))
    views = [run.tokens.arrays(i[0]) for i in items]
    assert all(v.g is views[0].g for v in views)       # one decode, one set of arrays
    for (item_id, eb, *_), v in zip(items, views):
        assert v.n == len(eb) and v.table.num_rows == len(eb)
        assert v.ids().tolist() == [e["id"] for e in eb]


def test_items_with_equal_digests_are_decided_without_reading_the_tokens(tmp_path, monkeypatch):
    from evalsuite.store.token_files import TokenStreams

    items = [i for i in planted() if i[0].startswith("same/") or i[0] in ("not_top1/0", "drift/0", "nan/0")]
    b, c = inline_run(tmp_path / "b", items, 0), inline_run(tmp_path / "c", items, 1)
    reference = diff_runs(load_run(b), load_run(c)).to_dict()
    pb, pc_ = parquet_copy(b, tmp_path / "pb", 60), parquet_copy(c, tmp_path / "pc", 60)
    reads = []
    real_read = TokenStreams._read_group
    monkeypatch.setattr(TokenStreams, "_read_group", lambda self, g, a: reads.append((self.run_dir.name, g)) or real_read(self, g, a))
    base, cand = load_run(pb), load_run(pc_)
    got = diff_runs(base, cand).to_dict()
    for key in ("counts", "summary", "drift", "items"):
        assert got[key] == reference[key], key
    # only the groups of the items whose tokens differ (drift/0) or whose numbers are not all
    # there (nan/0: NaN is never equal to itself) were read; same/* and not_top1/0 were not
    groups = {base.tokens._pq_index[i][0] for i in ("drift/0", "nan/0")}
    assert {g for _, g in reads} == groups
    assert base.tokens.digest("same/0")[0] == cand.tokens.digest("same/0")[0]
    assert base.tokens.digest("drift/0")[0] != cand.tokens.digest("drift/0")[0]
    assert base.tokens.digest("nan/0")[4] is False and base.tokens.digest("not_top1/0")[2] == 1


def test_a_change_in_any_column_changes_the_content_digest():
    from evalsuite.store.token_files import content_digest

    def tab(entries):
        return pa.Table.from_batches([TokenColumns.from_entries(entries).to_arrow()])

    s = stream(12, 30, reasoning=4)
    base = content_digest(tab(s))
    assert content_digest(tab([dict(e) for e in s])) == base          # the same content, built again
    changes = {
        "token": lambda e: dict(e, token=e["token"] + "x"),
        "bytes": lambda e: dict(e, bytes=e["bytes"] + [120]),
        "bytes null": lambda e: dict(e, bytes=None),
        "id": lambda e: dict(e, id=e["id"] + 1),
        "id null": lambda e: dict(e, id=None),
        "logprob": lambda e: dict(e, logprob=e["logprob"] - 2 ** -20),
        "part": lambda e: dict(e, part="reasoning" if e["part"] == "answer" else "answer"),
        "top_token": lambda e: dict(e, top=[dict(e["top"][0], token="q")] + e["top"][1:]),
        "top_bytes": lambda e: dict(e, top=[dict(e["top"][0], bytes=[113])] + e["top"][1:]),
        "top_id": lambda e: dict(e, top=[dict(e["top"][0], id=7)] + e["top"][1:]),
        "top_logprob": lambda e: dict(e, top=[dict(e["top"][0], logprob=-9.0)] + e["top"][1:]),
        "top shorter": lambda e: dict(e, top=e["top"][:-1]),
    }
    seen = {base}
    for name, change in changes.items():
        for at in (0, 7, 11):
            changed = [dict(e) for e in s]
            changed[at] = change(changed[at])
            d = content_digest(tab(changed))
            assert d != base, (name, at)
            seen.add(d)
    # a slice (offset > 0) is hashed by its IPC serialisation: equal slices agree, others not.
    # "Equal" here is the same rows from other tables at other offsets (other buffers): hashing
    # one slice twice would agree whatever the digest read.
    rows = stream(30, 31)
    t = tab(rows)
    elsewhere = tab(stream(3, 7) + rows[5:15] + stream(4, 8)).slice(3, 10)
    assert content_digest(t.slice(5, 10)) == content_digest(elsewhere)
    assert content_digest(t.slice(5, 10)) == content_digest(tab(stream(1, 9) + rows[5:15]).slice(1, 10))
    assert content_digest(t.slice(5, 10)) == content_digest(pa.concat_tables([tab(rows[5:8]), tab(rows[8:15])]))
    assert content_digest(t.slice(5, 0)) == content_digest(tab(stream(3, 7)).slice(2, 0))   # no rows, both sliced
    # a slice at offset 0 (the first item of a row group) is read for its rows, not its buffers'
    assert content_digest(t.slice(0, 10)) == content_digest(tab(rows[:10] + stream(6, 5)).slice(0, 10))
    assert content_digest(t.slice(0, 10)) != content_digest(t.slice(0, 11))
    assert content_digest(t.slice(5, 10)) != content_digest(t.slice(6, 10))
    assert content_digest(t.slice(0, 10)) != content_digest(t.slice(5, 10))


def test_row_groups_are_decoded_outside_mimalloc_and_the_pool_is_put_back(tmp_path, monkeypatch):
    """mimalloc hands each freed group's pages back to the OS and faults them in again for the
    next (seconds of system time on a large diff): the diff decodes with jemalloc or the
    system allocator, and leaves the process's default pool as it found it."""
    import pytest

    before = pa.default_memory_pool().backend_name
    if before != "mimalloc":
        pytest.skip(f"pyarrow's default pool here is {before}")
    seen = _seen_while_decoding(tmp_path, monkeypatch, lambda: pa.default_memory_pool().backend_name)
    assert seen and "mimalloc" not in seen, seen
    assert pa.default_memory_pool().backend_name == before


def test_group_counts_are_the_numpy_counts_of_each_range():
    """TokenArrays.held answers every per-item count of a diff (nulls, ragged rows, not-top-1,
    drift's positions): the count of the mask over the range, whichever the mask and range."""
    import numpy as np

    from evalsuite.store.token_arrays import TokenArrays

    entries = drifted(stream(300, 7), 3, 0.9)
    for e in entries[::17]:
        e["logprob"] = None                  # some rows without a logprob: lp_odd holds there
    arrays = TokenArrays(pa.Table.from_batches([TokenColumns.from_entries(entries).to_arrow()]))
    rng = random.Random(5)
    masks = [arrays.lp_odd, arrays.id_null, arrays.measured_mask(), np.arange(300) % 7 == 0]
    assert arrays.lp_odd.any() and not arrays.id_null.any()
    for mask in masks * 2:                   # the second time from the running counts kept
        for _ in range(200):
            lo = rng.randrange(0, 300)
            hi = rng.randrange(lo, 320)
            assert arrays.held(mask, lo, hi) == int(np.count_nonzero(mask[lo:hi]))
    item = arrays.item(40, 100)
    assert item.measured(60) == int(np.count_nonzero(arrays.measured_mask()[40:100]))
    assert item.not_top1(30) == int(np.count_nonzero(arrays.not_top1[40:70]))


def test_the_gil_switch_interval_is_short_during_a_diff_and_put_back(tmp_path, monkeypatch):
    """The walk's Arrow calls release the GIL and wait for it while a read-ahead thread runs
    Python: the diff shortens the switch interval, and puts the process's back."""
    import sys

    before = sys.getswitchinterval()
    seen = _seen_while_decoding(tmp_path, monkeypatch, sys.getswitchinterval)
    assert seen and max(seen) <= 0.001 < before, seen
    assert sys.getswitchinterval() == before


def test_not_top1_of_a_group_is_the_per_row_mask_whatever_the_widths():
    """TokenArrays' not-top-1 mask (a row-wise max where every row lists as many alternatives,
    else reduceat) is store.tokens.not_top1_mask's, with NaN and -inf among the numbers."""
    import numpy as np

    from evalsuite.store.token_arrays import TokenArrays
    from evalsuite.store.tokens import not_top1_mask

    rng = random.Random(11)
    for widths in ([5] * 40, [5, 3, 7] * 10, [2, 8] * 15, [1] * 9):
        entries = []
        for p, k in enumerate(widths):
            value = rng.choice([lp(rng), lp(rng), float("-inf")])
            alts = [(f" a{p}{j}", 100 + j, rng.choice([value - 1, value + 0.5, float("nan"), float("-inf")]))
                    for j in range(k - 1)]
            entries.append(entry(f" w{p}", p, value, alts))
        batch = TokenColumns.from_entries(entries).to_arrow()
        got = TokenArrays(pa.Table.from_batches([batch])).not_top1
        assert np.array_equal(got, not_top1_mask(batch)), widths
        assert (got.any() and not got.all()) or max(widths) == 1


def test_text_layout_lengths_are_characters_ascii_or_not():
    """The text layout's lengths (a byte a character where the texts are ASCII) are Arrow's
    utf8_length, nulls 0."""
    import numpy as np
    import pyarrow.compute as pc

    from evalsuite.store.token_arrays import TokenArrays

    ascii_only = [entry(f" w{p}", p, -0.5, [(" x", 9, -2.0)]) for p in range(50)]
    for entries in (ascii_only, stream(80, 3), ascii_only[:10] + [dict(ascii_only[10], token=None)]):
        table = pa.Table.from_batches([TokenColumns.from_entries(entries).to_arrow()])
        arrays = TokenArrays(table)
        want = pc.fill_null(pc.utf8_length(table.column("token").combine_chunks()), 0).to_numpy(zero_copy_only=False)
        assert np.array_equal(arrays.text_layout()[0], want)
        assert arrays.item(1, 10).text_before(10, "answer")[1] == int(want[1:11].sum())


def test_decoded_groups_read_fast_are_the_stored_tables_and_their_arrays_the_plain_ones(tmp_path):
    """A row group as a diff reads it (part as a dictionary, the chosen bytes as the texts' own
    buffers, the four lists on one offsets buffer) is the table tokens.parquet holds, and its
    arrays (text layout from the part codes, lists not ragged, alternatives' bytes flagged as
    their texts) are those of the same table built column by column. An alternative whose
    bytes are not its text's UTF-8 clears the flag."""
    import numpy as np
    import pyarrow.parquet as pq

    from evalsuite.store.token_arrays import TokenArrays
    from evalsuite.store.token_files import TokenStreams

    items = planted()
    odd = stream(12, 40)
    odd[4]["top"][1] = dict(odd[4]["top"][1], bytes=[0xE2, 0x82])          # bytes not the text's UTF-8
    items.append(("odd-bytes/0", odd, odd, "stop", "stop"))
    flags, groups = [], []
    for side in (0, 1):     # the candidate's missing/0 has a chosen token without alternatives
        run = parquet_copy(inline_run(tmp_path / f"s{side}", items, side), tmp_path / f"p{side}", 120)
        written = {i[0]: pa.Table.from_batches([TokenColumns.from_entries(i[1 + side]).to_arrow()]) for i in items}
        streams = TokenStreams(run, {})
        stored = pq.ParquetFile(run / TOKENS)
        groups += [(streams, stored, written, g) for g in range(stored.metadata.num_row_groups)]
    for streams, stored, written, g in groups:
        group = streams._read_group(g, True)
        plain = group.table
        for item_id, (gg, start, count) in streams._pq_index.items():
            if gg == g:                      # each item's rows as written (repr: NaN as itself)
                got = plain.slice(start, count)
                assert got.schema == written[item_id].schema
                assert all(repr(x.to_pylist()) == repr(y.to_pylist()) for x, y in zip(got.columns, written[item_id].columns))
        fresh = TokenArrays(pa.Table.from_arrays([pa.array(c.to_pylist(), c.type) for c in plain.columns],
                                                 schema=plain.schema))
        arrays = group.arrays()
        layout, want = arrays.text_layout(), fresh.text_layout()
        assert np.array_equal(layout[0], want[0])
        assert [layout[2][k] for k in layout[1]] == [want[2][k] for k in want[1]]     # each row's part
        for name in ("ragged", "top_len", "not_top1", "bytes_off", "top_bytes_off", "top_bytes_null"):
            assert np.array_equal(getattr(arrays, name), getattr(fresh, name)), name
        assert fresh.top_bytes_are_texts is False           # separate buffers: never assumed
        odd_here = "odd-bytes/0" in {i for i, (gg, _, _) in streams._pq_index.items() if gg == g}
        assert arrays.top_bytes_are_texts is not odd_here
        flags.append(arrays.top_bytes_are_texts)
    assert True in flags and False in flags


def test_same_numbers_is_numbers_plain_and_equal_and_remembered():
    """ItemArrays.same_numbers (asked by the top-k check and the drift shortcut) is
    numbers_plain on both sides and numbers_equal, for any prefix."""
    from evalsuite.store.token_arrays import TokenArrays

    s = stream(60, 8)
    s[10] = dict(s[10], logprob=0.0, top=[dict(s[10]["top"][0], logprob=0.0)] + s[10]["top"][1:])
    signed = [dict(e) for e in s]                          # -0.0 where s has 0.0: equal numbers
    signed[10] = dict(s[10], logprob=-0.0, top=[dict(s[10]["top"][0], logprob=-0.0)] + s[10]["top"][1:])
    nan = [dict(e) for e in s]
    nan[30] = dict(nan[30], top=[nan[30]["top"][0], dict(nan[30]["top"][1], logprob=float("nan")), nan[30]["top"][2]])
    for other, apart in ((s, None), (signed, None), (drifted(s, 7, 1 / 32), 0), (nan, 30),
                         (s[:20] + [dict(s[20], top=[dict(t, bytes=[0x41]) for t in s[20]["top"]])] + s[21:], 20)):
        a = TokenArrays(pa.Table.from_batches([TokenColumns.from_entries(s).to_arrow()])).item(0, 60)
        b = TokenArrays(pa.Table.from_batches([TokenColumns.from_entries(other).to_arrow()])).item(0, 60)
        for stop in (0, 1, 19, 20, 21, 31, 60, 20, 60):
            want = a.numbers_plain(stop) and b.numbers_plain(stop) and a.numbers_equal(b, stop)
            assert a.same_numbers(b, stop) == want == (apart is None or stop <= apart), (apart, stop)


def _seen_while_decoding(tmp_path, monkeypatch, look):
    """`look()` at each row group a diff of two planted runs decodes."""
    import evalsuite.store.token_files as token_files

    items = planted()
    pb = parquet_copy(inline_run(tmp_path / "b", items, 0), tmp_path / "pb", 90)
    pc_ = parquet_copy(inline_run(tmp_path / "c", items, 1), tmp_path / "pc", 90)
    seen = []
    decode = token_files._decode_tokens

    def recording(*args, **kwargs):
        seen.append(look())
        return decode(*args, **kwargs)
    monkeypatch.setattr(token_files, "_decode_tokens", recording)
    diff_runs(load_run(pb), load_run(pc_))
    return seen


def test_with_drift_is_dataclasses_replace():
    """runs._with_drift copies an ItemDiff and sets its drift, which is what
    dataclasses.replace gives as long as ItemDiff has no __post_init__ (it would be skipped)."""
    from dataclasses import replace

    from evalsuite.lossless.classify import ItemDiff
    from evalsuite.lossless.runs import _with_drift

    assert not hasattr(ItemDiff, "__post_init__")
    item = ItemDiff("x", "real", "why", token_index=3, notes=("a",))
    for drift in (None, "summary", 3.5):
        got = _with_drift(item, drift)
        assert got == replace(item, drift=drift) and got is not item and item.drift is None


def _plain_lists_copy(run, path):
    """The run with tokens.parquet rewritten as files before 2026-12-02 stored it: the writer's
    options named the list columns, so pyarrow stored the alternatives' lists plain."""
    import shutil

    import pyarrow.parquet as pq

    shutil.copytree(run, path)
    stored = pq.ParquetFile(run / TOKENS)
    meta = {k.decode(): v.decode() for k, v in stored.metadata.metadata.items() if k.startswith(b"evalsuite")}
    writer = pq.ParquetWriter(path / TOKENS, stored.schema_arrow, compression="zstd", write_statistics=False,
                              use_dictionary=["item", "token", "bytes", "part", "top_token", "top_bytes", "id", "top_id"],
                              use_byte_stream_split=["logprob", "top_logprob"])
    for g in range(stored.metadata.num_row_groups):
        group = stored.read_row_group(g)
        writer.write_table(group, row_group_size=group.num_rows + 1)
    writer.add_key_value_metadata(meta)
    writer.close()
    return path


def test_alternatives_are_dictionary_encoded_and_plain_lists_of_older_files_read_the_same(tmp_path):
    """tokens.parquet dictionary-encodes the alternatives' texts, bytes and ids and
    byte-stream-splits their logprobs (the leaf paths: options naming the list column leave it
    plain); the reader reads top_token as a dictionary only where it is stored as one, and an
    older file with plain lists gives the same tables and the same diff."""
    import pyarrow.parquet as pq

    from evalsuite.store.token_files import TokenStreams, _dictionary_leaves

    items = planted()
    b, c = inline_run(tmp_path / "b", items, 0), inline_run(tmp_path / "c", items, 1)
    pb, pc_ = parquet_copy(b, tmp_path / "pb", 120), parquet_copy(c, tmp_path / "pc", 120)
    old_b, old_c = _plain_lists_copy(pb, tmp_path / "ob"), _plain_lists_copy(pc_, tmp_path / "oc")

    def encodings(run):
        group = pq.ParquetFile(run / TOKENS).metadata.row_group(0)
        return {group.column(i).path_in_schema: group.column(i).encodings for i in range(group.num_columns)}
    new, old = encodings(pb), encodings(old_b)
    for leaf in ("top_token.list.element", "top_bytes.list.element", "top_id.list.element"):
        assert "RLE_DICTIONARY" in new[leaf] and "RLE_DICTIONARY" not in old[leaf], leaf
    assert "BYTE_STREAM_SPLIT" in new["top_logprob.list.element"]
    assert "BYTE_STREAM_SPLIT" not in old["top_logprob.list.element"]
    assert _dictionary_leaves(pq.ParquetFile(pb / TOKENS)) == ["top_token.list.element"]
    assert _dictionary_leaves(pq.ParquetFile(old_b / TOKENS)) == []

    fresh, older = TokenStreams(pb, {}), TokenStreams(old_b, {})
    assert fresh._pq_index == older._pq_index
    for g in range(pq.ParquetFile(pb / TOKENS).metadata.num_row_groups):
        x, y = fresh._read_group(g, False).table, older._read_group(g, False).table
        assert x.schema == y.schema         # value for value (repr: a NaN alternative as itself)
        assert all(repr(u.to_pylist()) == repr(v.to_pylist()) for u, v in zip(x.columns, y.columns))
        # the alternatives' bytes are still the texts' own buffers (the diff's fast comparisons)
        assert fresh._read_group(g, True).arrays().top_bytes_are_texts == older._read_group(g, True).arrays().top_bytes_are_texts
    assert any(fresh._read_group(g, True).arrays().top_bytes_are_texts for g in range(g + 1))
    new_diff, old_diff = (diff_runs(load_run(x), load_run(y)).to_dict() for x, y in ((pb, pc_), (old_b, old_c)))
    for key in ("counts", "drift", "items"):
        assert json.dumps(new_diff[key]) == json.dumps(old_diff[key]), key


def test_the_cyclic_collector_is_off_for_the_whole_diff_command_and_put_back(tmp_path, monkeypatch):
    """`evalsuite diff` loads the runs, walks them and writes the JSON with the cyclic
    collector off (millions of objects without cycles: each full collection rescanned them),
    and puts it back as it was, also when the command fails."""
    import gc

    from evalsuite.lossless import command, json_write

    items = planted()
    pb = parquet_copy(inline_run(tmp_path / "b", items, 0), tmp_path / "pb", 90)
    pc_ = parquet_copy(inline_run(tmp_path / "c", items, 1), tmp_path / "pc", 90)
    seen = []
    load, dump = command.load_diff_run, json_write.dump_indent1

    def loading(path):
        seen.append(("load", gc.isenabled()))
        return load(path)

    def dumping(*args, **kwargs):
        seen.append(("json", gc.isenabled()))
        return dump(*args, **kwargs)
    monkeypatch.setattr(command, "load_diff_run", loading)
    monkeypatch.setattr(json_write, "dump_indent1", dumping)
    assert gc.isenabled()
    code = command.diff_main(pb, pc_, json_path=tmp_path / "d.json", echo=lambda line: None)
    assert code == 0 and (tmp_path / "d.json").exists()
    assert seen == [("load", False), ("load", False), ("json", False)]
    assert gc.isenabled()
    assert command.diff_main(pb, tmp_path / "nowhere", echo=lambda line: None) == 2
    assert gc.isenabled()
    gc.disable()
    try:
        command.diff_main(pb, pc_, echo=lambda line: None)
        assert not gc.isenabled()        # off before: left off
    finally:
        gc.enable()


def test_diff_runs_alone_walks_without_the_cyclic_collector(tmp_path, monkeypatch):
    """diff_runs called by itself (the Python API, the A/A noise floor) pauses the collector
    for its walk too, and puts it back."""
    import gc

    seen = _seen_while_decoding(tmp_path, monkeypatch, gc.isenabled)
    assert seen and not any(seen)
    assert gc.isenabled()
