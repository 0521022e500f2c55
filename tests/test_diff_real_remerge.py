"""Real divergences that re-merge (issue 45: a candidate writes a few tokens its baseline did not
list in its top-K, then goes on exactly as the baseline: quant changes, buggy kernels) are
decided on the row group's arrays, whether the runs carry token ids (llama-server) or only bytes
(vLLM, SGLang and OpenAI-shaped servers send no ids): the first divergence, the candidate's
token outside the baseline's top-K, the re-merge point after any later divergence. Every field
of every item, and the drift summary, equal what the per-item path (diff_item over the records'
inline entries) gives, and no item falls back to diff_item."""
from __future__ import annotations

import random

import pytest
from runfactory import make_run, rec
from test_diff_row_groups import parquet_copy

from evalsuite.lossless import runs as runs_module
from evalsuite.lossless.runs import diff_runs
from evalsuite.store import load_run

K = 3


def lp(rng, lo=0.0, hi=0.5):
    """A logprob float32 holds exactly (the inline path keeps float64, the side file float32)."""
    return -round(rng.uniform(lo, hi) * 256) / 256


def entry(word, wid, value, alts, part="reasoning", raw=None):
    """One position: the emitted token (`raw`: its bytes when not its text's UTF-8, a partial
    character) and its top-K, the token itself first."""
    raw = list(word.encode()) if raw is None else raw
    top = [{"token": word, "bytes": raw, "id": wid, "logprob": value}]
    top += [{"token": w, "bytes": list(w.encode()), "id": i, "logprob": v} for w, i, v in alts]
    return {"token": word, "bytes": raw, "id": wid, "logprob": value, "part": part, "top": top}


def words(n, seed, part="reasoning"):
    """Pseudo-random words, each listing two alternatives well below it."""
    rng = random.Random(seed)
    out = []
    for p in range(n):
        wid = rng.randrange(3000)
        value = lp(rng)
        out.append(entry(f" w{wid}", wid, value, [(f" a{wid}", 5000 + wid, value - 1 - lp(rng, 0, 1) * -1),
                                                   (f" b{wid}", 6000 + wid, value - 3 + lp(rng, 0, 1))], part))
    return out


def answer_zh(letter="C"):
    """答案是 C, with 答 split over three byte tokens (two partial characters read '')."""
    raw = list("答".encode())
    out = [entry("", 7001, -1 / 64, [(" x", 7101, -3.0)], "answer", raw=raw[:1]),
           entry("", 7002, -1 / 64, [(" y", 7102, -3.0)], "answer", raw=raw[1:2]),
           entry("答", 7003, -1 / 64, [(" z", 7103, -3.0)], "answer", raw=raw[2:])]
    out += [entry(w, 7004 + n, -1 / 32, [(" q", 7200 + n, -4.0)], "answer") for n, w in enumerate(["案", "是"])]
    return out + [entry(f" {letter}", 7300 + ord(letter), -1 / 32, [(" q", 7299, -4.0)], "answer")]


def baseline(n, seed, letter="C"):
    return words(n, seed) + answer_zh(letter)


def replaced(eb, at, left, inserted, seed, far=True):
    """The candidate: eb up to `at`, then `inserted` tokens in place of eb's next `left` (the
    first one outside eb's top-K at `at` when `far`, else eb's own runner-up there), then eb."""
    rng = random.Random(seed)
    ec = [dict(e) for e in eb[:at]]
    for n in range(inserted):
        wid = 20000 + rng.randrange(5000)
        value = lp(rng)
        ec.append(entry(f" n{wid}", wid, value, [(f" c{wid}", 30000 + wid, value - 2.0)], eb[at]["part"]))
    if not far:
        alt = eb[at]["top"][1]
        ec[at] = entry(alt["token"], alt["id"], -1 / 128, [(eb[at]["token"], eb[at]["id"], -1 / 16)], eb[at]["part"])
    return ec + [dict(e) for e in eb[at + left:]]


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
    for n, (left, inserted) in enumerate([(4, 4), (3, 6), (5, 2), (1, 1), (8, 8)]):   # a few words, outside top-K
        s = baseline(120 + 9 * n, n)
        items.append((f"words/{n}", s, replaced(s, 50 + n, left, inserted, 10 + n), "stop", "stop"))
    s = baseline(150, 20)
    ec = replaced(replaced(s, 90, 4, 4, 21), 30, 4, 3, 22)                    # real at 30, real again at 89, back
    items.append(("twice/0", s, ec, "stop", "stop"))
    s = baseline(150, 23)
    ec = replaced(replaced(s, 90, 2, 2, 24, far=False), 30, 4, 4, 25)          # real, then a near-tie flip, back
    items.append(("twice/flip", s, ec, "stop", "stop"))
    s = baseline(100, 26)
    items.append(("never/0", s, replaced(s, 40, 60, 55, 27) + answer_zh("D"), "stop", "stop"))   # back at 答案是, not at the end
    s = baseline(60, 28)
    items.append(("answer/apart", s, s[:-1] + answer_zh("D")[-1:], "stop", "stop"))   # the letter itself
    s = words(70, 29)
    items.append(("tail/stopped", s, replaced(s, 60, 5, 3, 30), "stop", "stop"))      # 5 agreed tokens, both stopped
    items.append(("tail/cut", s, replaced(s, 60, 5, 3, 30), "length", "length"))      # 5 agreed tokens, cut: no re-merge
    s = baseline(130, 31)
    items.append(("cut/base", s[:110], replaced(s, 50, 4, 4, 32), "length", "length"))  # the baseline cut first
    s = baseline(140, 33)
    items.append(("drift/0", s, drifted(replaced(s, 70, 4, 4, 34), 3, 1 / 32), "stop", "stop"))   # other numbers before
    s = baseline(90, 35)
    ec = replaced(s, 40, 4, 4, 36)
    top = ec[9]["top"]               # a token listed twice on the candidate's side, the last as the baseline has it
    ec[9] = dict(ec[9], top=[top[0], dict(top[1], logprob=top[1]["logprob"] - 2), top[1]])
    items.append(("drift/twice", s, ec, "stop", "stop"))
    s = baseline(110, 37)
    far = s[45]["top"][2]            # in the top-K, but far below: real by its margin
    ec = replaced(s, 45, 3, 3, 38)
    ec[45] = entry(far["token"], far["id"], -1 / 128, [(s[45]["token"], s[45]["id"], -4.0)], "reasoning")
    items.append(("margin/0", s, ec, "stop", "stop"))
    s = baseline(80, 39)
    items.append(("same/0", s, s, "stop", "stop"))
    s = baseline(90, 40)
    top = s[12]["top"]               # one text listed twice (two ids), the later one likelier
    s[12] = dict(s[12], top=[top[0], dict(top[1], logprob=top[0]["logprob"] - 2),
                             dict(top[1], id=top[1]["id"] + 1, logprob=top[0]["logprob"] - 1)])
    items.append(("listed/twice", s, replaced(s, 40, 4, 4, 41), "stop", "stop"))
    return items


