"""Logprob entries that stop spelling the text somewhere (llama-server renders partial UTF-8 in
its text unlike its token bytes; a stream skips drafted tokens) must not throw away the
logprobs at an earlier divergence, and every reason says what happened in *that* run."""
from __future__ import annotations

import pytest
from runfactory import make_run, rec

from evalsuite.lossless.runs import diff_runs
from evalsuite.store import load_run

LOGPROBS = {"logprobs": 5}
VOCAB: dict[str, int] = {}


def _id(text: str) -> int:
    return VOCAB.setdefault(text, len(VOCAB) + 10)


def lt(text, lp, top=(), *, raw=None):
    """A llama-server entry: id and bytes beside every token and alternative."""
    raw = list(text.encode()) if raw is None else raw
    alts = [{"token": t, "bytes": list(b) if b is not None else list(t.encode()), "id": _id(t if b is None else repr(b)),
             "logprob": v} for t, v, b in ((a + (None,))[:3] for a in top)]
    me = _id(text if raw == list(text.encode()) else repr(bytes(raw)))
    if not any(a["id"] == me for a in alts):
        alts.append({"token": text, "bytes": raw, "id": me, "logprob": lp})
    return {"token": text, "bytes": raw, "id": me, "logprob": lp, "part": "answer", "top": alts}


def sure(texts):
    return [lt(t, -0.1, [(t, -0.1), ("zz", -5.0), ("yy", -6.0)]) for t in texts]


def speculation(drafted: float) -> dict:
    moved = {"drafted": drafted, "accepted": drafted, "source": "metrics"}
    return {"speculation": {"http://127.0.0.1:8080/v1": {"during_run": moved, "summary": "x"}}}


def diff_one(tmp_path, base_tokens, base_text, cand_tokens, cand_text, base_spec=None, cand_spec=None):
    b = make_run(tmp_path / "b", records=[rec("main/0", answer=base_text, logprobs=base_tokens)], decoding=LOGPROBS,
                 extra_manifest=base_spec)
    c = make_run(tmp_path / "c", records=[rec("main/0", answer=cand_text, logprobs=cand_tokens)], decoding=LOGPROBS,
                 extra_manifest=cand_spec)
    result = diff_runs(load_run(b), load_run(c))
    return result, result.items[0]


def test_baseline_text_mismatch_after_the_divergence_keeps_its_logprobs(tmp_path):
    # --no-stream llama-server: the item diverges at token 1, the baseline's entries stop
    # spelling its text only later (its text renders something else there)
    base = sure(["The"]) + [lt(" sum", -0.1, [(" sum", -0.1), (" total", -0.9)])] + sure([" is", " 5"])
    cand = sure(["The"]) + [lt(" total", -0.2, [(" total", -0.2), (" sum", -0.8)])] + sure([" is", " 6"])
    result, item = diff_one(tmp_path, base, "The sum is 5 and more", cand, "The total is 6",
                            base_spec=speculation(0), cand_spec=speculation(0))
    assert item.verdict == "real", item.reason
    assert item.token_index == 1 and item.margin == pytest.approx(0.8)
    assert any("after the divergence" in n for n in item.notes), item.notes
    assert result.counts["undetermined"] == 0


def test_candidate_text_mismatch_after_the_divergence_keeps_its_token(tmp_path):
    # streamed llama-server, perturbed weights, no speculation: the baseline's first token is '1'
    # (a partial-byte '' alternative in its top-5), the candidate's stored entry is 'N' (lp -0.634);
    # the candidate's entries part from its text later. Today: "the candidate's token here is
    # not known (no logprobs)" although it is right there.
    first = lt("1", -0.3, [("1", -0.3), ("", -1.5, [0xE2]), ("2", -2.0), ("3", -2.5), ("4", -3.0)])
    base = [first] + sure([" apple", "s"])
    cand = [lt("N", -0.634, [("N", -0.634), ("M", -1.2)])] + sure([" pear"])
    result, item = diff_one(tmp_path, base, "1 apples", cand, "N pear and then text the entries lack",
                            base_spec=speculation(0), cand_spec=speculation(0))
    assert item.verdict == "real", item.reason
    assert item.token_index == 0 and item.candidate_token.text == "N" and not item.candidate_token.inferred
    assert "not known" not in item.reason
    assert result.counts["undetermined"] == 0


