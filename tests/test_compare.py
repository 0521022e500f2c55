"""compare: Wilson and exact McNemar (checked against scipy), item alignment, per-subset
deltas, the reasoning-length table, the IQ3_XXS-vs-IQ3_S story, sweeps, plots."""
from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
import scipy.special
import scipy.stats as scipy_stats

from runfactory import make_run, paired_outcomes, rec, runs_from_outcomes

from evalsuite.analysis import stats
from evalsuite.analysis.compare.comparison import (
    CompareError,
    compare_runs,
    load_runs,
)
from evalsuite.analysis.compare.sweep import lookup, sweep
from evalsuite.analysis.run_stats import DERIVED_HOW
from evalsuite.analysis.compare.tables import compare_main


def run_compare(paths, **kw) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = compare_main(paths, out=out, err=err, **kw)
    return code, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------------------- statistics


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (66, 100), (1, 1), (500, 1000), (7, 13)])
def test_wilson_matches_scipy(k, n):
    z = scipy_stats.norm.ppf(0.975)
    expected = scipy_stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    lo, hi = stats.wilson(k, n, z=z)
    assert lo == pytest.approx(expected.low, abs=1e-12)
    assert hi == pytest.approx(expected.high, abs=1e-12)


def test_wilson_edges():
    assert stats.wilson(0, 0) == (0.0, 1.0)
    lo, hi = stats.wilson(50, 100)
    assert lo < 0.5 < hi and hi - lo == pytest.approx(
        2 * 1.96 * math.sqrt(0.25 / 100 + 1.96**2 / 40000) / (1 + 1.96**2 / 100), rel=1e-9)
    with pytest.raises(ValueError):
        stats.wilson(5, 4)


def test_exact_binomial_p_matches_scipy_everywhere_small_and_some_large():
    for n in range(0, 41):
        for k in range(0, n + 1):
            expected = scipy_stats.binomtest(k, n, 0.5).pvalue if n else 1.0
            assert stats.binomial_two_sided_p(k, n) == pytest.approx(expected, rel=1e-9, abs=1e-300), (k, n)
    for k, n in [(32, 66), (150, 400), (10, 400), (0, 1000), (499, 1000)]:
        assert stats.binomial_two_sided_p(k, n) == pytest.approx(scipy_stats.binomtest(k, n, 0.5).pvalue, rel=1e-9)


def test_percentile_matches_numpy():
    values = [5, 1, 9, 3, 3, 12, 40, 7]
    for q in (0, 10, 50, 90, 100):
        assert stats.percentile(values, q) == pytest.approx(float(np.percentile(values, q)))
    assert stats.percentile([], 50) is None


# ---------------------------------------------------------------------------- accuracy and McNemar


@pytest.mark.parametrize("df", [1, 1.5, 2, 2.5, 3, 4, 7, 10, 29, 99, 499, 1318, 2999, 3000, 12_000, 10**6])
def test_t_quantile_matches_scipy(df):
    special = scipy.special
    for q in (1e-12, 1e-6, 0.001, 0.025, 0.1, 0.3, 0.7, 0.7499, 0.75, 0.9, 0.95, 0.975, 0.99, 0.9999, 1 - 1e-9):
        assert stats.t_quantile(df, q) == pytest.approx(float(special.stdtrit(df, q)), rel=1e-9), (df, q)
    # near the middle scipy's stdtrit loses digits: there t = (q - 1/2) / f(0) to O(t^3), f the density
    density_at_0 = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    for q in (0.5 + 1e-7, 0.5 - 1e-7):
        assert stats.t_quantile(df, q) == pytest.approx((q - 0.5) / density_at_0, rel=1e-9), (df, q)
    assert stats.t_quantile(df, 0.5) == 0.0
    assert stats.t_quantile(df, 0.25) == -stats.t_quantile(df, 0.75)   # both exact in binary


