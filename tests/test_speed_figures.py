"""Issue 44 #4: figures that cannot blow up. Each test here failed on the code before it (found
by reading it): a prefill rate from a TTFT about the round trip, a decode rate from one clump,
an acceptance length from two sources, a soak averaging a dead server's windows as zero and
dropping a cut request's tokens, a burst note only at 1.5 tokens a chunk, the aggregate at c > 1
named decode while it holds the prefills, and two "decode" columns with two definitions."""
from __future__ import annotations

import asyncio
import io
import json
from array import array

import pytest
from runfactory import make_run, rec

from evalsuite.speed.endpoint import Counters, Sample, SpeedEndpoint
from evalsuite.speed.figures import aggregate, aggregate_decode, acceptance_of, prefill_rate, rows_of
from evalsuite.speed.measure import BenchTest, Measured
from evalsuite.speed.rows import Row
from evalsuite.speed.settings import SpeedSettings
from evalsuite.speed.text import corpus


def timed(started=0.0, ttft=0.1, span=0.5, tokens=9, chunks=None, prompt=100, cached=0, **kw):
    chunks = chunks or tokens
    times = array("d", [ttft + span * k / max(1, chunks - 1) for k in range(chunks)])
    return Sample(started=started, total=ttft + span + 0.001, ttfr=ttft, ttft=ttft, last=ttft + span, chunks=chunks,
                  prompt_tokens=prompt, completion_tokens=tokens, cached_tokens=cached, token_times=times,
                  token_chars=array("l", [3] * chunks), **kw)


