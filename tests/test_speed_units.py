"""The speed room's pure parts: what a person types, the statistics, the rows from measured
requests (no server), the JSON in and out, the compare of two profiles and its pages, and the
room's import floors (its analyses read JSON only)."""
from __future__ import annotations

import json
from array import array

import pytest

from evalsuite.client.errors import UsageError
from evalsuite.speed.compare import compare_profiles
from evalsuite.speed.endpoint import EndpointError, Sample
from evalsuite.speed.figures import aggregate, decode_rate, prefill_rate, rows_of
from evalsuite.speed.measure import BenchTest, Measured
from evalsuite.speed.rows import Profile, ProfileError, Row, Soak, is_profile_file, read_profile, write_profile
from evalsuite.speed.settings import SpeedSettings, check, parse_duration, parse_ints, parse_workloads
from evalsuite.speed.stats import percentile, ratio, summarize


def test_lists_durations_and_workloads_parse_or_name_the_option():
    assert parse_ints("512, 2048,4k", "--pp", 1, (512,)) == (512, 2048, 4096)
    assert parse_ints(None, "--pp", 1, (512,)) == (512,)
    assert parse_ints("0,4096", "--depth", 0, (0,)) == (0, 4096)
    for text, option, minimum, said in (("-1", "--depth", 0, "--depth -1: a depth cannot be negative"),
                                        ("0", "--concurrency", 1, "--concurrency 0: a concurrency cannot be zero"),
                                        ("0", "--tg", 1, "--tg 0: a tg cannot be zero"),
                                        ("12x", "--pp", 1, "'12x' is not a whole number")):
        with pytest.raises(UsageError, match=said):
            parse_ints(text, option, minimum, ())
    assert parse_duration("30m") == 1800 and parse_duration("1h30m") == 5400 and parse_duration("90") == 90
    assert parse_duration(None) is None
    for bad in ("soon", "0s", "30x"):
        with pytest.raises(UsageError, match="--duration"):
            parse_duration(bad)
    assert parse_workloads("mix") == ("math", "code", "prose", "extract")
    assert parse_workloads("code,math,code") == ("code", "math")
    with pytest.raises(UsageError, match="--workload 'poems'"):
        parse_workloads("poems")
    with pytest.raises(UsageError, match="either --endpoint or --serve"):
        check(SpeedSettings(endpoint="http://x/v1", serve="llama-server --port {port}"))
    with pytest.raises(UsageError, match="-o 'yaml'"):
        check(SpeedSettings(output="yaml"))


def test_the_statistics_match_scipy_and_numpy():
    import numpy
    import scipy.stats as scipy_stats

    xs = [101.0, 97.5, 103.2, 99.9, 100.4]
    s = summarize(xs + [None, float("inf")])
    assert s.n == 5 and s.mean == pytest.approx(numpy.mean(xs)) and s.std == pytest.approx(numpy.std(xs, ddof=1))
    lo, hi = scipy_stats.t.interval(0.95, 4, loc=numpy.mean(xs), scale=scipy_stats.sem(xs))
    assert s.ci95 == (pytest.approx(lo), pytest.approx(hi))
    assert summarize([5.0]).ci95 is None and summarize([]).mean is None
    assert percentile(xs, 50) == pytest.approx(numpy.percentile(xs, 50))
    assert percentile(xs, 99) == pytest.approx(numpy.percentile(xs, 99))


def test_the_ratio_interval_leaves_one_out_only_beyond_the_noise():
    a = summarize([100, 102, 98, 101, 99])
    b = summarize([190, 195, 185, 192, 188])
    r, (lo, hi) = ratio(a, b)
    assert r == pytest.approx(1.9, rel=1e-3) and 1.8 < lo < r < hi < 2.0
    noisy = summarize([60, 140, 95, 105, 100])
    r, (lo, hi) = ratio(a, noisy)
    assert lo < 1 < hi
    assert ratio(summarize([100]), b) == (pytest.approx(1.9, rel=1e-3), None)   # one run: no noise known


