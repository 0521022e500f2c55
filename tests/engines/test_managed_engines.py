"""Managed servers are command lines, nothing engine-specific: `transformers serve` and vLLM
(CPU) started by `evalsuite run --serve`, a transformers server SIGKILLed mid-run restarted,
and the same answers as the server started by hand (tests/engine_servers.py)."""
from __future__ import annotations

import json
import os
import shlex
import signal
import threading
import time

import pytest
from engines.engine_e2e import MAX_TOKENS, cli, run, texts
from engine_servers import TransformersServer, VllmServer

N = 12


def alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
        return True
    except ProcessLookupError:
        return False


def managed_run(tmp_path, data_dir, command: str, name: str, *extra, timeout: float = 900):
    folder = tmp_path / name
    proc = cli("run", "gsm8k", "--serve", command, "--limit", N, "--max-tokens", MAX_TOKENS, "--concurrency", 1,
               "--data-dir", data_dir, "--run-dir", folder, "--quiet", *extra, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert not alive(int((folder / "server.pid").read_text())), "the server outlived the run"
    return folder, manifest


@pytest.mark.transformers
@pytest.mark.slow
def test_transformers_serve_managed_answers_as_started_by_hand_and_is_restarted(tmp_path, data_dir, transformers_py,
                                                                              tiny_hf):
    model = tiny_hf()
    by_hand_server = TransformersServer(model)
    with by_hand_server:
        by_hand = run(tmp_path, data_dir, by_hand_server.url, "by-hand", n_items=N)
    # the command TransformersServer runs, with {port}
    words = by_hand_server.command()
    words[words.index("--port") + 1] = "{port}"
    command = "HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 " + shlex.join(words)
    folder = tmp_path / "managed"
    killed = []

    def killer():   # SIGKILL the managed server once, after a few records
        deadline = time.monotonic() + 600
        path = folder / "records.jsonl"
        while time.monotonic() < deadline:
            if path.exists() and path.read_bytes().count(b"\n") >= 4:
                pid = int((folder / "server.pid").read_text())
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=killer)
    thread.start()
    folder, manifest = managed_run(tmp_path, data_dir, command, "managed", "--timeout", 120)
    thread.join()
    assert killed, "the server was never killed: the test proved nothing"
    assert texts(folder) == texts(by_hand)
    managed = manifest["engine"]["managed"]
    assert managed["env"]["HF_HUB_OFFLINE"] == "1"
    (entry,) = [m for m in managed["models"] if m["path"] == str(model)]
    assert entry["kind"] == "folder" and entry["files"] > 0 and entry["sha256_partial"]
    assert [e["outcome"] for e in manifest["server_restarts"]] == ["restarted"]


@pytest.mark.vllm
@pytest.mark.slow
def test_vllm_managed(tmp_path, data_dir, vllm_py, tiny_hf):
    words = VllmServer(tiny_hf()).command()
    words[words.index("--port") + 1] = "{port}"
    command = ("VLLM_CPU_KVCACHE_SPACE=1 VLLM_LOGGING_LEVEL=WARNING HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "
               "VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 " + shlex.join(words))
    folder, manifest = managed_run(tmp_path, data_dir, command, "vllm", "--timeout", 300)
    managed = manifest["engine"]["managed"]
    assert managed["module"] == "vllm" and "vllm" in (managed["version"] or "")
    assert manifest["engine"]["endpoints"][0]["engine"] == "vllm"
    assert len(texts(folder)) == N
