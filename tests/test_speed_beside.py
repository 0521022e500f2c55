"""Issue 36 item 3, speed beside accuracy: `lossless`/`diff` print the candidate's decode speed-up
measured on the same requests next to the verdict, `compare` and `report` of pack runs show
decode t/s, TTFT and time per correct answer per run with the paired speed-up against the first,
and `sweep --speed` puts a speed profile's figures in the sweep's table. Against the paced fake
server (tests/paced_server.py), whose programmed rates must come back within 10 %."""
from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest
from runfactory import make_run, rec

from evalsuite.analysis.compare.tables import compare_main
from evalsuite.analysis.report import report_main

N = 12
TOKENS = 24          # every request generates exactly this many (the paced server ignores eos)


@pytest.fixture()
def server(paced_servers):
    return paced_servers   # tests/conftest.py: paced fakes, each stopped after the test


def lossless(run_cli, tmp_path, data_dir, base, cand, name, *extra):
    out = tmp_path / f"{name}.json"
    html = tmp_path / name / "diff.html"
    proc = run_cli("lossless", "gsm8k", "--baseline-endpoint", base.url, "--candidate-endpoint", cand.url,
                   "--limit", N, "--max-tokens", TOKENS, "--data-dir", data_dir, "--run-dir", tmp_path / name,
                   "--json", out, "--html", html, "--quiet", *extra)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.stdout, html.read_text(encoding="utf-8")


def speed_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("speed: "))


def test_lossless_reads_a_planted_2x_decode_speedup_and_the_candidates_acceptance(run_cli, tmp_path, data_dir, server):
    # 23 tokens after the first at 40 t/s: a 0.55 s decode span, so a late wake-up of tens of ms stays inside 10 %
    base = server(prefill_rate=20000, decode_rate=40)
    cand = server(prefill_rate=20000, decode_rate=80, spec=(4, 2.5))     # acceptance (2.5 - 1) / 4 = 0.375
    data, stdout, page = lossless(run_cli, tmp_path, data_dir, base, cand, "fast")
    assert data["counts"]["identical"] == N, data["counts"]      # the same words on both: the verdict is "identical"
    speed = data["speed"]
    d = speed["decode_speedup"]
    print(speed["summary"])
    assert speed["decode_source"] == "stream" and d["n_items"] == N
    assert 1.8 <= d["ratio"] <= 2.2, d
    assert d["ci"][0] <= d["ratio"] <= d["ci"][1] and d["ci"][0] > 1.5, d
    assert abs(speed["baseline_decode_median"] - 40) <= 4 and abs(speed["candidate_decode_median"] - 80) <= 8, speed
    # the counters' acceptance: drafts = ceil(24 / 2.5) = 10 a request, 40 drafted, 14 accepted
    acc = speed["acceptance"]
    assert acc["source"] == "metrics" and acc["drafted"] == N * 40 and acc["accepted"] == N * 14, acc
    assert acc["rate"] == pytest.approx(14 / 40)
    line = speed_line(stdout)
    assert re.search(r"speed: decode (1\.[89]\d|2\.[0-2]\d)x \(\d\.\d\d–\d\.\d\d, 95%\) candidate vs baseline on the "
                     rf"{N} items both answered", line), line
    assert "acceptance 0.35 (168 of 480 drafted, /metrics counters)" in line, line
    # the verdict's counts line is printed just above it
    lines = stdout.splitlines()
    assert lines.index(line) == 1 + next(i for i, x in enumerate(lines) if f"{N} identical" in x)
    assert "Speed beside the verdict:</b> speed: decode" in page

    # the same two runs through compare and report: decode t/s per run, TTFT, the paired speed-up
    runs = [tmp_path / "fast" / "baseline", tmp_path / "fast" / "candidate"]
    out = io.StringIO()
    assert compare_main(runs, out=out, json_path=tmp_path / "c.json") == 0
    c = json.loads((tmp_path / "c.json").read_text())
    medians = [r["tokens"]["decode_median"] for r in c["runs"]]
    assert abs(medians[0] - 40) <= 4 and abs(medians[1] - 80) <= 8, medians
    assert c["speed"][0]["decode_speed"]["ratio"] == pytest.approx(d["ratio"])
    text = out.getvalue()
    row = next(x for x in text.splitlines() if x.startswith("candidate ") and "×" in x and "[" in x)
    assert f"×{d['ratio']:.2f} [" in row, row
    assert report_main(runs, tmp_path / "r.html", out=io.StringIO()) == 0
    assert "Speed, from the records" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_identical_rates_read_about_1x_with_an_interval_that_covers_1(run_cli, tmp_path, data_dir, server):
    # each request's rate is off by up to ±25 %, differently on the two servers (other seeds):
    # the paired ratio must not call that noise a speed-up
    # 30 t/s: 0.6-1 s decode spans, so that a late wake-up of a loaded machine stays far below the jitter
    base = server(prefill_rate=20000, decode_rate=30, decode_jitter=0.25, jitter_seed=1)
    cand = server(prefill_rate=20000, decode_rate=30, decode_jitter=0.25, jitter_seed=2)
    data, stdout, _ = lossless(run_cli, tmp_path, data_dir, base, cand, "same")
    d = data["speed"]["decode_speedup"]
    print(data["speed"]["summary"])
    assert 0.9 <= d["ratio"] <= 1.1, d
    assert d["ci"][0] < 1 < d["ci"][1] and not d["significant"], d
    assert data["speed"]["acceptance"] is None
    assert "acceptance: none recorded" in speed_line(stdout)


