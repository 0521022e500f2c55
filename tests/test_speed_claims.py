"""Issue 34 #5: speed claims contradicted the tables. Two identical runs on one server got
"decodes 29% slower … (slower to solve)" as the report's headline, and the sweep's verdict gave
a ratio of totals while its table showed medians pointing the other way. Now there is one
definition of time per item (run_stats.item_seconds, named in the line), and a faster/slower
claim is paired by item with an interval and a test, or the line says "no significant
difference"."""
from __future__ import annotations

import io
import math
import random
import re

import pytest
from runfactory import make_run, rec

from evalsuite.analysis.compare.tables import compare_main
from evalsuite.analysis.report import report_main


def timed_run(path, label, seconds: list[float], tokens: list[int], ttft: float = 0.05):
    records = [rec(f"main/{i}", "correct", total_s=t, ttft_s=ttft, completion_tokens=n)
               for i, (t, n) in enumerate(zip(seconds, tokens))]
    return make_run(path, "gsm8k", records, label=label)


def identical_pair(tmp_path, n=60, seed=4):
    """The same server twice: per item the same work (tokens), each time a fresh draw of the
    server's jitter (a lognormal factor around the item's own time)."""
    rng = random.Random(seed)
    tokens = [rng.randrange(40, 400) for _ in range(n)]
    work = [0.002 * k for k in tokens]
    again = [[w * math.exp(rng.gauss(0, 0.35)) + 0.05 for w in work] for _ in range(2)]
    return (timed_run(tmp_path / "a", "first", again[0], tokens), timed_run(tmp_path / "b", "again", again[1], tokens),
            tokens, work, rng)


def verdict_of(tmp_path, *runs) -> str:
    out = io.StringIO()
    assert compare_main(list(runs), out=out) == 0
    return next(line for line in out.getvalue().splitlines() if line.startswith("Verdict: "))


def test_two_identical_runs_claim_no_speed_difference(tmp_path):
    a, b, *_ = identical_pair(tmp_path)
    verdict = verdict_of(tmp_path, a, b)
    assert "time per item: no significant difference (×" in verdict, verdict
    for claim in ("faster", "slower"):
        assert claim not in verdict, verdict
    # the definition is named in the line, and the report's headline says the same
    assert "time per item = timing.total_s per item" in verdict
    html = tmp_path / "r.html"
    assert report_main([a, b], html, out=io.StringIO()) == 0
    page = html.read_text(encoding="utf-8")
    assert "time per item: no significant difference" in page and "slower" not in page.split("Verdict:")[1][:2000]


def test_a_slower_candidate_is_named_with_its_interval_and_test(tmp_path):
    _, _, tokens, work, rng = identical_pair(tmp_path)
    a = timed_run(tmp_path / "x", "first", [w * math.exp(rng.gauss(0, 0.35)) + 0.05 for w in work], tokens)
    slow = timed_run(tmp_path / "y", "slow", [1.3 * (w * math.exp(rng.gauss(0, 0.35)) + 0.05) for w in work], tokens)
    verdict = verdict_of(tmp_path, a, slow)
    m = re.search(r"slow takes ×([\d.]+) \[([\d.]+), ([\d.]+)\] the time per item of first \(slower, p=([\d.e-]+)\)",
                  verdict)
    assert m, verdict
    ratio, lo, hi, p = map(float, m.groups())
    assert lo < 1.3 < hi and lo > 1 and p < 0.05 and lo < ratio < hi


def test_the_table_and_the_verdict_give_one_ratio(tmp_path):
    """`time vs first` in the table is the verdict's paired ratio, not a ratio of totals."""
    a, b, *_ = identical_pair(tmp_path)
    out = io.StringIO()
    assert compare_main([a, b], out=out) == 0
    text = out.getvalue()
    ratio = re.search(r"no significant difference \((×[\d.]+) \[", text).group(1)
    row = next(line for line in text.splitlines() if line.startswith("again ") and "×" in line)
    assert ratio in row.split(), (ratio, row)


def test_t_two_sided_p_matches_scipy():
    from scipy import stats as sps

    from evalsuite.analysis.stats import t_two_sided_p

    for df in (1, 2, 3, 7.5, 30, 1000):
        for t in (0.0, 0.3, 1.0, 2.0, 5.0, -3.0, 40.0):
            assert t_two_sided_p(t, df) == pytest.approx(2 * sps.t.sf(abs(t), df), rel=1e-9, abs=1e-300)


def test_json_has_the_paired_speed(tmp_path):
    import json

    a, b, *_ = identical_pair(tmp_path)
    assert compare_main([a, b], out=io.StringIO(), json_path=tmp_path / "c.json") == 0
    speed = json.loads((tmp_path / "c.json").read_text())["speed"][0]
    assert speed["run"] == "again" and speed["time_per_item"]["significant"] is False
    assert speed["time_per_item"]["n_items"] == 60 and speed["time_per_item"]["ci"][0] < 1 < speed["time_per_item"]["ci"][1]