def rows(samples, c=1, latency=0.0, **kw):
    test = BenchTest("math", 128, 32, 0, c, max(1, len(samples) // c))
    return rows_of(Measured(test, samples=list(samples), started=0.0, stream_ends=[10.0] * c, **kw), latency)


def test_a_prefill_about_the_round_trip_is_below_the_floor_not_a_rate_of_millions():
    # TTFT 20.5 ms with a round trip of 20 ms: 0.5 ms of "prefill" was 1.6 million t/s
    near = timed(ttft=0.0205, prompt=800)
    under = timed(ttft=0.0150, prompt=800)     # a TTFT under the round trip: a negative prefill
    fine = timed(ttft=0.2200, prompt=800)
    assert prefill_rate(near, 0.02) is None and prefill_rate(under, 0.02) is None
    pp, _ = rows([near, under, fine], latency=0.02)
    assert pp.figure.values == (pytest.approx(800 / 0.2),)
    assert pp.below_floor == 2 and any("2 prefill(s) below the floor" in n for n in pp.notes)
    assert pp.prefill_ms == pytest.approx(200.0)          # never negative: the spans below the floor left out


def test_a_decode_read_in_one_clump_is_flagged_and_left_out_of_the_mean():
    # docs/speed.md's vLLM rounds: 417, 7,111 and 532 t/s over 31 tokens, the middle one read in a clump
    clumped = [timed(tokens=32, span=31 / r) for r in (417, 7111, 532)]
    _, tg = rows(clumped)
    assert sorted(tg.figure.values) == [pytest.approx(417), pytest.approx(532)]
    assert tg.below_floor == 1 and tg.figure.mean == pytest.approx((417 + 532) / 2)
    assert tg.figure.median == pytest.approx((417 + 532) / 2)


def test_each_figure_has_its_median_and_p10_p90_beside_mean_and_std():
    _, tg = rows([timed(tokens=9, span=8 / r) for r in (10, 20, 30, 40, 50)])
    d = tg.to_dict()
    assert d["median"] == pytest.approx(30) and d["p10"] == pytest.approx(14) and d["p90"] == pytest.approx(46)
    assert Row.from_dict(d).figure.median == pytest.approx(30)
    from evalsuite.speed.rows import Profile
    from evalsuite.speed.table import profile_table

    table = profile_table(Profile("m", "http://x/v1", (tg,)))
    assert "30.00 [14.00, 46.00]" in table and "median [p10, p90]" in table


def test_acceptance_length_takes_every_figure_from_the_counters_not_the_clients_usage():
    # our 100 tokens; meanwhile the server-wide counters moved by other traffic too: 99 accepted
    # (tokens / (tokens - accepted) read 100 tokens a step); vLLM counts the drafting steps
    before = Counters(drafted=0.0, accepted=0.0, drafts=0.0, generated=0.0)
    after = Counters(drafted=400.0, accepted=99.0, drafts=100.0, generated=199.0)
    test = BenchTest("math", 128, 100, 0, 1, 1)
    result = Measured(test, samples=[timed(tokens=100)], before=before, after=after)
    acceptance, why = acceptance_of(result)
    assert acceptance.mean_length == pytest.approx(1.99) and acceptance.rate == pytest.approx(99 / 400)
    assert acceptance.drafts == 100 and acceptance.tokens == 199 and why is None
    # without a count of steps: the engine's generated tokens, the same source as the accepted
    no_steps = Measured(test, samples=[timed(tokens=100)], before=Counters(0.0, 0.0, None, 0.0),
                        after=Counters(400.0, 99.0, None, 199.0))
    assert acceptance_of(no_steps)[0].mean_length == pytest.approx(199 / 100)
    # and neither: no length rather than one from two sources
    bare = Measured(test, samples=[timed(tokens=100)], before=Counters(0.0, 0.0, None), after=Counters(400.0, 99.0, None))
    assert acceptance_of(bare)[0].mean_length is None and acceptance_of(bare)[0].rate == pytest.approx(99 / 400)


def test_usage_shared_out_over_chunks_is_said_at_any_share_not_only_at_one_and_a_half():
    burst = timed(tokens=12, chunks=10)            # 1.2 tokens a chunk
    _, tg = rows([burst, timed()])
    assert any(n.startswith("tokens came in bursts in 1 of 2 request(s) (1.20 a chunk)") for n in tg.notes), tg.notes


def test_prefill_counts_come_from_one_source():
    # usage says 1,000 prompt tokens but no cached ones; llama-server's timings say 250 processed, 700 from cache
    s = timed(ttft=0.1, prompt=1000, cached=700, cached_source="timings",
              timings={"prompt_n": 250, "cache_n": 700, "prompt_ms": 100.0})
    assert prefill_rate(s, 0.0) == pytest.approx(2500)


def test_the_aggregate_decode_and_the_throughput_with_prefill_are_two_figures():
    # two streams, each: 1 s of prefill, then 40 t/s for 1 s; the second starts 0.5 s later
    samples = []
    for stream, offset in ((0, 0.0), (1, 0.5)):
        for k in range(3):
            samples.append(timed(started=offset + 2.0 * k, ttft=1.0, span=1.0, tokens=41))
    decode = aggregate_decode(samples, 0.0, 6.0, 3)
    throughput = aggregate(samples, 0.0, 6.0, 3)
    # while both decode: 80 t/s; each alone 40: 40 tokens/s per stream over the union of their spans
    assert 50 < decode.mean < 70, decode
    assert throughput.mean == pytest.approx(41 * 6 / 6.0, rel=0.15), throughput
    _, tg = rows(samples, c=2)
    assert tg.aggregate_decode is not None and tg.aggregate is not None
    from evalsuite.speed.table import profile_headers
    from evalsuite.speed.rows import Profile

    headers = profile_headers(Profile("m", "x", (tg,)))
    assert "agg decode t/s" in headers and "throughput t/s" in headers and "aggregate t/s" not in headers


def test_compare_of_run_folders_has_one_definition_per_name(tmp_path):
    from evalsuite.analysis.compare.tables import compare_main

    runs = []
    for name, rate in (("a", 40.0), ("b", 80.0)):
        records = [rec(f"main/{i}", "correct", total_s=0.1 + 99 / rate, ttft_s=0.1, completion_tokens=100)
                   for i in range(10)]
        runs.append(make_run(tmp_path / name, "gsm8k", records, label=name))
    out = io.StringIO()
    assert compare_main(runs, out=out) == 0
    headers = [h.strip() for line in out.getvalue().splitlines() if line.startswith("run ")
               for h in line.split("  ") if "decode" in h]
    assert headers and set(headers) <= {"decode t/s (median)", "decode vs first (95% CI)"}, headers


@pytest.fixture()
def soak_server(paced_servers):
    return paced_servers   # tests/conftest.py: paced fakes, each stopped after the test


def soak(url, data_dir, **kw):
    from evalsuite.speed.profiling import run_soak

    async def go():
        endpoint = SpeedEndpoint(url, None, 30.0)
        try:
            settings = SpeedSettings(endpoint=url, concurrency=(1,), data_dir=data_dir, **kw)
            return await run_soak(endpoint, settings, "paced", corpus("math", data_dir), lambda line: None)
        finally:
            await endpoint.close()

    return asyncio.run(go())


def test_a_soak_counts_a_cut_requests_tokens_and_says_no_usage_instead_of_zero(soak_server, data_dir):
    s = soak_server(decode_rate=40, latency=0.0)
    # each request would last 10 s: all of the soak's 2 s is one cut request; its tokens were dropped
    cut = soak(s.url, data_dir, tg=(400,), duration_s=2.0)
    assert cut.cut == 1 and cut.requests == 0
    # chunks counted at the finished requests' tokens per chunk: none finished, so no rate, said
    assert any("no rate" in n or "no usage" in n for n in cut.notes) or cut.aggregate.mean is not None
    s2 = soak_server(decode_rate=40, latency=0.0, usage=False)
    blind = soak(s2.url, data_dir, tg=(8,), duration_s=2.0)
    assert blind.aggregate.mean is None and all(v is None for _, v in blind.series), blind.series
    assert any("no usage" in n for n in blind.notes)
    # a soak whose requests finish and one cut at the end: the cut one's chunks are counted
    s3 = soak_server(decode_rate=40, latency=0.0)
    mixed = soak(s3.url, data_dir, tg=(30,), duration_s=2.0)
    assert mixed.cut == 1 and mixed.requests >= 1
    assert mixed.aggregate.mean == pytest.approx(40, rel=0.2), mixed.series


def test_soak_windows_with_the_server_down_are_gaps_not_zeros(soak_server, data_dir):
    s = soak_server(decode_rate=40, latency=0.0, die_after=4)
    down = soak(s.url, data_dir, tg=(8,), duration_s=3.0)
    values = [v for _, v in down.series]
    assert down.failed >= 1 and None in values, down.series
    assert down.down_windows >= 1 and all(v is None or v > 0 for v in values)
    # the mean is over the windows the server was up: about its rate, not diluted by the dead ones
    assert down.aggregate.mean > 20, down.series
    from evalsuite.speed.rows import Profile
    from evalsuite.speed.table import soak_text

    assert "with the server down (gaps)" in soak_text(Profile("m", "x", (), soak=down))
    assert json.loads(json.dumps(down.to_dict()))["down_windows"] == down.down_windows
