"""`speed --rate`: load by arrival rate against the paced server with a slot limit (a request
waits for a free slot). The TTFT median at each rate comes back within 10% of a simulation of
the same queue (tests/queue_sim.py: the programmed service, the same seeded arrivals); goodput
counts exactly the planted SLO misses; the client's lag behind its schedule is measured, and a
client that falls behind says so."""
from __future__ import annotations

import asyncio
import json
import math
import statistics
import time
from array import array
from pathlib import Path

import pytest
from queue_sim import service_of, simulate

from evalsuite.client.errors import UsageError
from evalsuite.speed import SpeedSettings, profile
from evalsuite.speed.endpoint import Sample
from evalsuite.speed.load import run_rate
from evalsuite.speed.load_rows import LoadSweep, Slo, poisson_arrivals
from evalsuite.speed.rows import Profile, read_profile, write_profile
from evalsuite.speed.settings import parse_rates, parse_slo


@pytest.fixture()
def server(paced_servers):
    return paced_servers   # tests/conftest.py: paced fakes, each stopped after the test


def test_rates_and_slos_parse_or_name_the_option():
    assert parse_rates("0.5,1,2,inf") == (0.5, 1.0, 2.0, math.inf)
    assert parse_slo("ttft=1s,tpot=60ms") == Slo(ttft=1.0, tpot=0.06)
    assert parse_slo("e2e=2.5,share=0.95") == Slo(e2e=2.5, share=0.95)
    for bad, said in (("0", "a rate must be more than 0"), ("fast", "'fast' is not a rate")):
        with pytest.raises(UsageError, match=said):
            parse_rates(bad)
    for bad, said in (("ttfb=1s", "the limits are ttft"), ("ttft=soon", "write a time"), ("share=2", "share is a fraction")):
        with pytest.raises(UsageError, match=said):
            parse_slo(bad)
    # the same seed, the same schedule; a mean gap of exactly 1 / rate (conditioned on its count),
    # gaps spread as exponential draws (their coefficient of variation about 1)
    a = poisson_arrivals(2.0, 2000, 7)
    assert a == poisson_arrivals(2.0, 2000, 7) and a != poisson_arrivals(2.0, 2000, 8)
    gaps = [b - x for x, b in zip(a, a[1:])]
    assert statistics.fmean(gaps) == pytest.approx(0.5, rel=1e-9)
    assert statistics.stdev(gaps) / statistics.fmean(gaps) == pytest.approx(1.0, abs=0.08)
    assert (len(poisson_arrivals(2.2, 60, 0)) - 1) / poisson_arrivals(2.2, 60, 0)[-1] == pytest.approx(2.2)
    assert poisson_arrivals(math.inf, 3, 0) == [0.0, 0.0, 0.0]


def test_ttft_median_per_rate_matches_a_simulation_of_the_queue(server, data_dir):
    # two slots; each request: 256 tokens at 2,000 t/s (128 ms), then 12 tokens at 40 t/s: 0.4 s a slot
    s = server(prefill_rate=2000, decode_rate=40, latency=0.01, slots=2)
    n, rates = 20, (2.0, 4.0, math.inf)
    p = profile(SpeedSettings(endpoint=s.url, pp=(256,), tg=(12,), rates=rates, requests=n, data_dir=data_dir,
                              quiet=True))
    prefill, service = service_of(256, 12, 2000, 40)
    assert [pt.rate for pt in p.load.points] == list(rates)
    for point in p.load.points:
        expected = 1000 * statistics.median(simulate(poisson_arrivals(point.rate, n, 0), 2, 0.01, [prefill] * n,
                                                     [service] * n))
        assert abs(point.ttft_ms[0] - expected) <= 0.10 * expected, (point.rate, point.ttft_ms, expected)
        assert point.failed == 0 and point.requests == n and point.lag_ms[1] < 50
        assert point.tpot_ms[0] == pytest.approx(25.0, rel=0.1)            # 1 / 40 t/s
        assert point.ttft_ms[0] <= point.ttft_ms[1] <= point.ttft_ms[2]
    # the queue grew with the rate: at inf, most wait for a slot
    assert p.load.points[-1].ttft_ms[0] > 5 * p.load.points[0].ttft_ms[0]


def test_goodput_counts_exactly_the_planted_slo_misses_and_finds_the_knee(server, data_dir, tmp_path):
    # every 4th request decodes 4x slower (TPOT 100 ms against 25): it misses tpot=60ms, whatever the rate
    s = server(prefill_rate=8000, decode_rate=40, latency=0.005, slots=4, slow_every=4)
    n = 12
    p = profile(SpeedSettings(endpoint=s.url, pp=(128,), tg=(8,), rates=(3.0, math.inf), requests=n,
                              slo=parse_slo("tpot=60ms,share=0.7"), data_dir=data_dir, quiet=True))
    served = s.served[-2 * n:]
    for point, batch in zip(p.load.points, (served[:n], served[n:])):
        slow = sum(1 for r in batch if r["slow"])
        assert slow >= 2 and point.good == n - slow, (point.good, slow)
        assert point.good_share == pytest.approx((n - slow) / n)
        assert point.goodput == pytest.approx(point.good / point.wall_s)
    # 9 of 12 within: both rates are within a 70% SLO share; the knee is the higher
    assert p.load.knee == math.inf
    path = tmp_path / "p.json"
    write_profile(path, p)
    back = read_profile(path)
    assert back.load.knee == math.inf and back.load.points[0].good == p.load.points[0].good
    from evalsuite.speed.table import profile_table

    table = profile_table(back)
    assert "knee: inf" in table and "within SLO" in table and "client lag p50/p99 (ms)" in table


