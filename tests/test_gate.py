"""gate: every exit code (0 pass, 1 fail, 2 unusable), the one-line reason, JUnit XML,
pyproject thresholds and the diff JSON check."""
from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import scipy.stats as scipy_stats

from runfactory import make_run, paired_outcomes, rec, runs_from_outcomes

from evalsuite.analysis.gate.decide import gate_main


def gate(base, cand, tmp_path: Path, **kw) -> tuple[int, str]:
    """gate_main with config searched from tmp_path (so the repo's pyproject is never read)."""
    out = io.StringIO()
    kw.setdefault("config_start", tmp_path)
    code = gate_main(base, cand, out=out, **kw)
    text = out.getvalue()
    assert text.count("\n") == 1, f"expected one line, got {text!r}"
    return code, text.strip()


def junit(path: Path) -> ET.Element:
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None and suite.get("name") == "evalsuite.gate"
    return suite


@pytest.fixture
def significant_drop(tmp_path):
    """Candidate loses 16 items and gains 2 of 200: -7 pp, p well under 0.05."""
    a, b = paired_outcomes(both_right=140, a_only=16, b_only=2, both_wrong=42)
    return runs_from_outcomes(tmp_path / "runs", {"baseline": a, "candidate": b})


@pytest.fixture
def noisy_drop(tmp_path):
    """-3 pp of 100 items but 5 vs 2 discordant: not significant."""
    a, b = paired_outcomes(both_right=60, a_only=5, b_only=2, both_wrong=33)
    return runs_from_outcomes(tmp_path / "runs", {"baseline": a, "candidate": b})


def test_pass_when_no_drop(tmp_path):
    a, b = paired_outcomes(both_right=60, a_only=3, b_only=4, both_wrong=33)
    base, cand = runs_from_outcomes(tmp_path / "runs", {"baseline": a, "candidate": b})
    code, line = gate(base, cand, tmp_path, max_drop=6, junit=tmp_path / "j.xml")
    assert code == 0 and line.startswith("PASS: ")
    p = scipy_stats.binomtest(3, 7).pvalue
    assert f"b=3 c=4 p={p:.3g}" in line and "+1.0 pp" in line
    assert "smallest detectable drop 6 pp at α=0.05" in line
    suite = junit(tmp_path / "j.xml")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "0", "0")
    assert suite.find("testcase").find("failure") is None


def test_fail_when_drop_is_large_and_significant(tmp_path, significant_drop):
    base, cand = significant_drop
    code, line = gate(base, cand, tmp_path, max_drop=3, junit=tmp_path / "j.xml")
    p = scipy_stats.binomtest(16, 18).pvalue
    assert p < 0.05
    assert code == 1
    assert line.startswith("FAIL: accuracy dropped 7.0 pp (> 3 pp) and significantly")
    assert f"b=16 c=2 p={p:.3g}" in line and "candidate 71.0% vs baseline 78.0% on 200 paired items" in line
    suite = junit(tmp_path / "j.xml")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    failure = suite.find("testcase").find("failure")
    assert failure is not None and "dropped 7.0 pp" in failure.get("message")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["exit_code"] == "1" and props["candidate"].endswith("candidate")


def test_large_drop_passes_when_not_significant_unless_alpha_is_1(tmp_path, noisy_drop):
    base, cand = noisy_drop
    p = scipy_stats.binomtest(5, 7).pvalue
    code, line = gate(base, cand, tmp_path, max_drop=2, allow_underpowered=True)
    assert code == 0 and "drop of 3.0 pp exceeds 2 pp but is not significant" in line and f"p={p:.3g}" in line
    assert "WARNING underpowered" in line
    code, line = gate(base, cand, tmp_path, max_drop=2, alpha=1)
    assert code == 1 and line.startswith("FAIL: accuracy dropped 3.0 pp (> 2 pp):")
    code, _ = gate(base, cand, tmp_path, max_drop=2, alpha=0.5, allow_underpowered=True)   # p = 0.45 < 0.5
    assert code == 1


