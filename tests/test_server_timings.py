"""compare's time-to-solution from the server's own timings (llama-server `timings`) when every
run has them; the client's latency otherwise, for every run alike."""
from __future__ import annotations

from runfactory import make_run, rec

from evalsuite.analysis.compare.comparison import compare_runs
from evalsuite.analysis.run_stats import server_seconds
from evalsuite.analysis.compare.tables import format_comparison
from evalsuite.store import load_run


def _records(server: bool, latency: float):
    out = []
    for n in range(4):
        r = rec(f"main/{n}", "correct")
        r["timing"] = dict(r.get("timing") or {}, total_s=latency, ttft_s=0.1)
        r["server_timings"] = {"prompt_ms": 100.0, "predicted_ms": 400.0, "predicted_n": 40} if server else None
        out.append(r)
    return out


def test_server_seconds_reads_llama_server_timings_only_when_whole():
    assert server_seconds({"server_timings": {"prompt_ms": 100.0, "predicted_ms": 400.0}}) == 0.5
    assert server_seconds({"server_timings": {"predicted_ms": 400.0}}) is None
    assert server_seconds({"server_timings": None}) is None
    assert server_seconds({"server_timings": {"prompt_ms": True, "predicted_ms": 1}}) is None


def test_time_to_solution_comes_from_the_server_when_every_run_has_it(tmp_path):
    a = load_run(make_run(tmp_path / "a", "gsm8k", records=_records(True, 3.0)))
    b = load_run(make_run(tmp_path / "b", "gsm8k", records=_records(True, 9.0)))
    cmp = compare_runs([a, b])
    assert [r.tokens.tts_source for r in cmp.runs] == ["server", "server"]
    assert cmp.runs[0].tokens.tts_mean == cmp.runs[1].tokens.tts_mean == 0.5   # queueing does not count
    assert "the server's own timings" in format_comparison(cmp)


def test_runs_timed_differently_are_all_timed_by_the_client(tmp_path):
    a = load_run(make_run(tmp_path / "a", "gsm8k", records=_records(True, 3.0)))
    b = load_run(make_run(tmp_path / "b", "gsm8k", records=_records(False, 9.0)))
    cmp = compare_runs([a, b])
    assert [r.tokens.tts_source for r in cmp.runs] == ["client", "client"]
    assert cmp.runs[0].tokens.tts_mean == 3.0 and cmp.runs[1].tokens.tts_mean == 9.0


def test_llama_cpp_python_cut_streams_get_the_interrupt_hint():
    from evalsuite.run.runner import interrupt_hint

    engine = {"endpoints": [{"engine": "llama-cpp-python"}]}
    hint = interrupt_hint(engine, {"errors_by_kind": {"stream_broken": 5}}, 4)
    assert hint and "--interrupt_requests false" in hint and "--concurrency 1" in hint and hint.startswith("5 ")
    assert interrupt_hint(engine, {"errors_by_kind": {"stream_broken": 5}}, 1) is None
    assert interrupt_hint(engine, {"errors_by_kind": {"timeout": 5}}, 4) is None
    assert interrupt_hint({"endpoints": [{"engine": "vllm"}]}, {"errors_by_kind": {"stream_broken": 5}}, 4) is None
