"""Replicas: `--endpoint` repeated over two real llama-server processes; one is killed mid-run
(SIGKILL, as the OOM killer would). The run must finish on the other, retire the dead one, and
record which endpoint served each item."""
from __future__ import annotations

import json
import threading
import time

import pytest
from engines.engine_e2e import MAX_TOKENS, cli, records
from engine_servers import LlamaCppServer

pytestmark = [pytest.mark.llamacpp_server, pytest.mark.slow]

N = 100


def _wait_for_records(path, n: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and sum(1 for _ in path.open("rb")) >= n:
            return
        time.sleep(0.02)


def test_a_killed_replica_is_retired_and_the_run_finishes_on_the_other(tmp_path, data_dir, tiny_models,
                                                                        llama_server_bin):
    gguf = tiny_models("f32")
    with LlamaCppServer(gguf) as survivor, LlamaCppServer(gguf) as victim:
        folder = tmp_path / "run"
        killer = threading.Thread(target=lambda: (_wait_for_records(folder / "records.jsonl", 10), victim.kill()))
        killer.start()
        t0 = time.monotonic()
        proc = cli("run", "gsm8k", "-e", survivor.url, "-e", victim.url, "--limit", N, "--max-tokens", MAX_TOKENS,
                   "--concurrency", 1, "--max-downtime", 10, "--data-dir", data_dir, "--run-dir", folder, "--quiet",
                   timeout=600)
        wall = time.monotonic() - t0
        killer.join()
    assert victim.proc.returncode is not None, "the victim was never killed: the test proved nothing"
    assert proc.returncode == 0, proc.stderr[-3000:]
    recs = records(folder)
    assert len(recs) == N and not [i for i, r in recs.items() if r.get("outcome") == "error"]
    served = {r["endpoint"] for r in recs.values()}
    assert survivor.url in served and victim.url in served   # both served before the kill
    manifest = json.loads((folder / "manifest.json").read_text())
    assert victim.url in json.dumps(manifest.get("retired_endpoints") or manifest.get("endpoints_retired") or {})
    assert wall < 120, f"the run took {wall:.0f} s: the dead replica was waited on"