def test_t_quantile_refuses_what_has_no_quantile():
    for df, q in ((5, 0.0), (5, 1.0), (5, -0.1), (0, 0.9), (-1, 0.9), (float("nan"), 0.9)):
        with pytest.raises(ValueError):
            stats.t_quantile(df, q)


def test_symmetric_disagreements_are_noise(tmp_path):
    # The users' lesson: 32 vs 34 discordant pairs is a coin flip, whatever the accuracies say.
    a, b = paired_outcomes(both_right=100, a_only=32, b_only=34, both_wrong=34)
    paths = runs_from_outcomes(tmp_path, {"engineA": a, "engineB": b})
    cmp = compare_runs(load_runs(paths))
    pair = cmp.pairs[0]
    assert (pair.mcnemar.b, pair.mcnemar.c, pair.mcnemar.n_pairs) == (32, 34, 200)
    assert pair.mcnemar.p == pytest.approx(scipy_stats.binomtest(32, 66, 0.5).pvalue, rel=1e-12)
    assert cmp.runs[0].accuracy == pytest.approx(132 / 200)
    assert cmp.runs[1].accuracy == pytest.approx(134 / 200)
    assert pair.delta_pp == pytest.approx(1.0)
    assert "no detectable difference" in cmp.verdict()
    assert "time per item" not in cmp.verdict()        # same speed and length: no words about speed
    code, text, _ = run_compare(paths)
    assert code == 0
    assert "same items: 200" in text
    assert f"{pair.mcnemar.p:.3g}" in text and " 32 " in text and " 34 " in text
    lo, hi = stats.wilson(132, 200)
    assert f"[{100 * lo:.1f}, {100 * hi:.1f}]" in text
    assert "Verdict: engineB vs engineA: no detectable difference" in text


def test_significant_drop_is_called_worse_and_each_run_is_tested_against_the_first(tmp_path):
    a, b = paired_outcomes(both_right=50, a_only=20, b_only=4, both_wrong=26)
    c = list(a)
    c[0:3] = ["wrong"] * 3          # 3 items base got right, this run wrong
    c[74:91] = ["correct"] * 17     # 17 items base got wrong, this run right
    paths = runs_from_outcomes(tmp_path, {"base": a, "worse": b, "better": c})
    cmp = compare_runs(load_runs(paths))
    worse, better = cmp.pairs
    assert (worse.mcnemar.b, worse.mcnemar.c) == (20, 4)
    assert worse.mcnemar.p == pytest.approx(scipy_stats.binomtest(20, 24).pvalue, rel=1e-12)
    # run C against the first run A, not against B
    assert (better.mcnemar.b, better.mcnemar.c) == (3, 17)
    assert better.mcnemar.p == pytest.approx(scipy_stats.binomtest(better.mcnemar.b, better.mcnemar.discordant).pvalue)
    verdict = cmp.verdict()
    assert "worse is worse than base" in verdict and "better is better than base" in verdict
    assert "\n" not in verdict


def test_errors_leave_accuracy_and_pairs_and_are_counted(tmp_path):
    a = ["correct"] * 8 + ["error", "wrong"]
    b = ["correct"] * 6 + ["wrong", "error", "correct", "error"]
    paths = runs_from_outcomes(tmp_path, {"a": a, "b": b})
    cmp = compare_runs(load_runs(paths))
    ra, rb = cmp.runs
    assert (ra.n_errors, ra.accuracy) == (1, pytest.approx(8 / 9))       # correct / (items − errors)
    assert (rb.n_errors, rb.accuracy) == (2, pytest.approx(7 / 8))
    pair = cmp.pairs[0]
    assert pair.errors_excluded == 3                                     # ids 7, 8, 9
    assert pair.mcnemar.n_pairs == 7
    assert (pair.mcnemar.b, pair.mcnemar.c) == (1, 0)                    # id 6
    _, text, _ = run_compare(paths)
    assert "errors excl." in text