def sample(started=0.0, ttft=0.1, last=0.5, tokens=9, prompt=100, cached=0, chunks=None, error=None, ttfr=0.01):
    chunks = chunks if chunks is not None else (tokens or 1)
    times = array("d", [ttft + (last - ttft) * k / max(1, chunks - 1) for k in range(chunks)])
    return Sample(started=started, total=last + 0.01, ttfr=ttfr, ttft=ttft, last=last, chunks=chunks, prompt_tokens=prompt,
                  completion_tokens=tokens, cached_tokens=cached, token_times=times,
                  token_chars=array("l", [3] * chunks), error=error)


def test_prefill_and_decode_of_one_request():
    s = sample(ttft=0.12, last=0.52, tokens=9, prompt=1000, cached=200)
    # (prompt - cached) / (TTFT - round trip); (tokens - 1) / (last - first)
    assert prefill_rate(s, 0.02) == pytest.approx(800 / 0.10)
    assert decode_rate(s) == pytest.approx(8 / 0.40)
    assert prefill_rate(sample(prompt=None), 0.0) is None     # no usage: no rate, never an estimate
    assert decode_rate(sample(tokens=1, chunks=1)) is None
    # several tokens in a chunk: the first chunk's share (by its characters) is left out of the count
    burst = Sample(started=0, total=1, ttft=0.1, last=0.5, chunks=3, prompt_tokens=10, completion_tokens=12,
                   token_times=array("d", [0.1, 0.3, 0.5]), token_chars=array("l", [6, 3, 3]))
    assert burst.chunk_tokens() == [6.0, 3.0, 3.0]
    assert decode_rate(burst) == pytest.approx(6 / 0.4)


def test_aggregate_counts_every_streams_tokens_over_the_wall_time():
    # two streams, 10 tokens each over one second, back to back twice: 40 tokens in 2 s
    samples = [sample(started=t0, ttft=0.0, last=1.0, tokens=10) for t0 in (0.0, 0.0, 1.0, 1.0)]
    agg = aggregate(samples, 0.0, 2.0 + 1e-9, 2)
    assert agg.mean == pytest.approx(20.0, rel=0.01) and len(agg.values) == 2
    assert aggregate([sample(prompt=None, tokens=None)], 0.0, 1.0, 1) is None


def test_rows_count_failures_apart_and_never_average_them_in():
    test = BenchTest("math", 512, 9, 0, 2, 2)
    ok = [sample(started=0.0), sample(started=0.6), sample(started=0.0)]
    bad = Sample(started=0.6, total=0.01, error=EndpointError("server_error", "HTTP 503: busy", 503))
    result = Measured(test, samples=ok + [bad], started=0.0, stream_ends=[1.2, 1.3])
    pp, tg = rows_of(result, 0.0)
    assert pp.failed == tg.failed == 1 and pp.runs == tg.runs == 3
    assert tg.figure.values == (pytest.approx(20.0),) * 3
    assert pp.name == "pp512 c2" and tg.name == "tg9 c2" and tg.aggregate is not None
    # and says why: a count alone leaves a flaky row unexplained
    assert "first failure: server_error: HTTP 503: busy" in tg.notes and tg.notes == pp.notes


def test_an_error_for_every_request_is_the_rows_error():
    test = BenchTest("math", 128, 4, 8192, 1, 3)
    bad = Sample(started=0, total=0.01, error=EndpointError("context_length", "HTTP 400: maximum context length", 400))
    pp, tg = rows_of(Measured(test, samples=[bad], stopped="HTTP 400: maximum context length"), 0.0)
    assert pp.error == "HTTP 400: maximum context length" and pp.figure.mean is None and pp.failed == 1


def profile_of(name, tg_values, pp_values=(1000.0, 1010.0, 990.0)):
    rows = (Row("pp", "math", 512, 128, 0, 1, 3, summarize(pp_values), prompt_tokens=512, ttft_ms=500.0),
            Row("tg", "math", 512, 128, 0, 1, 3, summarize(tg_values), prompt_tokens=512, ttft_ms=500.0))
    return Profile(model="m", endpoint="http://127.0.0.1:8080/v1", rows=rows, label=name,
                   soak=Soak(10.0, 2, 16, 20, 0, 0, 1.0, ((1.0, 50.0), (2.0, 60.0)), 320))


