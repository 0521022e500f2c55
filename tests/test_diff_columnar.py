"""The columnar path for divergent items (lossless/columnar.py) gives exactly diff_item's
verdict, on planted streams: every field of the item, reasons and context included; and it
steps aside (None) for every shape it does not decide."""
from __future__ import annotations

import random

import pyarrow as pa
import pytest

from evalsuite.lossless.classify import diff_item
from evalsuite.lossless.columnar import diverged_by_columns
from evalsuite.store import TokenColumns

K = 3


def entry(word, wid, lp, alts, part="answer"):
    """One position: the emitted token and its top-K (the token itself first, then `alts`)."""
    top = [{"token": word, "bytes": list(word.encode()), "id": wid, "logprob": lp}]
    top += [{"token": w, "bytes": list(w.encode()), "id": i, "logprob": v} for w, i, v in alts]
    return {"token": word, "bytes": list(word.encode()), "id": wid, "logprob": lp, "part": part, "top": top}


def stream(n, seed, part_split=None):
    rng = random.Random(seed)
    out = []
    for p in range(n):
        wid = rng.randrange(1000)
        word = f" w{wid}" if wid % 7 else f" é{wid}"     # some multi-byte characters
        lp = -rng.random() * 0.3
        alts = [(f" a{p}", 5000 + p, lp - 1.0 - rng.random()), (f" b{p}", 6000 + p, lp - 3.0 - rng.random())]
        out.append(entry(word, wid, lp, alts, "reasoning" if part_split is not None and p < part_split else "answer"))
    return out


def text_of(entries, part):
    return "".join(e["token"] for e in entries if e["part"] == part)


def record(item_id, entries, finish="stop", extracted="4"):
    reasoning = text_of(entries, "reasoning")
    return {"id": item_id, "answer": text_of(entries, "answer"), "reasoning": reasoning or None,
            "reasoning_source": "field" if reasoning else None, "outcome": "correct", "extracted": extracted,
            "finish_reason": finish}


def table(entries):
    return pa.Table.from_batches([TokenColumns.from_entries(entries).to_arrow()])


def paths(eb, ec, tau=0.05, finish=("stop", "stop")):
    base, cand = record("t/1", eb, finish[0]), record("t/1", ec, finish[1], extracted="5")
    tb, tc = table(eb), table(ec)
    fast = diverged_by_columns(base, cand, tb, tc, tau, K)
    # the straightforward reference: the per-token walk over the record's inline entries
    reference = diff_item(dict(base, logprobs=TokenColumns.from_entries(eb).entries()),
                          dict(cand, logprobs=TokenColumns.from_entries(ec).entries()), tau, K)
    from_tables = diff_item(base, cand, tau, K, tables=(tb, tc))
    assert from_tables.to_dict() == reference.to_dict()
    return fast, reference


def diverge(eb, at, word, wid, tail_seed, remerge_tail=0):
    """The candidate: the baseline up to `at`, then `word` there (the baseline's top-K entries
    at `at` stay, as the baseline's engine saw them), then other tokens, then optionally the
    baseline's last `remerge_tail` tokens again."""
    ec = [dict(e) for e in eb[:at]]
    ec.append(entry(word, wid, -0.01, [(eb[at]["token"], eb[at]["id"], -0.02)]))
    ec += stream(len(eb) - at - 1 - remerge_tail, tail_seed)
    if remerge_tail:
        ec += [dict(e) for e in eb[-remerge_tail:]]
    return ec


def same(fast, reference, verdict):
    assert fast is not None, "the columnar path stepped aside"
    assert fast.to_dict() == reference.to_dict()
    assert fast.verdict == verdict


@pytest.mark.parametrize("at", [0, 1, 37, 398])
def test_real_divergence_agrees(at):
    eb = stream(400, 1, part_split=150)
    fast, ref = paths(eb, diverge(eb, at, " zzz", 99999, 2))
    same(fast, ref, "real")
    assert ref.remerge is None


def test_near_tie_flip_that_remerges_agrees():
    eb = stream(300, 3)
    alt = eb[120]["top"][1]
    eb[120]["top"][1] = dict(alt, logprob=eb[120]["logprob"] - 0.01)   # a near tie at 120
    ec = diverge(eb, 120, alt["token"], alt["id"], 4, remerge_tail=20)
    fast, ref = paths(eb, ec)
    same(fast, ref, "near_tie")
    assert ref.remerge is not None and ref.prefix and ref.baseline_rest


def test_suspicious_and_margin_bounds_agree():
    eb = stream(200, 5)
    alt = eb[50]["top"][1]
    eb[50]["top"][1] = dict(alt, logprob=eb[50]["logprob"] - 0.07)
    fast, ref = paths(eb, diverge(eb, 50, alt["token"], alt["id"], 6), tau=0.05)
    same(fast, ref, "suspicious")


def test_drift_on_the_prefix_agrees():
    # the candidate's engine gave other logprobs on the identical prefix: prefix_drift > 0
    eb = stream(200, 7)
    ec = diverge(eb, 90, " zzz", 99999, 8)
    for e in ec[10:90:7]:
        e["top"] = [dict(t, logprob=t["logprob"] - 0.2) for t in e["top"]]
        e["logprob"] = e["top"][0]["logprob"]
    fast, ref = paths(eb, ec)
    same(fast, ref, "real")
    assert ref.prefix_drift and ref.prefix_drift > 0.1
    assert any("differ" in n for n in ref.notes) or ref.context_drift is not None