def test_unstreamed_runs_read_the_servers_own_timings_and_without_them_say_so(run_cli, tmp_path, data_dir, server):
    # --no-stream (as llama-server's lossless check is run): no first-token time in the records
    base = server(prefill_rate=20000, decode_rate=40, timings=True)
    cand = server(prefill_rate=20000, decode_rate=80, timings=True)
    data, stdout, _ = lossless(run_cli, tmp_path, data_dir, base, cand, "timed", "--no-stream")
    speed = data["speed"]
    assert speed["decode_source"] == "server", speed
    assert 1.8 <= speed["decode_speedup"]["ratio"] <= 2.2, speed
    assert "predicted_n ÷ predicted_ms" in speed["decode_definition"]

    bare_base = server(prefill_rate=20000, decode_rate=40)
    bare_cand = server(prefill_rate=20000, decode_rate=80)
    data, stdout, page = lossless(run_cli, tmp_path, data_dir, bare_base, bare_cand, "bare", "--no-stream")
    line = speed_line(stdout)
    assert line.startswith("speed: no decode timings in the records (unstreamed, and the server sent no timings): "
                           "no speed-up"), line
    assert not re.search(r"\d\.\d\dx", line), line
    assert data["speed"]["decode_speedup"] is None and data["speed"]["decode_source"] is None


# ---------------------------------------------------------------------------- compare of pack runs


def test_compare_gives_time_per_correct_answer_ttft_and_decode_per_run(tmp_path):
    """Planted records: time per correct = Σ time per item ÷ correct answers, TTFT p50 the median
    ttft_s, decode the median of (tokens − 1) ÷ (total − ttft) per request."""
    def run(path, label, ttft, total, tokens, outcomes):
        return make_run(path, "gsm8k", [rec(f"main/{i}", o, ttft_s=t0, total_s=t1, completion_tokens=n)
                                        for i, (t0, t1, n, o) in enumerate(zip(ttft, total, tokens, outcomes))],
                        label=label)

    a = run(tmp_path / "a", "A", [0.1, 0.3, 0.2, 0.4], [2.1, 4.3, 3.2, 2.4], [41, 81, 61, 41],
            ["correct", "correct", "wrong", "error"])
    b = run(tmp_path / "b", "B", [0.1, 0.1, 0.1, 0.1], [1.1, 2.1, 1.6, 1.1], [41, 81, 61, 41],
            ["correct", "wrong", "wrong", "correct"])
    out = io.StringIO()
    assert compare_main([a, b], out=out, json_path=tmp_path / "c.json") == 0
    c = json.loads((tmp_path / "c.json").read_text())
    ra, rb = c["runs"]
    assert ra["time_per_correct"] == pytest.approx((2.1 + 4.3 + 3.2) / 2)      # the error's time left out
    assert rb["time_per_correct"] == pytest.approx((1.1 + 2.1 + 1.6 + 1.1) / 2)
    assert ra["tokens"]["ttft_median"] == pytest.approx(0.2)
    assert ra["tokens"]["decode_median"] == pytest.approx(20.0)                # 40/2, 80/4, 60/3
    assert rb["tokens"]["decode_median"] == pytest.approx(40.0)
    text = out.getvalue()
    head = text.index("Speed, from the records")
    assert head < text.index("Verdict: ")
    table = text[head:].splitlines()
    assert table[1].split() == ["run", "TTFT", "p50", "(s)", "decode", "t/s", "(median)", "time/correct", "(s)",
                                "decode", "vs", "first", "(95%", "CI)", "time/item", "vs", "first", "(95%", "CI)"]
    row_b = next(x for x in table if x.startswith("B "))
    assert "2.95" in row_b.split() and "×2.00" in row_b, row_b           # 5.9 s / 2 correct; 40 ÷ 20 on 3 items


