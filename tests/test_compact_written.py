"""Compaction from the writer's own account of records.jsonl (RecordWriter.written): the same
bytes as compaction by parsing every line, and parsing again wherever the file is not exactly
what the writer wrote."""
from __future__ import annotations

import random

from evalsuite.store import RECORDS, SAMPLE_FIELD, RecordWriter, TokenColumns, WrittenLines, compact_records
from runfactory import rec


def _write(run_dir, records, tokens_every=0):
    writer = RecordWriter(run_dir / RECORDS)
    for n, record in enumerate(records):
        tokens = None
        if tokens_every and n % tokens_every == 0:
            tokens = TokenColumns.from_entries([{"token": "a", "bytes": [97], "id": 1, "logprob": -0.5, "part": "answer",
                                                 "top": []}])
        writer.append(record, tokens, flush=n % 3 == 0)
    writer.close()
    return writer


def _records(seed: int) -> tuple[list[dict], list[str]]:
    """Sampled answers arriving out of order, some keys twice (an error, then its retry's
    answer), non-ASCII text, and an item outside the order given."""
    rng = random.Random(seed)
    ids = [f"main/{i}" for i in range(12)]
    records = []
    for item in ids + ["extra/0"]:
        for sample in range(3):
            record = rec(item, rng.choice(["correct", "wrong", "error"]), answer=f"é {rng.random()} 答案")
            record[SAMPLE_FIELD] = sample
            records.append(record)
    rng.shuffle(records)
    records += [dict(r, answer="again") for r in rng.sample(records, 6)]   # later lines win
    return records, ids


def test_compaction_from_the_writer_gives_the_bytes_of_compaction_by_parsing(tmp_path):
    for seed in range(5):
        records, order = _records(seed)
        a, b = tmp_path / f"a{seed}", tmp_path / f"b{seed}"
        a.mkdir()
        b.mkdir()
        written = _write(a, records, tokens_every=4).written()
        _write(b, records, tokens_every=4)
        assert isinstance(written, WrittenLines) and written.end == (a / RECORDS).stat().st_size
        assert compact_records(a, order, written) == compact_records(b, order) == 13 * 3
        assert (a / RECORDS).read_bytes() == (b / RECORDS).read_bytes()


def test_a_file_the_writer_did_not_write_alone_is_parsed(tmp_path, monkeypatch):
    records, order = _records(9)
    # a resume: the file held lines before this writer opened it
    _write(tmp_path, records[:10])
    resumed = _write(tmp_path, records[10:])
    assert resumed.written() is None
    # lines appended after the writer closed (a judge's records): its account no longer matches
    other = tmp_path / "other"
    other.mkdir()
    written = _write(other, records[:20]).written()
    _write(other, records[20:])
    parsed = []
    import evalsuite.store.records as module
    real = module._parse_lines
    monkeypatch.setattr(module, "_parse_lines", lambda path: parsed.append(path) or real(path))
    assert compact_records(other, order, written) == 13 * 3
    assert parsed == [other / RECORDS]
    reference = tmp_path / "reference"
    reference.mkdir()
    _write(reference, records)
    compact_records(reference, order)
    assert (other / RECORDS).read_bytes() == (reference / RECORDS).read_bytes()
    # and the writer's account, where it matches, is used without a parse
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    parsed.clear()
    compact_records(fresh, order, _write(fresh, records).written())
    assert parsed == []
    assert (fresh / RECORDS).read_bytes() == (reference / RECORDS).read_bytes()