def test_not_greedy_before_the_divergence_agrees():
    eb = stream(200, 9)
    eb[30]["top"][1] = dict(eb[30]["top"][1], logprob=eb[30]["logprob"] + 0.5)   # not its own top-1
    fast, ref = paths(eb, diverge(eb, 60, " zzz", 99999, 10))
    same(fast, ref, "not_greedy")
    assert "earlier position" in ref.reason


def test_missing_logprobs_agree_or_step_aside():
    eb = stream(150, 11)
    ec = diverge(eb, 70, " zzz", 99999, 12)
    for e in ec[75:90]:                 # the candidate's drafted tokens came without numbers
        e["logprob"] = None
        e["top"] = []
    fast, ref = paths(eb, ec)
    same(fast, ref, "real")
    eb2 = [dict(e) for e in eb]
    eb2[70] = dict(eb2[70], logprob=None)      # the baseline's own number missing at the divergence
    fast, ref = paths(eb2, diverge(eb2, 70, " zzz", 99999, 12))
    same(fast, ref, "undetermined")
    # entries that skip tokens do not spell the text: the per-token path decides
    skipped = ec[:80] + ec[85:]
    base, cand = record("t/1", eb), record("t/1", ec)
    assert diverged_by_columns(base, cand, table(eb), table(skipped), 0.05, K) is None


def test_retokenised_and_identical_step_aside():
    eb = stream(100, 13)
    base = record("t/1", eb)
    assert diverged_by_columns(base, dict(base), table(eb), table(eb), 0.05, K) is None
    # the same text in other tokens (" w1 w2" as one token): identical text, not this path's
    ec = [dict(e) for e in eb]
    merged = entry(ec[10]["token"] + ec[11]["token"], 77777, -0.1, [])
    ec[10:12] = [merged]
    assert diverged_by_columns(base, record("t/1", ec), table(eb), table(ec), 0.05, K) is None
    # retokenised bytes where the texts differ later: decided here, like the reference
    ec2 = ec[:50] + diverge(eb, 51, " zzz", 99999, 14)[51:]
    fast, ref = paths(eb, ec2)
    same(fast, ref, ref.verdict)
    assert ref.token_index == 10


def test_cut_prefix_steps_aside_and_tokens_without_ids_are_compared_by_bytes():
    eb = stream(100, 15)
    fast, ref = paths(eb[:60], eb, finish=("length", "stop"))
    assert fast is None and ref.verdict == "cut_prefix"
    # one side without ids (the other with): both compared by bytes, as diff_item compares them
    no_ids = [dict(e, id=None) for e in eb]
    ec = diverge(eb, 40, " zzz", 99999, 16)
    fast, ref = paths(no_ids, ec)
    same(fast, ref, "real")
    assert ref.token_index == 40
    # neither ids nor bytes: compared by text (partial bytes read ""), diff_item's alone
    opaque = [dict(e, id=None, bytes=None) for e in eb]
    base, cand = record("t/1", opaque), record("t/1", ec)
    assert diverged_by_columns(base, cand, table(opaque), table(ec), 0.05, K) is None


def test_one_row_token_reads_as_the_whole_table_conversion():
    from evalsuite.lossless.columnar import _Side
    from evalsuite.lossless.tokens import tokens_from_table

    eb = stream(6, 17)
    eb[1] = dict(eb[1], logprob=None)
    eb[2] = dict(eb[2], logprob=float("-inf"))
    eb[0] = dict(eb[0], part="reasoning")
    eb[4]["top"][2] = dict(eb[4]["top"][2], logprob=None)
    eb[5]["top"] = []
    side = _Side(table(eb), record("t/1", eb))
    assert side.ok
    assert [side.tok(i) for i in range(6)] == tokens_from_table(table(eb))


def test_alternatives_without_a_number_agree():
    eb = stream(120, 19)
    for p in (3, 40, 60):
        eb[p]["top"][2] = dict(eb[p]["top"][2], logprob=None)
    eb[60]["top"][1] = dict(eb[60]["top"][1], logprob=None)
    fast, ref = paths(eb, diverge(eb, 60, eb[60]["top"][1]["token"], eb[60]["top"][1]["id"], 20))
    same(fast, ref, ref.verdict)
    assert ref.token_index == 60


def test_tokens_read_from_a_group_s_buffers_are_the_whole_table_conversion():
    """_Side.tok reads a row from its row group's arrays and buffers (an item past the group's
    start, alternatives without an id, bytes or number, odd bytes, an empty text): the same
    Tok as tokens_from_table."""
    from evalsuite.lossless.columnar import _Side
    from evalsuite.lossless.tokens import tokens_from_table
    from evalsuite.store.token_arrays import TokenArrays

    first, eb = stream(7, 3), stream(8, 23)
    eb[1]["top"][1] = dict(eb[1]["top"][1], id=None)
    eb[2]["top"][2] = dict(eb[2]["top"][2], bytes=None)
    eb[3]["top"][1] = dict(eb[3]["top"][1], bytes=[255, 254])
    eb[4]["top"][2] = dict(eb[4]["top"][2], logprob=float("-inf"))
    eb[5]["top"][1] = dict(eb[5]["top"][1], token="")
    eb[6] = dict(eb[6], logprob=None)
    eb[0] = dict(eb[0], part="reasoning")
    group = TokenArrays(pa.concat_tables([table(first), table(eb)]))
    side = _Side(None, record("t/2", eb), view=group.item(len(first), len(eb)))
    assert side.ok
    assert [side.tok(i) for i in range(len(eb))] == tokens_from_table(table(eb))
