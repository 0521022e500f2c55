"""The spine end to end: `evalsuite run` against a real llama.cpp server, records, resume."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import EXTRA_BODY, MODEL_ALIAS, requires_llama
from evalsuite.store import load_run

pytestmark = [pytest.mark.llama, requires_llama]

COMMON = ["--extra-body", json.dumps(EXTRA_BODY), "--max-tokens", "24", "--quiet"]


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_streamed_run_writes_complete_records(llama_server, data_dir, run_cli, tmp_path):
    run_dir = tmp_path / "run"
    r = run_cli("run", "gsm8k", "--endpoint", llama_server.url, "--data-dir", data_dir, "--limit", 6,
                "--concurrency", 2, "--logprobs", 3, "--run-dir", run_dir, "--label", "f32", *COMMON)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["model"] == MODEL_ALIAS
    assert manifest["dataset"]["n_items"] == 6 and len(manifest["dataset"]["fingerprint"]) == 64
    assert manifest["decoding"]["max_tokens"] == 24 and manifest["decoding"]["extra_body"] == EXTRA_BODY
    assert manifest["endpoints"] == [llama_server.url]
    assert manifest["served_models"][llama_server.url] == [MODEL_ALIAS]
    records = read_lines(run_dir / "records.jsonl")
    assert [r["id"] for r in records] == manifest["item_ids"] == [f"test/{i}" for i in range(6)]
    # token logprobs live in the side file, not in the records
    assert all("logprobs" not in rec for rec in records)
    assert (run_dir / "tokens.parquet").exists() and not (run_dir / "tokens.arrows").exists()
    run = load_run(run_dir)
    for rec in run.records:
        rec["logprobs"] = run.logprobs(rec)
        assert rec["logprob_tokens"] == len(rec["logprobs"])
        assert rec["outcome"] in ("correct", "wrong", "unextracted", "truncated")
        assert rec["gold"] and rec["verdict"] is not None and rec["error"] is None
        assert rec["finish_reason"] in ("stop", "length")
        timing = rec["timing"]
        assert 0 < timing["ttft_s"] <= timing["total_s"]
        # llama-cpp-python's stream carries no usage: null, never estimated
        assert rec["usage"] == {"prompt_tokens": None, "completion_tokens": None, "reasoning_tokens": None}
        assert rec["logprobs"], "--logprobs 3 must keep token logprobs"
        for entry in rec["logprobs"]:
            assert isinstance(entry["logprob"], float) and entry["logprob"] <= 0
            assert 1 <= len(entry["top"]) <= 3
        # llama-cpp-python can return a few more tokens than max_tokens (a known quirk)
        assert len(rec["logprobs"]) <= 24 + 8
        # the answer text is the concatenation of the streamed tokens
        assert "".join(e["token"] for e in rec["logprobs"]) == rec["answer"]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["n_items"] == 6 and summary["usage_missing"] == 6
    assert (run_dir / "records.parquet").stat().st_size > 0
    show = run_cli("show", run_dir)
    assert show.returncode == 0 and "Wilson" in show.stdout and "not estimated" in show.stdout


def test_no_stream_run_takes_usage_from_the_server(llama_server, data_dir, run_cli, tmp_path):
    run_dir = tmp_path / "run"
    r = run_cli("run", "math500", "--endpoint", llama_server.url, "--data-dir", data_dir, "--limit", 3,
                "--no-stream", "--run-dir", run_dir, *COMMON)
    assert r.returncode == 0, r.stderr
    for rec in read_lines(run_dir / "records.jsonl"):
        assert rec["usage"]["prompt_tokens"] > 50
        assert 1 <= rec["usage"]["completion_tokens"] <= 24 + 8  # llama-cpp-python may overshoot max_tokens
        assert rec["timing"]["ttft_s"] is None and rec["timing"]["total_s"] > 0
        assert rec["subset"] in ("Algebra", "Counting & Probability", "Geometry", "Intermediate Algebra",
                                 "Number Theory", "Prealgebra", "Precalculus")


def test_completions_api_and_two_replicas(llama_server, data_dir, run_cli, tmp_path):
    run_dir = tmp_path / "run"
    other_name = llama_server.url.replace("127.0.0.1", "localhost")
    r = run_cli("run", "gsm8k", "--endpoint", llama_server.url, "--endpoint", other_name, "--api", "completions",
                "--data-dir", data_dir, "--limit", 8, "--concurrency", 1, "--logprobs", 2,
                "--run-dir", run_dir, *COMMON)
    assert r.returncode == 0, r.stderr
    records = read_lines(run_dir / "records.jsonl")
    assert len(records) == 8
    assert {rec["endpoint"] for rec in records} == {llama_server.url, other_name}
    assert all(rec["prompt"] and rec["messages"] is None for rec in records)
    run = load_run(run_dir)
    assert all(run.logprobs(rec) and len(run.logprobs(rec)) == rec["logprob_tokens"] for rec in run.records)


def test_resume_skips_done_items_and_refuses_changed_data(llama_server, data_dir, run_cli, tmp_path):
    run_dir = tmp_path / "run"
    base = ["run", "gsm8k", "--endpoint", llama_server.url, "--limit", 5, *COMMON]
    first = run_cli(*base, "--data-dir", data_dir, "--run-dir", run_dir)
    assert first.returncode == 0, first.stderr
    before = (run_dir / "records.jsonl").read_text()
    fingerprint = json.loads((run_dir / "manifest.json").read_text())["dataset"]["fingerprint"]

    # the same pack twice: the same fingerprint
    again = run_cli(*base, "--data-dir", data_dir, "--run-dir", tmp_path / "again")
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "again" / "manifest.json").read_text())["dataset"]["fingerprint"] == fingerprint

    # a run folder with records is not overwritten; the error gives the resume command
    refused = run_cli(*base, "--data-dir", data_dir, "--run-dir", run_dir)
    assert refused.returncode == 2 and "--resume" in refused.stderr

    # resuming a finished run asks nothing and changes nothing
    resumed = run_cli(*base, "--data-dir", data_dir, "--resume", run_dir)
    assert resumed.returncode == 0, resumed.stderr
    assert (run_dir / "records.jsonl").read_text() == before

    # a changed data file gives another fingerprint, and resume refuses, naming the difference
    changed = tmp_path / "data"
    (changed / "gsm8k").mkdir(parents=True)
    lines = (data_dir / "gsm8k" / "test.jsonl").read_text().splitlines()
    row = json.loads(lines[2])
    row["question"] += " (edited)"
    lines[2] = json.dumps(row)
    (changed / "gsm8k" / "test.jsonl").write_text("\n".join(lines) + "\n")
    refused = run_cli(*base, "--data-dir", changed, "--resume", run_dir)
    assert refused.returncode == 2
    assert "dataset fingerprint" in refused.stderr
    assert (run_dir / "records.jsonl").read_text() == before

    # other decoding settings are refused too
    refused = run_cli("run", "gsm8k", "--endpoint", llama_server.url, "--limit", 5, "--extra-body",
                      json.dumps(EXTRA_BODY), "--max-tokens", "25", "--quiet", "--data-dir", data_dir, "--resume", run_dir)
    assert refused.returncode == 2 and "decoding.max_tokens: 24 -> 25" in refused.stderr


def test_resume_after_partial_run_records_each_item_once(llama_server, data_dir, run_cli, tmp_path):
    """A run cut short (here: records of a longer run truncated by hand, with a torn line)
    resumes to exactly one record per item, keeping the records already there."""
    run_dir = tmp_path / "run"
    args = ["run", "gsm8k", "--endpoint", llama_server.url, "--data-dir", data_dir, "--limit", 6, *COMMON]
    assert run_cli(*args, "--run-dir", run_dir).returncode == 0
    lines = (run_dir / "records.jsonl").read_text().splitlines()
    kept = lines[:3]
    (run_dir / "records.jsonl").write_text("\n".join(kept) + "\n" + lines[3][: len(lines[3]) // 2])  # torn tail
    resumed = run_cli(*args, "--resume", run_dir)
    assert resumed.returncode == 0, resumed.stderr
    records = read_lines(run_dir / "records.jsonl")
    assert [r["id"] for r in records] == [f"test/{i}" for i in range(6)]
    assert [json.dumps(r) for r in records[:3]] == [json.dumps(json.loads(l)) for l in kept]
    # greedy decoding on the same server: the re-asked items give the same answers
    assert [r["answer"] for r in records[3:]] == [json.loads(l)["answer"] for l in lines[3:]]


def test_tasks_lists_packs_with_counts(run_cli):
    r = run_cli("tasks")
    assert r.returncode == 0, r.stderr
    assert "gsm8k" in r.stdout and "1319" in r.stdout
    assert "math500" in r.stdout and "500" in r.stdout


def test_nothing_answering_says_how_to_start_a_server(run_cli, data_dir, tmp_path):
    from llama_server import free_port

    r = run_cli("run", "gsm8k", "--endpoint", f"http://127.0.0.1:{free_port()}/v1", "--data-dir", data_dir,
                "--limit", 1, "--run-dir", tmp_path / "run", "--quiet")
    assert r.returncode == 2
    assert "nothing answers" in r.stderr and "llama-server" in r.stderr
    assert not (tmp_path / "run" / "records.jsonl").exists()


def test_prompt_longer_than_the_context_is_a_context_length_error(llama_server, run_cli, tmp_path):
    """llama-cpp-python streams HTTP 200 with no events for an over-long prompt; the record
    must say context_length (not a torn stream), and the item is not retried as one."""
    data = tmp_path / "data" / "gsm8k"
    data.mkdir(parents=True)
    rows = [{"question": "What is 2 + 2?", "answer": "2 + 2 = 4\n#### 4"},
            {"question": "hello " * 3000, "answer": "#### 1"}]
    (data / "test.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    run_dir = tmp_path / "run"
    # --timeout: llama-cpp-python may leave that empty stream open instead of ending it
    r = run_cli("run", "gsm8k", "--endpoint", llama_server.url, "--data-dir", tmp_path / "data",
                "--run-dir", run_dir, "--timeout", 5, *COMMON)
    assert r.returncode == 1, r.stderr  # finished, one item in error
    records = {rec["id"]: rec for rec in read_lines(run_dir / "records.jsonl")}
    assert records["test/0"]["outcome"] != "error"
    assert records["test/1"]["outcome"] == "error"
    assert records["test/1"]["error"]["kind"] == "context_length"
    assert "context" in records["test/1"]["error"]["message"]
    assert records["test/1"]["attempts"] == 1
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["errors_by_kind"] == {"context_length": 1}
