"""A real llama-server stopped with SIGTERM mid-run (issue 21): it closes its listening socket but
keeps the requests in flight open without answering, so before the runner's watchdog the run sat
there for the whole --timeout. Now: DOWN shown within seconds (the watchdog's silence and probe
times, DOWN_WITHIN_S), the stuck requests cut and sent again
once the server is back on its port, every item recorded once, the run done a few seconds after
the restart."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from engine_servers import LlamaCppServer
from test_stuck_server import DOWN_WITHIN_S, StderrLines
from test_reliability import assert_exactly_once, child_env, count_lines, wait_for_records

pytestmark = [pytest.mark.llamacpp_server, pytest.mark.slow]

N = 12
MAX_TOKENS_EACH = 1000   # every answer this long (ignore_eos): requests are in flight when the SIGTERM comes
TIMEOUT = 300          # --timeout: what a stuck request would have cost
DOWNTIME = DOWN_WITHIN_S + 3.5   # longer than the time in which DOWN must show: a restart before it proves nothing


def restart_on_port(gguf, old: LlamaCppServer, patience: float = 30.0) -> LlamaCppServer:
    """A new llama-server on the old one's port. On a loaded machine the SIGTERMed process can hold
    the port (its listening socket, or the connections it never closed) past DOWNTIME: wait for
    it, then kill it, as a user restarting the server would (seen in CI: "couldn't bind")."""
    deadline = time.monotonic() + patience
    while True:
        try:
            return LlamaCppServer(gguf, port=old.port).start()
        except RuntimeError as e:
            if "couldn't bind" not in str(e):
                raise
            if time.monotonic() > deadline:
                if old.proc.poll() is None:
                    print("the SIGTERMed llama-server still holds the port: killed", file=sys.stderr)
                    old.kill()
                    old.proc.wait(timeout=30)
                    deadline = time.monotonic() + patience
                    continue
                raise
            time.sleep(1.0)


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
         "--limit", str(N), "--max-tokens", str(MAX_TOKENS_EACH), "--extra-body", '{"ignore_eos": true}',
         "--concurrency", "4", "--timeout", str(TIMEOUT),
         "--max-downtime", "60", "--run-dir", str(folder)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
    lines = StderrLines(proc)
    try:
        started = time.monotonic()
        wait_for_records(folder / "records.jsonl", 4, proc, limit=240)
        per_item = (time.monotonic() - started) / 4      # generous: start-up included
        os.kill(old.proc.pid, signal.SIGTERM)
        stopped = time.monotonic()
        exited_after = None
        while time.monotonic() - stopped < DOWNTIME:
            if exited_after is None and old.proc.poll() is not None:
                exited_after = time.monotonic() - stopped
            time.sleep(0.1)
        recorded_before = count_lines(folder / "records.jsonl")
        # same port, same URL; the old process may still be there (before the watchdog it stayed,
        # holding its silent connections; its listening socket is closed, so the port is free)
        new = restart_on_port(gguf, old)
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
    down_at = lines.first("DOWN", stopped)
    print(f"SIGTERM: llama-server exited {'%.1f s after it' % exited_after if exited_after else 'not'} "
          f"(within {DOWNTIME:g} s); DOWN shown {down_at - stopped if down_at else float('nan'):.1f} s after it; "
          f"{recorded_before} of {N} recorded before the restart; run ended {ended - restarted:.1f} s after it "
          f"(~{per_item:.1f} s per item before the stop)",
          file=sys.stderr)
    assert proc.returncode == 0, stderr[-3000:]
    assert down_at is not None and down_at - stopped < DOWN_WITHIN_S, \
        f"DOWN not shown within {DOWN_WITHIN_S:g} s:\n{stderr[-3000:]}"
    assert "request(s) in flight cut" in stderr, stderr[-3000:]
    assert recorded_before < N, "the run was over before the SIGTERM took effect: the test proved nothing"
    left = N - recorded_before
    assert ended - restarted < left * per_item + 10, \
        f"the run took {ended - restarted:.0f} s after the restart for {left} items of ~{per_item:.1f} s"
    final = assert_exactly_once(folder, [i.id for i in items])
    assert not [r["id"] for r in final if r["outcome"] == "error"]
