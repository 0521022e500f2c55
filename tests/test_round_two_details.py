"""Issue 34, "smaller things from the same pass": each one as a new user met it.

- `--skip-bad-rows` skipped silently: now said (where and why) and kept in the manifest;
- `regrade` printed `True -> False` where `run` says correct / wrong / unextracted;
- `lossless --run-dir R --html R/diff.html` exited 2 although lossless makes R itself;
- `show`'s median first-token time was above the median total (9 of 20 records had no TTFT);
- the avg@N interval was labelled "t 95%" where it was a Wilson interval;
- `RunData.records` gave `object` for reasoning_tokens and error_kind, where the docs promise nullable dtypes;
- `run --help` did not say that `--model FILE.gguf` starts llama-server;
- every plain run printed a line about draft counters that names vLLM;
- `-q` still printed "run folder", and `diff` had no `-q`.
(The blank SVG is in tests/test_svg_grader.py.)"""
from __future__ import annotations

import json

from fault_server import FaultServer
from runfactory import make_run, rec
from token_stub import TokenStub


def gsm8k_folder(tmp_path, data_dir, rows_changed):
    rows = [json.loads(line) for line in (data_dir / "gsm8k" / "test.jsonl").read_text().splitlines()[:6]]
    for n, answer in rows_changed.items():
        rows[n]["answer"] = answer
    bad = tmp_path / "data"
    (bad / "gsm8k").mkdir(parents=True)
    (bad / "gsm8k" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return bad


def test_skip_bad_rows_says_which_and_keeps_them_in_the_manifest(tmp_path, data_dir, run_cli):
    bad = gsm8k_folder(tmp_path, data_dir, {2: "no gold answer here", 4: "nor here"})
    with FaultServer(default_answer="The answer is 0") as server:
        proc = run_cli("run", "gsm8k", "--endpoint", server.url, "--data-dir", bad, "--skip-bad-rows",
                       "--run-dir", tmp_path / "r", "--quiet")
    assert proc.returncode in (0, 1), proc.stderr
    assert "skipped 2 bad rows (--skip-bad-rows" in proc.stderr, proc.stderr
    assert "row 2 (line 3): no question or no '#### answer'" in proc.stderr and "row 4 (line 5)" in proc.stderr
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    skipped = manifest["skipped_rows"]
    assert skipped["count"] == 2 and [s["where"].split(": ")[-1] for s in skipped["first"]] == \
        ["row 2 (line 3)", "row 4 (line 5)"]
    shown = run_cli("show", tmp_path / "r")
    assert "skipped bad rows (--skip-bad-rows): 2" in shown.stdout


def test_a_quiet_run_keeps_its_summary_line_and_folder_and_diff_has_quiet(tmp_path, data_dir, run_cli):
    with TokenStub(n_tokens=8) as stub:
        for name in ("a", "b"):
            proc = run_cli("run", "gsm8k", "--endpoint", stub.url, "--data-dir", data_dir, "--limit", 3,
                           "--logprobs", 2, "--run-dir", tmp_path / name, "-q")
            assert proc.returncode == 0, proc.stderr
            # issue 42 undid issue 25's silence: -q hides the progress, not the result
            assert proc.stdout.startswith("gsm8k: accuracy") and proc.stdout.count("\n") == 1, proc.stdout
            assert f"run folder: {tmp_path / name}" in proc.stderr, proc.stderr
            assert "draft counters" not in proc.stdout + proc.stderr and "vLLM" not in proc.stdout + proc.stderr
    quiet = run_cli("diff", tmp_path / "a", tmp_path / "b", "-q")
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout.strip().count("\n") == 0 and "3 identical" in quiet.stdout, quiet.stdout
    loud = run_cli("diff", tmp_path / "a", tmp_path / "b")
    assert loud.stdout.count("\n") > 3


def test_lossless_writes_its_html_inside_the_run_dir_it_makes(tmp_path, data_dir, run_cli):
    root = tmp_path / "R"
    with TokenStub(n_tokens=8) as base, TokenStub(n_tokens=8) as cand:
        proc = run_cli("lossless", "gsm8k", "--baseline-endpoint", base.url, "--candidate-endpoint", cand.url,
                       "--data-dir", data_dir, "--limit", 2, "--run-dir", root, "--html", root / "diff.html",
                       "--json", root / "reports" / "diff.json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert (root / "diff.html").read_text().startswith("<!doctype html>") or (root / "diff.html").stat().st_size
    assert json.loads((root / "reports" / "diff.json").read_text())["counts"]["identical"] == 2
    # outside the folder it makes, a missing folder is still the user's to fix
    proc = run_cli("lossless", "gsm8k", "--baseline-endpoint", "http://127.0.0.1:9/v1", "--candidate-endpoint",
                   "http://127.0.0.1:9/v1", "--limit", 2, "--run-dir", tmp_path / "R2", "--html",
                   tmp_path / "nowhere" / "diff.html")
    assert proc.returncode == 2 and "does not exist" in proc.stderr and not (tmp_path / "nowhere").exists()


def test_show_medians_say_their_counts_and_ttft_is_over_records_with_both(tmp_path):
    from evalsuite.analysis.summary import format_summary, summarize

    # 11 fast streamed records with a first token, 9 slow ones without (a server that sent no
    # first chunk apart): the median TTFT of the 11 must sit beside their own median total
    records = [rec(f"main/{n}", "correct", ttft_s=0.07 + 0.001 * n, total_s=0.08 + 0.001 * n) for n in range(11)]
    records += [rec(f"main/{11 + n}", "correct", ttft_s=None, total_s=0.05) for n in range(9)]
    summary = summarize({"pack": "gsm8k"}, records)
    timing = summary["timing"]
    assert timing["ttft_s"]["n"] == 11 and timing["total_s"]["n"] == 20
    assert timing["total_s_with_ttft"]["n"] == 11
    assert timing["ttft_s"]["median"] <= timing["total_s_with_ttft"]["median"]
    text = format_summary(summary)
    assert "first token 0.075 s (n=11)" in text and "total over the same records 0.085 s (n=11)" in text, text
    assert "total over all 0.0805 s (n=20)" in text and "completion 100 (n=20)" in text


def test_avg_interval_names_the_method_it_used(tmp_path, run_cli):
    records = [rec(f"main/{n}", "wrong", sample=j) for n in range(20) for j in range(4)]
    run = make_run(tmp_path / "s", "gsm8k", records, decoding={"temperature": 0.7}, item_ids=[f"main/{n}" for n in range(20)],
                   fingerprint="f", extra_manifest={"samples": 4})
    shown = run_cli("show", run)
    line = next(x for x in shown.stdout.splitlines() if x.startswith("avg@4"))
    assert "Wilson 95%" in line and "t 95%" not in line, line
    records = [rec(f"main/{n}", "correct" if j < n % 3 else "wrong", sample=j) for n in range(20) for j in range(4)]
    run = make_run(tmp_path / "t", "gsm8k", records, decoding={"temperature": 0.7}, item_ids=[f"main/{n}" for n in range(20)],
                   fingerprint="f", extra_manifest={"samples": 4})
    line = next(x for x in run_cli("show", run).stdout.splitlines() if x.startswith("avg@4"))
    assert "Student-t 95% over items" in line, line


def test_records_frame_has_the_documented_dtypes_when_a_column_is_empty(tmp_path):
    import evalsuite

    run = make_run(tmp_path / "r", records=[rec("main/0", "correct"), rec("main/1", "wrong")])
    frame = evalsuite.open_run(run).records
    assert str(frame["reasoning_tokens"].dtype) == "Int64" and frame["reasoning_tokens"].isna().all()
    assert str(frame["error_kind"].dtype) == "string" and str(frame["judge"].dtype) == "string"
    assert str(frame["ttft_s"].dtype) == "Float64" and str(frame["equal"].dtype) == "boolean"
    assert str(frame["completion_tokens"].dtype) == "Int64" and str(frame["id"].dtype) == "string"


def test_run_help_says_a_gguf_model_starts_llama_server(run_cli):
    text = " ".join(run_cli("run", "--help").stdout.split())
    assert "--model" in text and ".gguf" in text and "starts a server on it" in text, text
    assert "llama.cpp's llama-server" in text and "smollm2" in text, text   # issue 41: the real model, the fallback


def test_draft_counters_are_said_only_when_speculation_is_configured_or_they_move(tmp_path):
    from evalsuite.analysis.summary import format_summary, summarize

    none = {"speculation": {"http://127.0.0.1:8080/v1": {"during_run": None, "summary":
            "speculation: no draft counters at /metrics (speculation off — vLLM shows them only when it is on — "
            "or llama-server started without --metrics)"}}}
    plain = {"pack": "gsm8k", **none}
    text = format_summary(summarize(plain, [rec("main/0")]), plain)
    assert "draft counters" not in text and "vLLM" not in text, text
    asked = {**plain, "decoding": {"extra_body": {"speculative.n_max": 8}}}
    assert "no draft counters at /metrics" in format_summary(summarize(asked, [rec("main/0")]), asked)
    managed = {**plain, "engine": {"managed": {"argv": ["llama-server", "-m", "m.gguf", "-md", "d.gguf"]}}}
    assert "no draft counters at /metrics" in format_summary(summarize(managed, [rec("main/0")]), managed)
    moved = {"pack": "gsm8k", "speculation": {"u": {"during_run": {"drafted": 10, "accepted": 9},
                                                     "summary": "speculation engaged: 9 of 10 drafted tokens accepted"}}}
    assert "speculation engaged" in format_summary(summarize(moved, [rec("main/0")]), moved)


def test_regrade_says_outcomes_in_the_words_run_uses(tmp_path):
    from evalsuite.analysis.regrade import regrade_main

    # recorded as correct by an older grader; the current one finds no number in "I am not sure."
    record = rec("main/0", "correct", answer="I am not sure.")
    run = make_run(tmp_path / "r", records=[record])
    lines = []
    assert regrade_main(run, echo=lines.append) == 0
    change = lines[0]
    assert "\tcorrect -> unextracted\t" in change and "True" not in change.split("\t")[1], change
