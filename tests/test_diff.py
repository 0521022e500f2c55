"""`evalsuite diff` on hand-made run folders: every verdict, the quirks, refusals, CLI and outputs."""
from __future__ import annotations

import json
import math

import pytest
from runfactory import make_run, rec

from evalsuite.lossless.classify import diff_item
from evalsuite.lossless.runs import diff_runs, exit_code, tau_for
from evalsuite.lossless.tokens import DiffRefused
from evalsuite.store import load_run

LOGPROBS = {"logprobs": 5}


def tok(text, lp, top=None, *, id=None, bytes_=None, part="answer"):
    """One logprob entry; `top` is [(text, lp)] or [(text, lp, id)] (the token itself added if absent)."""
    alts = []
    for t in (top or []):
        alts.append({"token": t[0], "bytes": None, "id": t[2] if len(t) > 2 else None, "logprob": t[1]})
    if not any(a["token"] == text and a["id"] == id for a in alts):
        alts.append({"token": text, "bytes": bytes_, "id": id, "logprob": lp})
    return {"token": text, "bytes": bytes_, "id": id, "logprob": lp, "part": part, "top": alts}


def plain(texts, lp=-0.1):
    """Confident tokens: each far ahead of its runner-up."""
    return [tok(t, lp, [(t, lp), ("zz", -5.0), ("yy", -6.0)]) for t in texts]


def record(item_id, tokens, outcome="correct", **kw):
    answer = "".join(t["token"] for t in tokens if t["part"] == "answer")
    return rec(item_id, outcome, answer=answer, logprobs=tokens, **kw)


def pair(tmp_path, base_tokens, cand_tokens, *, base_kw=None, cand_kw=None, tau=0.05, k=5):
    b = make_run(tmp_path / "b", records=[record("main/0", base_tokens, **(base_kw or {}))], decoding={"logprobs": k})
    c = make_run(tmp_path / "c", records=[record("main/0", cand_tokens, **(cand_kw or {}))], decoding={"logprobs": k})
    result = diff_runs(load_run(b), load_run(c), tau)
    return result, result.items[0]


def test_identical_streams(tmp_path):
    toks = plain(["The", " answer", " is", " 42"])
    result, item = pair(tmp_path, toks, toks)
    assert item.verdict == "identical"
    assert result.counts == {"identical": 1, "near_tie": 0, "suspicious": 0, "real": 0, "not_greedy": 0, "cut_prefix": 0,
                             "undetermined": 0, "hidden_drift": 0, "retokenised": 0, "unscored": 0}
    assert not item.retokenised and "token for token" in item.reason
    assert result.summary_line().startswith("1 identical, 0 near-tie flips, 0 suspicious, 0 real")


def test_near_tie_flip_that_remerges(tmp_path):
    head = plain(["This", " will", " output"])
    tail = plain([" 55", ".", " Done", " now", " ok"])
    base = head + [tok(":", -0.6931, [(":", -0.6931), (" `", -0.6932), ("x", -3.0)])] + tail
    cand = head + [tok(" `", -0.6931, [(" `", -0.6931), (":", -0.6932)])] + tail
    result, item = pair(tmp_path, base, cand)
    assert item.verdict == "near_tie"
    assert item.token_index == 3 and item.char_offset == len("This will output")
    assert item.baseline_token.text == ":" and item.candidate_token.text == " `"
    assert item.baseline_token.rank_baseline == 1 and item.candidate_token.rank_baseline == 2
    assert item.margin == pytest.approx(1e-4)
    assert item.remerge is not None
    assert (item.remerge.baseline_tokens_between, item.remerge.candidate_tokens_between) == (1, 1)
    assert item.remerge.agreed_tokens == 5 and item.remerge.baseline_index == 4
    assert "re-merged" in result.summary_line() and "1 near-tie flip (max |m| 0.0001, 1 re-merged)" in result.summary_line()


@pytest.mark.parametrize("lp_alt,verdict", [(-0.70, "near_tie"), (-0.72, "suspicious"), (-0.80, "real")])
def test_margin_thresholds(tmp_path, lp_alt, verdict):
    base = plain(["a"]) + [tok("b", -0.65, [("b", -0.65), ("c", lp_alt)])] + plain(["d"])
    cand = plain(["a"]) + [tok("c", -0.65, [("c", -0.65), ("b", lp_alt)])] + plain(["e"])
    _, item = pair(tmp_path, base, cand, tau=0.05)
    assert item.verdict == verdict
    assert item.margin == pytest.approx(-0.65 - lp_alt)


