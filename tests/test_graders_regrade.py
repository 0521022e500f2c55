"""evalsuite.analysis.regrade: re-grading stored answers lists exactly the changed verdicts."""
from __future__ import annotations

import json

from runfactory import make_run, rec

from evalsuite.analysis.regrade import regrade, summarise


def test_regrade_lists_changed_verdicts_only(tmp_path):
    records = [
        # stored as wrong, but 0.5 is 1/2: the current grader rescues it
        rec("test/0", "wrong", gold="\\frac{1}{2}", answer="The answer is \\boxed{0.5}", extracted="0.5"),
        # stored as correct and still correct: not listed
        rec("test/1", "correct", gold="18", answer="#### 18", extracted="18"),
        # stored as correct but 19 is not 18: listed as no longer correct
        rec("test/2", "correct", gold="18", answer="\\boxed{19}", extracted="19"),
        rec("test/3", "error", gold="7"),
    ]
    run = make_run(tmp_path / "run", "math500", records=records)
    before = (run / "records.jsonl").read_bytes()
    changes = regrade(run)
    assert [c.id for c in changes] == ["test/0", "test/2"]
    assert changes[0].old_equal is False and changes[0].new_equal is True
    assert changes[0].new_method == "numeric"
    assert changes[1].new_equal is False
    assert "2 of 4 verdicts changed: 1 now correct, 1 no longer correct" in summarise(changes, 4)
    assert (run / "records.jsonl").read_bytes() == before  # the run folder is left alone
    json.dumps([c.to_dict() for c in changes])


def test_regrade_cli(tmp_path):
    from typer.testing import CliRunner

    from evalsuite.cli import app

    run = make_run(tmp_path / "run", "gsm8k", records=[rec("main/0", "wrong", gold="1000", answer="#### 1,000",
                                                             extracted="1,000")])
    out = tmp_path / "changes.json"
    result = CliRunner().invoke(app, ["regrade", str(run), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "main/0" in result.output and "1 of 1 verdicts changed" in result.output
    assert json.loads(out.read_text())[0]["new_equal"] is True
