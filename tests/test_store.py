"""The run folder's store and the client's pure parts: no server needed."""
from __future__ import annotations

import json

import pytest

from evalsuite.client.endpoint import redact_url
from evalsuite.client.stream import ThinkSplitter
from evalsuite.client.errors import classify_status, parse_retry_after
from evalsuite.run.manifest import manifest_differences, resume_command
from evalsuite.store import RecordWriter, RunFolderError, compact_records, load_run, read_records


def test_torn_last_line_is_skipped_and_repaired(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text('{"id": "a", "v": 1}\n{"id": "b", "v": 2}\n{"id": "c", "v"')
    assert [r["id"] for r in read_records(path)] == ["a", "b"]
    writer = RecordWriter(path)
    writer.append({"id": "c", "v": 3})
    writer.close()
    assert path.read_text().splitlines()[-1] == '{"id": "c", "v": 3}'
    assert [r["v"] for r in read_records(path)] == [1, 2, 3]


def test_a_bad_line_in_the_middle_is_an_error_naming_it(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text('{"id": "a"}\nnot json\n{"id": "b"}\n')
    with pytest.raises(RunFolderError, match="line 2"):
        read_records(path)


def test_last_record_per_id_wins_and_compaction_keeps_one(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"pack": "x"}))
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "outcome": "error"}, {"id": "b", "outcome": "wrong"}, {"id": "a", "outcome": "correct"}]) + "\n")
    run = load_run(tmp_path)
    assert [(r["id"], r["outcome"]) for r in run.records] == [("a", "correct"), ("b", "wrong")]
    compact_records(tmp_path, order=["b", "a"])
    assert [json.loads(l)["id"] for l in path.read_text().splitlines()] == ["b", "a"]


def test_not_a_run_folder(tmp_path):
    with pytest.raises(RunFolderError, match="manifest.json is missing"):
        load_run(tmp_path)


def feed_all(chunks):
    s = ThinkSplitter()
    reasoning, answer = "", ""
    for c in chunks:
        r, a = s.feed(c)
        reasoning, answer = reasoning + r, answer + a
    r, a = s.flush()
    return reasoning + r, answer + a


@pytest.mark.parametrize("chunks", [
    ["<think>", "hmm 2+2", "</think>", "The answer is 4"],
    ["<th", "ink>hmm 2+2</th", "ink>The answer is 4"],
    ["  <think>hmm 2+2</think>The answer is 4"],
    list("<think>hmm 2+2</think>The answer is 4"),
])
def test_think_tags_split_reasoning_from_answer(chunks):
    reasoning, answer = feed_all(chunks)
    assert reasoning.strip() == "hmm 2+2" and answer == "The answer is 4"


def test_no_think_tags_all_answer_and_unclosed_think_all_reasoning():
    assert feed_all(["The answer ", "is <think> 4"]) == ("", "The answer is <think> 4")
    assert feed_all(["<think>still thinking when cut"]) == ("still thinking when cut", "")


def test_status_classification():
    assert classify_status(400, "This model's maximum context length is 4096 tokens").kind == "context_length"
    assert classify_status(400, "the request exceeds the available context size").kind == "context_length"
    assert classify_status(400, "invalid temperature").kind == "bad_request"
    assert classify_status(429, "slow down", "2").retry_after == 2.0
    assert classify_status(503, "loading").kind == "server_error"
    assert classify_status(503, "x").retryable and not classify_status(400, "x").retryable
    assert parse_retry_after("soon") is None


def test_urls_lose_credentials_and_queries():
    assert redact_url("https://user:sk-secret@host:8443/v1/?key=abc") == "https://host:8443/v1"


def test_resume_command_replaces_run_dir():
    argv = ["evalsuite", "run", "gsm8k", "--run-dir", "results/x", "--limit", "5"]
    assert resume_command(argv, "results/x") == "evalsuite run gsm8k --limit 5 --resume results/x"


def test_manifest_differences_name_each_setting():
    old = {"pack": "p", "dataset": {"fingerprint": "a" * 64, "n_items": 3}, "template_hash": "t", "api": "chat",
           "decoding": {"max_tokens": 10, "temperature": 0.0}, "model": "m"}
    new = dict(old, dataset={"fingerprint": "b" * 64, "n_items": 4}, decoding={"max_tokens": 20, "temperature": 0.0})
    diffs = manifest_differences(old, new)
    assert any("dataset fingerprint" in d for d in diffs)
    assert "decoding.max_tokens: 10 -> 20" in diffs
    assert manifest_differences(old, old) == []