def test_candidate_outside_top_k_is_real_and_no_remerge(tmp_path):
    base = plain(["x", "y", "z", "w", "v"])
    cand = plain(["x", "Q", "R", "S", "T"])
    _, item = pair(tmp_path, base, cand, k=3)
    assert item.verdict == "real"
    assert item.margin_is_bound and item.margin == pytest.approx(-0.1 - -6.0)
    assert item.remerge is None
    assert "not in the baseline's top-3" in item.reason
    # a top-k shorter than asked (merged '' entries): still real, but no bound on m
    _, short = pair(tmp_path / "k5", base, cand, k=5)
    assert short.verdict == "real" and short.margin is None and not short.margin_is_bound


def test_candidate_opaque_token_absent_from_top_is_real(tmp_path):
    base = plain(["a"]) + [tok("k", -0.1, [("k", -0.1), ("j", -3.0)])]
    cand = plain(["a"]) + [tok("", -0.1, [("", -0.1)])]
    _, item = pair(tmp_path, base, cand, k=2)
    assert item.verdict == "real" and item.margin == pytest.approx(2.9)


def test_answer_and_correctness_change_reported(tmp_path):
    base = plain(["The", " answer", " is", " 42"])
    cand = plain(["The", " answer", " is"]) + [tok(" 41", -0.1, [(" 41", -0.1)])]
    base[3]["top"].append({"token": " 41", "bytes": None, "id": None, "logprob": -0.1001})
    result, item = pair(tmp_path, base, cand, base_kw={"extracted": "42"}, cand_kw={"extracted": "41", "outcome": "wrong"})
    assert item.verdict == "near_tie"
    assert item.answer_changed and item.correctness_changed
    data = result.to_dict()
    assert data["answer_changes"] == 1 and data["correctness_changes"] == 1
    assert data["baseline"]["accuracy"] == 1.0 and data["candidate"]["accuracy"] == 0.0


def test_hidden_drift_same_text_different_ids(tmp_path):
    # two different tokens (ids 7 and 9) that both read "é", and the texts then differ: hidden drift
    base = [tok("A", -0.1, [("A", -0.1, 1), ("B", -4, 2)], id=1), tok("é", -0.5, [("é", -0.5, 7), ("é", -0.50001, 9)], id=7),
            tok("C", -0.1, [("C", -0.1, 3)], id=3)]
    cand = [tok("A", -0.1, [("A", -0.1, 1), ("B", -4, 2)], id=1), tok("é", -0.5, [("é", -0.5, 9), ("é", -0.50001, 7)], id=9),
            tok("D", -0.1, [("D", -0.1, 4)], id=4)]
    result, item = pair(tmp_path, base, cand)
    assert item.verdict == "near_tie" and item.hidden_drift
    assert item.candidate_token.id == 9 and item.candidate_token.logprob_baseline == pytest.approx(-0.50001)
    assert result.counts["hidden_drift"] == 1 and result.counts["identical"] == 0


def test_byte_tokens_of_one_character_compared_by_bytes(tmp_path):
    # é = C3 A9, è = C3 A8: the second byte flips; both decode to "" alone
    def b(text, byts, lp, top):
        return {"token": text, "bytes": byts, "id": None, "logprob": lp, "part": "answer",
                "top": [{"token": "", "bytes": bb, "id": None, "logprob": ll} for bb, ll in top]}
    base = [b("", [0xC3], -0.1, [([0xC3], -0.1)]), b("", [0xA9], -0.69, [([0xA9], -0.69), ([0xA8], -0.70)])]
    cand = [b("", [0xC3], -0.1, [([0xC3], -0.1)]), b("", [0xA8], -0.69, [([0xA8], -0.69), ([0xA9], -0.70)])]
    recb = rec("main/0", answer="é", logprobs=base)
    recc = rec("main/0", answer="è", logprobs=cand)
    item = diff_item(recb, recc, 0.05)
    assert item.verdict == "near_tie" and item.token_index == 1
    assert item.baseline_token.bytes == [0xA9] and item.candidate_token.bytes == [0xA8]
    assert item.hidden_drift  # both decode to "" on their own


