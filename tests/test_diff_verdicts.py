"""The diff's verdicts mean what a reader takes them to mean: identical is byte-identical text,
a baseline that did not decode greedily is named as such (with the fix), unstreamed
llama-cpp-python partial bytes are compared where they can be, and a re-merge is a real one."""
from __future__ import annotations

import json

import pytest
from runfactory import make_run, rec
from test_diff import LOGPROBS, pair, plain, record, tok

from evalsuite.lossless.diff_json import diff_json_mismatch
from evalsuite.lossless.runs import diff_runs, format_diff
from evalsuite.lossless.tokens import not_top1_count
from evalsuite.store import load_run


def test_byte_identical_text_tokenised_differently_is_identical_and_retokenised(tmp_path):
    # "hello" as "hel"+"lo" vs "he"+"llo": today's walk called this real with m = 2.9
    base = [tok("hel", -0.1, [("hel", -0.1), ("he", -3.0)]), tok("lo", -0.1, [("lo", -0.1)])]
    cand = [tok("he", -0.1, [("he", -0.1), ("hel", -3.0)]), tok("llo", -0.1, [("llo", -0.1)])]
    result, item = pair(tmp_path, base, cand)
    assert item.verdict == "identical" and item.retokenised
    assert "retokenised" in item.reason and item.margin is None
    assert result.counts["identical"] == 1 and result.counts["retokenised"] == 1 and result.counts["real"] == 0
    assert "1 identical (1 retokenised)" in result.summary_line()


def test_texts_that_differ_are_never_identical(tmp_path):
    b = make_run(tmp_path / "b", records=[rec("main/0", answer="12", finish_reason="length", outcome="truncated")])
    c = make_run(tmp_path / "c", records=[rec("main/0", answer="123", finish_reason="length", outcome="truncated")])
    item = diff_runs(load_run(b), load_run(c)).items[0]
    assert item.verdict != "identical"


def _not_greedy_pair(tmp_path):
    # llama-cpp-python's default repeat_penalty 1.1: the baseline emitted "x" although its own
    # top-1 was "y" (m = -0.112); the candidate emitted its top-1 "y"
    head = plain(["The", " cat"])
    base = head + [tok(" x", -0.812, [(" y", -0.700), (" x", -0.812)])] + plain([" sat"])
    cand = head + [tok(" y", -0.700, [(" y", -0.700), (" x", -0.812)])] + plain([" sat"])
    return pair(tmp_path, base, cand)


def test_negative_margin_is_not_greedy_with_the_fix(tmp_path):
    result, item = _not_greedy_pair(tmp_path)
    assert item.verdict == "not_greedy"
    assert item.margin == pytest.approx(-0.112)
    assert "not its own top-1" in item.reason and "clearly preferred" not in item.reason
    assert "repeat_penalty" in item.reason          # the one-line fix
    assert item.baseline_not_top1 == 1 and item.candidate_not_top1 == 0
    assert result.counts["not_greedy"] == 1 and result.counts["real"] == 0
    # per run: the count of positions, and the fix, in the notes and the JSON
    assert result.baseline.not_top1 == 1 and result.candidate.not_top1 == 0
    assert any(n.startswith("baseline: 1 of 4 emitted tokens were not the server's own top-1") for n in result.settings_notes)
    data = result.to_dict()
    assert data["baseline"]["not_top1"] == 1 and data["items"][0]["class"] == "not_greedy"
    assert "1 not greedy" in format_diff(result)


def test_not_greedy_candidate_is_named(tmp_path):
    head = plain(["a"])
    base = head + [tok("b", -0.6, [("b", -0.6), ("c", -0.9)])]
    cand = head + [tok("c", -0.9, [("b", -0.6), ("c", -0.9)])]
    _, item = pair(tmp_path, base, cand)
    assert item.verdict == "not_greedy" and "candidate's token 'c'" in item.reason


def test_not_greedy_gate_does_not_count_it_as_real(tmp_path):
    import io

    from evalsuite.analysis.gate.decide import gate_main

    result, _ = _not_greedy_pair(tmp_path)
    (tmp_path / "d.json").write_text(json.dumps(result.to_dict()))
    out = io.StringIO()
    code = gate_main(tmp_path / "b", tmp_path / "c", max_drop=0, alpha=1, diff=tmp_path / "d.json",
                     config_start=tmp_path, out=out)
    assert code == 0, out.getvalue()
    assert "real divergences 0 <= 0" in out.getvalue() and "1 item(s) not greedy" in out.getvalue()


def test_not_top1_count_on_raw_entries():
    entries = [tok("a", -0.1, [("a", -0.1), ("b", -2.0)]), tok("c", -1.0, [("d", -0.5), ("c", -1.0)]),
               tok("", -2.0, [("", -0.1), ("e", -3.0)]),            # opaque partial byte: rank unreadable
               tok("f", -0.5, [("f", -0.5), ("g", -0.5 + 1e-7)])]   # float rounding is not a choice
    assert not_top1_count(entries) == 1
    assert not_top1_count(None) == 0


