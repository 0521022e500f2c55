"""Divergences that re-merge, decided on the row group's arrays (lossless/columnar.py: the
first differing id, then the alignment's last matching block found on the id arrays by
last_matching_block) give exactly what the per-item path gives over the same streams kept
inline in records.jsonl (difflib over Tok keys): every item's verdict, re-merge point, context
and drift, on planted items of every kind; and last_matching_block is difflib's last block on
random streams of few keys, where ties and repeats are everywhere."""
from __future__ import annotations

import difflib
import random

import numpy as np
import pytest
from test_diff_row_groups import drifted, entry, inline_run, parquet_copy, stream

from evalsuite.lossless import runs as runs_module
from evalsuite.lossless.columnar import last_matching_block
from evalsuite.lossless.runs import diff_runs
from evalsuite.store import load_run


def difflib_last(ka, kb):
    blocks = [b for b in difflib.SequenceMatcher(None, ka, kb, autojunk=False).get_matching_blocks() if b.size]
    return tuple(blocks[-1]) if blocks else (0, 0, 0)


@pytest.mark.parametrize("alphabet", [2, 3, 6, 40, 100_000])
def test_last_matching_block_is_difflibs_on_random_streams(alphabet):
    rng = random.Random(alphabet)
    decided = 0
    for _ in range(1500):
        ka = [rng.randrange(alphabet) for _ in range(rng.randrange(0, 70))]
        if ka and rng.random() < 0.6:            # an edited copy: flips, insertions, deletions
            kb = list(ka)
            for _ in range(rng.randrange(1, 5)):
                at = rng.randrange(len(kb) + 1)
                kb[at:at + rng.randrange(0, 4)] = [rng.randrange(alphabet) for _ in range(rng.randrange(0, 4))]
        else:
            kb = [rng.randrange(alphabet) for _ in range(rng.randrange(0, 70))]
        got = last_matching_block(np.array(ka, dtype=np.int64), np.array(kb, dtype=np.int64))
        if got is not None:
            decided += 1
            assert got == difflib_last(ka, kb), (ka, kb)
    assert decided == 1500                       # none of these is too repetitive for the arrays


def test_last_matching_block_steps_aside_when_the_keys_pair_up_too_much(monkeypatch):
    from evalsuite.lossless import columnar

    monkeypatch.setattr(columnar, "MAX_KEY_PAIRS", 50)
    assert last_matching_block(np.zeros(10, np.int64), np.zeros(10, np.int64)) is None
    monkeypatch.setattr(columnar, "MAX_KEY_PAIRS", 500_000)
    monkeypatch.setattr(columnar, "MAX_CHAIN_BLOCKS", 2)
    ka, kb = [1, 9, 2, 9, 3, 9, 4], [1, 8, 2, 8, 3, 8, 4]      # four blocks in a chain
    assert last_matching_block(np.array(ka), np.array(kb)) is None
    monkeypatch.setattr(columnar, "MAX_CHAIN_BLOCKS", 64)
    assert last_matching_block(np.array(ka), np.array(kb)) == difflib_last(ka, kb) == (6, 6, 1)


def tied(s, at):
    """s with a near tie at `at` (its runner-up 1/64 nats below its own token); the runner-up."""
    alt = s[at]["top"][1]
    s[at]["top"][1] = dict(alt, logprob=s[at]["logprob"] - 1 / 64)
    return s[at]["top"][1]


def flipped(eb, at, word, wid, left, inserted, seed):
    """The candidate at one divergence: eb up to `at`, then `word` and inserted - 1 other
    tokens in place of eb's next `left`, then eb again (a re-merge)."""
    part = eb[at]["part"]
    ec = [dict(e) for e in eb[:at]]
    ec.append(entry(word, wid, -1 / 128, [(eb[at]["token"], eb[at]["id"], -1 / 64)], part))
    ec += [dict(e, part=part) for e in stream(inserted - 1, seed)]
    return ec + [dict(e) for e in eb[at + left:]]


