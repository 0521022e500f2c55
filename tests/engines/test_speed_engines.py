"""`evalsuite speed` on real engines, small: llama.cpp's llama-server and vLLM's CPU build, pp 128,
tg 32, depth 0 / 512, concurrency 1 / 2, and a spec-on server of each whose acceptance comes from
its own counters.

The llama-server model is a small random GGUF (tests/tiny_gguf.py with 6 layers of 384): slow
enough (~300 decode t/s on one thread) that the client's per-token clock is well above a loaded
machine's scheduling noise, so the client's figures can be held against the server's own
per-response `timings`. A grammar keeps its random output to ASCII letters, one token a chunk (the
byte-level tokenizer's random bytes are otherwise held back as partial UTF-8 and sent in bursts).
Measured on 2 shared cores: each llama-server test ~10-15 s; vLLM ~70 s to start, then ~15 s.
"""
from __future__ import annotations

import pytest
from engine_servers import LlamaCppServer, VllmServer

from evalsuite.speed import SpeedSettings, profile
from evalsuite.speed.table import profile_table

ASCII = {"grammar": "root ::= [a-z ]*"}


@pytest.fixture(scope="module")
def small_gguf(tmp_path_factory):
    from tiny_gguf import write_tiny_gguf

    return write_tiny_gguf(tmp_path_factory.mktemp("speed") / "small-f32.gguf", n_embd=384, n_layer=6, n_head=6,
                           n_head_kv=6, n_ff=1024)


def grid(url, data_dir, **kw):
    base = dict(endpoint=url, pp=(128,), tg=(32,), depth=(0, 512), concurrency=(1, 2), runs=2, data_dir=data_dir,
                quiet=True)
    return SpeedSettings(**{**base, **kw})


def check_grid(p, exact_prompt: bool = True):
    print(profile_table(p))
    assert p.status == "finished" and p.token_counts == "/tokenize"
    assert [r.name for r in p.rows] == ["pp128", "tg32", "pp128 c2", "tg32 c2", "pp128 @ d512", "tg32 @ d512",
                                        "pp128 @ d512 c2", "tg32 @ d512 c2"]
    for r in p.rows:
        assert r.failed == 0 and r.error is None and r.runs == 2 * r.concurrency, r
        assert r.ttfr_ms <= r.ttft_ms
        # a decode figure, or the row says why there is none (every token of a request read at once:
        # vLLM's tiny model with speculation answers 32 tokens in a few ms, in a few chunks)
        assert (r.figure.mean or 0) > 0 or any("below the floor" in n for n in r.notes), r
        # the server's own count of what it was sent: depth + pp, the chat template included
        assert abs(r.prompt_tokens - (r.depth + r.pp)) <= (2 if exact_prompt else 0.03 * (r.depth + r.pp)), r.prompt_tokens
        if r.test == "tg":
            assert (r.aggregate is not None) == (r.concurrency > 1)
            if r.concurrency > 1 and r.aggregate_decode is not None:
                # the streams' decode rates summed while they decode: not below the throughput with prefill
                # (which counts the first tokens too: about equal where the prefills are short)
                assert r.aggregate_decode.mean >= 0.9 * r.aggregate.mean, (r.name, r.aggregate_decode, r.aggregate)
        if r.test == "pp":
            parts = r.ttft_parts
            # the TTFT broken down: the parts add up to it, the rest named
            assert parts is not None and "unaccounted" in parts["text"] or "not exposed" in parts["text"], parts
            known = [parts[k] for k in ("connect", "send", "queue", "prefill", "server_other", "unaccounted")
                     if parts.get(k) is not None]
            assert parts["unaccounted"] is None or abs(sum(known) - parts["ttft"]) < 1e-9, parts


@pytest.mark.llamacpp_server
def test_llama_server_profile_agrees_with_its_own_timings(llama_server_bin, small_gguf, data_dir):
    with LlamaCppServer(small_gguf, extra_args=("-np", "2")) as server:
        p = profile(grid(server.url, data_dir, extra_body=ASCII))
    check_grid(p)
    assert p.engine.startswith("llama.cpp")
    for r in p.rows:
        assert r.server is not None
        # fresh text: at most the shared start of the template ("<|im_start|>user\nDocument ") is reused
        assert r.cached_tokens is not None and r.cached_tokens < 20, r.cached_tokens
        if r.test == "pp":    # llama-server's own prompt_ms is the prefill part
            assert r.ttft_parts["server_source"] == "timings" and r.ttft_parts["prefill"] > 0, r.ttft_parts
        if r.concurrency == 1:
            # one stream: the client's rates (round trip subtracted) against the server's prompt_ms / predicted_ms
            assert abs(r.mean - r.server.mean) <= 0.2 * r.server.mean, (r.name, r.mean, r.server.mean)
        if r.test == "tg":
            assert r.acceptance is not None and r.acceptance.rate is None    # --metrics counters, nothing drafted
    deep, = [r for r in p.rows if r.name == "tg32 @ d512"]
    assert deep.prompt_tokens == 640


