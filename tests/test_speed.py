"""`evalsuite speed` against the paced fake server (tests/paced_server.py): the rates it is
programmed with come back within 10 %, and so do its cache, its speculation counters and its
faults. The rates are slow enough (tens of milliseconds per step) that a loaded 2-core
machine's scheduling noise stays well under the tolerance; each profile takes a few seconds."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalsuite.speed import SpeedSettings, profile
from evalsuite.speed.endpoint import SpeedEndpoint
from evalsuite.speed.measure import BenchTest, make_prompts, run_test
from evalsuite.speed.prompts import Counter, PromptMaker
from evalsuite.speed.text import corpus

TESTS = Path(__file__).resolve().parent


def within(value, expected, tolerance=0.10):
    return value is not None and abs(value - expected) <= tolerance * expected


def settings(url, data_dir, **kw):
    base = dict(endpoint=url, pp=(512,), tg=(12,), depth=(0,), concurrency=(1,), runs=3, data_dir=data_dir, quiet=True)
    return SpeedSettings(**{**base, **kw})


def rows(p, test, **match):
    return [r for r in p.rows if r.test == test and all(getattr(r, k) == v for k, v in match.items())]


@pytest.fixture()
def server(paced_servers):
    return paced_servers   # tests/conftest.py: paced fakes, each stopped after the test


def test_prefill_and_decode_come_back_as_programmed_and_decode_slows_with_the_prompt(server, data_dir):
    # every prefill >= 250 ms and every decode span >= 0.5 s: a late wake-up of tens of ms stays inside 10 %
    s = server(prefill_rate=4000, decode_rate=60, decode_halving=2000, latency=0.02)
    p = profile(settings(s.url, data_dir, pp=(1024,), tg=(24,), depth=(0, 1024)))
    assert p.status == "finished" and p.token_counts == "/tokenize"
    for depth in (0, 1024):
        pp, = rows(p, "pp", depth=depth)
        tg, = rows(p, "tg", depth=depth)
        # prompt tokens from usage, sized with the server's own counts: depth + pp, template included
        assert within(pp.prompt_tokens, depth + 1024, 0.02), pp.prompt_tokens
        assert pp.cached_tokens == 0 and pp.runs == 3 and pp.failed == 0
        assert within(pp.mean, 4000), (depth, pp.mean)
        expected = s.expected_decode(int(pp.prompt_tokens), 1)
        assert within(tg.mean, expected), (depth, tg.mean, expected)
        assert tg.figure.ci95[0] <= tg.mean <= tg.figure.ci95[1] and len(tg.figure.values) == 3
        # the three times kept apart: the role chunk comes at once, the first token after the prefill
        assert pp.ttfr_ms < pp.ttft_ms and within(pp.prefill_ms, 1000 * pp.prompt_tokens / 4000)
    deep, shallow = rows(p, "tg", depth=1024)[0], rows(p, "tg", depth=0)[0]
    assert deep.mean < 0.8 * shallow.mean     # 60/(1+2048/2000) against 60/(1+1024/2000)


def test_the_round_trip_is_subtracted_and_prefill_ends_at_the_first_token_not_the_first_chunk(server, data_dir):
    s = server(prefill_rate=4000, decode_rate=60, latency=0.1)
    p = profile(settings(s.url, data_dir, pp=(1024,), runs=2))
    pp, = rows(p, "pp")
    assert within(p.latency_ms, 100, 0.15)
    assert within(pp.mean, 4000), pp.mean
    # what the figure would be without the subtraction, or timed to the role chunk
    assert pp.prompt_tokens / (pp.ttft_ms / 1000) < 0.8 * 4000
    assert pp.ttfr_ms < 0.5 * pp.ttft_ms


def test_concurrency_is_kept_full_and_per_request_and_aggregate_decode_are_right(server, data_dir):
    s = server(prefill_rate=20000, decode_rate=60, stream_slowdown=0.5, latency=0.01, decode_jitter=0.4)
    url = s.url

    async def measure():
        endpoint = SpeedEndpoint(url, None, 60.0)
        counter = Counter(endpoint, "paced")
        maker = PromptMaker(corpus("math", data_dir), counter)
        test = BenchTest("math", 256, 16, 0, 3, 3)
        prompts = await make_prompts(maker, test)
        result = await run_test(endpoint, prompts, test, "paced")
        await endpoint.close()
        return result

    result = asyncio.run(measure())
    end = min(result.stream_ends)
    # a new request the moment one ends: the server had 3 in flight all along, though the
    # requests' lengths differ (a tool waiting for each batch would leave it idle meanwhile)
    assert s.in_flight_mean(result.started, end) >= 0.95 * 3, s.in_flight_mean(result.started, end)
    from evalsuite.speed.figures import rows_of

    pp, tg = rows_of(result, 0.01)
    assert tg.runs == 9 and tg.failed == 0
    # each request paced at 60 / (1 + 0.5 * 2) t/s, over its own jitter (the server says which)
    assert len(s.jitters) == 9
    expected = sum(30 / j for j in s.jitters) / 9
    assert within(tg.mean, expected), (tg.mean, expected, tg.figure.values)
    # aggregate: every stream's tokens over the wall time, as the server sent them
    served = sum(x.completion_tokens for x in result.samples)
    wall = max(x.ended for x in result.samples) - result.started
    assert tg.aggregate is not None and within(tg.aggregate.mean, served / wall, 0.12), (tg.aggregate.mean, served / wall)
    assert tg.ttft_p50_ms <= tg.ttft_p99_ms and not tg.client_bound


def test_per_request_decode_slows_with_the_streams_decoding_at_once(server, data_dir):
    s = server(prefill_rate=20000, decode_rate=60, stream_slowdown=0.5, latency=0.01)
    p = profile(settings(s.url, data_dir, pp=(256,), tg=(16,), concurrency=(1, 3), runs=2))
    one, = rows(p, "tg", concurrency=1)
    three, = rows(p, "tg", concurrency=3)
    assert within(one.mean, 60) and within(three.mean, 30), (one.mean, three.mean)
    assert one.aggregate is None and three.aggregate is not None
    assert three.aggregate.mean > 1.8 * three.mean     # three streams at once
    # the aggregate decode: three streams at 30 t/s each while they decode (prefill left out)
    assert within(three.aggregate_decode.mean, 3 * 30), three.aggregate_decode


def test_fresh_text_keeps_the_prefix_cache_out_and_reused_text_would_read_it(server, data_dir):
    s = server(prefill_rate=4000, decode_rate=80, latency=0.01, prefix_cache=True)
    fresh = profile(settings(s.url, data_dir, pp=(256,), depth=(768,), tg=(4,), runs=3))
    pp, = rows(fresh, "pp")
    assert pp.cached_tokens < 16 and within(pp.mean, 4000), (pp.cached_tokens, pp.mean)
    # a second profile of the same server (the same --seed, so the same text) is not served from the first's cache
    again, = rows(profile(settings(s.url, data_dir, pp=(256,), depth=(768,), tg=(4,), runs=3)), "pp")
    assert again.cached_tokens < 16 and within(again.mean, 4000), (again.cached_tokens, again.mean)
    # the figure a profile must not report: one text for every run, served from the cache
    reused = profile(settings(s.url, data_dir, pp=(256,), depth=(768,), tg=(4,), runs=3, fresh_text=False))
    cached, = rows(reused, "pp")
    assert cached.cached_tokens > 0.5 * cached.prompt_tokens
    # the prompt over the TTFT of the requests served from the cache: more than twice the real rate
    ttfts = sorted(cached.ttft_values_ms)[:2]
    prompt_over_time = cached.prompt_tokens / ((sum(ttfts) / 2 - reused.latency_ms) / 1000)
    assert prompt_over_time > 2 * 4000, prompt_over_time
    # and their prefills (16 tokens, 4 ms) are below the floor (the 10 ms round trip): flagged, left out
    assert cached.below_floor == 2 and within(cached.mean, 4000), (cached.below_floor, cached.figure)


def test_prefix_cache_rows_report_the_load_and_the_cached_prompt_apart(server, data_dir):
    s = server(prefill_rate=4000, decode_rate=80, latency=0.01, prefix_cache=True)
    p = profile(settings(s.url, data_dir, pp=(128,), depth=(2048,), tg=(4,), runs=2, prefix_cache=True))
    names = [r.name for r in p.rows]
    assert names == ["pp128 @ d2048", "tg4 @ d2048", "ctx_load @ d2048", "pp128 @ d2048 (cached)",
                     "tg4 @ d2048 (cached)"], names
    ctx, = rows(p, "ctx")
    cached, = rows(p, "pp", cached_mode=True)
    fresh, = rows(p, "pp", cached_mode=False)
    assert within(ctx.mean, 4000) and ctx.cached_tokens < 16
    assert cached.cached_tokens >= 2048 - 32, cached.cached_tokens
    # the rate over the tokens it did process (~150 of them in ~40 ms: the per-request overhead shows
    # there, but never a rate above the server's, which counting the cached ones would give)
    assert 0.4 * 4000 < cached.mean < 1.25 * 4000, cached.mean
    assert cached.ttft_ms < 0.5 * fresh.ttft_ms


def test_speculation_counters_give_the_programmed_acceptance(server, data_dir):
    s = server(prefill_rate=20000, decode_rate=200, spec=(4, 2.5))
    p = profile(settings(s.url, data_dir, pp=(64,), tg=(40,), runs=2, workloads=("math", "extract")))
    for workload in ("math", "extract"):
        tg, = rows(p, "tg", workload=workload)
        a = tg.acceptance
        assert a.source == "metrics" and a.tokens == 80
        assert a.rate == pytest.approx(1.5 / 4) and a.mean_length == pytest.approx(2.5)
    # llama-server's per-response timings count only our requests
    t = server(prefill_rate=20000, decode_rate=200, spec=(4, 2.0), timings=True)
    tg, = rows(profile(settings(t.url, data_dir, pp=(64,), tg=(40,), runs=2)), "tg")
    assert tg.acceptance.source == "timings" and tg.acceptance.mean_length == pytest.approx(2.0)
    assert tg.server is not None and tg.server.mean > 0
    # and a server without counters says so
    n = server(prefill_rate=20000, decode_rate=200)
    tg, = rows(profile(settings(n.url, data_dir, pp=(64,), tg=(8,), runs=1)), "tg")
    assert tg.acceptance is None and tg.acceptance_note == "the server exposes no counters"


def test_without_tokenize_prompts_are_sized_from_usage(server, data_dir):
    s = server(prefill_rate=4000, decode_rate=60, with_tokenize=False)
    p = profile(settings(s.url, data_dir, pp=(512,), depth=(1024,), runs=2))
    pp, = rows(p, "pp")
    assert p.token_counts == "usage" and s.tokenize_calls == 0
    assert within(pp.prompt_tokens, 1536, 0.10) and within(pp.mean, 4000)


def test_a_server_without_usage_gets_no_rates(server, data_dir):
    s = server(prefill_rate=5000, decode_rate=60, usage=False)
    p = profile(settings(s.url, data_dir, pp=(128,), tg=(8,), runs=1))
    for r in p.rows:
        assert r.figure.mean is None and r.prompt_tokens is None
        assert any("no usage" in n for n in r.notes)


def test_a_depth_past_the_context_is_that_rows_error_and_the_rest_go_on(server, data_dir, tmp_path, run_cli):
    s = server(prefill_rate=20000, decode_rate=100, context=1024)
    out = tmp_path / "p.json"
    r = run_cli("speed", "-e", s.url, "--pp", "128", "--tg", "4", "--depth", "0,2048,256", "--runs", "1",
                "--data-dir", data_dir, "--json", out, "-q")
    assert r.returncode == 1, r.stderr
    data = json.loads(out.read_text())
    by = {(row["test"], row["depth"]): row for row in data["rows"]}
    assert "maximum context length" in by[("pp", 2048)]["error"] and by[("pp", 2048)]["mean"] is None
    assert by[("pp", 0)]["mean"] > 0 and by[("tg", 256)]["mean"] > 0 and data["status"] == "finished"
    assert "error: HTTP 400" in r.stdout and "Traceback" not in r.stderr


def test_a_server_that_dies_mid_profile_keeps_the_rows_marked_partial(server, data_dir, tmp_path, run_cli):
    # the 7th completion request: after the calibration, the warm-up and the 2 + 2 of depths 0 and 128
    s = server(prefill_rate=20000, decode_rate=100, die_after=7)
    out = tmp_path / "p.json"
    r = run_cli("speed", "-e", s.url, "--pp", "64", "--tg", "4", "--depth", "0,128,256", "--runs", "2",
                "--data-dir", data_dir, "--json", out, "-q")
    assert r.returncode == 3, (r.stdout, r.stderr)
    data = json.loads(out.read_text())
    assert data["status"] == "partial"
    assert [row["depth"] for row in data["rows"] if row["test"] == "pp"] == [0, 128, 256]
    assert [row["partial"] for row in data["rows"]] == [False, False, False, False, True, True]
    assert data["rows"][2]["mean"] > 0
    assert "partial" in r.stderr


@pytest.mark.parametrize("args, said", [
    (["--depth", "-1"], "--depth -1: a depth cannot be negative"),
    (["--concurrency", "0"], "--concurrency 0: a concurrency cannot be zero or negative"),
    (["--tg", "0"], "--tg 0: a tg cannot be zero or negative"),
    (["--duration", "soon"], "--duration 'soon'"),
    (["--workload", "poetry"], "--workload 'poetry'"),
])
def test_bad_input_exits_2_with_a_clear_line(run_cli, args, said):
    r = run_cli("speed", "-e", "http://127.0.0.1:9/v1", *args)
    assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_nothing_listening_is_a_clear_exit_2(run_cli):
    r = run_cli("speed", "-e", "http://127.0.0.1:9/v1", "--pp", "8", "--tg", "2")
    assert r.returncode == 2 and "nothing usable answers at http://127.0.0.1:9/v1" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_the_command_writes_the_table_json_and_page_and_compare_gives_the_speedup(server, data_dir, tmp_path, run_cli):
    slow = server(prefill_rate=20000, decode_rate=40, latency=0.005)
    fast = server(prefill_rate=20000, decode_rate=80, latency=0.005)
    a, b = tmp_path / "slow.json", tmp_path / "fast.json"
    for s, path, label in ((slow, a, "slow"), (fast, b, "fast")):
        r = run_cli("speed", "-e", s.url, "--pp", "128", "--tg", "10", "-c", "1,2", "--runs", "3", "--data-dir", data_dir,
                    "--json", path, "--label", label, *(["--html", tmp_path / "fast.html"] if label == "fast" else []))
        assert r.returncode == 0, r.stderr
    assert "| model | test" in r.stdout and "| fast  | tg10 c2" in r.stdout, r.stdout
    row = json.loads(b.read_text())["rows"][1]
    for key in ("test", "pp", "tg", "depth", "concurrency", "runs", "mean", "std", "ci95", "unit", "prompt_tokens",
                "ttfr_ms", "ttft_ms", "aggregate", "failed", "acceptance"):
        assert key in row, key
    page = (tmp_path / "fast.html").read_text()
    assert "<img" in page and "tg10 c2" in page and "Content-Security-Policy" in page
    cmp = run_cli("compare", a, b)
    assert cmp.returncode == 0, cmp.stderr
    line = next(x for x in cmp.stdout.splitlines() if "| tg10 " in x and "| t/s " in x)
    speedup = float(line.split("|")[5].strip().rstrip("x"))
    assert within(speedup, 2.0) and "faster" in line, line
    same = run_cli("speed", "--compare", a, a)
    assert same.returncode == 0 and "1.00x" in same.stdout
    report = run_cli("report", a, b, "--html", tmp_path / "cmp.html")
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "cmp.html").read_text()
    assert "Speedups against slow" in html and "fast vs slow" in html


def test_a_soak_holds_the_concurrency_for_its_duration_and_stops(server, data_dir):
    s = server(prefill_rate=20000, decode_rate=50, latency=0.005)
    t0 = time.monotonic()
    p = profile(settings(s.url, data_dir, tg=(10,), concurrency=(2,), duration_s=3.0))
    took = time.monotonic() - t0
    soak = p.soak
    assert soak is not None and not p.rows and took < 3.0 + 4.0
    assert soak.requests >= 6 and soak.failed == 0 and soak.restarts == 0 and soak.series
    # two streams, each 10 tokens in ~0.2 s of decode after a short prefill
    per_request = 0.005 + 0.01 + 9 / 50
    assert within(soak.aggregate.mean, 2 * 10 / per_request, 0.2), soak.aggregate.mean


def test_a_flood_makes_the_client_the_bottleneck_and_the_row_says_so(data_dir):
    proc = subprocess.Popen([sys.executable, str(TESTS / "paced_server.py"), "--flood", "--prefill-rate", "1e7", "--context", "1000000"],
                            stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        p = profile(settings(f"http://127.0.0.1:{port}/v1", data_dir, pp=(32,), tg=(30000,), concurrency=(4,), runs=1,
                             warmup=False))
        tg, = rows(p, "tg")
        assert tg.client_bound and tg.client_busy >= 0.8, tg.client_busy
        assert tg.client_cpu_us_per_token is not None and tg.client_cpu_us_per_token > 0
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_managed_server_that_dies_is_restarted_and_the_test_measured_again(data_dir, tmp_path):
    command = f"{sys.executable} {TESTS / 'paced_server.py'} --port {{port}} --decode-rate 100 --die-after 6"
    p = profile(SpeedSettings(serve=command, pp=(64,), tg=(4,), depth=(0, 128), runs=2, data_dir=data_dir, quiet=True,
                              server_folder=tmp_path, serve_timeout=30, max_restarts=3))
    assert p.status == "finished", p
    assert len(p.server_restarts) >= 1 and p.server_restarts[0]["outcome"] == "restarted"
    assert all(r.figure.mean for r in p.rows) and not any(r.partial for r in p.rows)
    assert (tmp_path / "server.log").exists()


def test_the_speed_command_is_listed_and_help_imports_none_of_it(run_cli):
    r = run_cli("--help")
    assert "speed" in r.stdout
    probe = subprocess.run([sys.executable, "-c", "import sys, evalsuite.cli; print(sorted(m for m in sys.modules "
                            "if m.startswith('evalsuite.speed')))"], capture_output=True, text=True, timeout=60)
    assert probe.stdout.strip() == "[]", probe.stdout


def test_set_runs_one_managed_server_and_profile_per_setting_then_compares(data_dir, tmp_path, run_cli):
    serve = f"{sys.executable} {TESTS / 'paced_server.py'} --port {{port}} --prefill-rate 20000 --decode-rate {{rate}}"
    r = run_cli("speed", "--serve", serve, "--set", "rate=40,80", "--pp", "64", "--tg", "10", "--runs", "2",
                "--data-dir", data_dir, "--run-dir", tmp_path / "sweep", "-q")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "sweep").glob("*.json")) == ["01-40.json", "02-80.json"]
    tg = json.loads((tmp_path / "sweep" / "02-80.json").read_text())["rows"][1]
    assert within(tg["mean"], 80) and json.loads((tmp_path / "sweep" / "02-80.json").read_text())["label"] == "80"
    line = next(x for x in r.stdout.splitlines() if "| tg10 " in x and "| t/s " in x)
    assert within(float(line.split("|")[5].strip().rstrip("x")), 2.0), line
    assert (tmp_path / "sweep" / "report.html").exists() and (tmp_path / "sweep" / "01-40" / "server.log").exists()