def planted():
    """(id, baseline entries, candidate entries, baseline finish, candidate finish): each kind
    of divergence that re-merges, and the ones that look like it and do not."""
    items = []
    for n, (left, inserted) in enumerate([(1, 1), (3, 5), (8, 2), (4, 8)]):    # near-tie flips, 1-8 tokens
        s = stream(60 + 5 * n, 40 + n, reasoning=25)
        alt = tied(s, 20 + n)
        items.append((f"flip/{n}", s, flipped(s, 20 + n, alt["token"], alt["id"], left, inserted, 50 + n), "stop", "stop"))
    s = stream(70, 60, reasoning=30)
    items.append(("real/remerge", s, flipped(s, 33, " zzz", 99999, 4, 6, 61), "stop", "stop"))
    s = stream(90, 62)
    a1, a2, a3 = tied(s, 10), tied(s, 40), tied(s, 70)
    ec = flipped(s, 70, a3["token"], a3["id"], 2, 3, 63)                    # three flips, the last first
    ec = flipped(ec, 40, a2["token"], a2["id"], 1, 4, 64)
    ec = flipped(ec, 10, a1["token"], a1["id"], 5, 2, 65)
    items.append(("several/0", s, ec, "stop", "stop"))
    s = stream(80, 66)
    alt = tied(s, 30)
    ec = flipped(s, 30, alt["token"], alt["id"], 3, 3, 67)
    items.append(("cut/remerge", s[:70], ec, "length", "length"))             # the baseline cut first
    items.append(("cut/stopped", s, ec[:70], "stop", "length"))               # the stopped one must reach its end
    s = stream(50, 68)
    alt = tied(s, 41)                                                       # re-merges for 5 tokens only
    items.append(("short/tail", s, flipped(s, 41, alt["token"], alt["id"], 4, 2, 69), "stop", "stop"))
    items.append(("short/cut", s, flipped(s, 41, alt["token"], alt["id"], 4, 2, 69), "length", "length"))
    rep = stream(1, 70) * 30                                                # one token, over and over
    tail = [dict(e) for e in rep]
    s = stream(20, 71) + tail
    alt = tied(s, 12)
    ec = flipped(s, 12, alt["token"], alt["id"], 2, 5, 72)[:-3]
    items.append(("repeats/0", s, ec, "stop", "stop"))
    items.append(("repeats/cut", s, ec, "length", "length"))
    s = stream(60, 73)
    alt = tied(s, 25)
    ec = flipped(s, 25, alt["token"], alt["id"], 3, 3, 74)[:-1] + stream(1, 75)   # the last token differs
    items.append(("last/apart", s, ec, "stop", "stop"))
    s = stream(45, 76)
    alt = tied(s, 20)
    items.append(("never/0", s, flipped(s, 20, alt["token"], alt["id"], 25, 25, 77), "stop", "stop"))
    s = stream(30, 78)
    items.append(("same/0", s, s, "stop", "stop"))
    # the candidate's engine gave other numbers on the common prefix (prefix drift on the arrays)
    s = stream(70, 79, reasoning=20)
    alt = tied(s, 44)
    ec = flipped(s, 44, alt["token"], alt["id"], 3, 2, 80)
    items.append(("drift/shifted", s, drifted(ec, 3, 1 / 32), "stop", "stop"))
    other = [dict(e) for e in ec]
    for p, wid in ((5, 4321), (17, 4322)):        # an alternative only the candidate lists
        other[p] = dict(other[p], top=other[p]["top"][:2] + [dict(other[p]["top"][2], id=wid, logprob=-2.5)])
    other[30] = dict(other[30], top=other[30]["top"][:2])    # a shorter list
    items.append(("drift/alone", s, other, "stop", "stop"))
    twice = [dict(e) for e in ec]
    top = twice[9]["top"]        # an id listed twice, the last time as the baseline has it (the one kept)
    twice[9] = dict(twice[9], top=[top[0], dict(top[1], logprob=top[1]["logprob"] - 2), top[1]])
    items.append(("drift/twice", s, twice, "stop", "stop"))
    return items