@pytest.mark.llamacpp_server
def test_llama_server_draft_model_acceptance_comes_from_its_counters(llama_server_bin, small_gguf, data_dir):
    with LlamaCppServer(small_gguf, draft_model=small_gguf) as server:
        before = server.metric("spec_decode_num_accepted_tokens_total")
        p = profile(grid(server.url, data_dir, depth=(0,), concurrency=(1,)))
        moved = server.metric("spec_decode_num_accepted_tokens_total") - before
    print(profile_table(p))
    tg, = [r for r in p.rows if r.test == "tg"]
    a = tg.acceptance
    # the draft is the model itself: nearly every drafted token is accepted
    assert a.source == "timings" and a.drafted > 0 and a.rate > 0.8 and a.mean_length > 2, a
    assert 0 < a.accepted <= moved      # /metrics saw these too (and the warm-up's)


@pytest.mark.vllm
@pytest.mark.slow
def test_vllm_profile_with_ngram_speculation(vllm_py, tiny_hf, data_dir):
    with VllmServer(tiny_hf(), ngram=True) as server:
        p = profile(grid(server.url, data_dir))
    check_grid(p, exact_prompt=False)
    assert p.engine.startswith("vllm")
    # vLLM's /metrics histograms give the server's queue and prefill of each test
    assert all(r.ttft_parts["server_source"] == "metrics" for r in p.rows if r.test == "pp"), p.rows
    for r in p.rows:
        if r.test == "tg":
            a = r.acceptance
            # the tiny model's text runs in short cycles: n-gram drafts from the prompt and the output get accepted
            assert a is not None and a.source == "metrics" and a.drafted > 0 and a.rate > 0.3, (r.name, a)


@pytest.mark.llamacpp_server
def test_llama_server_depth_past_its_context_is_that_rows_error(llama_server_bin, small_gguf, data_dir):
    with LlamaCppServer(small_gguf, n_ctx=1024) as server:
        # tg 8: a 3-token decode span of the tiny GGUF (~10 ms) is below the floor, flagged rather than a rate
        p = profile(grid(server.url, data_dir, pp=(32,), tg=(8,), depth=(2048, 0), concurrency=(1,), runs=1,
                         extra_body=ASCII))
    deep = [r for r in p.rows if r.depth == 2048]
    assert p.status == "finished" and len(deep) == 2
    assert all("exceeds the available context size" in r.error and r.figure.mean is None for r in deep), deep
    # a figure, or its span below the floor, said (a 32-token prefill of the tiny GGUF lasts ~2 ms)
    assert all(r.error is None and ((r.figure.mean or 0) > 0 or r.below_floor == r.runs) for r in p.rows if r.depth == 0)


@pytest.mark.llamacpp_server
def test_llama_server_lossless_gives_the_draft_servers_speedup_on_the_same_requests(llama_server_bin, small_gguf,
                                                                                   data_dir, tmp_path):
    """Issue 36 #3: `lossless` of a spec-off / spec-on pair prints the candidate's decode speed-up
    beside its verdict, from the records' own timings, and the acceptance from its counters. The
    client's paired ratio is held against the one the servers' own per-response timings give."""
    import statistics

    from engines.engine_e2e import lossless, records

    n = 8
    with LlamaCppServer(small_gguf) as base, LlamaCppServer(small_gguf, draft_model=small_gguf) as cand:
        # no grammar: the draft server's draft model would not follow it, and its drafts would all be rejected
        data = lossless(tmp_path, data_dir, base.url, cand.url, "spec", n_items=n)
    speed = data["speed"]
    print(speed["summary"])
    d = speed["decode_speedup"]
    # streamed, yet some records of llama-server come back without a first-token time (answered unstreamed after
    # an empty stream): then every record's own server timings are the one source of both runs
    assert speed["decode_source"] in ("stream", "server") and d["n_items"] == n, speed
    assert d["ci"][0] <= d["ratio"] <= d["ci"][1]
    line = next(x for x in data["cli_output"].splitlines() if x.startswith("speed: decode "))
    assert f"{d['ratio']:.2f}x" in line and "candidate vs baseline" in line, line
    # the draft is the model itself: nearly every drafted token accepted, from --metrics' counters
    acc = speed["acceptance"]
    assert acc["source"] == "metrics" and acc["drafted"] > 0 and acc["rate"] > 0.8, acc
    assert f"acceptance {acc['rate']:.2f}" in line

    def server_rates(role):
        rs = records(tmp_path / "spec" / role)
        return {i: 1000 * r["server_timings"]["predicted_n"] / r["server_timings"]["predicted_ms"] for i, r in rs.items()}

    b, c = server_rates("baseline"), server_rates("candidate")
    server_ratio = statistics.geometric_mean([c[i] / b[i] for i in b])
    print(f"client paired ratio {d['ratio']:.3f}, servers' own {server_ratio:.3f}; per request "
          f"{speed['baseline_decode_median']:.1f} / {speed['candidate_decode_median']:.1f} t/s (client), "
          f"{statistics.median(b.values()):.1f} / {statistics.median(c.values()):.1f} t/s (server)")
    if speed["decode_source"] == "server":
        assert d["ratio"] == pytest.approx(server_ratio, rel=1e-9)
    else:   # the client's clock, first to last streamed token, against the server's own
        assert abs(d["ratio"] - server_ratio) <= 0.2 * server_ratio, (d["ratio"], server_ratio)
