"""Reliability: faulty servers, killed processes and bad input lose and duplicate nothing.

Every run here is `python -m evalsuite.cli run ...` in its own process, against tests/fault_server.py
(a deterministic fault-injecting OpenAI-compatible server in a thread of this process) or, for the
server-crash test, a real llama.cpp server. The fault server answers every gsm8k item correctly when
it does not inject a fault, so a healthy run scores 100% and any "wrong" would be a counted error.
"""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import EXTRA_BODY, requires_llama
from fault_server import FaultServer, prompt_key

RETRYABLE_KINDS = {"rate_limited", "server_error", "timeout", "connection", "stream_broken"}
# summary figures that must not depend on how a run got there (timings do)
SUMMARY_KEYS = ("n_items", "n_correct", "n_wrong", "n_unextracted", "n_truncated", "n_errors", "accuracy",
                "accuracy_ci95", "errors_by_kind", "subsets", "tokens", "usage_missing", "rescued")


# ----------------------------------------------------------------------------- helpers

def gsm8k_items(data_dir: Path, n: int):
    from evalsuite.tasks import LoadOptions, get_pack

    pack = get_pack("gsm8k")
    return pack, pack.load(LoadOptions(data_dir=data_dir))[:n]


def key_of(pack, item) -> str:
    return prompt_key(pack.prompt(item)[-1]["content"])


def right_answers(pack, items) -> dict[str, str]:
    return {key_of(pack, i): f"Let me add it up.\nThe answer is {i.gold}" for i in items}


def evalsuite_cmd(*args) -> list[str]:
    return [sys.executable, "-m", "evalsuite.cli", *map(str, args)]


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return dict(env, PYTHONUNBUFFERED="1", **extra)


