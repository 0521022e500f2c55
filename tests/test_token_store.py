"""Token logprobs beside slim records: the side file, old run folders, a run killed in its
finishing step, and grading off the request slots."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evalsuite.store import (RECORDS, TOKENS, TOKENS_LIVE, RecordWriter, RunFolderError, TokenColumns, _encode_blob,
                             compact_records, compact_tokens, finish_pending, load_run)
from runfactory import make_run, rec
from token_stub import TokenStub, token_stream


def entries(n: int, seed: int = 0) -> list[dict]:
    """Token entries in the record contract's form; float32-exact logprobs."""
    out = []
    for i in range(n):
        text = ["a", "é", " b", ""][(i + seed) % 4]
        top = [{"token": text, "bytes": list(text.encode()) or None, "id": i + seed, "logprob": -0.25 * i},
               {"token": "z", "bytes": [122], "id": 99, "logprob": -4.0}]
        out.append({"token": text, "bytes": list(text.encode()) or None, "id": i + seed, "logprob": -0.25 * i,
                    "part": "reasoning" if i < n // 2 else "answer", "top": top})
    return out


# ----------------------------------------------------------------------------- old folders

def test_old_run_folder_with_inline_logprobs_loads_through_the_same_api(tmp_path):
    inline = entries(5)
    run_dir = make_run(tmp_path / "old", records=[rec("main/0", logprobs=inline), rec("main/1"), rec("main/2", "error")],
                       decoding={"logprobs": 2})
    run = load_run(run_dir)
    assert all("logprobs" not in r for r in run.records)      # slim, whatever the folder's age
    by_id = run.by_id
    assert by_id["main/0"]["logprob_tokens"] == 5 and by_id["main/1"]["logprob_tokens"] is None
    assert run.logprobs(by_id["main/0"]) == inline             # exactly as written (no float32 round trip)
    assert run.with_logprobs(by_id["main/1"])["logprobs"] is None
    assert run.logprobs(by_id["main/2"]) is None
    # a finish over an old folder keeps the inline streams readable
    compact_records(run_dir, ["main/2", "main/1", "main/0"])
    assert load_run(run_dir).logprobs(load_run(run_dir).by_id["main/0"]) == inline
    # and the commands read it as before
    assert "Wilson" in evalsuite("show", run_dir).stdout
    assert "3 items" in evalsuite("diff", run_dir, run_dir).stdout


def test_old_folder_resumed_with_new_records_mixes_both(tmp_path):
    inline = entries(3)
    run_dir = make_run(tmp_path / "mixed", records=[rec("main/0", logprobs=inline), rec("main/1", "error")],
                       decoding={"logprobs": 2})
    writer = RecordWriter(run_dir / RECORDS)
    new = entries(4, seed=1)
    writer.append(dict(rec("main/1"), logprobs=None), TokenColumns.from_entries(new))
    writer.close()
    run = load_run(run_dir)
    assert run.logprobs(run.by_id["main/0"]) == inline and run.logprobs(run.by_id["main/1"]) == new
    compact_tokens(run_dir, ["main/0", "main/1"])
    run = load_run(run_dir)
    assert run.logprobs(run.by_id["main/0"]) == inline and run.logprobs(run.by_id["main/1"]) == new


# ----------------------------------------------------------------------------- the side file

def slim_rec(item_id: str, outcome: str = "correct") -> dict:
    r = rec(item_id, outcome)
    del r["logprobs"]
    return r


def test_side_file_last_record_wins_orphans_and_torn_tails(tmp_path):
    run_dir = make_run(tmp_path / "run", records=[], item_ids=["a", "b", "c"], status="running")
    a, b = entries(6), entries(3, seed=2)
    writer = RecordWriter(run_dir / RECORDS)
    writer.append(slim_rec("a"), TokenColumns.from_entries(a))
    writer.append(dict(slim_rec("b", "error"), logprob_tokens=None))
    writer.close()
    with open(run_dir / TOKENS_LIVE, "ab") as f:
        # a crash after c's tokens, before its record line; then one torn in the middle of a blob
        f.write(_encode_blob("c", TokenColumns.from_entries(entries(2))))
        f.write(_encode_blob("a", TokenColumns.from_entries(entries(9)))[:40])
    run = load_run(run_dir)
    assert [r["id"] for r in run.records] == ["a", "b"]
    assert run.logprobs(run.by_id["a"]) == a and run.logprobs(run.by_id["b"]) is None

    # --retry-errors asks b again: its new record (and tokens) win; the torn blob is cut first
    size_before = (run_dir / TOKENS_LIVE).stat().st_size
    writer = RecordWriter(run_dir / RECORDS)
    assert (run_dir / TOKENS_LIVE).stat().st_size == size_before - 40
    writer.append(slim_rec("b"), TokenColumns.from_entries(b))
    writer.close()
    run = load_run(run_dir)
    assert run.logprobs(run.by_id["b"]) == b

    compact_records(run_dir, ["a", "b", "c"])
    compact_tokens(run_dir, ["a", "b", "c"])
    assert (run_dir / TOKENS).exists() and not (run_dir / TOKENS_LIVE).exists()
    run = load_run(run_dir)
    assert run.logprobs(run.by_id["a"]) == a and run.logprobs(run.by_id["b"]) == b
    assert pq.ParquetFile(run_dir / TOKENS).metadata.num_rows == 9      # the orphan and the torn blob are gone

    # a finished run resumed (--retry-errors) writes new blobs beside tokens.parquet: both are read
    writer = RecordWriter(run_dir / RECORDS)
    c = entries(5, seed=3)
    writer.append(slim_rec("c"), TokenColumns.from_entries(c))
    writer.close()
    run = load_run(run_dir)
    assert [run.logprobs(run.by_id[i]) for i in "abc"] == [a, b, c]
    compact_tokens(run_dir, ["a", "b", "c"])
    run = load_run(run_dir)
    assert [run.logprobs(run.by_id[i]) for i in "abc"] == [a, b, c]


def test_a_record_whose_tokens_are_missing_is_an_error_naming_it(tmp_path):
    run_dir = make_run(tmp_path / "run", records=[], item_ids=["a"], status="running")
    writer = RecordWriter(run_dir / RECORDS)
    writer.append(dict(slim_rec("a"), logprob_tokens=3))
    writer.close()
    run = load_run(run_dir)
    with pytest.raises(RunFolderError, match="item a has 3 token entries"):
        run.logprobs(run.by_id["a"])


# ----------------------------------------------------------------------------- real runs

def evalsuite(*args, timeout: float = 120, check: int | None = 0) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "evalsuite.cli", *map(str, args)], capture_output=True, text=True,
                       timeout=timeout, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    if check is not None:
        assert r.returncode == check, r.stderr[-3000:]
    return r


def run_args(stub: TokenStub, data_dir: Path, run_dir: Path, *more) -> list:
    return ["run", "gsm8k", "--endpoint", stub.url, "--data-dir", data_dir, "--limit", 12, "--concurrency", 4,
            "--logprobs", 3, "--quiet", "--run-dir", run_dir, *more]


def stub_entries(run_dir: Path, n_tokens: int) -> dict[str, list[dict]]:
    """What the stub streamed for each recorded item, in the record contract's form."""
    run = load_run(run_dir)
    out = {}
    for r in run.records:
        prompt = r["messages"][-1]["content"]
        out[r["id"]] = [{"token": e["token"], "bytes": e["bytes"], "id": e["id"], "logprob": e["logprob"], "part": "answer",
                         "top": [dict(t) for t in e["top_logprobs"][:3]]} for e in token_stream(prompt, n_tokens, 3)]
    return out


def test_run_keeps_token_streams_in_the_side_file(data_dir, tmp_path):
    with TokenStub(n_tokens=30) as stub:
        evalsuite(*run_args(stub, data_dir, tmp_path / "run"))
    run_dir = tmp_path / "run"
    lines = [json.loads(line) for line in (run_dir / RECORDS).read_text().splitlines()]
    assert all("logprobs" not in r and r["logprob_tokens"] == 30 for r in lines)
    assert (run_dir / TOKENS).exists() and not (run_dir / TOKENS_LIVE).exists()
    expected = stub_entries(run_dir, 30)
    run = load_run(run_dir)
    assert {r["id"]: run.logprobs(r) for r in run.records} == expected
    # the whole folder per generated token (tiny runs carry fixed overheads: footer, schema)
    diff = evalsuite("diff", run_dir, run_dir)
    assert "identical" in diff.stdout

    # show, compare and gate never read token logprobs: they work with the side file unreadable
    (run_dir / TOKENS).write_bytes(b"not parquet")
    assert "Wilson" in evalsuite("show", run_dir).stdout
    evalsuite("compare", run_dir, run_dir)
    evalsuite("gate", "--baseline", run_dir, "--candidate", run_dir, "--max-drop", "0.05", "--allow-underpowered")
    assert "unreadable" in evalsuite("diff", run_dir, run_dir, check=2).stderr


KILL_AT = {  # the finishing step, in order; each kill leaves the manifest not yet `finished`
    "records.jsonl compacted, not renamed": "replace:2",
    "tokens.parquet written, not renamed": "replace:3",
    "tokens.parquet renamed, tokens.arrows not yet removed": "unlink:tokens.arrows",
    "records.parquet written, not renamed": "replace:4",
    "summary.json written, not renamed": "replace:5",
    "manifest written, not renamed": "replace:6",
}

KILLER = r"""
import os, signal, sys, pathlib
how = sys.argv[1]
calls = {"n": 0}
real_replace, real_unlink = os.replace, pathlib.Path.unlink
def replace(src, dst):
    calls["n"] += 1
    if how == f"replace:{calls['n']}":
        os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(src, dst)
def unlink(self, missing_ok=False):
    if how == f"unlink:{self.name}":
        os.kill(os.getpid(), signal.SIGKILL)
    return real_unlink(self, missing_ok=missing_ok)
os.replace = replace   # os.replace as evalsuite.store's writers call it
pathlib.Path.unlink = unlink
from evalsuite.cli import main
sys.argv = ["evalsuite"] + sys.argv[2:]
main()
"""


@pytest.mark.parametrize("stage", list(KILL_AT))
def test_run_killed_in_its_finishing_step_is_resumable_never_half_finished(data_dir, tmp_path, stage):
    run_dir = tmp_path / "run"
    with TokenStub(n_tokens=20) as stub:
        args = run_args(stub, data_dir, run_dir)
        killed = subprocess.run([sys.executable, "-c", KILLER, KILL_AT[stage], *map(str, args)],
                                capture_output=True, text=True, timeout=120)
        assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
        served = stub.completions
        assert served == 12

        manifest = json.loads((run_dir / "manifest.json").read_text())
        assert manifest["status"] == "running"          # not finished: nothing claims a finish that did not happen
        if (run_dir / "records.parquet").exists():
            pq.read_table(run_dir / "records.parquet")   # never a half-written file under the real name
        if (run_dir / "summary.json").exists():
            json.loads((run_dir / "summary.json").read_text())
        run = load_run(run_dir)
        assert len(run.records) == 12 and finish_pending(run)
        expected = stub_entries(run_dir, 20)
        assert {r["id"]: run.logprobs(r) for r in run.records} == expected
        show = evalsuite("show", run_dir)
        assert "finishing step has not completed" in show.stdout + show.stderr

        evalsuite(*[a if a != "--run-dir" else "--resume" for a in args])
        assert stub.completions == served, "the resume asked nothing again"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "finished"
    ids = [json.loads(line)["id"] for line in (run_dir / RECORDS).read_text().splitlines()]
    assert ids == manifest["item_ids"]
    assert not (run_dir / TOKENS_LIVE).exists() and not list(run_dir.glob(".*.tmp"))
    run = load_run(run_dir)
    assert {r["id"]: run.logprobs(r) for r in run.records} == expected
    assert pq.read_table(run_dir / "records.parquet").num_rows == 12
    assert json.loads((run_dir / "summary.json").read_text())["n_items"] == 12


def test_a_slow_grade_does_not_hold_a_request_slot(data_dir, tmp_path, monkeypatch):
    """With --concurrency 1, the first item's grade waits until the server has answered the second
    request: that only happens if the slot was released before grading."""
    import evalsuite.tasks.gsm8k as gsm8k
    from evalsuite.client.errors import RetryPolicy
    from evalsuite.run.settings import RunSettings
    from evalsuite.run.runner import run

    with TokenStub(n_tokens=5) as stub:
        second_sent = threading.Event()
        original = gsm8k.PACK.grade

        def slow_grade(item, answer):
            if item.id.endswith("/0"):
                assert second_sent.wait(20), "the second request was not sent while the first was being graded"
            else:
                second_sent.set()
            return original(item, answer)

        monkeypatch.setattr(gsm8k, "PACK", replace(gsm8k.PACK, grade=slow_grade))
        settings = RunSettings(pack="gsm8k", endpoints=(stub.url,), run_dir=tmp_path / "run", data_dir=data_dir,
                               limit=2, concurrency=1, quiet=True, retry=RetryPolicy(max_retries=0))
        assert run(settings) == 0
    records = load_run(tmp_path / "run").records
    assert [r["outcome"] != "error" for r in records] == [True, True], records


def test_malformed_token_entries_keep_what_is_well_formed():
    cols = TokenColumns()
    cols.extend([{"token": "a", "bytes": [97], "id": 1, "logprob": -0.5, "top_logprobs": [{"token": "a", "logprob": -0.5}]},
                 {"token": 5, "bytes": [300], "id": "x", "logprob": "high", "top_logprobs": {"not": "a list"}},
                 "not an entry"], "answer")
    assert cols.entries() == [
        {"token": "a", "bytes": [97], "id": 1, "logprob": -0.5, "part": "answer",
         "top": [{"token": "a", "bytes": None, "id": None, "logprob": -0.5}]},
        {"token": None, "bytes": None, "id": None, "logprob": None, "part": "answer", "top": []}]
