"""Done-when of issue 23, end to end against a real server (llama-cpp-python, tests/llama_server.py):
a JSONL file of 200 own questions (numeric, LaTeX, choice with A-D fields, open text) runs; its
manifest carries the file's sha256; regrade (without the file), compare and gate work on it; the
same server as the judge gives nonsense, which is stored as "judge undecided" beside the rule
verdict and changes nothing in the gate."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from conftest import requires_llama

pytestmark = [requires_llama, pytest.mark.llama, pytest.mark.slow]

OWN = Path(__file__).parent / "data" / "own_questions.jsonl"


def records_of(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()]


def test_200_own_questions_end_to_end(llama_server, run_cli, tmp_path):
    data = tmp_path / "mine" / "own_questions.jsonl"
    data.parent.mkdir()
    shutil.copy(OWN, data)
    env = {"EVALSUITE_JUDGE_CACHE": str(tmp_path / "judge-cache.jsonl")}
    common = ["--endpoint", llama_server.url, "--max-tokens", 6, "--concurrency", 1, "--quiet", "--logprobs", 2]
    a = run_cli("run", data, *common, "--run-dir", tmp_path / "a", "--label", "a",
                "--judge-endpoint", llama_server.url, env=env, timeout=900)
    assert a.returncode in (0, 1), a.stderr
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["pack"] == "file:own_questions.jsonl"
    assert manifest["dataset"]["sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    assert manifest["dataset"]["n_items"] == 200 and manifest["pack_spec"]["path"] == str(data.resolve())
    records = records_of(tmp_path / "a")
    assert len(records) == 200 and len({r["id"] for r in records}) == 200
    assert {r["subset"] for r in records} == {"numeric", "latex", "choice", "text"}
    row = json.loads(OWN.read_text(encoding="utf-8").splitlines()[100])
    choice = next(r for r in records if r["id"] == row["id"])
    assert f"A. {row['A']}\nB. {row['B']}" in choice["messages"][-1]["content"] and choice["choices"][0] == row["A"]
    assert choice["gold"] == row["answer"]

    # the judge (the same tiny server: nonsense) -- beside the rule verdict, never over it
    judged = [r for r in records if r.get("judge")]
    text_ids = {r["id"] for r in records if r["subset"] == "text" and r["outcome"] != "error"}
    assert text_ids <= {r["id"] for r in judged}
    assert {r["judge"]["verdict"] for r in judged} == {"undecided"}
    assert all(r["judge"]["reason"].startswith("judge undecided") for r in judged)
    assert manifest["judge"]["model"] == "tiny" and manifest["judge"]["n_judged"] == len(judged)
    show = run_cli("show", tmp_path / "a")
    assert f"judge: {len(judged)} item(s) judged (0 correct, 0 incorrect, {len(judged)} undecided" in show.stdout

    # regrade rebuilds the pack from the manifest: the file is gone
    data.unlink()
    regrade = run_cli("regrade", tmp_path / "a", env={"EVALSUITE_DATA_DIR": str(tmp_path / "elsewhere")})
    assert regrade.returncode == 0, regrade.stderr
    assert "0 of 200 verdicts changed" in regrade.stdout

    # a second run of the same file (put back): compare and gate
    shutil.copy(OWN, data)
    b = run_cli("run", data, *common, "--run-dir", tmp_path / "b", "--label", "b", timeout=900)
    assert b.returncode in (0, 1), b.stderr
    compare = run_cli("compare", tmp_path / "a", tmp_path / "b")
    assert compare.returncode == 0, compare.stderr
    assert "rule verdicts only" not in compare.stdout      # undecided judge verdicts decide nothing
    gate = run_cli("gate", "--baseline", tmp_path / "a", "--candidate", tmp_path / "b", "--max-drop", 5,
                   "--allow-underpowered")
    assert gate.returncode == 0, gate.stdout + gate.stderr
    diff = run_cli("diff", tmp_path / "a", tmp_path / "b", "--fail-on", "real")
    assert diff.returncode == 0, diff.stdout + diff.stderr
    report = run_cli("report", tmp_path / "a", tmp_path / "b", "--html", tmp_path / "report.html")
    assert report.returncode == 0 and "Judge-decided items" in (tmp_path / "report.html").read_text()
    import evalsuite

    run_a = evalsuite.open_run(tmp_path / "a")
    frame = run_a.records
    assert len(frame) == 200 and frame["judge"].dropna().eq("undecided").all()
    tokens = run_a.tokens()
    assert set(tokens.column("item").to_pylist()) <= set(frame["id"]) and tokens.num_rows > 0
    assert run_a.tokens("numeric-0").num_rows == run_a.run.by_id["numeric-0"]["logprob_tokens"] > 0
    result = evalsuite.diff(tmp_path / "a", tmp_path / "b")
    assert result.counts.get("real", 0) == 0 and len(result.items) == 200
    with_judge = run_cli("gate", "--baseline", tmp_path / "a", "--candidate", tmp_path / "b", "--max-drop", 5,
                         "--allow-underpowered", "--use-judge")
    assert with_judge.returncode == 0 and "outcomes follow the judge on 0" in with_judge.stdout


def test_a_file_with_one_bad_row_names_it(llama_server, run_cli, tmp_path):
    lines = OWN.read_text(encoding="utf-8").splitlines()[:10]
    bad = json.loads(lines[6])
    del bad["answer"]
    lines[6] = json.dumps(bad)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = run_cli("run", path, "--endpoint", llama_server.url, "--run-dir", tmp_path / "r", "--quiet")
    assert r.returncode == 2 and "bad.jsonl: line 7 has no answer field" in r.stderr
    ok = run_cli("run", path, "--endpoint", llama_server.url, "--run-dir", tmp_path / "r", "--quiet",
                 "--skip-bad-rows", "--max-tokens", 4, "--concurrency", 1)
    assert ok.returncode in (0, 1), ok.stderr
    assert len(records_of(tmp_path / "r")) == 9
    # a resume reads the file again and finds every item recorded; an edited file is refused
    again = run_cli("run", path, "--endpoint", llama_server.url, "--resume", tmp_path / "r", "--skip-bad-rows",
                    "--max-tokens", 4, "--concurrency", 1)
    assert again.returncode in (0, 1) and "9 of 9 items already recorded, 0 to ask" in again.stderr
    path.write_text(path.read_text(encoding="utf-8").replace("apples", "pears"), encoding="utf-8")
    edited = run_cli("run", path, "--endpoint", llama_server.url, "--resume", tmp_path / "r", "--skip-bad-rows",
                     "--max-tokens", 4, "--concurrency", 1)
    assert edited.returncode == 2 and "dataset fingerprint" in edited.stderr
    assert len(records_of(tmp_path / "r")) == 9                     # nothing recorded was lost