def run_evalsuite(*args, timeout: float = 240, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(evalsuite_cmd(*args), capture_output=True, text=True, timeout=timeout, env=env or child_env())


def raw_lines(path: Path) -> tuple[list[dict], bool]:
    """Every record line as written (before any compaction), and whether the last line is torn."""
    if not path.exists():
        return [], False
    lines = path.read_bytes().split(b"\n")
    records, torn = [], False
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            assert n == len(lines) - 1, f"{path}: line {n + 1} is corrupt and is not the last line"
            torn = True
    return records, torn


def count_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def wait_for_records(path: Path, n: int, proc: subprocess.Popen, limit: float = 120) -> None:
    deadline = time.monotonic() + limit  # a hang guard, not a speed assertion
    while count_lines(path) < n:
        assert proc.poll() is None, f"evalsuite ended early ({proc.returncode}): {proc.communicate()[1][-2000:]}"
        assert time.monotonic() < deadline, f"fewer than {n} records after {limit:.0f} s"
        time.sleep(0.05)


def resume_hint(stderr: str) -> list[str]:
    """The resume command evalsuite printed, as an argv that runs this checkout."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip().startswith("evalsuite run ")]
    assert lines, f"no resume command in:\n{stderr}"
    return evalsuite_cmd(*shlex.split(lines[-1])[1:])


def manifest_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def summary_of(run_dir: Path) -> dict:
    summary = json.loads((run_dir / "summary.json").read_text())
    return {k: summary.get(k) for k in SUMMARY_KEYS}


def assert_exactly_once(run_dir: Path, item_ids: list[str]) -> list[dict]:
    records, torn = raw_lines(run_dir / "records.jsonl")
    assert not torn
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)), f"duplicates: {[i for i, c in Counter(ids).items() if c > 1][:5]}"
    assert ids == item_ids, "not exactly one record per item, in item order"
    return records


# ----------------------------------------------------------------------------- unit: retry policy

def test_retry_policy_honours_retry_after_caps_and_jitters():
    from evalsuite.client.errors import EndpointError, RetryPolicy, classify_status, parse_retry_after

    policy = RetryPolicy(max_retries=5, base_delay=1.0, max_delay=60.0)
    limited = classify_status(429, "slow down", "7")
    assert limited.kind == "rate_limited" and limited.retryable and policy.delay(0, limited) == 7.0
    assert policy.delay(0, classify_status(429, "slow down", "3600")) == 60.0  # never longer than max_delay
    bare = EndpointError("server_error", "HTTP 503")
    delays = {policy.delay(3, bare) for _ in range(50)}
    assert all(0 <= d <= 8.0 for d in delays) and len(delays) > 40  # full jitter over [0, base * 2^3]
    assert all(policy.delay(20, bare) <= 60.0 for _ in range(20))
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: no wait
    # a 400 is never retried, whatever it says
    assert classify_status(400, "This model's maximum context length is 2048 tokens").kind == "context_length"
    assert classify_status(400, "the request exceeds the available context size, try increasing it").kind == "context_length"
    assert not classify_status(400, "bad temperature").retryable
    assert classify_status(502, "bad gateway").kind == "server_error"


def test_torn_tail_that_is_a_whole_record_is_kept(tmp_path):
    from evalsuite.store import RecordWriter, read_records

    path = tmp_path / "records.jsonl"
    # killed between a complete record and its newline: readers count it done, so it must stay
    path.write_bytes(b'{"id": "a", "outcome": "correct"}\n{"id": "b", "outcome": "wrong"}')
    assert [r["id"] for r in read_records(path)] == ["a", "b"]
    RecordWriter(path).close()
    assert path.read_bytes().endswith(b'"wrong"}\n')
    # killed mid-line: the fragment is cut, and the item is asked again
    path.write_bytes(b'{"id": "a", "outcome": "correct"}\n{"id": "b", "outc')
    assert [r["id"] for r in read_records(path)] == ["a"]
    writer = RecordWriter(path)
    writer.append({"id": "c", "outcome": "correct"})
    writer.close()
    assert [r["id"] for r in read_records(path)] == ["a", "c"]


# ----------------------------------------------------------------------------- every fault once

FAULT_OUTCOMES = {
    # fault (every attempt): (outcome, error kind, attempts with --max-retries 2)
    "500": ("error", "server_error", 3), "502": ("error", "server_error", 3), "503": ("error", "server_error", 3),
    "429": ("error", "rate_limited", 3), "429-bare": ("error", "rate_limited", 3),
    "torn": ("error", "stream_broken", 3), "malformed": ("error", "stream_broken", 3), "stall": ("error", "timeout", 3),
    "context": ("error", "context_length", 1), "bad-request": ("error", "bad_request", 1),
    "empty": ("error", "empty_response", 1), "reasoning-only": ("truncated", None, 1),
}


def test_each_fault_ends_as_designed(data_dir, tmp_path):
    """One item per fault, every attempt faulty; plus items that fail once and then answer."""
    pack, items = gsm8k_items(data_dir, len(FAULT_OUTCOMES) + 3)
    faults = list(FAULT_OUTCOMES)
    script = {key_of(pack, item): (fault,) for item, fault in zip(items, faults)}
    recover = items[len(faults):]
    for item, fault in zip(recover, ("503", "torn", "429")):
        script[key_of(pack, item)] = (fault, "ok")
    # --timeout 4 (the stall 12 s past it): every attempt counted below assumes a healthy answer
    # comes within --timeout, which 2 s did not leave a loaded machine (the chaos run counts such
    # slow answers apart; this test checks exact attempts)
    with FaultServer(right_answers(pack, items), script=script, stall_seconds=12, retry_after="0") as server:
        run_dir = tmp_path / "run"
        r = run_evalsuite("run", "gsm8k", "--endpoint", server.url, "--data-dir", data_dir, "--limit", len(items),
                          "--concurrency", 16, "--timeout", 4, "--max-retries", 2, "--run-dir", run_dir, "--quiet")
        asked = dict(server.asked)
    assert r.returncode == 1, r.stderr  # finished, some items errored: resumable
    assert "--retry-errors" in r.stderr
    records = {rec["id"]: rec for rec in assert_exactly_once(run_dir, [i.id for i in items])}
    for item, fault in zip(items, faults):
        outcome, kind, attempts = FAULT_OUTCOMES[fault]
        rec = records[item.id]
        assert (rec["outcome"], (rec["error"] or {}).get("kind"), rec["attempts"]) == (outcome, kind, attempts), fault
        assert asked[key_of(pack, item)] == attempts, f"{fault}: the server saw another number of attempts"
        if outcome == "error":
            assert rec["error"]["message"] and rec["verdict"] is None and rec["extracted"] is None
    assert records[items[faults.index("reasoning-only")].id]["reasoning"].startswith("Let me think")
    for item in recover:
        assert records[item.id]["outcome"] == "correct" and records[item.id]["attempts"] == 2
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["n_wrong"] == 0 and summary["n_truncated"] == 1
    assert summary["n_errors"] == len(faults) - 1 and summary["accuracy"] == 3 / 4


# ----------------------------------------------------------------------------- the chaos run

CHAOS_RATES = {"500": 0.02, "502": 0.015, "503": 0.015, "429": 0.01, "429-bare": 0.01, "torn": 0.02, "stall": 0.01}
CHAOS_ALWAYS = {  # items whose every attempt fails: their retries run out
    "503": ("server_error", 2), "torn": ("stream_broken", 2), "stall": ("timeout", 1), "429": ("rate_limited", 1),
    "context": ("context_length", 1), "empty": ("empty_response", 1),
}


def test_chaos_run_records_every_item_exactly_once(data_dir, tmp_path, capsys):
    n_items, max_retries = 1000, 3
    pack, items = gsm8k_items(data_dir, n_items)
    assert len(items) == n_items
    ids = [i.id for i in items]
    # the scripted items are spread over the run, chosen by position so the test reads the same every time
    doomed: dict[str, tuple[str, str]] = {}
    script: dict[str, tuple[str, ...]] = {}
    position = 37
    for fault, (kind, count) in CHAOS_ALWAYS.items():
        for _ in range(count):
            item = items[position]
            doomed[item.id] = (fault, kind)
            script[key_of(pack, item)] = (fault,)
            position += 97
    answers = right_answers(pack, items)
    common = ["--endpoint", None, "--data-dir", data_dir, "--limit", n_items, "--concurrency", 32, "--timeout", 2,
              "--max-retries", max_retries, "--quiet"]

    server = FaultServer(answers, rates=CHAOS_RATES, script=script, seed=20240611, stall_seconds=6).start()
    try:
        common[1] = server.url
        run_dir = tmp_path / "chaos"
        first = run_evalsuite("run", "gsm8k", *common, "--run-dir", run_dir)
        injected = Counter(server.injected)
        attempts_seen = server.completions
        assert first.returncode == 1, first.stderr  # ended by itself; some items ran out of retries
        assert manifest_of(run_dir)["status"] == "finished"
        records = assert_exactly_once(run_dir, ids)
        by_id = {r["id"]: r for r in records}

        errors = [r for r in records if r["outcome"] == "error"]
        for item_id, (fault, kind) in doomed.items():
            rec = by_id[item_id]
            assert rec["outcome"] == "error" and rec["error"]["kind"] == kind, (fault, rec["error"])
            assert rec["attempts"] == (max_retries + 1 if kind in RETRYABLE_KINDS else 1)
        for rec in errors:  # doomed items, and any whose random faults outlasted the retries
            assert rec["error"]["kind"] and rec["error"]["message"], rec
            assert rec["verdict"] is None
            if rec["id"] not in doomed:
                assert rec["error"]["kind"] in RETRYABLE_KINDS and rec["attempts"] == max_retries + 1
        # no error counted as wrong: every answered item is right, because the server only answers right
        assert {r["outcome"] for r in records} == {"correct", "error"}
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["n_wrong"] == 0 and summary["n_errors"] == len(errors)
        assert summary["accuracy"] == 1.0  # correct / (items - errors)
        # every attempt the server saw is accounted for in a record
        assert sum(r["attempts"] for r in records) == attempts_seen
        retries = attempts_seen - n_items
        # every request was a fault, the one right answer that ended its item, or (on a loaded
        # machine) a healthy answer slower than --timeout, which the client retried too
        slow_healthy = attempts_seen - (sum(injected.values()) + summary["n_correct"])
        assert slow_healthy >= 0
        assert injected["stall"] > 0 and injected["torn"] > 0 and injected["429"] + injected["429-bare"] > 0

        # the server heals; --retry-errors asks exactly the errored items again
        server.rates, server.script = {}, {}
        before = server.completions
        resumed = run_evalsuite("run", "gsm8k", *common, "--resume", run_dir, "--retry-errors")
        assert resumed.returncode == 0, resumed.stderr
        assert server.completions - before == len(errors)
        final = assert_exactly_once(run_dir, ids)
        assert all(r["outcome"] == "correct" for r in final)
        unchanged = sum(1 for r in final if r["id"] in by_id and by_id[r["id"]]["outcome"] != "error")
        assert all(r == by_id[r["id"]] for r in final if by_id[r["id"]]["outcome"] != "error")

        clean_dir = tmp_path / "clean"
        clean = run_evalsuite("run", "gsm8k", *common, "--run-dir", clean_dir)
        assert clean.returncode == 0, clean.stderr
        assert summary_of(run_dir) == summary_of(clean_dir)
        assert summary_of(clean_dir)["accuracy"] == 1.0
    finally:
        server.stop()

    with capsys.disabled():
        print(f"\nchaos: items {n_items}, concurrency 32, timeout 2 s, max retries {max_retries}; "
              f"requests {attempts_seen}, retries {retries}; faults injected {sum(injected.values())}: "
              + ", ".join(f"{k} {v}" for k, v in sorted(injected.items()))
              + f"; errors after retries {len(errors)} ({dict(Counter(r['error']['kind'] for r in errors))}); "
              f"records {len(records)}, duplicates {len(records) - len(set(r['id'] for r in records))}, "
              f"lost {n_items - len(records)}; healthy answers slower than the timeout {slow_healthy}; after --retry-errors: {len(final)} records, {unchanged} unchanged, "  # noqa: E501
              f"summary equals a clean run's: yes")


# ----------------------------------------------------------------------------- killing evalsuite

def start_slow_run(server: FaultServer, data_dir: Path, run_dir: Path, n_items: int, *extra) -> subprocess.Popen:
    return subprocess.Popen(
        evalsuite_cmd("run", "gsm8k", "--endpoint", server.url, "--data-dir", data_dir, "--limit", n_items,
                      "--concurrency", 4, "--run-dir", run_dir, "--quiet", *extra),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())


def test_sigkilled_run_keeps_valid_records_and_resumes_exactly_once(data_dir, tmp_path):
    n_items = 120
    pack, items = gsm8k_items(data_dir, n_items)
    ids = [i.id for i in items]
    run_dir = tmp_path / "run"
    with FaultServer(right_answers(pack, items), delay=0.03) as server:
        proc = start_slow_run(server, data_dir, run_dir, n_items)
        wait_for_records(run_dir / "records.jsonl", 30, proc)
        proc.kill()  # SIGKILL: no cleanup of any kind
        proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        before, torn = raw_lines(run_dir / "records.jsonl")  # every line parses (a torn last one is tolerated)
        before_ids = [r["id"] for r in before]
        assert len(before_ids) == len(set(before_ids)) and 30 <= len(before) < n_items
        assert manifest_of(run_dir)["status"] == "running"  # it never got to say otherwise
        # the requests in flight at the kill reach the server when it gets the CPU (a fixed 0.3 s
        # was a guess): once the dead client's connections are all closed, every one is counted
        deadline = time.monotonic() + 60
        while server.open_connections and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not server.open_connections, "the killed client's connections stayed open"
        asked_before = dict(server.asked)

        resumed = run_evalsuite("run", "gsm8k", "--endpoint", server.url, "--data-dir", data_dir, "--limit", n_items,
                                "--concurrency", 4, "--resume", run_dir, "--quiet")
        assert resumed.returncode == 0, resumed.stderr
        final = assert_exactly_once(run_dir, ids)
        by_id = {r["id"]: r for r in final}
        assert all(by_id[r["id"]] == r for r in before), "a record written before the kill changed"
        assert manifest_of(run_dir)["status"] == "finished" and manifest_of(run_dir)["resumed_at"]
        # what a crash can lose: only the requests in flight (asked, not yet recorded)
        keys = {i.id: key_of(pack, i) for i in items}
        recorded = set(before_ids)
        assert all(server.asked[keys[i]] == 1 for i in recorded), "a recorded item was asked again"
        asked_twice = [i for i in ids if server.asked[keys[i]] == 2]
        # in flight = the 4 requests plus the answers received and waiting for the grading pool
        # (Scheduler.grading in run/runner.py: at most 2 x 4); seen 7 on a loaded 2-core CI machine
        assert len(asked_twice) <= 4 + 2 * 4 and all(asked_before.get(keys[i]) == 1 for i in asked_twice)
        assert all(server.asked[keys[i]] <= 2 for i in ids)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_cleanly_with_a_resume_hint(data_dir, tmp_path, signum):
    n_items = 80
    pack, items = gsm8k_items(data_dir, n_items)
    run_dir = tmp_path / "run"
    with FaultServer(right_answers(pack, items), delay=0.03) as server:
        proc = start_slow_run(server, data_dir, run_dir, n_items)
        wait_for_records(run_dir / "records.jsonl", 15, proc)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert f"interrupted ({signal.Signals(signum).name})" in err
        manifest = manifest_of(run_dir)
        assert manifest["status"] == "interrupted" and manifest["ended_at"]
        before = assert_exactly_once(run_dir, [r["id"] for r in raw_lines(run_dir / "records.jsonl")[0]])
        assert 15 <= len(before) < n_items
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["status"] == "interrupted" and summary["n_items"] == len(before)

        hint = resume_hint(err)  # the printed command, run as printed
        assert "--resume" in hint and str(run_dir) in hint
        resumed = subprocess.run(hint, capture_output=True, text=True, timeout=120, env=child_env())
        assert resumed.returncode == 0, resumed.stderr
    final = assert_exactly_once(run_dir, [i.id for i in items])
    by_id = {r["id"]: r for r in final}
    assert all(by_id[r["id"]] == r for r in before)
    assert all(r["outcome"] == "correct" for r in final)


# ----------------------------------------------------------------------------- the server going away

def test_server_down_longer_than_max_downtime_stops_with_exit_3_then_resumes(data_dir, tmp_path):
    n_items = 60
    pack, items = gsm8k_items(data_dir, n_items)
    answers = right_answers(pack, items)
    run_dir = tmp_path / "run"
    server = FaultServer(answers, delay=0.03).start()
    port = server.port
    proc = start_slow_run(server, data_dir, run_dir, n_items, "--max-downtime", 2)
    wait_for_records(run_dir / "records.jsonl", 10, proc)
    server.stop()  # cuts the streams in flight, then refuses connections
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    assert "has not answered for" in err and "--max-downtime 2" in err
    assert manifest_of(run_dir)["status"] == "stopped"
    before, _ = raw_lines(run_dir / "records.jsonl")
    assert len(before) < n_items and all(r["outcome"] == "correct" for r in before)  # waited, did not burn items

    server = FaultServer(answers, port=port).start()  # the same URL again
    try:
        resumed = subprocess.run(resume_hint(err), capture_output=True, text=True, timeout=120, env=child_env())
        assert resumed.returncode == 0, resumed.stderr
    finally:
        server.stop()
    final = assert_exactly_once(run_dir, [i.id for i in items])
    by_id = {r["id"]: r for r in final}
    assert all(by_id[r["id"]] == r for r in before)


def test_server_back_within_max_downtime_the_run_goes_on(data_dir, tmp_path):
    n_items = 60
    pack, items = gsm8k_items(data_dir, n_items)
    answers = right_answers(pack, items)
    run_dir = tmp_path / "run"
    server = FaultServer(answers, delay=0.03).start()
    port = server.port
    proc = start_slow_run(server, data_dir, run_dir, n_items, "--max-downtime", 60)
    wait_for_records(run_dir / "records.jsonl", 10, proc)
    server.stop()
    time.sleep(2.0)  # down for a while: workers wait instead of recording errors
    server = FaultServer(answers, port=port).start()
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        server.stop()
    assert proc.returncode == 0, err
    final = assert_exactly_once(run_dir, [i.id for i in items])
    assert all(r["outcome"] == "correct" for r in final)


@pytest.mark.llama
@requires_llama
def test_real_llama_server_killed_restarted_and_run_resumed(tiny_models, data_dir, tmp_path):
    """SIGKILL the llama.cpp server mid-run. Designed behaviour (docs/reliability.md): the run waits
    up to --max-downtime, then stops with exit 3 and the resume command; once the server is back on
    the same port, the resume completes every item exactly once and leaves earlier records alone."""
    from llama_server import LlamaServer

    n_items = 24
    _, items = gsm8k_items(data_dir, n_items)
    run_dir = tmp_path / "run"
    server = LlamaServer(tiny_models("f32")).start()
    try:
        proc = subprocess.Popen(
            evalsuite_cmd("run", "gsm8k", "--endpoint", server.url, "--data-dir", data_dir, "--limit", n_items,
                          "--concurrency", 2, "--max-tokens", 16, "--extra-body", json.dumps(EXTRA_BODY),
                          "--max-downtime", 2, "--run-dir", run_dir, "--quiet"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
        wait_for_records(run_dir / "records.jsonl", 6, proc, limit=240)
        server.kill()
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 3, err
        assert manifest_of(run_dir)["status"] == "stopped" and "has not answered" in err
        before, _ = raw_lines(run_dir / "records.jsonl")
        assert 6 <= len(before) < n_items
        assert all(r["outcome"] != "error" for r in before)  # the outage was waited out, not recorded

        server.start()  # same port, same URL
        resumed = subprocess.run(resume_hint(err), capture_output=True, text=True, timeout=300, env=child_env())
        assert resumed.returncode == 0, resumed.stderr
    finally:
        server.stop()
    final = assert_exactly_once(run_dir, [i.id for i in items])
    by_id = {r["id"]: r for r in final}
    assert all(by_id[r["id"]] == r for r in before), "a record written before the kill changed"
    assert all(r["outcome"] != "error" for r in final)
    assert manifest_of(run_dir)["status"] == "finished"


# ----------------------------------------------------------------------------- bad input: exit 2, nothing asked

@pytest.fixture(scope="module")
def healthy_server():
    with FaultServer(default_answer="The answer is 0") as server:
        yield server


def refused(server: FaultServer, *args, env: dict | None = None) -> str:
    """Runs evalsuite, asserts exit 2 and that no completion request was sent; returns stderr."""
    before = server.completions
    r = run_evalsuite(*args, "--quiet", timeout=120, env=env)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert server.completions == before, "a request was sent before the error was found"
    assert "Traceback" not in r.stderr
    return r.stderr


def test_unknown_pack_lists_the_valid_names(healthy_server, tmp_path):
    before = healthy_server.requests
    err = refused(healthy_server, "run", "gsm9k", "--endpoint", healthy_server.url, "--run-dir", tmp_path / "r")
    assert "unknown pack 'gsm9k'" in err and "gsm8k" in err and "math500" in err
    assert healthy_server.requests == before  # found before even /v1/models was asked
    assert not (tmp_path / "r").exists()


def test_unknown_subset_lists_the_valid_ones(healthy_server, data_dir, tmp_path):
    err = refused(healthy_server, "run", "math500", "--subset", "Astrology", "--endpoint", healthy_server.url,
                  "--data-dir", data_dir, "--run-dir", tmp_path / "r")
    assert "Astrology" in err and "Number Theory" in err and "Precalculus" in err


def test_missing_or_misshapen_data_folder(healthy_server, tmp_path):
    err = refused(healthy_server, "run", "gsm8k", "--endpoint", healthy_server.url, "--data-dir", tmp_path / "nowhere",
                  "--run-dir", tmp_path / "r")
    assert f"--data-dir {tmp_path / 'nowhere'}: no such folder" in err
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "test.jsonl").write_text('{"question": "q", "answer": "#### 1"}\n')
    err = refused(healthy_server, "run", "gsm8k", "--endpoint", healthy_server.url, "--data-dir", tmp_path / "flat",
                  "--run-dir", tmp_path / "r")
    assert "gsm8k/test.jsonl" in err and "layout" in err


def test_bad_rows_are_named_and_skip_bad_rows_goes_on(healthy_server, data_dir, tmp_path):
    rows = [json.loads(line) for line in (data_dir / "gsm8k" / "test.jsonl").read_text().splitlines()[:4]]
    rows[2]["answer"] = "no gold answer in this solution"
    bad = tmp_path / "data"
    (bad / "gsm8k").mkdir(parents=True)
    (bad / "gsm8k" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["run", "gsm8k", "--endpoint", healthy_server.url, "--data-dir", bad]
    err = refused(healthy_server, *args, "--run-dir", tmp_path / "r")
    assert str(bad / "gsm8k" / "test.jsonl") in err and "row 2 (line 3)" in err and "--skip-bad-rows" in err

    ok = run_evalsuite(*args, "--skip-bad-rows", "--run-dir", tmp_path / "skipped", "--quiet")
    assert ok.returncode in (0, 1), ok.stderr
    assert [r["id"] for r in raw_lines(tmp_path / "skipped" / "records.jsonl")[0]] == ["test/0", "test/1", "test/3"]

    # an unparseable label: a multiple-choice answer that is not one of the option letters
    rows = [json.loads(line) for line in (data_dir / "agieval" / "aqua-rat.jsonl").read_text().splitlines()[:3]]
    rows[1]["label"] = "Z"
    (bad / "agieval").mkdir()
    (bad / "agieval" / "aqua-rat.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    err = refused(healthy_server, "run", "agieval", "--subset", "aqua-rat", "--endpoint", healthy_server.url,
                  "--data-dir", bad, "--run-dir", tmp_path / "r2")
    assert str(bad / "agieval" / "aqua-rat.jsonl") in err and "row" in err and "'Z'" in err


def test_endpoint_that_does_not_answer_says_how_to_start_one(healthy_server, data_dir, tmp_path):
    from llama_server import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    err = refused(healthy_server, "run", "gsm8k", "--endpoint", url, "--data-dir", data_dir, "--limit", 2,
                  "--run-dir", tmp_path / "r")
    assert f"nothing answers at {url}" in err and "llama-server" in err and "--endpoint" in err
    assert not (tmp_path / "r" / "records.jsonl").exists()


def test_endpoint_that_is_not_openai_compatible_says_what_came_back(healthy_server, data_dir, tmp_path):
    with FaultServer(mode="html") as web_page:
        err = refused(healthy_server, "run", "gsm8k", "--endpoint", web_page.url, "--data-dir", data_dir,
                      "--limit", 2, "--run-dir", tmp_path / "r")
        assert web_page.requests >= 1 and web_page.completions == 0
    assert "not an OpenAI-compatible endpoint" in err
    assert f"GET {web_page.url}/models" in err  # what was tried
    assert "HTTP 200" in err and "text/html" in err and "Welcome to nginx" in err  # what came back


def test_model_the_endpoint_does_not_list(healthy_server, data_dir, tmp_path):
    err = refused(healthy_server, "run", "gsm8k", "--endpoint", healthy_server.url, "--model", "qwen-72b",
                  "--data-dir", data_dir, "--limit", 2, "--run-dir", tmp_path / "r")
    assert "does not list model 'qwen-72b'" in err and "fault-model" in err


def test_unwritable_run_folder(healthy_server, data_dir, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    err = refused(healthy_server, "run", "gsm8k", "--endpoint", healthy_server.url, "--data-dir", data_dir,
                  "--limit", 2, "--run-dir", blocker / "run")
    # said before the endpoint is asked, naming the option and the value (issue 42)
    assert f"--run-dir {blocker / 'run'}: {blocker} is a file, not a folder" in err


def test_resume_with_other_settings_lists_the_differences(healthy_server, data_dir, tmp_path):
    run_dir = tmp_path / "run"
    base = ["run", "gsm8k", "--endpoint", healthy_server.url, "--data-dir", data_dir]
    first = run_evalsuite(*base, "--limit", 3, "--max-tokens", 64, "--run-dir", run_dir, "--quiet")
    assert first.returncode == 0, first.stderr
    before = (run_dir / "records.jsonl").read_bytes()
    err = refused(healthy_server, *base, "--limit", 4, "--max-tokens", 128, "--temperature", 0.7, "--resume", run_dir)
    assert "other settings" in err
    assert "dataset fingerprint" in err and "(3 items)" in err and "(4 items)" in err
    assert "decoding.max_tokens: 64 -> 128" in err and "decoding.temperature: 0.0 -> 0.7" in err
    # and a new run into a folder with records is refused with the command to use
    err = refused(healthy_server, *base, "--limit", 3, "--max-tokens", 64, "--run-dir", run_dir)
    assert "--resume" in err and str(run_dir) in err
    assert (run_dir / "records.jsonl").read_bytes() == before


# ----------------------------------------------------------------------------- the API key is never written

def test_api_key_is_never_written(data_dir, tmp_path):
    key = "sk-planted-" + os.urandom(12).hex()
    pack, items = gsm8k_items(data_dir, 6)
    # one item's server echoes the Authorization header in its error, as some proxies do
    script = {key_of(pack, items[1]): ("echo-key",), key_of(pack, items[2]): ("503",)}
    run_dir = tmp_path / "run"
    with FaultServer(right_answers(pack, items), script=script, retry_after="0") as server:
        r = run_evalsuite("run", "gsm8k", "--endpoint", server.url, "--data-dir", data_dir, "--limit", 6,
                          "--max-retries", 1, "--run-dir", run_dir, env=child_env(OPENAI_API_KEY=key))
        assert f"Bearer {key}" in server.authorizations  # the key was used...
    assert r.returncode == 1, r.stderr
    echoed = {rec["id"]: rec for rec in raw_lines(run_dir / "records.jsonl")[0]}[items[1].id]
    assert "[redacted]" in echoed["error"]["message"]
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"manifest.json", "records.jsonl", "records.parquet", "summary.json"}
    for path in written:  # ...and written nowhere
        assert key.encode() not in path.read_bytes(), path
    assert key not in r.stdout and key not in r.stderr