def test_a_profile_round_trips_through_json(tmp_path):
    p = profile_of("off", (20.0, 21.0, 19.0))
    path = tmp_path / "p.json"
    write_profile(path, p)
    assert is_profile_file(path) and not is_profile_file(tmp_path / "missing.json")
    back = read_profile(path)
    assert back.rows == p.rows and back.soak == p.soak and back.label == "off"
    data = json.loads(path.read_text())
    assert data["kind"] == "evalsuite.speed" and data["rows"][1]["ci95"] is not None
    assert data["soak"]["aggregate"] == {"mean": 55.0, "median": 55.0, "p10": 51.0, "p90": 59.0, "min": 50.0,
                                         "max": 60.0}
    (tmp_path / "other.json").write_text('{"counts": {}}')
    with pytest.raises(ProfileError, match="is not a speed profile"):
        read_profile(tmp_path / "other.json")
    (tmp_path / "broken.json").write_text('{"kind": "evalsuite.speed", "rows": [{"test": "pp"}]}')
    with pytest.raises(ProfileError, match="cannot be read"):
        read_profile(tmp_path / "broken.json")


def test_compare_gives_each_rows_speedup_and_says_when_it_is_noise():
    off, on = profile_of("off", (20.0, 21.0, 19.0)), profile_of("on", (38.0, 40.0, 39.0))
    cmp = compare_profiles(off, on)
    by = {(s.row, s.figure): s for s in cmp.speedups}
    tg = by[("tg128", "t/s")]
    assert tg.speedup == pytest.approx(1.95, rel=1e-3) and tg.beyond_noise and tg.verdict == "faster"
    pp = by[("pp512", "t/s")]
    assert pp.speedup == pytest.approx(1.0) and pp.beyond_noise is False and pp.verdict == "within noise"
    assert "decode math tg128 1.95x" in cmp.headline()
    one = compare_profiles(profile_of("a", (20.0,)), profile_of("b", (30.0,)))
    assert {s.row: s for s in one.speedups}["tg128"].verdict == "noise unknown (one run)"


def test_the_page_and_the_table_draw_a_comparison(tmp_path):
    from evalsuite.speed.html import build_page
    from evalsuite.speed.table import profile_csv, profile_table

    off, on = profile_of("off", (20.0, 21.0, 19.0)), profile_of("on", (38.0, 40.0, 39.0))
    page = build_page([off, on])
    assert "Speedups against off" in page and "on vs off" in page and "<img" in page
    table = profile_table(on)
    assert table.splitlines()[2].startswith("| model | test") and "soak: 10 s at concurrency 2" in table
    assert profile_csv(on).splitlines()[0].startswith("model,workload,test")


def test_the_speed_analyses_read_json_only():
    """compare.py, html.py, table.py, plots.py, rows.py and stats.py import nothing that asks an
    endpoint (the room's door endpoint.py, its measuring loop, the client, the run machinery)."""
    from test_import_graph import RUN_MACHINERY, import_graph, reachable

    graph = import_graph()
    asking = {"evalsuite.speed.endpoint", "evalsuite.speed.measure", "evalsuite.speed.profiling",
              "evalsuite.speed.command", "evalsuite.speed.prompts", "evalsuite.speed.text"}
    assert asking <= set(graph)
    for module in ("compare", "html", "table", "plots", "rows", "stats"):
        name = f"evalsuite.speed.{module}"
        bad = reachable(graph, name) & (set(RUN_MACHINERY) | asking | {"evalsuite.client", "evalsuite.tasks"})
        assert not bad, (name, sorted(bad))
    # and the room reaches the client, the engines and serve/ through its one door only
    doors = {m for m in graph if m.startswith("evalsuite.speed.")
             for t in graph[m] if t.startswith(("evalsuite.client", "evalsuite.engines", "evalsuite.serve",
                                                "evalsuite.speculation"))}
    assert doors == {"evalsuite.speed.endpoint", "evalsuite.speed.settings"}, doors
    assert {t for t in graph["evalsuite.speed.settings"] if not t.startswith("evalsuite.speed")} == {"evalsuite.client.errors"}