def test_opaque_byte_tokens_undetermined_when_logprobs_jump(tmp_path):
    # llama-cpp-python: partial bytes read "" with no bytes/ids; the chosen logprobs differ -> a flip
    base = plain(["a"]) + [tok("", -0.40, [("", -0.40), ("q", -2.0)])] + plain(["b", "c"])
    cand = plain(["a"]) + [tok("", -0.90, [("", -0.90), ("q", -2.0)])] + plain(["b", "c"])
    result, item = pair(tmp_path, base, cand)
    assert item.verdict == "undetermined" and item.hidden_drift
    assert item.token_index == 1
    assert "partial UTF-8" in item.reason and "differ by 0.5" in item.reason
    assert result.counts["undetermined"] == 1 and result.counts["hidden_drift"] == 1


def test_opaque_byte_tokens_with_equal_logprobs_are_identical(tmp_path):
    base = plain(["a"]) + [tok("", -0.40, [("", -0.40), ("q", -2.0)])] + plain(["b"])
    cand = plain(["a"]) + [tok("", -0.4000001, [("", -0.4000001), ("q", -2.0000001)])] + plain(["b"])
    _, item = pair(tmp_path, base, cand)
    assert item.verdict == "identical"


def test_candidate_opaque_token_is_undetermined(tmp_path):
    base = plain(["a"]) + [tok("k", -0.6, [("k", -0.6), ("", -0.61)])]
    cand = plain(["a"]) + [tok("", -0.6, [("", -0.6), ("k", -0.61)])]
    _, item = pair(tmp_path, base, cand)
    assert item.verdict == "undetermined" and "partial UTF-8 byte" in item.reason


def test_no_logprobs_text_only(tmp_path):
    b = make_run(tmp_path / "b", records=[rec("main/0", answer="same"), rec("main/1", answer="one")])
    c = make_run(tmp_path / "c", records=[rec("main/0", answer="same"), rec("main/1", answer="two")])
    result = diff_runs(load_run(b), load_run(c))
    verdicts = {i.id: i.verdict for i in result.items}
    assert verdicts == {"main/0": "identical", "main/1": "undetermined"}
    assert "kept no logprobs" in result.items[1].reason
    assert any("no top-k logprobs" in n for n in result.settings_notes)


def test_baseline_stopped_early_is_undetermined(tmp_path):
    base = plain(["a", "b"])
    cand = plain(["a", "b", "c"])
    _, item = pair(tmp_path, base, cand)
    assert item.verdict == "undetermined" and item.token_index == 2
    assert "baseline stopped" in item.reason


def test_length_cut_texts_that_differ_are_never_identical(tmp_path):
    # both cut at max_tokens; llama-cpp-python returned one token more on one side: "12" vs "123"
    toks = plain(["1", "2", "3"])
    result, item = pair(tmp_path, toks[:2], toks, base_kw={"finish_reason": "length", "outcome": "truncated"},
                        cand_kw={"finish_reason": "length", "outcome": "truncated"})
    assert item.verdict == "cut_prefix" and item.verdict != "identical"
    assert "cut at max_tokens after 2 tokens" in item.reason and "not identical" in item.reason
    assert result.counts["identical"] == 0 and result.counts["cut_prefix"] == 1
    # the same when the shorter one was cut and the longer one stopped by itself
    _, item = pair(tmp_path / "s", toks[:2], toks, base_kw={"finish_reason": "length", "outcome": "truncated"})
    assert item.verdict == "cut_prefix"
    # but a baseline that stopped by itself where the candidate went on is a divergence of unknown margin
    _, item = pair(tmp_path / "t", toks[:2], toks, cand_kw={"finish_reason": "length", "outcome": "truncated"})
    assert item.verdict == "undetermined" and "baseline stopped" in item.reason


def test_candidate_without_draft_logprobs_uses_text(tmp_path):
    # llama-server sends no logprobs for accepted draft tokens: candidate entries are missing
    base = plain(["The", " sum"]) + [tok(" is", -0.70, [(" is", -0.70), (" was", -0.7002)])] + plain([" 5"])
    cand = plain(["The"]) + plain([" 5"])  # only some tokens carry logprobs
    b = make_run(tmp_path / "b", records=[record("main/0", base)], decoding=LOGPROBS)
    c = make_run(tmp_path / "c", records=[rec("main/0", answer="The sum was 5", logprobs=cand)], decoding=LOGPROBS)
    item = diff_runs(load_run(b), load_run(c)).items[0]
    assert item.verdict == "near_tie" and item.token_index == 2
    assert item.candidate_token.text == " was" and item.candidate_token.inferred
    assert item.margin == pytest.approx(0.0002)