def test_drop_equal_to_the_limit_passes(tmp_path, noisy_drop):
    base, cand = noisy_drop
    assert gate(base, cand, tmp_path, max_drop=3, alpha=1)[0] == 0
    assert gate(base, cand, tmp_path, max_drop=2.99, alpha=1)[0] == 1


def test_errors_are_left_out_of_the_paired_test_and_said(tmp_path):
    a = ["correct"] * 10 + ["wrong"] * 2
    b = ["correct"] * 8 + ["error"] * 2 + ["wrong"] * 2
    base, cand = runs_from_outcomes(tmp_path / "runs", {"baseline": a, "candidate": b})
    code, line = gate(base, cand, tmp_path, max_drop=0, max_errors="2")
    assert code == 0 and "on 10 paired items" in line and "2 items errored in either run and were left out" in line
    code, line = gate(base, cand, tmp_path, max_drop=0, min_items=11)
    assert code == 2 and "too few items: 10 paired items (2 errored in either run), min-items is 11" in line


@pytest.mark.parametrize("case", ["missing", "different", "unfinished", "too-few", "no-max-drop", "bad-alpha"])
def test_unusable_input_exits_2(tmp_path, case):
    base = make_run(tmp_path / "base", records=[rec(f"main/{i}") for i in range(5)])
    kw = {"max_drop": 1.0}
    if case == "missing":
        cand, want = tmp_path / "nowhere", "candidate: no run folder at"
    elif case == "different":
        cand = make_run(tmp_path / "cand", records=[rec(f"main/{i}") for i in range(1, 6)])
        want = "different items: baseline fingerprint"
    elif case == "unfinished":
        ids = [f"main/{i}" for i in range(5)]
        cand = make_run(tmp_path / "cand", records=[rec(i) for i in ids[:3]], item_ids=ids, status="interrupted",
                        fingerprint=json.loads((base / "manifest.json").read_text())["dataset"]["fingerprint"])
        want = "candidate has records for 3 of 5 (status interrupted)"
    elif case == "too-few":
        cand = make_run(tmp_path / "cand", records=[rec(f"main/{i}") for i in range(5)])
        kw["min_items"], want = 30, "too few items: 5 paired items"
    elif case == "no-max-drop":
        cand = make_run(tmp_path / "cand", records=[rec(f"main/{i}") for i in range(5)])
        kw, want = {}, "no --max-drop given"
    else:
        cand = make_run(tmp_path / "cand", records=[rec(f"main/{i}") for i in range(5)])
        kw["alpha"], want = 0.0, "--alpha must be in (0, 1]"
    code, line = gate(base, cand, tmp_path, junit=tmp_path / "j.xml", **kw)
    assert code == 2 and line.startswith("UNUSABLE: ") and want in line
    suite = junit(tmp_path / "j.xml")
    assert (suite.get("failures"), suite.get("errors")) == ("0", "1")
    error = suite.find("testcase").find("error")
    assert error is not None and want in error.get("message")


def test_missing_baseline_is_named(tmp_path):
    cand = make_run(tmp_path / "cand", records=[rec("main/0")])
    code, line = gate(tmp_path / "gone", cand, tmp_path, max_drop=1)
    assert code == 2 and "baseline: no run folder" in line


# ---------------------------------------------------------------------------- pyproject