def test_runs_with_no_answered_item_in_common_say_nothing_can_be_compared(tmp_path):
    paths = runs_from_outcomes(tmp_path, {"down": ["error"] * 3, "up": ["correct"] * 3})
    cmp = compare_runs(load_runs(paths))
    assert cmp.runs[0].accuracy is None and cmp.runs[1].accuracy == 1.0
    assert cmp.pairs[0].mcnemar.n_pairs == 0 and cmp.pairs[0].errors_excluded == 3
    assert cmp.verdict() == "up vs down: nothing to compare (every item errored in one run or the other)"


def test_different_item_sets_compare_the_intersection_and_say_so(tmp_path):
    a = make_run(tmp_path / "a", records=[rec(f"main/{i}", "correct") for i in range(10)], label="a")
    b = make_run(tmp_path / "b", records=[rec(f"main/{i}", "wrong" if i < 7 else "correct") for i in range(5, 15)], label="b")
    cmp = compare_runs(load_runs([a, b]))
    assert cmp.alignment.ids == tuple(f"main/{i}" for i in range(5, 10))
    assert not cmp.alignment.same_items
    assert any("different item sets" in n for n in cmp.alignment.notes)
    assert (cmp.pairs[0].mcnemar.b, cmp.pairs[0].mcnemar.c) == (2, 0)
    code, text, _ = run_compare([a, b])
    assert code == 0 and "different item sets" in text and "comparing the 5 items all runs share" in text


def test_no_common_items_is_unusable(tmp_path):
    a = make_run(tmp_path / "a", records=[rec("main/0")])
    b = make_run(tmp_path / "b", records=[rec("main/1")])
    code, _, err = run_compare([a, b])
    assert code == 2 and "no items in common" in err
    code, _, err = run_compare([a, tmp_path / "missing"])
    assert code == 2 and "missing" in err


def test_per_subset_deltas(tmp_path):
    ra = [rec(f"alg/{i}", "correct") for i in range(4)] + [rec(f"geo/{i}", "correct") for i in range(4)]
    rb = [rec(f"alg/{i}", "correct") for i in range(4)] + [rec(f"geo/{i}", "wrong" if i < 3 else "correct") for i in range(4)]
    paths = [make_run(tmp_path / "a", records=ra, label="A"), make_run(tmp_path / "b", records=rb, label="B")]
    cmp = compare_runs(load_runs(paths))
    assert cmp.runs[1].subset("geo").accuracy == pytest.approx(0.25)
    assert cmp.runs[1].subset("alg").accuracy == 1.0
    _, text, _ = run_compare(paths)
    geo_line = next(line for line in text.splitlines() if line.startswith("geo "))
    assert "100.0%" in geo_line and "25.0%" in geo_line and "-75.0 pp" in geo_line
    alg_line = next(line for line in text.splitlines() if line.startswith("alg "))
    assert "+0.0 pp" in alg_line


# ---------------------------------------------------------------------------- reasoning length


def test_reasoning_length_figures(tmp_path):
    # five answered items and one error; tokens 100..500, reasoning from the server
    records = [
        rec(f"main/{i}", outcome, completion_tokens=tokens, reasoning_tokens=tokens // 2,
            ttft_s=ttft, total_s=total, finish_reason=("length" if outcome == "truncated" else None))
        for i, (outcome, tokens, ttft, total) in enumerate([
            ("correct", 100, 0.2, 2.2), ("correct", 200, 0.4, 4.4), ("wrong", 300, 0.3, 3.3),
            ("truncated", 500, 1.0, 11.0), ("correct", 400, 0.5, 8.5)])
    ] + [rec("main/5", "error", total_s=30.0)]
    path = make_run(tmp_path / "r", records=records, label="r")
    t = compare_runs(load_runs([path])).runs[0].tokens
    assert t.out_mean == pytest.approx(300)
    assert t.out_median == pytest.approx(300)
    assert t.out_p90 == pytest.approx(460)             # numpy: 400 + 0.6 × 100
    assert t.reasoning_source == "server"
    assert t.reasoning_mean == pytest.approx(150)
    assert t.thinking_share == pytest.approx(0.5)
    assert t.truncation_rate == pytest.approx(1 / 5)    # errors left out
    assert t.ttft_median == pytest.approx(0.4)
    assert t.decode_tps == pytest.approx(1500 / (2 + 4 + 3 + 10 + 8))
    assert t.tts_median == pytest.approx(4.4)
    assert t.tts_total == pytest.approx(2.2 + 4.4 + 3.3 + 11.0 + 8.5)   # the error's 30 s is not a solution
    assert t.correct_per_1k == pytest.approx(1000 * 3 / 1500)
    assert t.usage_missing == 0


