"""Looping responses: the tail rule on real looping shapes, and `looped` counted per run."""
from __future__ import annotations

import io
import json

import pytest
from runfactory import make_run, rec

from evalsuite.analysis.loops import MIN_SPAN, is_looped, loop_of, repeated_tail
from evalsuite.analysis.summary import format_summary, summarize

# shapes seen from small quants at max_tokens
REPEATED_LINE = ("To find the total, add the two amounts.\n"
                 + "Wait, let me re-check the second amount.\n" * 40)
REPEATED_SENTENCE = "First, 3 + 4 = 7. " + "So the answer is 7. " * 25
REPEATED_TOKENS = "The final answer is" + " the" * 60
REPEATED_PARAGRAPH = "Intro.\n\n" + ("Hmm, maybe I made a mistake. Let me recompute: 12 * 3 = 36, and 36 + 4 = 40.\n"
                                   "So the total is 40. But wait, the question asks for the difference.\n\n") * 6
COUNTING = "Listing them: " + "".join(f"item {i} is fine. " for i in range(1, 60))


@pytest.mark.parametrize("text,unit", [
    (REPEATED_LINE, "\nWait, let me re-check the second amount."),
    (REPEATED_SENTENCE, " So the answer is 7."),
    (REPEATED_TOKENS, " the"),
    (COUNTING, " item 59 is fine."),
])
def test_real_looping_shapes_are_found(text, unit):
    loop = repeated_tail(text)
    assert loop is not None and loop.unit == unit and loop.period == len(unit.replace("59", "0"))
    assert loop.repeats >= 3 and loop.span >= MIN_SPAN


def test_a_repeated_paragraph_and_trailing_whitespace():
    loop = repeated_tail(REPEATED_PARAGRAPH + "  \n")
    assert loop is not None and loop.repeats >= 5 and "difference" in loop.unit and "recompute" in loop.unit


@pytest.mark.parametrize("text", [
    "The quick brown fox jumps over the lazy dog. It was a sunny day by the old mill near the hill, and then 42.",
    "Intro. " + "So the answer is 5. " * 2,              # two copies are not a loop
    "ha ha ha ha",                                     # too short to be one
    REPEATED_LINE + "Therefore the second amount is 12, and the total is 30.",   # it got out of the loop
    "",
])
def test_text_that_does_not_loop(text):
    assert repeated_tail(text) is None


def test_looped_needs_max_tokens():
    cut = rec("main/0", "truncated", answer="", reasoning=REPEATED_LINE)
    assert cut["finish_reason"] == "length" and is_looped(cut)
    assert loop_of(cut).unit.startswith("\nWait")
    stopped = rec("main/1", "wrong", answer=REPEATED_SENTENCE)   # stopped by itself: repetitive, not looped
    assert not is_looped(stopped)
    plain_cut = rec("main/2", "truncated", answer="A long answer that simply ran out of room before the end of")
    assert not is_looped(plain_cut)


def test_looped_in_show_summary_and_compare(tmp_path):
    from evalsuite.analysis.compare.tables import compare_main

    records = [rec("main/0", "correct"), rec("main/1", "truncated", answer=REPEATED_SENTENCE, completion_tokens=4096),
               rec("main/2", "truncated", answer="ran out of room"), rec("main/3", "wrong")]
    summary = summarize({"pack": "gsm8k"}, records, categories={})
    assert summary["n_truncated"] == 2 and summary["n_looped"] == 1
    assert summary["subsets"][0]["n_looped"] == 1
    assert summary["looped"][0]["id"] == "main/1" and summary["looped"][0]["unit"] == " So the answer is 7."
    text = format_summary(summary)
    assert "truncated 2 (1 looped)" in text and "main/1: 25× ' So the answer is 7.'" in text
    assert "(~4,096 per item, 4,096 completion tokens in all)" in text
    # the run's max_tokens, per item: a sum over the items read as a wrong cap (issue 42)
    eight = [rec(f"main/{n}", "truncated", answer=REPEATED_SENTENCE, completion_tokens=256) for n in range(8)]
    capped = format_summary(summarize({"pack": "gsm8k"}, eight, categories={}), {"decoding": {"max_tokens": 256}})
    assert "looped: 8 truncated item(s) end in a repeated tail until max_tokens (256 per item, 2,048 completion tokens in all)" in capped
    base = make_run(tmp_path / "a", records=[rec(r["id"], "correct") for r in records], label="Q8_0")
    cand = make_run(tmp_path / "b", records=records, label="IQ2_XS")
    out, err = io.StringIO(), io.StringIO()
    assert compare_main([base, cand], json_path=tmp_path / "c.json", out=out, err=err) == 0, err.getvalue()
    assert "IQ2_XS: 1 of its 2 truncated items looped (a repeated tail until max_tokens): 4,096 completion tokens" in out.getvalue()
    runs = json.loads((tmp_path / "c.json").read_text())["runs"]
    assert [r["n_looped"] for r in runs] == [0, 1]