def write_pyproject(folder: Path, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(body, encoding="utf-8")


def test_thresholds_from_pyproject_found_upward_and_overridden_by_flags(tmp_path, noisy_drop):
    base, cand = noisy_drop
    write_pyproject(tmp_path / "proj", "[project]\nname='x'\n\n[tool.evalsuite.gate]\nmax-drop = 2\nalpha = 1\n")
    nested = tmp_path / "proj" / "ci" / "deep"
    nested.mkdir(parents=True)
    code, line = gate(base, cand, tmp_path, config_start=nested)
    assert code == 1 and "(> 2 pp)" in line                   # alpha 1 from the file: no significance condition
    code, _ = gate(base, cand, tmp_path, config_start=nested, alpha=0.05, allow_underpowered=True)
    assert code == 0                                        # the flag wins
    code, _ = gate(base, cand, tmp_path, config_start=nested, max_drop=5)
    assert code == 0


def test_pyproject_without_the_table_is_skipped_and_typos_are_refused(tmp_path, noisy_drop):
    base, cand = noisy_drop
    write_pyproject(tmp_path / "outer", "[tool.evalsuite.gate]\nmax_drop = 1\nalpha = 1\n")
    write_pyproject(tmp_path / "outer" / "inner", "[project]\nname='inner'\n")
    assert gate(base, cand, tmp_path, config_start=tmp_path / "outer" / "inner")[0] == 1
    write_pyproject(tmp_path / "typo", "[tool.evalsuite.gate]\nmax_dorp = 1\n")
    code, line = gate(base, cand, tmp_path, config_start=tmp_path / "typo")
    assert code == 2 and "unknown key 'max_dorp'" in line and "pyproject.toml" in line


# ---------------------------------------------------------------------------- diff JSON


def run_names(base: Path, cand: Path) -> dict:
    """The run identities `evalsuite diff --json` writes for its two runs."""
    out = {}
    for role, folder in (("baseline", base), ("candidate", cand)):
        m = json.loads((folder / "manifest.json").read_text())
        out[role] = {"path": str(folder), "fingerprint": m["dataset"]["fingerprint"], "started_at": m["started_at"]}
    return out


def write_diff(path: Path, real: int, base: Path, cand: Path) -> Path:
    path.write_text(json.dumps({"counts": {"identical": 90, "near_tie": 5, "suspicious": 1, "real": real,
                                           "undetermined": 0, "hidden_drift": 0}, **run_names(base, cand)}),
                    encoding="utf-8")
    return path


def test_diff_real_divergences_gate(tmp_path):
    a, b = paired_outcomes(both_right=10)
    base, cand = runs_from_outcomes(tmp_path / "runs", {"baseline": a, "candidate": b})
    code, line = gate(base, cand, tmp_path, max_drop=60, diff=write_diff(tmp_path / "d.json", 3, base, cand), max_real=5)
    assert code == 0 and "real divergences 3 <= 5" in line
    code, line = gate(base, cand, tmp_path, max_drop=60, diff=tmp_path / "d.json", junit=tmp_path / "j.xml")
    assert code == 1 and line.startswith("FAIL: ") and "real divergences 3 > 0" in line   # default max-real 0
    suite = junit(tmp_path / "j.xml")
    assert (suite.get("tests"), suite.get("failures")) == ("4", "1")   # + undetermined items
    names = {c.get("name"): c for c in suite.findall("testcase")}
    assert names["accuracy drop"].find("failure") is None
    assert names["real divergences"].find("failure") is not None


@pytest.mark.parametrize("content,want", [
    (None, "--diff"),   # "--diff PATH: no such file": the option and the value (issue 42)
    ("not json", "cannot be read"),
    ('{"summary": {}}', "no top-level 'counts'"),
    ('{"counts": {"real": "3"}}', "counts.real must be a whole number"),
])
def test_bad_diff_json_is_unusable(tmp_path, content, want):
    a, b = paired_outcomes(both_right=10)
    base, cand = runs_from_outcomes(tmp_path / "runs", {"baseline": a, "candidate": b})
    diff = tmp_path / "d.json"
    if content is not None:
        diff.write_text(content, encoding="utf-8")
    code, line = gate(base, cand, tmp_path, max_drop=1, diff=diff)
    assert code == 2 and want in line and f"--diff {diff}" in line


def test_max_real_without_diff_is_unusable(tmp_path):
    a, b = paired_outcomes(both_right=10)
    base, cand = runs_from_outcomes(tmp_path / "runs", {"baseline": a, "candidate": b})
    code, line = gate(base, cand, tmp_path, max_drop=1, max_real=2)
    assert code == 2 and "--max-real needs --diff" in line


def test_a_gate_that_cannot_fail_refuses(tmp_path):
    a, b = paired_outcomes(both_right=1, a_only=4)
    base, cand = runs_from_outcomes(tmp_path / "runs", {"baseline": a, "candidate": b})
    code, line = gate(base, cand, tmp_path, max_drop=1, junit=tmp_path / "j.xml")
    assert code == 2 and line.startswith("UNUSABLE: this gate cannot fail: on 5 paired items no drop is significant")
    assert "it takes 6 items lost and none gained" in line and "a 1 pp drop needs >= 600 paired items" in line
    code, line = gate(base, cand, tmp_path, max_drop=1, allow_underpowered=True, junit=tmp_path / "j.xml")
    assert code == 0 and "WARNING underpowered: this gate cannot fail" in line   # 4 vs 0 discordant: p = 0.125
    props = {p.get("name"): p.get("value") for p in junit(tmp_path / "j.xml").find("properties")}
    assert props["min_detectable_drop_pp"] == "120" and props["items_needed_for_max_drop"] == "600"
    assert props["underpowered"].startswith("this gate cannot fail")


def test_cli_exit_codes(tmp_path, significant_drop):
    import typer.testing as typer_testing
    from evalsuite.cli import app

    base, cand = significant_drop
    runner = typer_testing.CliRunner()
    result = runner.invoke(app, ["gate", "--baseline", str(base), "--candidate", str(cand), "--max-drop", "3",
                                 "--junit", str(tmp_path / "j.xml")])
    assert result.exit_code == 1 and result.output.startswith("FAIL: ")
    assert (tmp_path / "j.xml").exists()
    result = runner.invoke(app, ["gate", "--baseline", str(base), "--candidate", str(cand), "--max-drop", "10"])
    assert result.exit_code == 0 and result.output.startswith("PASS: ")
    result = runner.invoke(app, ["gate", "--baseline", str(base), "--candidate", str(tmp_path / "x"), "--max-drop", "1"])
    assert result.exit_code == 2 and result.output.startswith("UNUSABLE: ")


# ---------------------------------------------------------------------------- errors, power, outputs


def test_error_heavy_candidate_fails(tmp_path):
    # 60 of 100 candidate items errored; the 40 that answered are all right: it must not pass
    a = ["correct"] * 80 + ["wrong"] * 20
    b = ["error"] * 60 + ["correct"] * 40
    base, cand = runs_from_outcomes(tmp_path / "runs", {"baseline": a, "candidate": b})
    code, line = gate(base, cand, tmp_path, max_drop=0, junit=tmp_path / "j.xml")
    assert code == 1 and line.startswith("FAIL: ")
    assert "errored items: candidate 60 of 100 (60.0%), baseline 0; > 0 allowed (the baseline's)" in line
    suite = junit(tmp_path / "j.xml")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["errored items"].find("failure") is not None
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["errors_candidate"] == "60" and props["errors_baseline"] == "0"
    # explicit limits: a count, a percentage of the items
    assert gate(base, cand, tmp_path, max_drop=0, max_errors="60")[0] == 0
    assert gate(base, cand, tmp_path, max_drop=0, max_errors="59")[0] == 1
    assert gate(base, cand, tmp_path, max_drop=0, max_errors="60%")[0] == 0
    assert gate(base, cand, tmp_path, max_drop=0, max_errors="2%")[0] == 1
    code, line = gate(base, cand, tmp_path, max_drop=0, max_errors="lots")
    assert code == 2 and "--max-errors must be a count of items or a percentage" in line


def test_requested_drop_undetectable_refuses_and_says_how_many_items(tmp_path, noisy_drop):
    base, cand = noisy_drop   # 100 paired items: at best 6 items lost of 100 can be significant (6 pp)
    code, line = gate(base, cand, tmp_path, max_drop=2)
    assert code == 2 and "a 2 pp drop is undetectable here" in line
    assert "smallest drop 100 paired items can show significant at α=0.05 is 6 pp" in line
    assert "needs >= 300 paired items" in line and "--allow-underpowered" in line
    assert gate(base, cand, tmp_path, max_drop=6)[0] == 0


def test_diff_json_of_other_runs_is_refused(tmp_path):
    a, b = paired_outcomes(both_right=10)
    base, cand = runs_from_outcomes(tmp_path / "runs", {"baseline": a, "candidate": b})
    others = runs_from_outcomes(tmp_path / "other", {"baseline": a, "candidate": b})
    manifest = json.loads((others[1] / "manifest.json").read_text())
    manifest["started_at"] = "2026-02-02T00:00:00.000+00:00"
    (others[1] / "manifest.json").write_text(json.dumps(manifest))
    diff = write_diff(tmp_path / "d.json", 0, others[0], others[1])
    code, line = gate(base, cand, tmp_path, max_drop=60, diff=diff)
    assert code == 2 and "the diff JSON was not made from these runs" in line and "candidate" in line
    assert "real divergences 0" not in line
    # a diff JSON that names no runs (an older one) is refused too
    diff.write_text(json.dumps({"counts": {"real": 0}}))
    code, line = gate(base, cand, tmp_path, max_drop=60, diff=diff)
    assert code == 2 and "older evalsuite" in line


@pytest.mark.parametrize("where", ["missing-folder", "is-a-folder"])
def test_unwritable_junit_path_exits_2_before_any_verdict(tmp_path, significant_drop, where):
    base, cand = significant_drop
    target = tmp_path / "nonexistent" / "x.xml" if where == "missing-folder" else tmp_path
    code, line = gate(base, cand, tmp_path, max_drop=3, junit=target)
    assert code == 2 and line.startswith("UNUSABLE: --junit") and "FAIL" not in line and "PASS" not in line


def test_unwritable_outputs_of_diff_and_compare_exit_2(tmp_path, significant_drop, run_cli):
    base, cand = significant_drop
    for args in (["diff", base, cand, "--html", tmp_path / "no" / "d.html"],
                 ["diff", base, cand, "--json", tmp_path / "no" / "d.json"],
                 ["compare", base, cand, "--plots-dir", tmp_path / "runs" / "baseline" / "records.jsonl" / "p"],
                 ["compare", base, cand, "--json", tmp_path / "no" / "c.json"],
                 ["report", base, cand, "--html", tmp_path / "no" / "r.html"],
                 ["gate", "--baseline", base, "--candidate", cand, "--max-drop", 3, "--junit", "/nonexistent/x.xml"]):
        out = run_cli(*args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert "Traceback" not in out.stderr, out.stderr
        assert "identical" not in out.stdout and "McNemar" not in out.stdout and "FAIL" not in out.stdout


# ---------------------------------------------------------------------------- undetermined items, diff-only gate


def write_counts(path: Path, base: Path, cand: Path, **counts) -> Path:
    full = {"identical": 90, "near_tie": 0, "suspicious": 0, "real": 0, "undetermined": 0, "hidden_drift": 0}
    full.update(counts)
    path.write_text(json.dumps({"counts": full, **run_names(base, cand)}), encoding="utf-8")
    return path


def test_undetermined_items_fail_a_lossless_gate_by_default(tmp_path):
    # a real divergence filed as undetermined must not pass: counts.real 0 alone said PASS before
    a, b = paired_outcomes(both_right=10)
    base, cand = runs_from_outcomes(tmp_path / "runs", {"baseline": a, "candidate": b})
    diff = write_counts(tmp_path / "d.json", base, cand, undetermined=18)
    code, line = gate(base, cand, tmp_path, max_drop=60, diff=diff, junit=tmp_path / "j.xml")
    assert code == 1 and line.startswith("FAIL: undetermined items 18 > 0")
    assert "default 0 for a lossless gate" in line and "may hide a real divergence" in line
    cases = {c.get("name"): c for c in junit(tmp_path / "j.xml").findall("testcase")}
    assert cases["undetermined items"].find("failure") is not None
    assert cases["real divergences"].find("failure") is None
    code, line = gate(base, cand, tmp_path, max_drop=60, diff=diff, max_undetermined=18)
    assert code == 0 and "undetermined items 18 <= 18" in line
    assert gate(base, cand, tmp_path, max_drop=60, diff=diff, max_undetermined=17)[0] == 1
    code, line = gate(base, cand, tmp_path, max_drop=1, max_undetermined=2)
    assert code == 2 and "--max-undetermined needs --diff" in line
    # a diff JSON without the count cannot be judged
    data = json.loads(diff.read_text())
    del data["counts"]["undetermined"]
    diff.write_text(json.dumps(data))
    code, line = gate(base, cand, tmp_path, max_drop=60, diff=diff)
    assert code == 2 and "counts.undetermined must be a whole number" in line


def test_max_undetermined_from_pyproject(tmp_path):
    a, b = paired_outcomes(both_right=10)
    base, cand = runs_from_outcomes(tmp_path / "runs", {"baseline": a, "candidate": b})
    diff = write_counts(tmp_path / "d.json", base, cand, undetermined=3)
    (tmp_path / "pyproject.toml").write_text("[tool.evalsuite.gate]\nmax_drop = 60\nmax-undetermined = 3\n")
    code, line = gate(base, cand, tmp_path, diff=diff)
    assert code == 0 and "undetermined items 3 <= 3" in line


def test_diff_only_gate_documented_command(tmp_path, run_cli):
    """docs/lossless.md: `evalsuite diff A B --json diff.json` then `evalsuite gate --diff diff.json --max-real 0`."""
    from test_diff import LOGPROBS, plain, record

    b = make_run(tmp_path / "b", records=[record("main/0", plain(["a", "b"])), record("main/1", plain(["x", "y"]))],
                 decoding=LOGPROBS)
    # main/1: the candidate's text differs and it kept no logprobs: undetermined, not real
    c = make_run(tmp_path / "c", records=[record("main/0", plain(["a", "b"])), rec("main/1", answer="xz")],
                 decoding=LOGPROBS)
    made = run_cli("diff", b, c, "--json", tmp_path / "diff.json", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    counts = json.loads((tmp_path / "diff.json").read_text())["counts"]
    assert counts["real"] == 0 and counts["undetermined"] == 1
    out = run_cli("gate", "--diff", "diff.json", "--max-real", "0", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    line = out.stdout.strip()
    assert line.startswith("FAIL: undetermined items 1 > 0") and "real divergences 0 <= 0 (diff.json)" in line
    assert "diff only: accuracy and errored items not gated" in line and str(b) in line
    out = run_cli("gate", "--diff", "diff.json", "--max-real", "0", "--max-undetermined", "1", "--junit", "j.xml",
                  "--json", "g.json", cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.startswith("PASS: "), out.stdout + out.stderr
    suite = junit(tmp_path / "j.xml")
    assert {c.get("name") for c in suite.findall("testcase")} == {"real divergences", "undetermined items"}
    assert json.loads((tmp_path / "g.json").read_text())["details"]["diff_only"] is True
    same = run_cli("diff", b, b, "--json", tmp_path / "same.json", cwd=tmp_path)
    assert same.returncode == 0
    assert run_cli("gate", "--diff", "same.json", cwd=tmp_path).returncode == 0
    # half the runs, or nothing at all, is still unusable with a clear message
    out = run_cli("gate", "--baseline", b, "--diff", "diff.json", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("error: --candidate: missing; give both runs"), out.stderr
    out = run_cli("gate", cwd=tmp_path)
    assert out.returncode == 2 and "--diff DIFF_JSON alone for a divergence-only gate" in out.stdout
    out = run_cli("gate", "--diff", "diff.json", "--equivalence-margin", "1", cwd=tmp_path)
    assert out.returncode == 2 and "--equivalence-margin needs --baseline RUN and --candidate RUN" in out.stdout


# ---------------------------------------------------------------------------- equivalence (TOST)


def test_equivalence_on_10000_items_and_undecided_on_100(tmp_path):
    # candidate 0.3 points worse on 10,000 paired items (215 lost, 185 gained): equivalent at ±1
    a, b = paired_outcomes(both_right=7000, a_only=215, b_only=185, both_wrong=2600)
    base, cand = runs_from_outcomes(tmp_path / "big", {"baseline": a, "candidate": b})
    code, line = gate(base, cand, tmp_path, equivalence_margin=1, junit=tmp_path / "j.xml", json_path=tmp_path / "g.json")
    assert code == 0 and line.startswith("PASS: equivalence: equivalent (90% CI [-0.6")
    assert "paired difference -0.30 pp on 10000 items, margin ±1 pp" in line
    assert "McNemar" not in line   # no --max-drop: the drop check is not run
    details = json.loads((tmp_path / "g.json").read_text())["details"]["equivalence"]
    assert details["verdict"] == "equivalent" and -1 < details["ci_pp"][0] < -0.3 < details["ci_pp"][1] < 1
    props = {p.get("name"): p.get("value") for p in junit(tmp_path / "j.xml").find("properties")}
    assert props["equivalence_verdict"] == "equivalent"
    # the same rates on 100 items (2 lost, 2 gained) cannot tell: undecided, with the items needed
    a, b = paired_outcomes(both_right=70, a_only=2, b_only=2, both_wrong=26)
    base, cand = runs_from_outcomes(tmp_path / "small", {"baseline": a, "candidate": b})
    code, line = gate(base, cand, tmp_path, equivalence_margin=1, junit=tmp_path / "j.xml", json_path=tmp_path / "g.json")
    assert code == 1 and line.startswith("FAIL: equivalence: undecided: ")
    details = json.loads((tmp_path / "g.json").read_text())["details"]["equivalence"]
    assert details["verdict"] == "undecided" and details["more_items"] == details["items_needed"] - 100 > 1000
    assert f"undecided: {details['more_items']} more paired items needed" in line
    cases = {c.get("name"): c for c in junit(tmp_path / "j.xml").findall("testcase")}
    assert "undecided" in cases["equivalence"].find("failure").get("message")
    # exactly 0.3 worse on 1,000 items: still undecided
    a, b = paired_outcomes(both_right=700, a_only=22, b_only=19, both_wrong=259)
    base, cand = runs_from_outcomes(tmp_path / "mid", {"baseline": a, "candidate": b})
    code, line = gate(base, cand, tmp_path, equivalence_margin=1)
    assert code == 1 and "undecided" in line and "-0.30 pp on 1000 items" in line


def test_equivalence_worse_and_with_max_drop(tmp_path):
    # 3 points worse on 2,000 items: the whole interval is below -1
    a, b = paired_outcomes(both_right=1400, a_only=80, b_only=20, both_wrong=500)
    base, cand = runs_from_outcomes(tmp_path / "runs", {"baseline": a, "candidate": b})
    code, line = gate(base, cand, tmp_path, equivalence_margin=1)
    assert code == 1 and line.startswith("FAIL: equivalence: worse by more than the margin")
    # with --max-drop both checks run, and both are in the line
    code, line = gate(base, cand, tmp_path, equivalence_margin=1, max_drop=5)
    assert code == 1 and "worse by more than the margin" in line and "McNemar" in line
    (tmp_path / "pyproject.toml").write_text("[tool.evalsuite.gate]\nequivalence_margin = 5\n")
    code, line = gate(base, cand, tmp_path)
    assert code == 0 and "equivalence: equivalent" in line and "margin ±5 pp" in line
    code, line = gate(base, cand, tmp_path, equivalence_margin=-1)
    assert code == 2 and "--equivalence-margin must be > 0" in line
    code, line = gate(base, cand, tmp_path, equivalence_margin=1, alpha=1)
    assert code == 2 and "--alpha below 0.5" in line


def test_compare_says_equivalence(tmp_path):
    from evalsuite.analysis.compare.tables import compare_main

    a, b = paired_outcomes(both_right=70, a_only=2, b_only=2, both_wrong=26)
    base, cand = runs_from_outcomes(tmp_path / "small", {"baseline": a, "candidate": b})
    out, err = io.StringIO(), io.StringIO()
    assert compare_main([base, cand], equivalence_margin=1, json_path=tmp_path / "c.json", out=out, err=err) == 0
    text = out.getvalue()
    assert "Equivalence within ±1 pp (two one-sided tests at α=0.05" in text
    assert "candidate vs baseline: undecided: " in text and "more paired items needed" in text
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["equivalence"][0]["verdict"] == "undecided" and data["equivalence"][0]["more_items"] > 1000
    assert compare_main([base, cand], equivalence_margin=0, out=out, err=err) == 2