def test_thinking_share_is_derived_from_text_when_the_server_gives_none(tmp_path):
    records = [rec("main/0", completion_tokens=1000, reasoning="r" * 640, answer="a" * 360),
               rec("main/1", completion_tokens=500, reasoning=None, answer="short answer")]
    path = make_run(tmp_path / "r", records=records, label="derived-run")
    cmp = compare_runs(load_runs([path]))
    t = cmp.runs[0].tokens
    assert t.reasoning_source == "derived" and t.reasoning_how == DERIVED_HOW
    assert t.thinking_share == pytest.approx(640 / 1500)
    code, text, _ = run_compare([path])
    assert "43% (derived)" in text and "derived-run: reasoning tokens: derived: completion_tokens" in text


def test_records_without_usage_are_left_out_not_estimated(tmp_path):
    records = [rec("main/0", completion_tokens=100), rec("main/1", completion_tokens=None)]
    path = make_run(tmp_path / "r", records=records, label="r")
    t = compare_runs(load_runs([path])).runs[0].tokens
    assert (t.n_with_usage, t.usage_missing, t.out_mean) == (1, 1, 100)
    _, text, _ = run_compare([path])
    assert "1 records without usage left out" in text


def test_faster_decode_but_more_tokens_is_slower_to_solve(tmp_path):
    """IQ3_XXS vs IQ3_S: 23% faster decode, 2.7× the tokens, 64% of them thinking."""
    ids = [f"main/{i}" for i in range(20)]
    outcomes = ["correct"] * 15 + ["wrong"] * 5
    s_records = [rec(i, o, completion_tokens=1000 + 10 * n, reasoning_tokens=(1000 + 10 * n) // 2,
                     ttft_s=0.5, total_s=0.5 + (1000 + 10 * n) / 100.0) for n, (i, o) in enumerate(zip(ids, outcomes))]
    xxs_records = [rec(i, o, completion_tokens=round(2.7 * (1000 + 10 * n)),
                       reasoning="t" * 64 * (n + 1), answer="a" * 36 * (n + 1),   # 64% of characters: thinking
                       ttft_s=0.5, total_s=0.5 + round(2.7 * (1000 + 10 * n)) / 123.0)
                   for n, (i, o) in enumerate(zip(ids, outcomes))]
    a = make_run(tmp_path / "s", "math500", s_records, label="IQ3_S")
    b = make_run(tmp_path / "xxs", "math500", xxs_records, label="IQ3_XXS")
    cmp = compare_runs(load_runs([a, b]))
    ts, txxs = cmp.runs[0].tokens, cmp.runs[1].tokens
    assert txxs.decode_tps / ts.decode_tps == pytest.approx(1.23, rel=1e-3)
    assert txxs.out_mean / ts.out_mean == pytest.approx(2.7, rel=1e-3)
    assert txxs.thinking_share == pytest.approx(0.64)
    assert txxs.reasoning_source == "derived"
    assert cmp.pairs[0].token_ratio_total == pytest.approx(2.7, rel=1e-3)
    assert cmp.pairs[0].both_correct_with_tokens == 15
    time, decode = cmp.speed[0]       # paired by item (issue 34 #5): geometric means of per-item ratios
    time_ratio = time.ratio
    assert time_ratio > 2.0 and time.significant          # slower to solve despite the faster decode
    assert decode.ratio == pytest.approx(1.23, rel=1e-3) and decode.significant
    assert txxs.tts_median > ts.tts_median and txxs.tts_total > ts.tts_total
    assert txxs.correct_per_1k < ts.correct_per_1k
    verdict = cmp.verdict()
    assert f"IQ3_XXS takes ×{time_ratio:.2f} [" in verdict and "the time per item of IQ3_S (slower, p=" in verdict
    assert ", although it decodes 23% faster (×1.23 [1.23, 1.23]" in verdict and "writes ×2.70 the tokens" in verdict
    _, text, _ = run_compare([a, b])
    # the reasoning table's row (the speed table's row above it starts with the name too)
    xxs_line = next(line for line in text.splitlines() if line.startswith("IQ3_XXS") and "(derived)" in line)
    assert f"×{time_ratio:.2f}" in xxs_line and "64% (derived)" in xxs_line and "×2.70 (median ×2.70, n=15)" in xxs_line
    # completion tokens per item over every paired item, right or wrong, with its interval (issue 41)
    tokens = cmp.tokens[0]
    assert tokens.n == 20 and tokens.ratio == pytest.approx(2.7, rel=1e-3) and tokens.significant
    assert tokens.interval() in xxs_line and cmp.to_dict()["tokens_per_item"][0]["ratio"]["n_items"] == 20