def test_error_record_is_undetermined(tmp_path):
    b = make_run(tmp_path / "b", records=[record("main/0", plain(["x"]))], decoding=LOGPROBS)
    c = make_run(tmp_path / "c", records=[rec("main/0", "error", error_kind="timeout")], decoding=LOGPROBS)
    item = diff_runs(load_run(b), load_run(c)).items[0]
    assert item.verdict == "undetermined" and "timeout" in item.reason


# ------------------------------------------------------------------ refusals

def test_refuses_different_fingerprints(tmp_path):
    b = make_run(tmp_path / "b", records=[rec("main/0")])
    c = make_run(tmp_path / "c", records=[rec("main/0")], fingerprint="f" * 64)
    with pytest.raises(DiffRefused, match="different items"):
        diff_runs(load_run(b), load_run(c))


def test_refuses_different_prompts_and_decoding(tmp_path):
    b = make_run(tmp_path / "b", records=[rec("main/0")], decoding={"max_tokens": 128, "extra_body": {"repeat_penalty": 1.0}})
    c = make_run(tmp_path / "c", records=[rec("main/0", prompt_sha256="0" * 64)],
                 decoding={"max_tokens": 256, "extra_body": {"repeat_penalty": 1.1}})
    with pytest.raises(DiffRefused) as e:
        diff_runs(load_run(b), load_run(c))
    text = str(e.value)
    assert "decoding.max_tokens: 128 vs 256" in text
    assert "extra_body.repeat_penalty" in text
    assert "different prompts" in text and "main/0" in text


def test_engine_keys_may_differ_and_are_named(tmp_path):
    b = make_run(tmp_path / "b", records=[rec("main/0")], decoding={"logprobs": 5, "extra_body": {"speculative.n_max": 0}})
    c = make_run(tmp_path / "c", records=[rec("main/0")], decoding={"logprobs": 10, "extra_body": {"speculative.n_max": 16}})
    result = diff_runs(load_run(b), load_run(c))
    assert any("extra_body.speculative.n_max: 0 vs 16" in n and "allowed" in n for n in result.settings_notes)
    assert any("decoding.logprobs" in n for n in result.settings_notes)


def test_tau_presets_and_fail_on(tmp_path):
    assert tau_for(None, None) == 0.05 and tau_for(None, "fp8-kv") == 0.25 and tau_for(0.2, "fp32") == 0.2
    with pytest.raises(DiffRefused):
        tau_for(None, "fp4")
    base = plain(["a"]) + [tok("b", -0.65, [("b", -0.65), ("c", -0.66)])]
    cand = plain(["a"]) + [tok("c", -0.65, [("c", -0.65), ("b", -0.66)])]
    result, _ = pair(tmp_path, base, cand)
    assert exit_code(result, None) == 0 and exit_code(result, "real") == 0
    assert exit_code(result, "suspicious") == 0 and exit_code(result, "near-tie") == 1


# ------------------------------------------------------------------ CLI, JSON, HTML

def test_cli_json_html_and_fail_on(tmp_path, run_cli):
    base = plain(["a", "b", "c"])
    b = make_run(tmp_path / "b", records=[record("main/0", base), record("main/1", plain(["x", "y"]))], decoding=LOGPROBS,
                 label="spec-off")
    c = make_run(tmp_path / "c", records=[record("main/0", base), record("main/1", plain(["x", "<&>"]))], decoding=LOGPROBS,
                 label="spec-on")
    out = run_cli("diff", b, c, "--json", tmp_path / "d.json", "--html", tmp_path / "d.html", "--fail-on", "real")
    assert out.returncode == 1, out.stderr
    assert "1 identical, 0 near-tie flips, 0 suspicious, 1 real" in out.stdout
    data = json.loads((tmp_path / "d.json").read_text())
    assert data["counts"] == {"identical": 1, "near_tie": 0, "suspicious": 0, "real": 1, "not_greedy": 0, "cut_prefix": 0,
                              "undetermined": 0, "hidden_drift": 0, "retokenised": 0, "unscored": 0}
    assert [i["class"] for i in data["items"]] == ["identical", "real"]
    page = (tmp_path / "d.html").read_text()
    assert "<script" not in page and "http://" not in page.replace("http://127.0.0.1:8080/v1", "")
    assert "&lt;&amp;&gt;" in page and "main/1" in page and "spec-on" in page
    ok = run_cli("diff", b, b)
    assert ok.returncode == 0 and "2 identical" in ok.stdout