def test_unstreamed_partial_bytes_are_compared_not_blamed_on_other_servers(tmp_path):
    # llama-cpp-python --no-stream: the text holds whole characters ("价格"), the logprob tokens
    # of the partial UTF-8 bytes read "" (each decoded alone with errors="ignore")
    def toks(last):
        return [tok("", -0.2, [("", -0.2), ("x", -3.0)]), tok("", -0.1, [("", -0.1)]), tok("", -0.1, [("", -0.1)]),
                tok("格", -0.3, [("格", -0.3), ("x", -4.0)]), tok(" is", -0.1, [(" is", -0.1), (" was", -5.0)]),
                tok(last, -0.69, [(" 1", -0.69), (" 2", -0.70)])]
    b = make_run(tmp_path / "b", records=[rec("main/0", answer="价格 is 1", logprobs=toks(" 1"))], decoding=LOGPROBS)
    c = make_run(tmp_path / "c", records=[rec("main/0", answer="价格 is 2",
                                              logprobs=toks(" 2")[:-1] + [tok(" 2", -0.69, [(" 2", -0.69)])])],
                 decoding=LOGPROBS)
    item = diff_runs(load_run(b), load_run(c)).items[0]
    assert item.verdict == "near_tie", item.reason
    assert item.token_index == 5 and item.margin == pytest.approx(0.01)
    assert "SGLang" not in item.reason and "draft" not in item.reason


def test_uncovered_baseline_names_the_cause_and_no_rescore_for_chat(tmp_path):
    # the server sent logprobs for only some tokens (llama-server drafts): the reason says so,
    # and does not offer --rescore to a chat run (it cannot help there)
    b = make_run(tmp_path / "b", records=[rec("main/0", answer="The sum is 5", logprobs=plain(["The", " 5"]))],
                 decoding=LOGPROBS)
    c = make_run(tmp_path / "c", records=[record("main/0", plain(["The", " sum", " was", " 5"]))], decoding=LOGPROBS)
    item = diff_runs(load_run(b), load_run(c)).items[0]
    assert item.verdict == "undetermined"
    assert "fewer tokens than it generated" in item.reason and "SGLang" not in item.reason
    assert "chat run cannot be re-scored" in item.reason


def test_short_common_run_on_gibberish_is_not_a_remerge(tmp_path):
    # 4 tokens in common after a divergence, then apart again until both are cut: no re-merge
    base = plain(["a", "b"]) + plain(["X1", "c", "d", "e", "f", "P1", "P2", "P3"])
    cand = plain(["a", "b"]) + [tok("Y1", -0.1, [("Y1", -0.1)])] + plain(["c", "d", "e", "f", "Q1", "Q2", "Q3"])
    cut = {"finish_reason": "length", "outcome": "truncated"}
    _, item = pair(tmp_path, base, cand, base_kw=cut, cand_kw=cut)
    assert item.token_index == 2 and item.remerge is None


def test_remerge_means_the_texts_agree_to_the_end(tmp_path):
    tail = ["t%d" % n for n in range(10)]
    base = plain(["a", "X"] + tail)
    cand = plain(["a", "Y", "Z"] + tail)
    result, item = pair(tmp_path, base, cand)
    assert item.remerge is not None
    assert (item.remerge.baseline_index, item.remerge.candidate_index) == (2, 3)
    assert item.remerge.agreed_tokens == 10
    assert "re-merged at baseline token 2" in format_diff(result)
    # the same common stretch followed by a different ending is not a re-merge
    cand_end = plain(["a", "Y", "Z"] + tail + ["different"])
    _, item = pair(tmp_path / "x", base, cand_end)
    assert item.remerge is None


def test_diff_json_names_its_runs(tmp_path):
    b = make_run(tmp_path / "b", records=[record("main/0", plain(["x"]))], decoding=LOGPROBS)
    c = make_run(tmp_path / "c", records=[record("main/0", plain(["y"]))], decoding=LOGPROBS)
    other = make_run(tmp_path / "o", records=[record("main/0", plain(["y"]))], decoding=LOGPROBS,
                     extra_manifest={"started_at": "2020-01-01T00:00:00Z"})
    data = json.loads(json.dumps(diff_runs(load_run(b), load_run(c)).to_dict()))
    assert diff_json_mismatch(data, load_run(b), load_run(c)) is None
    why = diff_json_mismatch(data, load_run(b), load_run(other))
    assert why and "candidate" in why and "started_at" in why
    del data["baseline"]["started_at"]
    assert "older evalsuite" in diff_json_mismatch(data, load_run(b), load_run(c))


def test_divergence_after_earlier_non_greedy_tokens_is_not_greedy(tmp_path):
    # a repeat penalty changed an earlier choice (both runs alike); at the divergence the raw
    # margin 1.0 would read "real", but the penalised choice was what was close
    head = [tok("a", -0.1, [("a", -0.1)]), tok("b", -0.9, [("q", -0.6), ("b", -0.9)])]
    base = head + [tok("c", -0.5, [("c", -0.5), ("d", -1.5)])] + plain(["e"])
    cand = head + [tok("d", -0.5, [("d", -0.5), ("c", -1.5)])] + plain(["f"])
    _, item = pair(tmp_path, base, cand)
    assert item.verdict == "not_greedy" and "earlier position" in item.reason
    assert item.margin == pytest.approx(1.0)


def test_character_split_over_two_text_tokens_is_aligned(tmp_path):
    # "x߱d": the bytes DF B1 of '߱' end one token ("x" + DF -> "x") and start the next
    # (B1 + "d" -> "d"); the unstreamed text holds the whole character
    def toks(last):
        return [tok("x", -0.1, [("x", -0.1)]), tok("d", -0.2, [("d", -0.2)]), tok(last, -0.69, [(" 1", -0.69), (" 2", -0.70)])]
    b = make_run(tmp_path / "b", records=[rec("main/0", answer="x߱d 1", logprobs=toks(" 1"))], decoding=LOGPROBS)
    c = make_run(tmp_path / "c", records=[rec("main/0", answer="x߱d 2", logprobs=toks(" 2"))], decoding=LOGPROBS)
    item = diff_runs(load_run(b), load_run(c)).items[0]
    assert item.verdict == "near_tie" and item.token_index == 2, item.reason