def test_remerging_divergences_on_the_arrays_give_the_per_item_verdicts(tmp_path, monkeypatch):
    items = planted()
    b, c = inline_run(tmp_path / "b", items, 0), inline_run(tmp_path / "c", items, 1)
    reference = diff_runs(load_run(b), load_run(c)).to_dict()
    by_id = {i["id"]: i for i in reference["items"]}
    for n in range(4):
        assert by_id[f"flip/{n}"]["class"] == "near_tie" and by_id[f"flip/{n}"]["remerged"], n
    assert by_id["real/remerge"]["class"] == "real" and by_id["real/remerge"]["remerged"]
    several = by_id["several/0"]
    assert several["token_index"] == 10 and several["remerge"]["baseline_index"] == 72   # after the third flip
    assert by_id["cut/remerge"]["remerged"] and not by_id["cut/stopped"]["remerged"]
    # 5 agreed tokens: a re-merge only where both stopped by themselves
    assert by_id["short/tail"]["remerged"] and not by_id["short/cut"]["remerged"]
    assert by_id["repeats/cut"]["remerged"] and not by_id["repeats/0"]["remerged"]
    assert not by_id["never/0"]["remerged"] and not by_id["last/apart"]["remerged"]
    assert by_id["drift/shifted"]["prefix_drift"] == 1 / 32 and by_id["drift/alone"]["prefix_drift"] > 1
    assert by_id["drift/twice"]["prefix_drift"] < 2
    # the parquet side decides every divergent item on the arrays: diff_item is not asked
    asked = []
    real_diff_item = runs_module.diff_item
    monkeypatch.setattr(runs_module, "diff_item", lambda b, c, *a, **k: asked.append(b["id"]) or real_diff_item(b, c, *a, **k))
    for rows in (70, 100_000):                  # groups split between items, one group
        base = load_run(parquet_copy(b, tmp_path / f"pb{rows}", rows))
        cand = load_run(parquet_copy(c, tmp_path / f"pc{rows}", rows))
        got = diff_runs(base, cand).to_dict()
        for key in ("counts", "summary", "drift"):
            assert got[key] == reference[key], key
        for mine, theirs in zip(got["items"], reference["items"]):
            assert mine == theirs, mine["id"]
    assert asked == []


@pytest.mark.parametrize("level", ["id", "bytes"])
def test_prefix_drift_on_the_arrays_is_top_drifts_maximum(level):
    """Random alternatives of few ids (repeated in a list, listed on one side only, lists of
    any length, some empty): _prefix_drift is max(top_drift) over the positions, as the Tok
    walk finds it; by id, and by bytes where the tokens carry no ids."""
    import pyarrow as pa

    from evalsuite.lossless.columnar import _prefix_drift, _Side
    from evalsuite.lossless.tokens import tokens_from_table, top_drift
    from evalsuite.store import TokenColumns

    rng = random.Random(5)

    def side(n):
        out = []
        for p in range(n):
            alts = [(f" x{i}", i, -rng.choice([0, 1, 2, 3]) / 8) for i in (rng.randrange(6) for _ in range(rng.randrange(0, 5)))]
            out.append(entry(f" t{p}", 900 + p, -1 / 16, alts))
        if level == "bytes":
            out = [dict(e, id=None, top=[dict(t, id=None) for t in e["top"]]) for e in out]
        return out

    for _ in range(150):
        n = rng.randrange(1, 25)
        tables = [pa.Table.from_batches([TokenColumns.from_entries(side(n)).to_arrow()]) for _ in range(2)]
        b, c = (_Side(t, {"answer": "".join(f" t{p}" for p in range(n))}) for t in tables)
        assert b.ok and c.ok and (b.ids is None) == (level == "bytes")
        stop = rng.randrange(0, n + 1)
        tb, tc = (tokens_from_table(t) for t in tables)
        want = 0.0
        for x, y in zip(tb[:stop], tc[:stop]):
            want = max(want, top_drift(x, y, level))
        assert _prefix_drift(b, c, stop, level) == want