def test_a_long_response_is_fast_enough():
    import time

    import random

    rng = random.Random(1)
    text = " ".join(rng.choice(["apple", "pear", "plum", "fig", "kiwi", "lime"]) for _ in range(80_000))  # no loop
    start = time.perf_counter()
    assert repeated_tail(text) is None
    # ~0.05 s idle, 0.14 s on a loaded 2-core machine: the bound catches a scan that grows with
    # the square of 480,000 characters (minutes), not the machine's speed (benchmarks/ measure that)
    assert time.perf_counter() - start < 10.0


def test_show_and_the_finished_runs_summary_json_count_looped(tmp_path, run_cli):
    """show and the end of a run read the records without their text: the loops are read apart."""
    from evalsuite.run.runner import finish_run

    records = [rec("main/0", "correct"), rec("main/1", "truncated", answer="", reasoning=REPEATED_LINE),
               rec("main/2", "truncated", answer="ran out of room")]
    folder = make_run(tmp_path / "r", records=records, label="IQ2_XS")
    out = run_cli("show", folder)
    assert out.returncode == 0, out.stderr
    assert "truncated 2 (1 looped)" in out.stdout and "main/1: 40×" in out.stdout
    data = json.loads(run_cli("show", folder, "--format", "json").stdout)
    assert data["n_looped"] == 1 and data["looped"][0]["id"] == "main/1"
    manifest = json.loads((folder / "manifest.json").read_text())
    summary = finish_run(folder, manifest, [r["id"] for r in records], "finished")
    assert summary["n_looped"] == 1
    assert json.loads((folder / "summary.json").read_text())["looped"][0]["unit"].startswith("\nWait")


def token_id_loop(entries) -> bool:
    """An independent reading of the same rule on the server's token ids: the stream ends in at
    least 3 copies of a unit of token ids, whose text (digit runs as one) is >= MIN_SPAN characters."""
    import re

    ids = [e.get("id") if e.get("id") is not None else e.get("token") for e in entries]
    texts = [e.get("token") or "" for e in entries]
    n = len(ids)
    for q in range(1, n // 3 + 1):
        length = 0
        while length < n - q and ids[n - 1 - length] == ids[n - 1 - length - q]:
            length += 1
        copies = (length + q) / q
        text = re.sub(r"[0-9]+", "0", "".join(texts[n - length - q:])).rstrip()
        if copies >= 3 and len(text) >= MIN_SPAN:
            return True
    return False


@pytest.mark.skipif("not __import__('llama_server').llama_cpp_available()")
def test_looped_on_a_real_server_agrees_with_its_token_ids(tmp_path, llama_server, data_dir, run_cli):
    """A tiny random model at max_tokens 160 falls into loops: the text rule finds the same
    records as the token-id reading of the server's own stream."""
    from evalsuite.store import load_run

    run_dir = tmp_path / "run"
    out = run_cli("run", "gsm8k", "--limit", "12", "--max-tokens", "160", "-e", llama_server.url, "--logprobs", "1",
                  "--concurrency", "1", "--data-dir", data_dir, "--run-dir", run_dir, "--quiet")
    assert out.returncode == 0, out.stderr
    run = load_run(run_dir)
    truncated = [r for r in run.records if r["outcome"] == "truncated"]
    by_text = {r["id"] for r in truncated if is_looped(r)}
    by_tokens = {r["id"] for r in truncated if token_id_loop(run.logprobs(r) or [])}
    assert truncated and by_text == by_tokens and by_text   # some loop, some do not
    assert len(by_text) < len(truncated)
    show = run_cli("show", run_dir)
    assert f"truncated {len(truncated)} ({len(by_text)} looped)" in show.stdout
