"""The audited judge (evalsuite/judge.py): strict reply parsing, bounded replies, the cache, the
verdict stored beside the rule verdict, and compare/gate on rule verdicts unless --use-judge.

A fake judge (an HTTP server in a thread) answers correct, incorrect, garbage, huge and slow
replies: fault injection. The real-server judge is in tests/test_own_data_llama.py."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from evalsuite.judge import (MAX_BODY_BYTES, MAX_REPLY_CHARS, JudgeCache, JudgeSettings, ask_judge, judge_key,
                             judge_regrade, judge_run_folder, needs_judge, parse_reply)
from evalsuite.store import load_run
from runfactory import make_run, rec

SECRET = "sk-judge-secret-23"
SLOW_S = 20.0   # the slow judge's delay: far past the tests' 1 s timeout, so the bound can be loose


class FakeJudge:
    """An OpenAI-compatible judge whose reply is `self.reply(question)`; counts chat requests."""

    def __init__(self):
        self.mode = "correct"
        self.asked = 0
        self.auth: list[str | None] = []
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, body: bytes):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._send(json.dumps({"data": [{"id": "fake-judge"}]}).encode())

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                judge.asked += 1
                judge.auth.append(self.headers.get("Authorization"))
                mode = judge.mode
                if mode == "slow":
                    time.sleep(SLOW_S)
                if mode == "trickle":   # headers at once, then one byte every 0.4 s
                    payload = json.dumps({"choices": [{"message": {"content": "VERDICT: CORRECT"}}]}).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    for i in range(len(payload)):
                        self.wfile.write(payload[i:i + 1])
                        self.wfile.flush()
                        time.sleep(0.4)
                    return
                if mode == "huge-body":
                    self._send(b'{"choices": [{"message": {"content": "' + b"x" * (MAX_BODY_BYTES + 10) + b'"}}]}')
                    return
                text = {"correct": "VERDICT: CORRECT\nREASON: the same value",
                        "incorrect": "VERDICT: INCORRECT\nREASON: another value",
                        "garbage": "Well, it looks right to me, I would say correct!",
                        "two": "VERDICT: INCORRECT\nREASON: no\nVERDICT: CORRECT",
                        "huge": "VERDICT: CORRECT\nREASON: " + "y" * (MAX_REPLY_CHARS + 10),
                        "slow": "VERDICT: CORRECT\nREASON: late"}[mode]
                if mode == "bymodel":
                    text = "VERDICT: CORRECT"
                self._send(json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}],
                                       "model": body["model"]}).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()


@pytest.fixture()
def fake_judge(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALSUITE_JUDGE_CACHE", str(tmp_path / "judge-cache.jsonl"))
    monkeypatch.setenv("JUDGE_KEY", SECRET)
    judge = FakeJudge()
    yield judge
    judge.close()


def settings(judge, **kw) -> JudgeSettings:
    return JudgeSettings(endpoint=judge.url, api_key_env="JUDGE_KEY", **kw)


# ----------------------------------------------------------------------------- parsing

@pytest.mark.parametrize("text, verdict", [
    ("VERDICT: CORRECT\nREASON: same", "correct"),
    ("verdict: incorrect\nreason: no", "incorrect"),
    ("**VERDICT: CORRECT**", "correct"),
    ("<think>hmm, VERDICT: INCORRECT</think>\nVERDICT: CORRECT\nREASON: ok", "correct"),
    ("The answer is correct.", "undecided"),
    ("VERDICT: CORRECT or INCORRECT", "undecided"),
    ("VERDICT: MAYBE", "undecided"),
    ("", "undecided"),
    (None, "undecided"),
    ("VERDICT: INCORRECT\nREASON: no\nVERDICT: CORRECT", "undecided"),
    ("REASON: first\nVERDICT: CORRECT", "undecided"),
    ("VERDICT: CORRECT\n" + "x" * MAX_REPLY_CHARS, "undecided"),
])
def test_parse_reply_is_strict(text, verdict):
    got, reason = parse_reply(text)
    assert got == verdict
    if verdict == "undecided":
        assert reason.startswith("judge undecided")


def test_needs_judge_undecided_unextracted_and_text_only():
    base = {"outcome": "wrong", "answer": "x", "verdict": {"equal": False, "extracted": "3"}}
    assert not needs_judge(base)
    assert needs_judge(dict(base, verdict={"equal": None, "extracted": "3"}))
    assert needs_judge(dict(base, verdict={"equal": False, "extracted": None}, outcome="unextracted"))
    assert needs_judge(dict(base, item_meta={"kind": "text"}))
    assert needs_judge(dict(base, item_meta={"inferred_kind": "text"}))
    assert not needs_judge(dict(base, outcome="error", verdict={"equal": None, "extracted": None}))


# ----------------------------------------------------------------------------- the endpoint

@pytest.mark.parametrize("mode, verdict, why", [
    ("correct", "correct", "the same value"),
    ("incorrect", "incorrect", "another value"),
    ("garbage", "undecided", "unparseable"),
    ("two", "undecided", "more than"),
    ("huge", "undecided", "too large"),
    ("huge-body", "undecided", f"larger than {MAX_BODY_BYTES} bytes"),
    ("slow", "undecided", "within 1 s"),
    ("trickle", "undecided", "within 1 s"),
])
def test_fake_judge_replies(fake_judge, mode, verdict, why):
    fake_judge.mode = mode
    t0 = time.monotonic()
    v = ask_judge(settings(fake_judge, timeout=1.0), "fake-judge", "What is 2+2?", "4", "four")
    assert v.verdict == verdict and why in v.reason
    # the slow judge (SLOW_S) and the trickle (~24 s) are not waited for: back after the 1 s
    # timeout, with a loaded machine's slack, well before either would have answered
    assert time.monotonic() - t0 < SLOW_S / 2
    assert fake_judge.auth[-1] == f"Bearer {SECRET}"


def test_cache_key_and_transport_failures_are_not_cached(fake_judge, tmp_path):
    cache = JudgeCache(tmp_path / "c.jsonl")
    fake_judge.mode = "slow"
    slow = ask_judge(settings(fake_judge, timeout=0.5), "m", "q", "g", "a")
    cache.put(slow)
    assert cache.get(slow.key) is None
    fake_judge.mode = "garbage"
    garbage = ask_judge(settings(fake_judge), "m", "q", "g", "a")
    cache.put(garbage)
    assert JudgeCache(tmp_path / "c.jsonl").get(garbage.key).verdict == "undecided"   # deterministic: kept
    assert judge_key("q", "g", "a", "m") != judge_key("q", "g", "a", "other-model")


# ----------------------------------------------------------------------------- runs

def judged_run(path: Path, outcomes: dict[str, str], text_ids=()) -> Path:
    records = []
    for item_id, outcome in outcomes.items():
        r = rec(item_id, outcome, gold="blue" if item_id in text_ids else "42")
        r["item_meta"] = {"kind": "text"} if item_id in text_ids else {}
        r["choices"] = []
        records.append(r)
    return make_run(path, "gsm8k", records)


def test_judge_stored_beside_the_rule_verdict_and_cached(fake_judge, tmp_path):
    run_dir = judged_run(tmp_path / "a", {"m/0": "correct", "m/1": "unextracted", "m/2": "wrong", "m/3": "wrong"},
                         text_ids=("m/3",))
    before = {r["id"]: r for r in load_run(run_dir).records}
    fake_judge.mode = "correct"
    info = judge_run_folder(run_dir, settings(fake_judge))
    assert info["n_judged"] == 2 and info["n_asked"] == 2 and info["model"] == "fake-judge"
    after = {r["id"]: r for r in load_run(run_dir).records}
    for item_id in ("m/1", "m/3"):
        assert after[item_id]["judge"]["verdict"] == "correct"
        assert after[item_id]["outcome"] == before[item_id]["outcome"]        # the rule verdict stays
        assert after[item_id]["verdict"] == before[item_id]["verdict"]
    assert "judge" not in after["m/0"] and "judge" not in after["m/2"]
    # again: nothing asked (the records hold the verdicts); regrade asks nothing either
    assert judge_run_folder(run_dir, settings(fake_judge))["n_judged"] == 0
    asked = fake_judge.asked
    out = judge_regrade(run_dir, settings(fake_judge), [])
    assert fake_judge.asked == asked and all(j["cached"] for j in out) and len(out) == 2
    # the key is never written: not in the run folder, not in the cache
    for path in list(run_dir.rglob("*")) + [tmp_path / "judge-cache.jsonl"]:
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace")


def test_show_counts_judge_decided_items_apart(fake_judge, tmp_path, run_cli):
    run_dir = judged_run(tmp_path / "a", {"m/0": "correct", "m/1": "unextracted", "m/2": "wrong"}, text_ids=("m/2",))
    judge_run_folder(run_dir, settings(fake_judge))
    r = run_cli("show", run_dir)
    assert r.returncode == 0, r.stderr
    assert "accuracy  33.3%" in r.stdout                       # the rules' figure is unchanged
    assert "judge: 2 item(s) judged (2 correct, 0 incorrect, 0 undecided; 2 differ from the rules)" in r.stdout
    assert "m/1\trules: unextracted\tjudge: correct" in r.stdout
    data = json.loads(run_cli("show", run_dir, "--format", "json").stdout)
    assert data["judge"]["n_judged"] == 2 and data["n_correct"] == 1


def test_a_judge_decided_item_never_changes_the_gate_without_use_judge(fake_judge, tmp_path, run_cli):
    ids = [f"m/{i}" for i in range(40)]
    base = judged_run(tmp_path / "base", {i: "correct" for i in ids})
    cand_outcomes = {i: "correct" for i in ids}
    for i in ids[:8]:
        cand_outcomes[i] = "unextracted"
    cand = judged_run(tmp_path / "cand", cand_outcomes)
    fake_judge.mode = "correct"
    assert judge_run_folder(cand, settings(fake_judge))["n_judged"] == 8
    rules = run_cli("gate", "--baseline", base, "--candidate", cand, "--max-drop", "5", "--allow-underpowered")
    assert rules.returncode == 1, rules.stdout
    assert "rule verdicts only: 8 judge-decided item(s) not used (--use-judge to use them)" in rules.stdout
    judged = run_cli("gate", "--baseline", base, "--candidate", cand, "--max-drop", "5", "--allow-underpowered",
                     "--use-judge")
    assert judged.returncode == 0, judged.stdout
    assert "--use-judge: outcomes follow the judge on 8 judge-decided item(s) (8 differ from the rules)" in judged.stdout
    cmp_rules = run_cli("compare", base, cand)
    assert "rule verdicts only" in cmp_rules.stdout and "80.0%" in cmp_rules.stdout
    cmp_judge = run_cli("compare", base, cand, "--use-judge")
    assert "--use-judge" in cmp_judge.stdout and "80.0%" not in cmp_judge.stdout


def test_regrade_with_the_judge_cli(fake_judge, tmp_path, run_cli):
    run_dir = judged_run(tmp_path / "a", {"m/0": "correct", "m/1": "unextracted"})
    fake_judge.mode = "incorrect"
    env = {"EVALSUITE_JUDGE_CACHE": str(tmp_path / "judge-cache.jsonl"), "JUDGE_KEY": SECRET}
    args = ("regrade", run_dir, "--judge-endpoint", fake_judge.url, "--judge-api-key-env", "JUDGE_KEY",
            "--json", tmp_path / "out.json")
    first = run_cli(*args, env=env)
    assert first.returncode == 0, first.stderr
    # the current graders read "I am not sure." as no number (was undecided): still left to the judge
    assert "judge\tm/1\trules: unextracted\tjudge: incorrect\tanother value" in first.stdout   # `run`'s words
    asked = fake_judge.asked
    second = run_cli(*args, env=env)
    assert "judge: incorrect (cached)" in second.stdout and fake_judge.asked == asked
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["judge"][0]["id"] == "m/1" and [c["id"] for c in data["changes"]] == ["m/1"]
    assert "judge" not in load_run(run_dir).by_id["m/1"]       # regrade leaves the folder as it was


def test_report_lists_judge_decided_items_apart(fake_judge, tmp_path, run_cli):
    run_dir = judged_run(tmp_path / "a", {"m/0": "correct", "m/1": "unextracted"})
    fake_judge.mode = "incorrect"
    judge_run_folder(run_dir, settings(fake_judge))
    r = run_cli("report", run_dir, "--html", tmp_path / "report.html")
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Judge-decided items (for review)" in page and "1 judged (0 correct, 1 incorrect, 0 undecided)" in page
    assert "another value" in page
