"""A real llama-server stopped with SIGTERM mid-run (issue 21): it closes its listening socket but
keeps the requests in flight open without answering, so before the runner's watchdog the run sat
there for the whole --timeout. Now: DOWN shown within 10 s, the stuck requests cut and sent again
once the server is back on its port, every item recorded once, the run done a few seconds after
the restart."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from engines.engine_e2e import MAX_TOKENS
from engine_servers import LlamaCppServer
from test_stuck_server import StderrLines
from test_reliability import assert_exactly_once, child_env, count_lines, wait_for_records

pytestmark = [pytest.mark.llamacpp_server, pytest.mark.slow]

N = 40
TIMEOUT = 300      # --timeout: what a stuck request would have cost
DOWNTIME = 15.0   # longer than the 10 s in which DOWN must show: a kill after it proves nothing


def test_sigterm_of_llama_server_mid_run_is_shown_down_and_the_run_finishes_after_the_restart(
        tmp_path, data_dir, tiny_models, llama_server_bin):
    from evalsuite.tasks import LoadOptions, get_pack

    gguf = tiny_models("f32")
    items = get_pack("gsm8k").load(LoadOptions(data_dir=data_dir))[:N]
    folder = tmp_path / "run"
    old = LlamaCppServer(gguf).start()
    new = None
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalsuite.cli", "run", "gsm8k", "--endpoint", old.url, "--data-dir", str(data_dir),
         "--limit", str(N), "--max-tokens", str(MAX_TOKENS), "--concurrency", "4", "--timeout", str(TIMEOUT),
         "--max-downtime", "60", "--run-dir", str(folder)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
    lines = StderrLines(proc)
    try:
        wait_for_records(folder / "records.jsonl", 6, proc, limit=240)
        os.kill(old.proc.pid, signal.SIGTERM)
        stopped = time.monotonic()
        time.sleep(DOWNTIME)
        lingering = old.proc.poll() is None      # what llama-server does with its silent requests
        recorded_before = count_lines(folder / "records.jsonl")
        if lingering:
            old.kill()   # its port must be free for the restart (its listening socket already is)
        new = LlamaCppServer(gguf, port=old.port).start()   # same port, same URL
        restarted = time.monotonic()
        proc.wait(timeout=TIMEOUT + 120)
        ended = time.monotonic()
        stderr = lines.text()
    finally:
        if proc.poll() is None:
            proc.kill()
        old.kill()
        if new is not None:
            new.stop()
    print(f"SIGTERM: server still running {DOWNTIME:g} s later: {lingering}; {recorded_before} of {N} recorded "
          f"before the restart; run ended {ended - restarted:.1f} s after it", file=sys.stderr)
    assert proc.returncode == 0, stderr[-3000:]
    down_at = lines.first("DOWN", stopped)
    assert down_at is not None and down_at - stopped < 10, f"DOWN not shown within 10 s:\n{stderr[-3000:]}"
    assert "request(s) in flight cut" in stderr, stderr[-3000:]
    assert recorded_before < N, "the run was over before the SIGTERM took effect: the test proved nothing"
    assert ended - restarted < 20, f"the run took {ended - restarted:.0f} s after the restart"
    final = assert_exactly_once(folder, [i.id for i in items])
    assert not [r["id"] for r in final if r["outcome"] == "error"]
