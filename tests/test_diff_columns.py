"""The column fast path of `diff` gives exactly the verdict of the per-token path, and steps
aside for every shape it does not decide."""
from __future__ import annotations

import random

import pyarrow as pa

from evalsuite.lossless.classify import diff_item, identical_by_columns
from evalsuite.store import TokenColumns


def entries(words, seed=0, not_top1_at=()):
    rng = random.Random(seed)
    out = []
    for n, w in enumerate(words):
        lp = -rng.random()
        top = [{"token": w, "bytes": list(w.encode()), "id": 100 + n, "logprob": lp},
               {"token": "zz", "bytes": [122, 122], "id": 7, "logprob": lp - 0.5}]
        if n in not_top1_at:
            top[1]["logprob"] = lp + 0.3
        out.append({"token": w, "bytes": list(w.encode()), "id": 100 + n, "logprob": lp, "part": "answer", "top": top})
    return out


def record(item_id, answer, outcome="correct"):
    return {"id": item_id, "answer": answer, "reasoning": None, "outcome": outcome, "extracted": "4"}


def table(e):
    return pa.Table.from_batches([TokenColumns.from_entries(e).to_arrow()])


def both_paths(base, cand, eb, ec):
    cb, cc = TokenColumns.from_entries(eb), TokenColumns.from_entries(ec)
    fast = identical_by_columns(base, cand, table(eb), table(ec))
    slow = diff_item(dict(base, logprobs=cb.entries()), dict(cand, logprobs=cc.entries()), tau=0.05, k=2)
    return fast, slow


def test_identical_items_get_the_same_verdict_and_counts_on_both_paths():
    words = ["The", " answer", " is", " 4", "."]
    for not_top1 in ((), (1,), (0, 3)):
        e = entries(words, not_top1_at=not_top1)
        fast, slow = both_paths(record("a/1", "The answer is 4."), record("a/1", "The answer is 4."), e, e)
        assert fast is not None and fast == slow
        assert fast.baseline_not_top1 == len(not_top1)


def test_anything_but_plain_identical_goes_down_the_per_token_path():
    words = ["The", " answer", " is", " 4", "."]
    e = entries(words)
    same = record("a/1", "The answer is 4.")
    # texts differ
    assert identical_by_columns(same, record("a/1", "The answer is 5."), table(e), table(entries(["The", " answer", " is", " 5", "."]))) is None
    # same text, tokenised differently: retokenised is the per-token path's to say
    split = entries(["The", " ans", "wer", " is", " 4", "."])
    fast, slow = both_paths(same, same, e, split)
    assert fast is None and slow.verdict == "identical" and slow.retokenised
    # an error record
    assert identical_by_columns(same, record("a/1", "The answer is 4.", "error"), table(e), table(e)) is None
    # tokens that do not spell the text
    assert identical_by_columns(record("a/1", "other"), record("a/1", "other"), table(e), table(e)) is None
    # partial-byte tokens without ids or bytes
    opaque = [dict(x, id=None, bytes=None, token="") for x in e]
    assert identical_by_columns(same, same, table(opaque), table(opaque)) is None
    # no tokens kept
    assert identical_by_columns(same, same, None, None) is None


def test_tokens_from_columns_equal_tokens_from_entries_on_awkward_values():
    from evalsuite.lossless.tokens import tokens_from_table, tokens_of

    e = entries(["a", "\u00e9", "", "b"], seed=3)
    e[1]["logprob"] = float("-inf")
    e[2].update(id=None, bytes=None)                       # a partial-byte token
    e[3]["top"] = []                                       # no alternatives
    e[0]["top"][1]["logprob"] = None
    rows = TokenColumns.from_entries(e).entries()          # what the side file gives back
    assert tokens_from_table(table(e)) == tokens_of({"logprobs": rows})


def test_identical_items_without_ids_are_decided_by_bytes_as_the_per_token_path():
    """A server that sends no token ids (vLLM, SGLang): the tokens are compared by bytes, on
    the columns as by diff_item; the same bytes split otherwise is still the per-token path's."""
    words = ["The", " answer", " is", " 4", "."]
    same = record("a/1", "The answer is 4.")
    for strip in ("both", "one"):
        e = entries(words, not_top1_at=(2,))
        bare = [dict(x, id=None, top=[dict(t, id=None) for t in x["top"]]) for x in e]
        fast, slow = both_paths(same, same, bare, bare if strip == "both" else e)
        assert fast is not None and fast == slow and fast.baseline_not_top1 == 1
    split = [dict(x, id=None) for x in entries(["The", " ans", "wer", " is", " 4", "."])]
    fast, slow = both_paths(same, same, bare, split)
    assert fast is None and slow.retokenised