# ---------------------------------------------------------------------------- sweeps


def test_sweep_orders_runs_by_the_setting(tmp_path):
    paths = []
    for budget, acc in [(4096, 9), (512, 5), (1024, 7)]:
        records = [rec(f"main/{i}", "correct" if i < acc else "wrong", completion_tokens=budget // 4,
                       total_s=budget / 1000) for i in range(10)]
        paths.append(make_run(tmp_path / f"b{budget}", records=records, label=f"budget-{budget}",
                              decoding={"extra_body": {"thinking_budget": budget}}))
    sw, cmp = sweep(load_runs(paths), "thinking_budget")
    assert [r.value for r in sw.rows] == [512, 1024, 4096]
    assert [r.run.accuracy for r in sw.rows] == [0.5, 0.7, 0.9]
    assert [r.run.tokens.tts_mean for r in sw.rows] == pytest.approx([0.512, 1.024, 4.096])
    assert sw.also_differ == ()
    code, text, _ = run_compare(paths, sweep_key="thinking_budget")
    assert code == 0
    table = text[text.index("Sweep over thinking_budget"):].splitlines()
    assert [line.split()[0] for line in table[3:6]] == ["512", "1024", "4096"]
    assert "+20.0 pp" in table[4] and "+40.0 pp" in table[5]


def test_sweep_by_label_uses_natural_order_and_flags_other_differences(tmp_path):
    paths = [make_run(tmp_path / q, records=[rec("main/0")], label=q, decoding={"temperature": t})
             for q, t in [("Q8_0", 0.0), ("IQ3_XXS", 0.0), ("Q4_K_M", 0.7), ("IQ3_S", 0.0)]]
    sw, _ = sweep(load_runs(paths), "label")
    assert [r.value for r in sw.rows] == ["IQ3_S", "IQ3_XXS", "Q4_K_M", "Q8_0"]
    assert sw.also_differ == ("decoding.temperature",)
    code, _, err = run_compare(paths, sweep_key="thinking_budget")
    assert code == 2 and "thinking_budget" in err and "Q8_0" in err


def test_lookup_reads_manifest_then_decoding_then_extra_body():
    manifest = {"label": "x", "decoding": {"max_tokens": 5, "extra_body": {"speculative": {"n_max": 8}}}}
    assert lookup(manifest, "label") == "x"
    assert lookup(manifest, "max_tokens") == 5
    assert lookup(manifest, "decoding.max_tokens") == 5
    assert lookup(manifest, "speculative.n_max") == 8


# ---------------------------------------------------------------------------- plots and JSON


