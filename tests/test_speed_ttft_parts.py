"""Issue 44 #2: where the first-token wait went. The client stamps each request's steps before
its first token (connect, request written, response head, first chunk, first token; client/
phases.py) in `run` records and speed samples; the server's part comes from llama-server's
`timings.prompt_ms` or vLLM's /metrics histograms; `show` gives a run's median breakdown, and a
row reads "TTFT … = connect … + send … + queue … + prefill … + unaccounted …" or names the part it
cannot see."""
from __future__ import annotations

import json

import pytest
from paced_server import PacedServer

from evalsuite.analysis.ttft_parts import TtftParts, combine, of_request, run_breakdown
from evalsuite.speed import SpeedSettings, profile


def test_a_row_names_its_parts_or_what_it_cannot_see():
    full = TtftParts(14.0, connect=0.0, send=0.0, queue=0.1, prefill=13.2, server_source="metrics")
    assert full.text() == "TTFT 14.00 s = connect 0.00 + send 0.00 + queue 0.10 + prefill 13.20 + unaccounted 0.70"
    blind = of_request({"ttft_s": 0.41, "connect_s": 0.001, "written_s": 0.002, "first_byte_s": 0.40,
                        "first_chunk_s": 0.401})
    assert blind.unaccounted is None and "its queue and prefill not exposed" in blind.text()
    assert blind.to_head == pytest.approx(0.398) and blind.chunk_to_token == pytest.approx(0.009)
    timed = of_request({"ttft_s": 0.5, "connect_s": 0.0, "written_s": 0.001}, {"prompt_ms": 450.0, "cache_n": 10})
    assert timed.prefill == pytest.approx(0.45) and timed.unaccounted == pytest.approx(0.049)
    assert "queue (not exposed)" in timed.text()
    # means add up; medians of each part, the rest unaccounted
    mean = combine([full, TtftParts(10.0, 0.0, 0.0, queue=0.1, prefill=9.2)], "mean")
    assert mean.ttft == 12.0 and mean.unaccounted == pytest.approx(12.0 - 0.1 - 11.2)
    assert TtftParts.from_dict(full.to_dict()) == full
    assert run_breakdown([{"timing": {"ttft_s": None}}]) is None


def test_speed_rows_break_the_ttft_down_with_the_servers_histograms(data_dir):
    s = PacedServer(prefill_rate=4000, decode_rate=80, latency=0.02, slots=1).start()
    try:
        p = profile(SpeedSettings(endpoint=s.url, pp=(1024,), tg=(4,), concurrency=(2,), runs=2, data_dir=data_dir, quiet=True))
    finally:
        s.stop()
    pp = next(r for r in p.rows if r.test == "pp")
    parts = TtftParts.from_dict(pp.ttft_parts)
    assert parts.server_source == "metrics" and parts.n == 4
    # one slot, two streams: the second waits the first's whole request; the server's queue says so
    assert parts.queue > 0.05 and parts.prefill == pytest.approx(0.256, rel=0.05)
    # the parts add up to the mean TTFT within 5%, the rest (the round trip) named unaccounted
    assert parts.connect + parts.send + parts.queue + parts.prefill + parts.server_other + parts.unaccounted == \
        pytest.approx(parts.ttft)
    # the server's own TTFT histogram: its time beyond queue and prefill is small; the 20 ms round trip is outside
    assert parts.server_other < 0.05 * parts.ttft and abs(parts.unaccounted - 0.02) < 0.05 * parts.ttft, parts
    assert "queue" in pp.ttft_parts["text"] and "unaccounted" in pp.ttft_parts["text"]


def test_run_records_carry_the_steps_and_show_gives_the_median_breakdown(tmp_path, data_dir, run_cli):
    s = PacedServer(prefill_rate=2000, decode_rate=200, latency=0.01, timings=True).start()
    try:
        done = run_cli("run", "gsm8k", "--endpoint", s.url, "--limit", "4", "--max-tokens", "8",
                       "--run-dir", tmp_path / "run", "--data-dir", data_dir, "--quiet", timeout=300)
    finally:
        s.stop()
    assert done.returncode in (0, 1), done.stderr[-2000:]
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    for r in records:
        t = r["timing"]
        assert 0 <= t["connect_s"] <= t["written_s"] <= t["first_byte_s"] <= t["first_chunk_s"] <= t["ttft_s"], t
        assert isinstance(t["reused_connection"], bool)
    shown = run_cli("show", tmp_path / "run")
    line = next(x for x in shown.stdout.splitlines() if x.startswith("first token, medians over 4 records"))
    assert "prefill" in line and "(server: llama-server's timings)" in line, line
    # the run's own summary, written at its end, says the same (it once read the records without
    # their server timings: "queue and prefill not exposed" at the end, "prefill" in `show`)
    written = json.loads((tmp_path / "run" / "summary.json").read_text())["first_token"]
    assert written["prefill"] is not None and written["server_source"] == "timings", written
    parts = json.loads(run_cli("show", tmp_path / "run", "--format", "json").stdout)["first_token"]
    ttfts = sorted(r["timing"]["ttft_s"] for r in records)
    assert parts["ttft"] == pytest.approx((ttfts[1] + ttfts[2]) / 2)
    assert parts["prefill"] == pytest.approx(sorted(r["server_timings"]["prompt_ms"] for r in records)[1:3][0] / 1000,
                                             rel=0.2)
