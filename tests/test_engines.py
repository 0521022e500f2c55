"""Engine detection and neutral greedy settings: what each engine's replies look like, what is
sent (never over --extra-body), what is recorded, and the end-of-run not-top-1 warning."""
from __future__ import annotations

import io

from runfactory import make_run, rec
from test_diff import plain, tok

from evalsuite.lossless.runs import diff_runs
from evalsuite.engines import GreedyCheck, engine_settings, neutral_for, profile_from_replies
from evalsuite.store import load_run

LLAMA_CPP_PYTHON = {"models": {"object": "list", "data": [{"id": "tiny", "object": "model", "owned_by": "me"}]},
                    "openapi": {"info": {"title": "🦙 llama.cpp Python API", "version": "0.3.16"}}}


def test_llama_cpp_python_is_recognised_and_gets_repeat_penalty_1():
    p = profile_from_replies(LLAMA_CPP_PYTHON["models"], None, None, LLAMA_CPP_PYTHON["openapi"])
    assert p.engine == "llama-cpp-python" and p.version == "0.3.16"
    assert neutral_for(p) == {"repeat_penalty": 1.0}
    # owned_by "me" alone is enough when /openapi.json is not served
    assert profile_from_replies(LLAMA_CPP_PYTHON["models"]).engine == "llama-cpp-python"


def test_llama_cpp_server_sends_only_what_its_props_show_is_not_neutral():
    neutral = {"default_generation_settings": {"params": {"repeat_penalty": 1.0, "presence_penalty": 0.0,
                                                          "frequency_penalty": 0.0, "dry_multiplier": 0.0}},
               "build_info": "b6000-abcdef"}
    p = profile_from_replies({"data": [{"id": "m", "owned_by": "llamacpp"}]}, neutral)
    assert p.engine == "llama.cpp" and p.version == "b6000-abcdef" and neutral_for(p) == {}
    started_with_penalty = {"default_generation_settings": {"repeat_penalty": 1.1, "dry_multiplier": 0.8}}
    p = profile_from_replies({"data": []}, started_with_penalty)
    assert neutral_for(p) == {"repeat_penalty": 1.0, "dry_multiplier": 0.0}


def test_vllm_and_sglang_and_unknown():
    p = profile_from_replies({"data": [{"id": "q", "owned_by": "vllm"}]}, None, {"version": "0.8.5"})
    assert (p.engine, p.version) == ("vllm", "0.8.5") and neutral_for(p) == {"repetition_penalty": 1.0}
    assert profile_from_replies({"data": [{"id": "q", "owned_by": "sglang"}]}).engine == "sglang"
    p = profile_from_replies({"data": [{"id": "q", "owned_by": "openai"}]})
    assert p.engine == "unknown" and neutral_for(p) == {}


def test_user_extra_body_wins_and_sampling_sends_nothing():
    p = profile_from_replies(LLAMA_CPP_PYTHON["models"], None, None, LLAMA_CPP_PYTHON["openapi"])
    sent, entry = engine_settings([p], 0.0, {})
    assert sent == {"repeat_penalty": 1.0} and entry["neutral_sent"] == sent
    assert entry["endpoints"][0]["engine"] == "llama-cpp-python"
    sent, entry = engine_settings([p], 0.0, {"repeat_penalty": 1.3})
    assert sent == {} and entry["user_set"] == ["repeat_penalty"]
    sent, entry = engine_settings([p], 0.7, {})
    assert sent == {} and "sampling" in entry["why"]


def test_greedy_check_counts_and_warns_with_the_fix():
    check = GreedyCheck()
    check.add(rec("main/0", logprobs=plain(["a", "b"])))
    assert check.warning() is None
    check.add(rec("main/1", logprobs=[tok("x", -0.8, [("y", -0.7), ("x", -0.8)])] + plain(["z"])))
    check.add(rec("main/2", "error"))
    text = check.warning()
    assert text.startswith("warning: 1 of 4 generated tokens (in 1 items) were not the server's own top-1")
    assert "repeat_penalty" in text
    err = io.StringIO()
    check.warn(err)
    assert "not_greedy" in err.getvalue()


def test_diff_allows_the_neutral_settings_evalsuite_sent(tmp_path):
    # llama.cpp baseline (nothing to send) vs llama-cpp-python candidate (repeat_penalty 1.0 sent)
    engine_c = {"neutral_sent": {"repeat_penalty": 1.0}}
    b = make_run(tmp_path / "b", records=[rec("main/0")], extra_manifest={"engine": {"neutral_sent": {}}})
    c = make_run(tmp_path / "c", records=[rec("main/0")], decoding={"extra_body": {"repeat_penalty": 1.0}},
                 extra_manifest={"engine": engine_c})
    result = diff_runs(load_run(b), load_run(c))
    assert any("extra_body.repeat_penalty" in n and "greedy" in n for n in result.settings_notes)
    # the same difference set by hand is still refused: it changes decoding
    import pytest

    from evalsuite.lossless.tokens import DiffRefused
    c2 = make_run(tmp_path / "c2", records=[rec("main/0")], decoding={"extra_body": {"repeat_penalty": 1.0}})
    with pytest.raises(DiffRefused):
        diff_runs(load_run(b), load_run(c2))