def test_cli_refusal_exit_2(tmp_path, run_cli):
    b = make_run(tmp_path / "b", records=[rec("main/0")])
    c = make_run(tmp_path / "c", records=[rec("main/0")], fingerprint="e" * 64)
    out = run_cli("diff", b, c)
    assert out.returncode == 2 and "different items" in out.stderr
    missing = run_cli("diff", b, tmp_path / "nope")
    assert missing.returncode == 2 and "nope" in missing.stderr


def test_margins_are_finite_in_json(tmp_path):
    base = plain(["a", "b"])
    base[1]["top"].append({"token": "masked", "bytes": None, "id": None, "logprob": float("-inf")})
    cand = plain(["a", "Z"])
    result, item = pair(tmp_path, base, cand, k=3)
    assert math.isfinite(item.margin)
    json.dumps(result.to_dict(), allow_nan=False)


# ------------------------------------------------------------------ --rescore

def _stop_case(tmp_path, api):
    base = plain(["a", "b"])
    cand = plain(["a", "b", "c"])
    kw = {"prompt": "Q: go\nA:", "messages": None} if api == "completions" else {}
    b = make_run(tmp_path / "b", records=[record("main/0", base, **kw)], decoding=LOGPROBS, api=api)
    c = make_run(tmp_path / "c", records=[record("main/0", cand, **kw)], decoding=LOGPROBS, api=api)
    return load_run(b), load_run(c)


def test_rescore_chat_run_stays_undetermined(tmp_path):
    from evalsuite.lossless.rescore import rescore_result

    b, c = _stop_case(tmp_path, "chat")
    result = rescore_result(diff_runs(b, c), b, c, "http://127.0.0.1:9/v1")  # never contacted
    item = result.items[0]
    assert item.verdict == "undetermined" and result.rescored == 0
    assert any("chat run" in n for n in item.notes)


def test_rescore_completions_run_on_loopback_server(tmp_path, monkeypatch):
    import http.server
    import threading

    from evalsuite.lossless.rescore import rescore_result

    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            seen.append((json.loads(self.rfile.read(int(self.headers["Content-Length"]))), self.headers.get("Authorization")))
            if len(seen) == 1:   # a transient 503 first: the run's client retries it
                self.send_response(503)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"error": {"message": "loading"}}')
                return
            body = json.dumps({"choices": [{"text": "c", "finish_reason": "length",
                                            "logprobs": {"tokens": ["c"], "token_logprobs": [-0.70],
                                                         "top_logprobs": [{"b": -0.70, "c": -0.7004}]}}],
                               "usage": {"prompt_tokens": 3, "completion_tokens": 1}})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = plain(["a"]) + [tok("b", None, [("b", None), ("c", -0.71)])]
        cand = plain(["a"]) + [tok("c", -0.70, [("c", -0.70)])]
        kw = {"prompt": "Q: go\nA:", "messages": None}
        b = load_run(make_run(tmp_path / "b", records=[record("main/0", base, **kw)], decoding=LOGPROBS, api="completions"))
        c = load_run(make_run(tmp_path / "c", records=[record("main/0", cand, **kw)], decoding=LOGPROBS, api="completions"))
        result = diff_runs(b, c)
        assert result.items[0].verdict == "undetermined"   # the baseline's own logprob is missing
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
        rescored = rescore_result(result, b, c, f"http://127.0.0.1:{server.server_port}/v1")
        item = rescored.items[0]
        assert len(seen) == 2                                    # retried after the 503
        body, auth = seen[-1]
        assert body["prompt"] == "Q: go\nA:a" and body["max_tokens"] == 1 and body["logprobs"] == 20
        assert auth == "Bearer sk-test-key"                      # the API key, as `run` sends it
        assert rescored.rescored == 1 and item.verdict == "near_tie"
        assert item.margin == pytest.approx(0.0004, abs=1e-6) and "re-scored" in item.reason
    finally:
        server.shutdown()