def test_rendering_mismatch_after_the_divergence_is_named_as_rendering(tmp_path):
    # the baseline's text renders a truncated UTF-8 sequence (E2 80) as two U+FFFD, one per byte,
    # where its entry has the bytes (and an empty token text) and decoding them gives one:
    # not a skipped token, and not speculation
    base = (sure(["a"]) + [lt("b", -0.1, [("b", -0.1), ("c", -0.7)])]
            + [lt("", -0.1, raw=[0xE2, 0x80])] + sure(["d"]))
    cand = sure(["a"]) + [lt("c", -0.1, [("c", -0.1), ("b", -0.7)])] + sure(["d"])
    result, item = diff_one(tmp_path, base, "ab\ufffd\ufffdd", cand, "acd", base_spec=speculation(0))
    assert item.verdict == "real" and item.token_index == 1, item.reason
    note = next(n for n in item.notes if "after the divergence" in n)
    assert "speculat" not in note and "draft" not in note
    assert "UTF-8" in note


def test_uncovered_baseline_without_speculation_does_not_blame_drafts(tmp_path):
    # the divergence lies where the baseline's entries no longer spell its text: undetermined,
    # and the reason says what the run shows (no drafting), not "as llama-server does for drafts"
    base = sure(["The"])
    cand = sure(["The", " total"])
    _, item = diff_one(tmp_path, base, "The sum", cand, "The total", base_spec=speculation(0))
    assert item.verdict == "undetermined"
    assert "as llama-server does for accepted speculative tokens" not in item.reason
    assert "no tokens were drafted during the run: speculation did not engage" in item.reason, item.reason
    # with drafting during the run, the skipped drafts are the cause
    _, item = diff_one(tmp_path / "s", base, "The sum", cand, "The total", base_spec=speculation(12))
    assert item.verdict == "undetermined" and "drafted 12 tokens" in item.reason, item.reason


def test_identical_text_with_skipped_draft_logprobs_is_not_retokenised(tmp_path):
    # streamed llama-server with speculation: the chunks of accepted drafts carry no logprobs,
    # so the candidate's entries skip those tokens. Not a retokenisation: say what it is.
    toks = sure(["The", " sum", " is", " 5", "."])
    result, item = diff_one(tmp_path, toks, "The sum is 5.", [toks[0], toks[4]], "The sum is 5.",
                            cand_spec=speculation(3))
    assert item.verdict == "identical"
    assert not item.retokenised and "retokenised" not in item.reason
    assert "without logprobs" in item.reason and "candidate" in item.reason
    assert result.counts["retokenised"] == 0 and result.counts["unscored"] == 1
    assert "1 identical (1 with tokens sent without logprobs)" in result.summary_line()


@pytest.mark.parametrize("drafted,decided", [(0, True), (None, False), (5, False)])
def test_gap_at_the_divergence_is_trusted_only_as_a_rendering_by_a_server_that_did_not_draft(tmp_path, drafted,
                                                                                            decided):
    # the candidate's entry at the divergence is a partial UTF-8 token its text renders as two
    # U+FFFD: a rendering if the server drafted nothing; with drafting (or no counters) it may be
    # the token after skipped drafts, so the index walk would compare the wrong tokens
    base = sure(["a"]) + [lt("b", -0.1, [("b", -0.1), ("", -0.7, [0xE2, 0x80])])] + sure(["d"])
    cand = sure(["a"]) + [lt("", -0.1, [("", -0.1, [0xE2, 0x80]), ("b", -0.7)], raw=[0xE2, 0x80])] + sure(["d"])
    spec = None if drafted is None else speculation(drafted)
    _, item = diff_one(tmp_path, base, "abd", cand, "a\ufffd\ufffdd", base_spec=speculation(0), cand_spec=spec)
    if decided:
        assert item.verdict == "real" and item.token_index == 1, item.reason
    else:
        assert item.verdict == "undetermined", (item.verdict, item.reason)
