"""Token drift from stored top-K logprobs (evalsuite/lossless/drift.py): planted distributions
with known KL, same-top-1 and Δp, the common prefix ending at the divergence, and the
Kaplan-Meier survival curve."""
from __future__ import annotations

import json
import math

import pytest
from runfactory import make_run, rec

from evalsuite.lossless.drift import survival_curve
from evalsuite.lossless.runs import diff_runs, format_diff
from evalsuite.store import load_run

LN = math.log


def ent(text, tid, lp, top):
    alts = [{"token": t, "bytes": list(t.encode()), "id": i, "logprob": v} for t, i, v in top]
    return {"token": text, "bytes": list(text.encode()), "id": tid, "logprob": lp, "part": "answer", "top": alts}


BASE_DIST = [("a", 1, LN(0.6)), ("b", 2, LN(0.3)), ("c", 3, LN(0.05))]
CAND_DIST = [("a", 1, LN(0.5)), ("b", 2, LN(0.4)), ("d", 4, LN(0.05))]
# tokens both lists name: a, b; the rest bucket holds 0.1 on each side
KL_PLANTED = 0.6 * LN(0.6 / 0.5) + 0.3 * LN(0.3 / 0.4) + 0.1 * LN(0.1 / 0.1)


def runs(tmp_path, pairs):
    """pairs: [(id, base_entries, cand_entries)] -> DiffResult."""
    def text(es):
        return "".join(e["token"] for e in es)
    b = make_run(tmp_path / "b", records=[rec(i, answer=text(x), logprobs=x, finish_reason="length") for i, x, _ in pairs],
                 decoding={"logprobs": 3})
    c = make_run(tmp_path / "c", records=[rec(i, answer=text(y), logprobs=y, finish_reason="length") for i, _, y in pairs],
                 decoding={"logprobs": 3})
    return diff_runs(load_run(b), load_run(c))


def test_identical_runs_have_no_drift(tmp_path):
    same = [ent("a", 1, LN(0.6), BASE_DIST)] * 4
    result = runs(tmp_path, [("main/0", same, same)])
    d = result.drift
    assert d.tokens == 4 and d.kl_mean == 0 and d.kl_max == 0 and d.same_top1 == 1 and d.dp_rms == 0
    assert d.survival[-1] == (4, 1.0) and d.divergences == 0
    assert result.items[0].drift.kl_mean == 0


def test_planted_distributions_give_the_known_kl_and_dp(tmp_path):
    base = [ent("a", 1, LN(0.6), BASE_DIST)] * 3
    cand = [ent("a", 1, LN(0.5), CAND_DIST)] * 3
    result = runs(tmp_path, [("main/0", base, cand)])
    d = result.drift
    assert d.kl_mean == pytest.approx(KL_PLANTED, rel=1e-5) and d.kl_p99 == pytest.approx(KL_PLANTED, rel=1e-5)
    assert d.same_top1 == 1.0
    assert d.dp_mean_abs == pytest.approx(0.1, rel=1e-5) and d.dp_rms == pytest.approx(0.1, rel=1e-5)
    item = result.items[0].drift
    assert item.tokens == 3 and item.kl_mean == pytest.approx(KL_PLANTED, rel=1e-5)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["drift"]["kl_note"].startswith("KL over the tokens both top-K lists name plus one bucket")
    assert data["items"][0]["drift"]["tokens"] == 3
    assert "drift over 3 common-prefix tokens of 1 items" in format_diff(result)


def test_top1_change_counts_and_drift_stops_at_the_divergence(tmp_path):
    # position 1: the candidate's top-1 is b (same emitted token a though: not greedy for the
    # candidate, but drift counts what the distributions say); the streams part at token 2
    swapped = [("b", 2, LN(0.5)), ("a", 1, LN(0.45)), ("d", 4, LN(0.01))]
    base = [ent("a", 1, LN(0.6), BASE_DIST), ent("a", 1, LN(0.6), BASE_DIST),
            ent("a", 1, LN(0.6), BASE_DIST), ent("a", 1, LN(0.6), BASE_DIST)]
    cand = [ent("a", 1, LN(0.6), BASE_DIST), ent("a", 1, LN(0.45), swapped),
            ent("b", 2, LN(0.9), [("b", 2, LN(0.9))]), ent("a", 1, LN(0.6), BASE_DIST)]
    result = runs(tmp_path, [("main/0", base, cand)])
    item = result.items[0]
    assert item.token_index == 2 and item.verdict == "not_greedy"
    assert item.drift.prefix_tokens == 2 and item.drift.tokens == 2
    assert item.drift.same_top1 == 0.5
    assert result.drift.divergences == 1 and result.drift.divergences_per_1000 == pytest.approx(500.0)


def test_survival_is_kaplan_meier_with_censored_identical_items():
    # diverged at 2 and at 5; one identical item 10 tokens long (censored)
    curve = survival_curve([2, 5, 10], [True, True, False])
    assert curve[0] == (0, 1.0)
    assert dict(curve)[2] == pytest.approx(2 / 3) and dict(curve)[5] == pytest.approx(1 / 3)
    assert curve[-1] == (10, pytest.approx(1 / 3))
    # an identical item that ended before a later divergence leaves the risk set (censored)
    curve = survival_curve([3, 1, 6], [False, False, True])
    assert dict(curve)[6] == 0.0


def test_text_only_servers_have_no_drift_but_the_diff_still_works(tmp_path):
    b = make_run(tmp_path / "b", records=[rec("main/0", answer="x")])
    c = make_run(tmp_path / "c", records=[rec("main/0", answer="x")])
    result = diff_runs(load_run(b), load_run(c))
    assert result.items[0].drift is None and result.drift is None
    assert "drift" not in format_diff(result)


def test_same_numbers_figures_are_the_reductions_of_its_arrays():
    """summarised's shortcut for the same-numbers values (flagged `zero`) gives what the numpy
    reductions of the same arrays give, field for field."""
    from dataclasses import replace as _replace

    from evalsuite.lossless.drift import same_numbers, summarised

    for n in (1, 7, 1000):
        values = same_numbers(n)
        assert values.zero
        fast = summarised(n + 3, values, True)[0]
        slow = summarised(n + 3, _replace(values, zero=False), True)[0]
        assert fast == slow and repr(fast) == repr(slow)
