"""The per-run summary: accuracy excludes errors, variants side by side, rescued answers listed."""
from __future__ import annotations

from evalsuite.analysis.summary import format_summary, summarize
from evalsuite.store import load_run
from runfactory import make_run, rec


def test_summary_counts_outcomes_apart_and_lists_rescues(tmp_path):
    rescued = rec("test/2", "correct", gold="0.5")
    rescued["verdict"] = {"equal": True, "extracted": "1/2", "method": "numeric", "reason": "equal as exact rationals (1/2)",
                          "extraction": "answer-is", "details": {}}
    rescued["extracted"] = "1/2"
    records = [rec("test/0", "correct"), rec("test/1", "wrong"), rescued, rec("test/3", "unextracted"),
               rec("test/4", "truncated"), rec("test/5", "error")]
    run = load_run(make_run(tmp_path / "run", "gsm8k", records=records))
    summary = summarize(run.manifest, run.records)
    assert (summary["n_items"], summary["n_correct"], summary["n_wrong"], summary["n_unextracted"],
            summary["n_truncated"], summary["n_errors"]) == (6, 2, 1, 1, 1, 1)
    assert summary["accuracy"] == 2 / 5  # errors are not the model's answers
    lo, hi = summary["accuracy_ci95"]
    assert 0.11 < lo < 0.12 and 0.76 < hi < 0.77  # Wilson 95% for 2/5
    assert [r["id"] for r in summary["rescued"]] == ["test/2"]
    text = format_summary(summary, run.manifest)
    assert "40.0%" in text and "test/2" in text and "numeric" in text


def test_extraction_variants_are_reported_side_by_side(tmp_path):
    records = []
    for i, (strict, flexible) in enumerate([(True, True), (None, True), (False, False), (None, None)]):
        r = rec(f"test/{i}", "correct" if flexible else "wrong")
        r["verdict"] = dict(r["verdict"] or {}, details={"strict": {"extracted": "1", "equal": strict},
                                                          "flexible": {"extracted": "1", "equal": flexible}})
        records.append(r)
    run = load_run(make_run(tmp_path / "run", "gsm8k", records=records))
    summary = summarize(run.manifest, run.records)
    assert summary["extraction_variants"]["strict"]["n_correct"] == 1
    assert summary["extraction_variants"]["flexible"]["n_correct"] == 2
    assert "strict 25.0%, flexible 50.0%" in format_summary(summary)