def test_compare_without_decode_timings_says_so(tmp_path):
    a = make_run(tmp_path / "a", "gsm8k", [rec(f"main/{i}", ttft_s=None) for i in range(3)], label="A")
    b = make_run(tmp_path / "b", "gsm8k", [rec(f"main/{i}", ttft_s=None) for i in range(3)], label="B")
    out = io.StringIO()
    assert compare_main([a, b], out=out) == 0
    assert "decode t/s: no decode timings in the records" in out.getvalue()


# ---------------------------------------------------------------------------- sweep --speed


PACED = f"{sys.executable} {Path(__file__).resolve().parent / 'paced_server.py'}"


def test_sweep_speed_puts_each_settings_profile_in_the_table_and_a_failed_one_marks_its_row(run_cli, tmp_path,
                                                                                           data_dir):
    # three settings of one managed server: decode 40, a context too small for the profile's prompt, decode 80
    settings = tmp_path / "s.toml"
    settings.write_text('[[setting]]\nrate = "40"\nctx = "8192"\nlabel = "slow"\n'
                        '[[setting]]\nrate = "80"\nctx = "450"\nlabel = "short"\n'
                        '[[setting]]\nrate = "80"\nctx = "8192"\nlabel = "fast"\n', encoding="utf-8")
    root = tmp_path / "sweep"
    proc = run_cli("sweep", "gsm8k", "--serve", PACED + " --port {port} --decode-rate {rate} --context {ctx} "
                   "--prefill-rate 4000", "--settings", settings, "--run-dir", root, "--speed", "--speed-pp", 512,
                   "--speed-tg", 24, "--speed-runs", 2, "--limit", 4, "--max-tokens", 8, "--data-dir", data_dir,
                   "--quiet", timeout=600)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    out = proc.stdout
    print(out[out.index("Speed profile per setting"):])
    table = out[out.index("Speed profile per setting"):].splitlines()
    header = table[1].split("  ")
    assert [h.strip() for h in header if h.strip()][:8] == ["setting", "accuracy", "Δ vs first", "decode t/s (runs)",
                                                           "tg t/s", "pp t/s", "TTFT (ms)", "acceptance"], header
    data = json.loads((root / "speed.json").read_text())
    rows = {r["label"]: r for r in data["settings"]}
    assert abs(rows["slow"]["tg"] - 40) <= 4 and abs(rows["fast"]["tg"] - 80) <= 8, rows
    assert abs(rows["slow"]["pp"] - 4000) <= 400, rows
    assert rows["slow"]["acceptance"] == "the server exposes no counters", rows
    # the short context refuses the profile's 512-token prompt: its row says so, the sweep went on
    assert rows["short"]["tg"] is None and "maximum context length" in rows["short"]["failed"], rows
    assert (root / "02-short" / "manifest.json").exists() and (root / "03-fast.speed.json").exists()
    row = next(x for x in table if x.startswith("short "))
    assert "speed profile failed" in row, row
    assert (root / "01-slow.speed.json").exists()
    # continued: a finished profile measured as asked is kept; other sizes measure it again
    profile = root / "01-slow.speed.json"
    first = profile.stat().st_mtime_ns
    again = [*proc.args[3:]]
    proc = run_cli(*again, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert profile.stat().st_mtime_ns == first
    proc = run_cli(*[("3" if a == "2" and again[i - 1] == "--speed-runs" else a) for i, a in enumerate(again)],
                   timeout=600)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert profile.stat().st_mtime_ns != first and json.loads(profile.read_text())["settings"]["runs"] == 3


def test_sweep_speed_refuses_a_bad_size_before_any_run(run_cli, tmp_path):
    proc = run_cli("sweep", "gsm8k", "--serve", PACED + " --port {port} --decode-rate {rate}", "--set", "rate=40",
                   "--run-dir", tmp_path / "sweep", "--speed", "--speed-depth", "-1")
    assert proc.returncode == 2 and "--speed-depth -1: a speed-depth cannot be negative" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "sweep").exists()
