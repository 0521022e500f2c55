"""Managed servers on the real llama.cpp `llama-server` (tests/engines/build_llama_server.sh) and the
tiny GGUF: `run --serve` starts and stops it, a server SIGKILLed twice mid-run is restarted twice
and the run ends with every item recorded once, a command that never becomes ready fails with
its log tail, `lossless --baseline-serve/--candidate-serve` gives the verdicts of servers started
by hand, `sweep` over two quantisations, and the newcomer's `run gsm8k --model FILE.gguf`.
"""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time

import pytest
from engines.engine_e2e import MAX_TOKENS, cli, lossless, records
from engine_servers import LlamaCppServer

pytestmark = [pytest.mark.llamacpp_server]


def alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
        return True
    except ProcessLookupError:
        return False


def pid_of(folder):
    """The managed server's PID now (None while the file is being rewritten)."""
    try:
        return int((folder / "server.pid").read_text())
    except (OSError, ValueError):
        return None


def lines(path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def wait_for(predicate, timeout: float = 120.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def serve(binary, model, *extra) -> str:
    # as LlamaCppServer starts it (tests/engine_servers.py), on the port evalsuite picks
    return shlex.join([str(binary), "-m", str(model), "-a", "tiny", "--host", "127.0.0.1", "--port", "{port}", "-t", "1",
                       "-tb", "1", "-c", "4096", "-np", "1", "--metrics", "--no-webui", *map(str, extra)])


def test_run_serve_starts_and_stops_llama_server(tmp_path, data_dir, llama_server_bin, tiny_models):
    import hashlib

    gguf = tiny_models("f32")
    folder = tmp_path / "run"
    proc = cli("run", "gsm8k", "--serve", serve(llama_server_bin, gguf), "--limit", 20, "--max-tokens", MAX_TOKENS,
               "--concurrency", 1, "--data-dir", data_dir, "--run-dir", folder, "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    pid = pid_of(folder)
    assert not alive(pid), "llama-server is still running after the run"
    manifest = json.loads((folder / "manifest.json").read_text())
    managed = manifest["engine"]["managed"]
    assert managed["binary"] == str(llama_server_bin.resolve()) and "version" in (managed["version"] or "")
    (model,) = managed["models"]
    assert model["path"] == str(gguf) and model["size"] == gguf.stat().st_size
    assert model["sha256"] == hashlib.sha256(gguf.read_bytes()).hexdigest()
    assert manifest["engine"]["endpoints"][0]["engine"] == "llama.cpp"
    assert len(records(folder)) == 20


def test_llama_server_killed_twice_is_restarted_twice_and_every_item_recorded_once(tmp_path, data_dir,
                                                                                   llama_server_bin, tiny_models):
    from collections import defaultdict
    from pathlib import Path

    folder, requests = tmp_path / "run", tmp_path / "requests.log"
    rec_path = folder / "records.jsonl"
    killed: list[int] = []

    def killer():
        for at in (50, 120):
            if not wait_for(lambda: lines(rec_path) >= at):
                return
            pid = pid_of(folder)
            os.killpg(pid, signal.SIGKILL)   # the proxy and llama-server behind it, as the OOM killer would
            killed.append(pid)
            wait_for(lambda: pid_of(folder) != pid)

    # llama-server behind tests/logging_proxy.py, which logs which process was asked which item
    # (llama-server's own log is written by a thread: a SIGKILL swallows its last lines)
    proxy = Path(__file__).resolve().parents[1] / "logging_proxy.py"
    command = shlex.join([sys.executable, str(proxy), "--port", "{port}", "--requests", str(requests), "--"]) + " " + \
        serve(llama_server_bin, tiny_models("f32"), "-np", 2).replace("'{port}'", "INNER_PORT").replace("{port}",
                                                                                                      "INNER_PORT")
    thread = threading.Thread(target=killer)
    thread.start()
    proc = cli("run", "gsm8k", "--serve", command, "--limit", 200, "--max-tokens", 16, "--concurrency", 2,
               "--data-dir", data_dir, "--run-dir", folder, timeout=900)
    thread.join()
    assert len(killed) == 2, "llama-server was not killed twice: the test proved nothing"
    assert proc.returncode == 0, proc.stderr[-3000:]
    recs = [json.loads(line) for line in rec_path.read_text().splitlines()]
    assert len(recs) == 200 and len({r["id"] for r in recs}) == 200
    assert not [r for r in recs if r["outcome"] == "error"]
    manifest = json.loads((folder / "manifest.json").read_text())
    events = manifest["server_restarts"]
    assert [e["pid"] for e in events] == killed
    assert all(e["exit_code"] == -9 and e["outcome"] == "restarted" for e in events)
    final = pid_of(folder)
    assert not any(alive(p) for p in killed + [final])
    assert (folder / "server.log").read_text(errors="replace").count("=== evalsuite") == 3
    # each item asked at most once per server process, and asked again only when the process it
    # was in flight on was killed: no recorded item was asked again
    asked = defaultdict(list)
    for line in requests.read_text().splitlines():
        pid, key = line.split()
        asked[key].append(int(pid))
    assert len(asked) == 200
    for key, pids in asked.items():
        assert len(pids) == len(set(pids)), (key, pids)
        assert all(p in killed for p in pids[:-1]), (key, pids)
    assert sum(len(p) > 1 for p in asked.values()) <= 2 * 2
    show = cli("show", folder)
    assert "server restarts: 2" in show.stdout


def test_llama_server_that_cannot_load_its_model_fails_with_its_log_tail(tmp_path, data_dir, llama_server_bin):
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file at all")
    folder = tmp_path / "run"
    proc = cli("run", "gsm8k", "--serve", serve(llama_server_bin, bad), "--limit", 5, "--serve-timeout", 60,
               "--data-dir", data_dir, "--run-dir", folder)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "before it was ready" in proc.stderr and "server.log" in proc.stderr
    assert "gguf" in proc.stderr.lower().split("last lines of", 1)[1]
    assert not alive(pid_of(folder))


@pytest.mark.slow
def test_lossless_with_managed_servers_gives_the_verdicts_of_servers_started_by_hand(tmp_path, data_dir,
                                                                                   llama_server_bin, tiny_models):
    gguf = tiny_models("f32")
    n = 40
    with LlamaCppServer(gguf) as base, LlamaCppServer(gguf, draft_model=gguf) as cand:
        by_hand = lossless(tmp_path, data_dir, base.url, cand.url, "by-hand", "--no-stream", n_items=n)
    draft = ("-md", gguf, "--spec-type", "draft-simple", "--spec-draft-n-max", 8, "--spec-draft-n-min", 1, "-td", 1)
    out_json = tmp_path / "managed.json"
    proc = cli("lossless", "gsm8k", "--baseline-serve", serve(llama_server_bin, gguf),
               "--candidate-serve", serve(llama_server_bin, gguf, *draft), "--limit", n, "--max-tokens", MAX_TOKENS,
               "--logprobs", 5, "--data-dir", data_dir, "--run-dir", tmp_path / "managed", "--json", out_json,
               "--quiet", "--no-stream")
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    managed = json.loads(out_json.read_text())
    assert {i["id"]: i["class"] for i in managed["items"]} == {i["id"]: i["class"] for i in by_hand["items"]}
    assert managed["counts"] == by_hand["counts"]
    assert "candidate speculation engaged" in proc.stdout
    for role in ("baseline", "candidate"):
        m = json.loads((tmp_path / "managed" / role / "manifest.json").read_text())
        assert ("-md" in m["engine"]["managed"]["argv"]) == (role == "candidate")
        assert not alive(int((tmp_path / "managed" / role / "server.pid").read_text()))


@pytest.mark.slow
def test_sweep_over_two_quantisations_resumes_without_redoing_the_first(tmp_path, data_dir, llama_server_bin,
                                                                       tiny_models):
    f32, q8 = tiny_models("f32"), tiny_models("q8_0")
    root = tmp_path / "sweep"
    args = ["sweep", "gsm8k", "--serve", serve(llama_server_bin, "{model}"), "--set", f"model={f32},{q8}",
            "--limit", 30, "--max-tokens", MAX_TOKENS, "--concurrency", 1, "--data-dir", data_dir, "--run-dir", root]
    first, second = root / f"01-{f32.stem}", root / f"02-{q8.stem}"
    proc = subprocess.Popen([sys.executable, "-m", "evalsuite.cli", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    assert wait_for(lambda: lines(second / "records.jsonl") >= 3)
    kept = {name: (first / name).read_bytes() for name in ("records.jsonl", "manifest.json", "server.log")}
    pid = int((second / "server.pid").read_text())
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-3000:]
    assert not alive(pid)
    again = cli(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "not run again" in again.stderr
    assert {name: (first / name).read_bytes() for name in kept} == kept   # not started, not asked
    for folder in (first, second):
        assert json.loads((folder / "manifest.json").read_text())["status"] == "finished"
        assert len(records(folder)) == 30
    assert f32.stem in again.stdout and q8.stem in again.stdout and "McNemar" in again.stdout
    assert (root / "report.html").is_file()


def test_a_gguf_file_alone_starts_llama_server(tmp_path, data_dir, llama_server_bin, tiny_models):
    from evalsuite.serve.managed import something_listens

    if something_listens("http://127.0.0.1:8080/v1"):
        pytest.skip("something listens on 127.0.0.1:8080 here: the embedded default would not start")
    folder = tmp_path / "run"
    gguf = tiny_models("f32")
    proc = subprocess.run([sys.executable, "-m", "evalsuite.cli", "run", "gsm8k", "--model", str(gguf), "--limit", "10",
                           "--max-tokens", str(MAX_TOKENS), "--data-dir", str(data_dir), "--run-dir", str(folder)],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, EVALSUITE_LLAMA_SERVER=str(llama_server_bin), PYTHONUNBUFFERED="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["model"] == str(gguf) and manifest["engine"]["managed"]["argv"][0] == str(llama_server_bin)
    assert "-np" in manifest["engine"]["managed"]["argv"]
    assert not alive(pid_of(folder))
    assert len(records(folder)) == 10
