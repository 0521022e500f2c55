"""A server that stops answering without closing its connections (issue 21): llama-server on
SIGTERM closes its listening socket but keeps the requests in flight open and silent; a hung
server accepts connections and answers nothing. Neither is a closed connection the client would
notice, so before the watchdog a run sat there for the whole --timeout.

Designed behaviour (docs/reliability.md, "A server that stops answering"): the endpoint is shown
DOWN within seconds, the stuck requests are cut and sent again once when it answers again, every
item is recorded once, and the run takes the downtime plus a few seconds, not --timeout.
"""
from __future__ import annotations

import subprocess
import threading
import time

from fault_server import FaultServer

from evalsuite.run.scheduler import PROBE_TIMEOUT_S, STALL_S, WATCH_TICK_S
from test_reliability import (assert_exactly_once, child_env, count_lines, evalsuite_cmd, gsm8k_items,
                              right_answers, wait_for_records)

TIMEOUT = 120      # --timeout: what the run would wait for a stuck request before the watchdog
# DOWN is due once a request has been silent STALL_S and a probe failed (PROBE_TIMEOUT_S at
# most), seen within a watchdog tick: 8.5 s; the rest is a loaded machine's scheduling
DOWN_WITHIN_S = STALL_S + PROBE_TIMEOUT_S + WATCH_TICK_S + 3.0
DOWNTIME = DOWN_WITHIN_S + 4.0   # how long the server stays away: DOWN must show before it is back


def done_within(left: int, per_item: float) -> float:
    """How long the run may take after the server is back: the items left at the pace measured
    before the fault, plus 10 s; at most half the --timeout that a stuck request would cost."""
    return min(left * per_item + 10, TIMEOUT / 2)


class StderrLines:
    """The child's stderr lines, each with the monotonic time it arrived."""

    def __init__(self, proc: subprocess.Popen):
        self.lines: list[tuple[float, str]] = []
        self._thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._thread.start()

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stderr:
            self.lines.append((time.monotonic(), line))

    def first(self, text: str, after: float) -> float | None:
        return next((t for t, line in list(self.lines) if t >= after and text in line), None)

    def text(self) -> str:
        self._thread.join(10)
        return "".join(line for _, line in self.lines)


def start_run(server: FaultServer, data_dir, run_dir, n_items: int) -> tuple[subprocess.Popen, StderrLines]:
    proc = subprocess.Popen(
        evalsuite_cmd("run", "gsm8k", "--endpoint", server.url, "--data-dir", data_dir, "--limit", n_items,
                      "--concurrency", 4, "--timeout", TIMEOUT, "--max-downtime", 60, "--run-dir", run_dir),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
    return proc, StderrLines(proc)


def finish(proc: subprocess.Popen, lines: StderrLines) -> str:
    proc.wait(timeout=TIMEOUT + 60)
    return lines.text()


def test_sigterm_like_server_is_shown_down_and_the_stuck_requests_sent_again_once(data_dir, tmp_path):
    n_items = 60
    pack, items = gsm8k_items(data_dir, n_items)
    answers = right_answers(pack, items)
    run_dir = tmp_path / "run"
    old = FaultServer(answers, delay=0.2).start()
    port = old.port
    proc, lines = start_run(old, data_dir, run_dir, n_items)
    new = None
    try:
        started = time.monotonic()
        wait_for_records(run_dir / "records.jsonl", 8, proc)
        per_item = (time.monotonic() - started) / 8     # generous: start-up included
        old.sigterm()
        stopped = time.monotonic()
        time.sleep(DOWNTIME)
        assert old.caught["in flight"] >= 1, "no request was in flight at the stop: the test proved nothing"
        recorded_by_old = count_lines(run_dir / "records.jsonl")
        new = FaultServer(answers, port=port).start()   # restarted on the same port
        restarted = time.monotonic()
        stderr = finish(proc, lines)
        ended = time.monotonic()
    finally:
        if proc.poll() is None:
            proc.kill()
        old.stop()
        if new is not None:
            new.stop()
    assert proc.returncode == 0, stderr[-3000:]
    down_at = lines.first("DOWN", stopped)
    print(f"SIGTERM-like: DOWN shown {down_at - stopped if down_at else float('nan'):.1f} s after the stop; run ended "
          f"{ended - restarted:.1f} s after the restart ({DOWNTIME:g} s down)")
    assert down_at is not None and down_at - stopped < DOWN_WITHIN_S, \
        f"DOWN not shown within {DOWN_WITHIN_S:g} s:\n{stderr[-3000:]}"
    left = n_items - recorded_by_old
    assert ended - restarted < done_within(left, per_item), \
        f"the run took {ended - restarted:.0f} s after the restart for {left} items of ~{per_item:.2f} s"
    assert "request(s) in flight cut" in stderr
    final = assert_exactly_once(run_dir, [i.id for i in items])
    assert all(r["outcome"] == "correct" for r in final)
    # every item the old server did not answer was sent to the new one once, and no other
    assert set(new.asked.values()) == {1}, new.asked
    assert sum(new.asked.values()) == n_items - recorded_by_old


def test_server_that_accepts_but_never_answers_is_shown_down_and_the_run_goes_on(data_dir, tmp_path):
    n_items = 60
    pack, items = gsm8k_items(data_dir, n_items)
    answers = right_answers(pack, items)
    run_dir = tmp_path / "run"
    server = FaultServer(answers, delay=0.2).start()
    proc, lines = start_run(server, data_dir, run_dir, n_items)
    try:
        started = time.monotonic()
        wait_for_records(run_dir / "records.jsonl", 8, proc)
        per_item = (time.monotonic() - started) / 8     # generous: start-up included
        server.freeze()
        frozen = time.monotonic()
        time.sleep(DOWNTIME)
        assert server.caught["in flight"] >= 1, "no request was in flight at the freeze: the test proved nothing"
        recorded_before = count_lines(run_dir / "records.jsonl")
        server.thaw()
        thawed = time.monotonic()
        stderr = finish(proc, lines)
        ended = time.monotonic()
    finally:
        if proc.poll() is None:
            proc.kill()
        server.stop()
    assert proc.returncode == 0, stderr[-3000:]
    down_at = lines.first("DOWN", frozen)
    print(f"silent server: DOWN shown {down_at - frozen if down_at else float('nan'):.1f} s after the freeze; run "
          f"ended {ended - thawed:.1f} s after it answered again ({DOWNTIME:g} s silent)")
    assert down_at is not None and down_at - frozen < DOWN_WITHIN_S, \
        f"DOWN not shown within {DOWN_WITHIN_S:g} s:\n{stderr[-3000:]}"
    left = n_items - recorded_before
    assert ended - thawed < done_within(left, per_item), \
        f"the run took {ended - thawed:.0f} s after the server answered again for {left} items of ~{per_item:.2f} s"
    final = assert_exactly_once(run_dir, [i.id for i in items])
    assert all(r["outcome"] == "correct" for r in final)
    # while it was silent only probes were sent; each item it left silent was sent again once
    assert server.caught["new"] == 0, server.caught
    assert server.completions == n_items + server.caught["in flight"]