def test_the_outputs_and_exit_codes_of_a_finished_profile(tmp_path):
    from dataclasses import replace

    from evalsuite.speed.command import exit_code, finish

    p = profile_of("on", (38.0, 40.0, 39.0))
    lines = []
    assert finish(p, SpeedSettings(output="json", quiet=True), lines.append) == 0
    assert json.loads(lines[-1])["kind"] == "evalsuite.speed"
    finish(p, SpeedSettings(output="csv", quiet=True), lines.append)
    assert lines[-1].splitlines()[1].startswith("on,math,pp512,512,128,0,1,3,")
    failed = p.with_rows([replace(p.rows[0], failed=2)] + list(p.rows[1:]))
    assert exit_code(failed) == 1
    assert exit_code(replace(p, status="partial")) == 3 and exit_code(replace(p, status="interrupted")) == 130


def test_tokens_read_in_one_block_get_no_decode_time_and_the_row_says_why():
    test = BenchTest("math", 128, 9, 0, 1, 2)
    late = sample(ttft=0.1, last=0.1, tokens=9)          # every chunk stamped at the same instant
    pp, tg = rows_of(Measured(test, samples=[late, sample()], started=0.0, stream_ends=[1.0]), 0.0)
    assert tg.figure.values == (pytest.approx(20.0),)
    assert any("1 decode span(s) below the floor" in n for n in tg.notes) and tg.below_floor == 1, tg.notes
    assert any("1 request(s) read in clumps" in n for n in tg.notes), tg.notes


def test_the_packages_profile_stays_a_function_after_every_module_is_imported():
    import importlib

    import evalsuite.speed as speed

    for module in ("settings", "text", "prompts", "endpoint", "measure", "figures", "profiling", "rows", "command",
                   "load", "load_rows", "replay", "replay_rows"):
        importlib.import_module(f"evalsuite.speed.{module}")
    from evalsuite.speed import profile

    assert callable(profile) and profile is speed.profile and not isinstance(profile, type(speed))


def test_the_page_table_and_csv_draw_a_replay_and_a_rate_sweep():
    import math

    from evalsuite.speed.html import build_page
    from evalsuite.speed.load_rows import LoadSweep, Sent, Slo, rate_point
    from evalsuite.speed.replay_rows import Replay, Turn
    from evalsuite.speed.table import profile_csv, profile_table

    turns = tuple(Turn(k, 1000 * k, 1000 * (k - 1), 100.0 + k, 4000.0, 60.0 / k, 16, 16) for k in range(1, 5))
    sent = [Sent(0.5 * k, 0.001, True, 0.2 + 0.1 * k, 0.02, 1.0, 16, (0.02, 0.03)) for k in range(10)]
    points = (rate_point(1.0, sent, 5.0, Slo(ttft=0.5), sends=[0.5 * k for k in range(10)]),
              rate_point(math.inf, sent, 2.0, Slo(ttft=0.5), sends=[0.0] * 10))
    p = Profile("m", "http://x/v1", (), replay=Replay("synthetic", turns), load=LoadSweep(points, Slo(ttft=0.5)))
    back = Profile.from_dict(json.loads(json.dumps(p.to_dict())))
    assert back.replay.summary() == p.replay.summary() and back.load.knee is None
    assert p.replay.summary()["retention"] == pytest.approx(0.25) and p.replay.summary()["worst_turn"] == 4
    table = profile_table(back)
    assert "jitter (CV)" in table and "retention first to last 0.250" in table and "knee: none of the rates" in table
    assert profile_csv(back).splitlines()[0].startswith("model,rate (req/s)")
    page = build_page([back])
    assert "Replayed session" in page and "Load by arrival rate" in page and page.count("<img") == 2


def test_the_math_workload_runs_offline_on_the_packages_gsm8k(monkeypatch):
    """No data folder and no hub: GSM8K's file ships in the package, so the math prompts still have
    text (issue 41: the tour's speed step needs no download); with a data folder, a missing
    MATH-500 stays the usage error it was."""
    from pathlib import Path

    from evalsuite.speed import text

    real = text._load

    def no_hub(pack_name, data_dir, subsets=()):
        if pack_name == "math500":
            raise UsageError("the speed prompts read the math500 pack's data from the hub (no --data-dir), which failed")
        return real(pack_name, data_dir, subsets)

    monkeypatch.setattr(text, "_load", no_hub)
    corpus = text.math_corpus(None)
    assert len(corpus.passages) == len(corpus.tasks) == 1319 and "package's copy" in corpus.source
    with pytest.raises(UsageError):
        text.math_corpus(Path("/nonexistent-data-dir"))
