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


def test_categories_come_from_the_manifest_not_the_pack(tmp_path):
    """Analyses read the run folder only: a pack no longer installed still gets its category rows."""
    run = load_run(make_run(tmp_path / "run", "gone-pack",
                            records=[rec("logic/0", "correct", subset="logic"), rec("law/0", "wrong", subset="law")]))
    manifest = dict(run.manifest, categories={"logic": "Humanities", "law": "Humanities"})
    summary = summarize(manifest, run.records)
    assert [(c["category"], c["n_items"], c["n_correct"]) for c in summary["categories"]] == [("Humanities", 2, 1)]
    assert {s["subset"]: s["category"] for s in summary["subsets"]} == {"law": "Humanities", "logic": "Humanities"}


def test_the_manifest_keeps_the_categories_of_the_subsets_run():
    from types import SimpleNamespace

    from evalsuite.client.exchange import Decoding
    from evalsuite.client.errors import RetryPolicy
    from evalsuite.run.manifest import make_manifest
    from evalsuite.tasks import get_pack
    from evalsuite.tasks.pack import Item

    settings = SimpleNamespace(pack="ceval", fewshot=0, subsets=(), per_subset=None, seed=0, limit=None, data_dir=None,
                               api="chat", endpoints=("http://127.0.0.1:1/v1",), decoding=Decoding(), concurrency=1,
                               timeout=1.0, retry=RetryPolicy(), max_downtime=1.0, stream=True, label=None, argv=(),
                               samples=1)
    items = [Item("logic/0", "logic", "q", "A"), Item("college_programming/0", "college_programming", "q", "B")]
    manifest = make_manifest(settings, get_pack("ceval"), items, {}, "m")
    assert manifest["categories"] == {"college_programming": "STEM", "logic": "Humanities"}
    packless = make_manifest(settings, get_pack("gsm8k"), [Item("main/0", "main", "q", "1")], {}, "m")
    assert "categories" not in packless   # no categories: the field is absent


def test_an_old_folder_takes_its_categories_from_its_own_summary(tmp_path):
    """Folders from before the manifest had `categories`: the summary.json the run wrote at its
    end (from the pack's table then) says them; no summary.json: no category rows."""
    import json

    from evalsuite.analysis.summary import run_categories

    folder = make_run(tmp_path / "old", "ceval", records=[rec("logic/0", "correct", subset="logic")])
    manifest = load_run(folder).manifest
    assert run_categories(manifest, folder) == {}
    (folder / "summary.json").write_text(json.dumps({"subsets": [{"subset": "logic", "category": "Humanities"},
                                                                 {"subset": "x", "category": None}]}))
    assert run_categories(manifest, folder) == {"logic": "Humanities"}
    assert run_categories(dict(manifest, categories={"logic": "Other"}), folder) == {"logic": "Other"}