def test_plots_are_pngs_and_json_has_the_figures(tmp_path):
    a, b = paired_outcomes(both_right=6, a_only=2, b_only=1, both_wrong=1)
    paths = runs_from_outcomes(tmp_path, {"a": a, "b": b}, subsets=("alg", "geo"))
    code, text, _ = run_compare(paths, plots_dir=tmp_path / "plots", json_path=tmp_path / "cmp.json")
    assert code == 0
    pngs = sorted((tmp_path / "plots").glob("*.png"))
    assert [p.name for p in pngs] == ["accuracy_vs_tokens.png", "subset_accuracy.png", "token_distribution.png"]
    for p in pngs:
        data = p.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    data = json.loads((tmp_path / "cmp.json").read_text())
    assert data["pairs"][0]["mcnemar"]["b"] == 2 and data["pairs"][0]["mcnemar"]["c"] == 1
    assert data["runs"][0]["accuracy"] == pytest.approx(0.8)
    assert data["verdict"].startswith("b vs a: no detectable difference")


def test_compare_error_is_a_value_error():
    assert issubclass(CompareError, ValueError)


# ---------------------------------------------------------------------------- real server


@pytest.mark.llama
def test_two_real_runs_compare_gate_and_report(llama_server, data_dir, run_cli, tmp_path):
    """Runs from the llama.cpp test server: the same greedy settings twice give the same
    outcomes, so McNemar sees no discordant pair, and the token figures are the server's."""
    from conftest import EXTRA_BODY

    runs = []
    for label in ("first", "second"):
        run_dir = tmp_path / label
        r = run_cli("run", "gsm8k", "--endpoint", llama_server.url, "--data-dir", data_dir, "--limit", 6,
                    "--no-stream", "--extra-body", json.dumps(EXTRA_BODY), "--max-tokens", "24", "--quiet",
                    "--run-dir", run_dir, "--label", label)
        assert r.returncode == 0, r.stderr
        runs.append(run_dir)
    cmp = compare_runs(load_runs(runs))
    assert cmp.alignment.same_items and len(cmp.alignment.ids) == 6
    pair = cmp.pairs[0]
    assert (pair.mcnemar.b, pair.mcnemar.c, pair.mcnemar.p) == (0, 0, 1.0)
    records = [json.loads(line) for line in (runs[0] / "records.jsonl").read_text().splitlines()]
    tokens = [r["usage"]["completion_tokens"] for r in records]
    assert all(isinstance(t, int) and t > 0 for t in tokens)   # the server's usage (--no-stream)
    assert cmp.runs[0].tokens.out_mean == pytest.approx(sum(tokens) / 6)
    assert cmp.runs[0].tokens.out_total == sum(tokens)
    assert cmp.runs[0].n_correct == sum(r["outcome"] == "correct" for r in records)
    gate = run_cli("gate", "--baseline", runs[0], "--candidate", runs[1], "--max-drop", "0", cwd=tmp_path)
    assert gate.returncode == 0 and gate.stdout.startswith("PASS: ") and "b=0 c=0 p=1" in gate.stdout
    report = run_cli("report", *runs, "--html", tmp_path / "r.html")
    assert report.returncode == 0, report.stderr
    assert "only first right 0, only second right 0" in (tmp_path / "r.html").read_text()


@pytest.mark.parametrize("n", [6000, 11582, 100_000])
def test_exact_binomial_p_is_linear_and_matches_scipy_at_full_size(n):
    # a full CMMLU run pairs 11,582 items: the exact test must stay exact there, and fast
    for k in (0, 1, n // 10, n // 2 - 150, n // 2 - 3, n // 2, n - 7):
        expected = scipy_stats.binomtest(k, n, 0.5).pvalue
        got = stats.binomial_two_sided_p(k, n)
        if expected > 1e-300:
            assert got == pytest.approx(expected, rel=1e-9), (k, n)
        else:
            assert got < 1e-290, (k, n)