def without_ids(entries, keep=False):
    if keep:
        return entries
    return [dict(e, id=None, top=[dict(t, id=None) for t in e["top"]]) for e in entries]


def text(entries, part):
    """The part's text as the server streamed it: the tokens' bytes, decoded (a character split
    over tokens whole)."""
    raw = b"".join(bytes(e["bytes"]) for e in entries if e["part"] == part)
    return raw.decode("utf-8") or None


def inline_run(path, items, side, ids):
    records = []
    for item_id, eb, ec, fb, fc in items:
        e, finish = (eb, fb) if side == 0 else (ec, fc)
        e = without_ids(e, keep=ids[side])
        reasoning = text(e, "reasoning")
        records.append(rec(item_id, answer=text(e, "answer") or "", reasoning=reasoning,
                           reasoning_source="field" if reasoning else None, logprobs=e, finish_reason=finish))
    return make_run(path, records=records, decoding={"logprobs": K})


@pytest.mark.parametrize("ids", [(True, True), (False, False), (False, True)], ids=["ids", "bytes", "one-side-ids"])
def test_real_remerging_divergences_on_the_arrays_give_the_per_item_verdicts(tmp_path, monkeypatch, ids):
    items = planted()
    b, c = inline_run(tmp_path / "b", items, 0, ids), inline_run(tmp_path / "c", items, 1, ids)
    reference = diff_runs(load_run(b), load_run(c)).to_dict()
    by_id = {i["id"]: i for i in reference["items"]}
    # what the planted items are, by the per-item path
    for n, left in enumerate([4, 3, 5, 1, 8]):
        item = by_id[f"words/{n}"]
        assert item["class"] == "real" and item["margin_is_bound"] and item["remerged"], n
        assert (item["token_index"], item["remerge"]["baseline_index"]) == (50 + n, 50 + n + left), n
    assert by_id["twice/0"]["token_index"] == 30 and by_id["twice/0"]["remerge"]["baseline_index"] == 94
    assert by_id["twice/flip"]["class"] == "real" and by_id["twice/flip"]["remerge"]["baseline_index"] == 92
    assert not by_id["never/0"]["remerged"] and not by_id["answer/apart"]["remerged"]
    assert by_id["tail/stopped"]["remerged"] and not by_id["tail/cut"]["remerged"]
    assert by_id["cut/base"]["remerged"] and by_id["drift/0"]["prefix_drift"] == 1 / 32
    assert by_id["margin/0"]["class"] == "real" and not by_id["margin/0"]["margin_is_bound"]
    assert by_id["same/0"]["class"] == "identical"
    # the same lists on both sides are no drift, however their keys repeat
    assert by_id["listed/twice"]["drift"]["kl_max"] == 0
    # the side files decide every item on the arrays: diff_item is never asked
    asked = []
    real_diff_item = runs_module.diff_item
    monkeypatch.setattr(runs_module, "diff_item", lambda b, c, *a, **k: asked.append(b["id"]) or real_diff_item(b, c, *a, **k))
    for rows in (150, 100_000):                 # groups split between items, one group
        base = load_run(parquet_copy(b, tmp_path / f"pb{rows}", rows))
        cand = load_run(parquet_copy(c, tmp_path / f"pc{rows}", rows))
        got = diff_runs(base, cand).to_dict()
        for key in ("counts", "summary", "drift"):
            assert got[key] == reference[key], key
        for mine, theirs in zip(got["items"], reference["items"]):
            assert mine == theirs, mine["id"]
    assert asked == []