def test_a_client_that_falls_behind_its_schedule_says_so():
    """The lag is measured on every request (written less due): a loop blocked for 80 ms at each
    send (a busy client) falls behind a 20/s schedule, and the rate's row says so."""
    def sample() -> Sample:
        now = time.perf_counter()
        return Sample(started=now, total=0.01, ttfr=0.005, ttft=0.005, last=0.009, chunks=2, prompt_tokens=10,
                      completion_tokens=2, token_times=array("d", [0.005, 0.009]), token_chars=array("l", [1, 1]),
                      phases={"written_s": 0.0})

    def blocking(k: int):
        async def job(e: int):
            time.sleep(0.08)            # the client's own work, on the loop: the next send waits for it
            return [sample()]
        return job

    def calm(k: int):
        async def job(e: int):
            return [sample()]
        return job

    late = asyncio.run(run_rate(20.0, [blocking(k) for k in range(15)], 1, Slo(), 0))
    assert late.lag_ms[1] > 100 and any("fell behind its schedule" in n for n in late.notes), late
    on_time = asyncio.run(run_rate(20.0, [calm(k) for k in range(15)], 1, Slo(), 0))
    assert on_time.lag_ms[1] < 12.5 and not any("fell behind" in n for n in on_time.notes), on_time


def test_several_endpoints_share_the_arrivals(server, data_dir):
    a, b = server(decode_rate=80, latency=0.005), server(decode_rate=80, latency=0.005)
    p = profile(SpeedSettings(endpoint=f"{a.url},{b.url}", pp=(64,), tg=(4,), rates=(10.0,), requests=8,
                              data_dir=data_dir, quiet=True))
    point, = p.load.points
    assert point.failed == 0 and len(p.load.endpoints) == 2 and len(point.per_endpoint_ttft_p50_ms) == 2
    assert len(a.served) >= 4 and sum(1 for r in b.served if r["tokens"] == 4) == 4


def test_sessions_arrive_at_a_rate(server, data_dir, tmp_path):
    s = server(prefill_rate=8000, decode_rate=80, latency=0.005)
    conversation = tmp_path / "c.jsonl"
    conversation.write_text('{"messages": [{"role": "user", "content": "Hello there."}, '
                            '{"role": "assistant", "content": "Hi, how can I help?"}, '
                            '{"role": "user", "content": "Tell me a number."}, '
                            '{"role": "assistant", "content": "Seven."}]}\n')
    p = profile(SpeedSettings(endpoint=s.url, replay=conversation, rates=(5.0,), requests=3, data_dir=data_dir,
                              quiet=True))
    point, = p.load.points
    assert point.requests == 6 and point.failed == 0        # 3 sessions of 2 turns
    # each session's second turn found its first turn's prompt in the cache, never another session's
    second_turns = [r for r in s.served[-6:] if r["cached"]]
    assert len(second_turns) == 3


def test_load_options_that_do_not_go_together_are_refused(tmp_path):
    from evalsuite.speed.settings import check

    for settings, said in ((SpeedSettings(slo=Slo(ttft=1.0)), "--slo needs --rate"),
                           (SpeedSettings(endpoint="http://a/v1,http://b/v1"), "loaded together by --rate"),
                           (SpeedSettings(rates=(1.0,), requests=0), "--requests 0"),
                           (SpeedSettings(replay=Path("x"), session_turns=3), "either --replay")):
        with pytest.raises(UsageError, match=said):
            check(settings)
    assert LoadSweep.from_dict(None) is None and Profile.from_dict({"rows": []}).load is None


def test_the_schedule_is_one_generator_kept_by_one_dispatcher():
    """GuideLLM 0.8.1 reads a 2.2/s Poisson run at 3.2/s: its ten worker processes each seed their
    own generator with the same seed, so 60 arrivals have 6 distinct gaps (docs/speed.md). Here
    every gap is its own draw, and the sends keep the asked rate."""
    due = poisson_arrivals(2.2, 60, 42)
    gaps = [round(b - a, 9) for a, b in zip(due, due[1:])]
    assert len(set(gaps)) == len(gaps)

    starts: list[float] = []

    def job(k: int):
        async def send(e: int):
            starts.append(time.perf_counter())
            return [Sample(started=starts[-1], total=0.001, error=None, phases={"written_s": 0.0})]
        return send

    point = asyncio.run(run_rate(100.0, [job(k) for k in range(300)], 1, Slo(), 3))
    assert point.achieved_rate == pytest.approx(100.0, rel=0.05), point.achieved_rate   # the rate asked, sent


def test_the_command_line_takes_the_new_options_and_refuses_bad_ones(server, data_dir, tmp_path, run_cli):
    s = server(decode_rate=100, latency=0.005)
    out = tmp_path / "rate.json"
    done = run_cli("speed", "-e", s.url, "--rate", "5,inf", "--requests", "4", "--pp", "64", "--tg", "4", "--slo",
                   "ttft=2s,tpot=100ms", "--rate-seed", "3", "--json", out, "--data-dir", data_dir, "-q", timeout=180)
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert [p["rate"] for p in data["load"]["points"]] == [5.0, "inf"] and data["load"]["seed"] == 3
    assert data["load"]["knee"] == "inf" and "knee: inf" in done.stdout
    for args, said in ((["--rate", "0"], "--rate 0: a rate must be more than 0"),
                       (["--rate", "1", "--slo", "ttfb=1s"], "--slo 'ttfb=1s': the limits are ttft"),
                       (["--slo", "ttft=1s"], "--slo needs --rate"),
                       (["--session", "0", "--depth", "512"], "--session 0: at least one turn")):
        bad = run_cli("speed", "-e", s.url, *args, timeout=60)
        assert bad.returncode == 2 and said in bad.stderr and "Traceback" not in bad.stderr, (args, bad.stderr)
