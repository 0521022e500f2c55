"""The engines' quirks, read from real responses recorded by capture_fixtures.py (no engine
needed): the shapes the client must handle, and the speculation counters `lossless` reads."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalsuite.speculation import (SpecCounters, counters_from_metrics, counters_from_timings, delta, describe,
                                   metrics_url, parse_prometheus)

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str):
    return json.loads((FIXTURES / name).read_text())


def sse(name: str) -> list[dict]:
    """The JSON chunks of a recorded stream (the `[DONE]` sentinel, when sent, left out)."""
    out = []
    for block in (FIXTURES / name).read_text().split("\n\n"):
        if block.startswith("data: {"):
            out.append(json.loads(block[len("data: "):]))
    return out


def sent_done(name: str) -> bool:
    return any(block.strip() == "data: [DONE]" for block in (FIXTURES / name).read_text().split("\n\n"))


def entry_bytes(entries) -> bytes:
    return b"".join(bytes(e["bytes"]) for e in entries if e.get("bytes"))


def test_every_indexed_fixture_exists_and_names_its_quirk():
    index = load("index.json")
    assert {"llama-server", "vllm"} <= {v["engine"] for v in index.values()}
    for name, meta in index.items():
        assert (FIXTURES / meta["file"]).is_file(), name
        assert meta["quirk"] and meta["version"], name


# llama-server


def test_llama_server_merges_partial_utf8_tokens_so_align_on_bytes():
    r = load("llama_server-chat-merged-bytes.json")
    entries = r["choices"][0]["logprobs"]["content"]
    assert len(entries) < r["usage"]["completion_tokens"]   # positions do not line up with tokens
    text = r["choices"][0]["message"]["content"]
    # the entries' bytes spell the text wherever it is valid UTF-8
    assert entry_bytes(entries).decode("utf-8", "replace") == text


def test_llama_server_completions_logprobs_use_the_chat_shape():
    lp = load("llama_server-completions-logprobs.json")["choices"][0]["logprobs"]
    assert "content" in lp and "top_logprobs" not in lp
    assert set(lp["content"][0]) >= {"id", "token", "bytes", "logprob", "top_logprobs"}


def test_llama_server_drafted_tokens_carry_no_logprob():
    r = load("llama_server-draft-chat-logprobs.json")
    entries = r["choices"][0]["logprobs"]["content"]
    blind = [e for e in entries if e["logprob"] == 0.0 and not e["top_logprobs"]]
    assert blind and len(blind) < len(entries)
    # without drafting, no entry is 0.0 with no alternatives
    plain = load("llama_server-chat-logprobs.json")["choices"][0]["logprobs"]["content"]
    assert not [e for e in plain if e["logprob"] == 0.0 and not e["top_logprobs"]]
    chunks = [c for c in sse("llama_server-draft-chat-stream.sse") if c["choices"] and c["choices"][0]["delta"].get("content")]
    assert any(not c["choices"][0].get("logprobs") for c in chunks)


def test_llama_server_timings_count_drafts():
    r = load("llama_server-draft-chat-logprobs.json")
    t = r["timings"]
    assert t["predicted_n"] == r["usage"]["completion_tokens"]
    moved = counters_from_timings([t])
    assert moved == SpecCounters(t["draft_n"], t["draft_n_accepted"], "timings") and moved.drafted > 0
    assert counters_from_timings([load("llama_server-chat-logprobs.json")["timings"]]).drafted == 0
    assert counters_from_timings([None, {}]) == SpecCounters(0, 0, "timings")
    assert counters_from_timings([None]) is None


def test_llama_server_props_do_not_say_it_drafts():
    props = load("llama_server-draft-props.json")
    assert props["default_generation_settings"]["params"]["speculative.types"] == "none"


def test_llama_server_metrics_give_the_draft_counters():
    moved = counters_from_metrics(parse_prometheus((FIXTURES / "llama_server-draft-metrics.txt").read_text()))
    assert moved is not None and moved.drafted >= moved.accepted > 0


# vLLM


@pytest.mark.parametrize("name", ["vllm-chat-stream-partial-utf8.sse", "vllm-ngram-chat-stream-partial-utf8.sse"])
def test_vllm_partial_utf8_tokens_are_empty_entries(name):
    chunks = sse(name)
    entries = [e for c in chunks if c["choices"] and c["choices"][0].get("logprobs")
               for e in c["choices"][0]["logprobs"]["content"]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert any(e["token"] == "" and e["bytes"] == [] for e in entries)
    # the completed character's entry carries all its bytes: bytes spell the text, positions do not
    assert entry_bytes(entries).decode("utf-8") == text
    assert sent_done(name)  # vLLM sends [DONE]; transformers serve does not
    usage_chunk = chunks[-1]
    assert usage_chunk["choices"] == [] and usage_chunk["usage"]["completion_tokens"] == len(entries)


def test_vllm_sends_several_tokens_per_chunk_under_speculation():
    chunks = sse("vllm-ngram-chat-stream-partial-utf8.sse")
    sizes = [len(c["choices"][0]["logprobs"]["content"]) for c in chunks if c["choices"] and c["choices"][0].get("logprobs")]
    assert max(sizes) > 1
    plain = sse("vllm-chat-stream-partial-utf8.sse")
    assert max(len(c["choices"][0]["logprobs"]["content"]) for c in plain if c["choices"] and c["choices"][0].get("logprobs")) == 1


def test_vllm_token_ids_mode_spells_ids_and_its_alternatives_bytes_are_the_id_text():
    e = load("vllm-chat-token-ids.json")["choices"][0]["logprobs"]["content"][0]
    assert e["token"].startswith("token_id:") and int(e["token"].split(":")[1]) >= 0
    # the chosen token's bytes are the real ones, its alternatives' bytes spell "token_id:N":
    # never compare alternatives by bytes in this mode
    assert bytes(e["top_logprobs"][0]["bytes"]).decode() == e["top_logprobs"][0]["token"]


def test_vllm_legacy_completions_top_logprobs_are_dicts_that_collide_on_empty_tokens():
    lp = load("vllm-completions-logprobs.json")["choices"][0]["logprobs"]
    assert set(lp) >= {"tokens", "token_logprobs", "top_logprobs", "text_offset"}
    assert all(isinstance(t, dict) for t in lp["top_logprobs"])
    assert len(lp["tokens"]) == len(lp["token_logprobs"]) == len(lp["top_logprobs"])


def test_vllm_metrics_give_the_draft_counters():
    moved = counters_from_metrics(parse_prometheus((FIXTURES / "vllm-ngram-metrics.txt").read_text()))
    assert moved is not None and moved.drafted >= moved.accepted > 0


# transformers serve


def test_transformers_serve_sends_no_done_and_no_logprobs():
    name = "transformers-chat-stream.sse"
    if not (FIXTURES / name).exists():
        pytest.skip("transformers serve fixtures not recorded (tests/engines/capture_fixtures.py transformers)")
    chunks = sse(name)
    assert not sent_done(name)
    assert not any(c["choices"] and c["choices"][0].get("logprobs") for c in chunks)
    assert any(c.get("usage") for c in chunks)


# the counters lossless prints


def test_describe_says_engaged_never_or_unreported():
    assert describe(delta(SpecCounters(10, 8, "metrics"), SpecCounters(360, 298, "metrics"))) == \
        "speculation engaged: 290 of 350 drafted tokens accepted (82.9%)"
    assert describe(delta(SpecCounters(5, 5, "metrics"), SpecCounters(5, 5, "metrics"))).startswith(
        "speculation never engaged")
    assert "no draft counters" in describe(delta(None, None))
    assert "no draft counters" in describe(delta(SpecCounters(1, 1, "metrics"), None))


def test_metrics_url_and_prometheus_parsing():
    assert metrics_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/metrics"
    assert metrics_url("http://h:1/v1/") == "http://h:1/metrics"
    parsed = parse_prometheus('# HELP x\na_total{l="a b"} 3\nb 2.5 1700000000\nbad line\nc{x="1"} NaNx\n')
    assert parsed == {'a_total{l="a b"}': 3.0, "b": 2.5}


# the record entries the client keeps (evalsuite.client.logprobs)


def test_drafted_llama_server_tokens_become_missing_not_certain():
    from evalsuite.client.logprobs import count_missing, entries_of

    r = load("llama_server-draft-chat-logprobs.json")
    entries = entries_of(r["choices"][0]["logprobs"], "answer", top_k=3)
    blind = [e for e in r["choices"][0]["logprobs"]["content"] if e["logprob"] == 0.0 and not e["top_logprobs"]]
    assert count_missing(entries) == len(blind) > 0
    assert not any(e["logprob"] == 0.0 and not e["top"] for e in entries)
    # bytes still spell the text: the diff aligns on them
    assert entry_bytes(entries).decode("utf-8", "replace") == r["choices"][0]["message"]["content"]
    # without top-k asked, 0.0 is taken as the server said it
    assert count_missing(entries_of(r["choices"][0]["logprobs"], "answer", top_k=None)) == 0


def test_streamed_drafted_chunks_are_kept_as_missing_entries():
    from evalsuite.client.logprobs import entries_of, missing_entry

    entries, text = [], ""
    for c in sse("llama_server-draft-chat-stream.sse"):
        if not c["choices"]:
            continue
        delta = c["choices"][0]["delta"].get("content") or ""
        lp = c["choices"][0].get("logprobs")
        text += delta
        if lp:
            entries += entries_of(lp, "answer", top_k=3)
        elif delta:
            entries.append(missing_entry(delta, "answer"))
    assert any(e.get("missing") for e in entries) and any(not e.get("missing") for e in entries)
    assert entry_bytes(entries).decode("utf-8", "replace") == text


def test_llama_server_completions_logprobs_are_read_from_the_content_shape():
    from evalsuite.client.logprobs import entries_of

    lp = load("llama_server-completions-logprobs.json")["choices"][0]["logprobs"]
    entries = entries_of(lp, "answer", top_k=3)
    assert entries and all(e["id"] is not None and e["top"] for e in entries)


def test_vllm_legacy_and_token_id_shapes():
    from evalsuite.client.logprobs import entries_of

    lp = load("vllm-completions-logprobs.json")["choices"][0]["logprobs"]
    entries = entries_of(lp, "answer", top_k=5)
    assert len(entries) == len(lp["tokens"]) and all(e["top"] for e in entries)
    ids = entries_of(load("vllm-chat-token-ids.json")["choices"][0]["logprobs"], "answer", top_k=2)
    assert all(isinstance(e["id"], int) for e in ids)
    assert all(a["bytes"] is None and isinstance(a["id"], int) for e in ids for a in e["top"])


# llama-cpp-python (still the llama.cpp engine of tests/test_diff_llama.py)


def test_llama_cpp_python_partial_utf8_tokens_have_neither_bytes_nor_ids():
    entries = load("llama_cpp_python-chat-logprobs.json")["choices"][0]["logprobs"]["content"]
    opaque = [e for e in entries if e["token"] == "" and e["bytes"] is None and "id" not in e]
    assert opaque, "llama-cpp-python now names partial bytes: the opaque-token handling may be obsolete"


def test_llama_cpp_python_cut_stream_ends_with_done_but_no_finish_reason():
    # --interrupt_requests (default true): a second request ends the first stream, cleanly on
    # the wire ([DONE]) but without a finish_reason: the client must call it a cut stream and
    # name the flag.
    name = "llama_cpp_python-interrupted-stream.sse"
    chunks = sse(name)
    assert sent_done(name) and chunks
    assert all(c["choices"][0].get("finish_reason") is None for c in chunks if c["choices"])
    assert load("index.json")["llama_cpp_python-interrupted-stream"]["request"]["max_tokens"] > len(chunks)


def test_the_cheap_wire_form_nulls_exactly_the_unscored_entries():
    from evalsuite.client.logprobs import scored_or_none, unscored

    content = load("llama_server-draft-chat-logprobs.json")["choices"][0]["logprobs"]["content"]
    kept = scored_or_none(content, 3)
    assert len(kept) == len(content)
    assert [e["logprob"] is None for e in kept] == [unscored(e, 3) for e in content]
    assert any(e["logprob"] is None for e in kept) and any(e["logprob"] is not None for e in kept)
    assert scored_or_none(content, None) is content


def test_speculation_rendering_a_partial_byte_differently_is_still_identical():
    from evalsuite.lossless.classify import diff_item

    pair = load("llama_server-draft-rendering-records.json")
    base, cand = pair["baseline"], pair["candidate"]
    assert base["answer"] != cand["answer"] and base["answer"].replace("\ufffd", "") == cand["answer"].replace("\ufffd", "")
    verdict = diff_item(base, cand, 0.05)
    assert verdict.verdict == "identical" and "U+FFFD" in verdict.reason
    # one real token changed: no longer "the same tokens"
    changed = dict(cand, logprobs=[dict(e) for e in cand["logprobs"]])
    changed["logprobs"][5]["id"] = changed["logprobs"][5]["id"] + 1
    assert diff_item(base, changed, 0.05).verdict != "identical"


def test_the_cheap_wire_form_of_fully_scored_entries_is_the_list_itself():
    """The client's hot path: a chunk whose entries are all scored is kept as received (no copy
    per chunk), and nothing is counted as missing."""
    from evalsuite.client.logprobs import scored_or_none
    from evalsuite.store import TokenColumns
    from evalsuite.client.stream import add_chat_tokens

    content = [e for e in load("llama_server-draft-chat-logprobs.json")["choices"][0]["logprobs"]["content"]
               if e.get("top_logprobs")]
    assert content and scored_or_none(content, 3) is content
    tokens = TokenColumns()
    assert add_chat_tokens(tokens, {"content": content}, "answer", 3) == 0 and len(tokens) == len(content)
