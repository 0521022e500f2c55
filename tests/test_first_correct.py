"""Tokens to the first correct answer inside the reasoning: prefixes graded by the pack's grader."""
from __future__ import annotations

import io
import json

from runfactory import make_run, rec

from evalsuite.analysis.first_correct import (
    boundaries,
    first_correct,
    first_correct_offset,
    first_correct_run,
    pack_grader,
    pair_first_correct,
)
from evalsuite.store import load_run

FOUND_EARLY = ("We need 6 groups of 7. So 6 times 7 is 42.\nLet me double check: 7 + 7 + 7 + 7 + 7 + 7 = 42. "
               "Yes. Another check: 6 * 7 = 42.")


def test_boundaries_are_line_and_sentence_ends():
    text = "One. Two? Three!\n\nFour 3.5 five\nsix"
    assert [text[:e] for e in boundaries(text)] == ["One. ", "One. Two? ", "One. Two? Three!\n\n",
                                                    "One. Two? Three!\n\nFour 3.5 five\n", text]


def test_first_prefix_graded_correct_with_the_gsm8k_grader(tmp_path):
    run = load_run(make_run(tmp_path / "r", records=[rec("main/0", reasoning=FOUND_EARLY, reasoning_tokens=40)]))
    record = run.records[0]
    grade = pack_grader(run)(record)
    assert grade("We need 6 groups of 7. So 6 times 7 is 42.") and not grade("We need 6 groups of 7. ")
    result = first_correct(record, grade)
    assert result.found and FOUND_EARLY[:result.char_offset] == "We need 6 groups of 7. So 6 times 7 is 42.\n"
    # no token stream: the position is the prefix's share of the characters × usage.reasoning_tokens
    assert result.token_source.startswith("estimated: the prefix's share of the reasoning characters × server usage")
    assert result.tokens_to_first == 40 * result.char_offset / len(FOUND_EARLY)
    assert result.tokens_after == 40 - result.tokens_to_first


def test_token_position_from_the_stored_token_stream(tmp_path):
    pieces = ["We", " need", " 6", " groups", " of", " 7", ".", " 6", " times", " 7", " is", " 42", ".\n", "Yes", "."]
    entries = [{"token": t, "bytes": None, "id": None, "logprob": -0.1, "part": "reasoning", "top": []} for t in pieces]
    entries.append({"token": "42", "bytes": None, "id": None, "logprob": -0.1, "part": "answer", "top": []})
    folder = make_run(tmp_path / "r", records=[rec("main/0", reasoning="".join(pieces), answer="42", logprobs=entries)],
                      decoding={"logprobs": 1})
    run = load_run(folder)
    record = run.records[0]
    result = first_correct(record, pack_grader(run)(record), run.logprobs(record))
    assert result.token_source == "token stream"
    assert (result.tokens_to_first, result.reasoning_tokens, result.tokens_after) == (13, 15, 2)


def test_bounded_in_count_and_time():
    text = "".join(f"Line {i}.\n" for i in range(1000))
    calls = []

    def is_correct(prefix):
        calls.append(prefix)
        return "Line 537." in prefix

    search = first_correct_offset(text, is_correct, max_prefixes=50)
    assert text[:search.offset].endswith("Line 537.\n") and "Line 538" not in text[:search.offset]
    assert len(calls) <= 50 + 20 and search.bound is None      # 50 coarse prefixes, then at most 19 to pin it
    ticks = iter(range(10_000))
    search = first_correct_offset(text, lambda p: False, max_seconds=5, clock=lambda: next(ticks))
    assert search.offset is None and search.bound == "time" and search.graded <= 7


def test_compare_says_found_later_or_checked_longer(tmp_path):
    from evalsuite.analysis.compare.tables import compare_main

    quick = "Six sevens. So 6 times 7 is 42.\n"
    checks = "".join(f"Check {i}: yes, still fine.\n" for i in range(30))
    wander = "".join(f"Maybe it is {i}? No.\n" for i in range(10, 40))
    a = make_run(tmp_path / "a", label="Q8_0",
                 records=[rec(f"main/{i}", reasoning=quick, reasoning_tokens=10) for i in range(4)])
    checker = make_run(tmp_path / "b", label="IQ3_checks",
                       records=[rec(f"main/{i}", reasoning=quick + checks, reasoning_tokens=400) for i in range(4)])
    wanderer = make_run(tmp_path / "c", label="IQ3_wanders",
                        records=[rec(f"main/{i}", reasoning=wander + quick, reasoning_tokens=400) for i in range(4)])
    out = io.StringIO()
    assert compare_main([a, checker, wanderer], first_correct=True, json_path=tmp_path / "c.json", out=out,
                        err=io.StringIO()) == 0
    text = out.getvalue()
    assert "Tokens to the first correct answer inside the reasoning" in text
    assert "IQ3_checks vs Q8_0 on 4 items both got right" in text and "it mostly checked it longer" in text
    assert "IQ3_wanders vs Q8_0 on 4 items both got right" in text and "it mostly found the answer later" in text
    assert "token positions partly estimated" in text
    data = json.loads((tmp_path / "c.json").read_text())["first_correct"]
    assert [r["n_found"] for r in data["runs"]] == [4, 4, 4]
    checker_pair, wander_pair = data["pairs"]
    assert checker_pair["extra_after"] > 300 and abs(checker_pair["extra_before"]) < 40
    assert wander_pair["extra_before"] > 300


def test_pairs_use_items_found_in_both():
    from evalsuite.analysis.first_correct import FirstCorrect

    def fc(i, first, total, found=True):
        return FirstCorrect(i, found, 1 if found else None, 10, first, total, "token stream", 1, None, 1)

    a = {"x": fc("x", 10, 20), "y": fc("y", 10, 20), "z": fc("z", None, 20, found=False)}
    b = {"x": fc("x", 10, 120), "y": fc("y", 10, 120), "z": fc("z", 5, 20)}
    pair = pair_first_correct("A", "B", a, b)
    assert pair.n == 2 and pair.extra_after == 100 and pair.extra_before == 0
    assert "100% after it: it mostly checked it longer" in pair.words()
    assert first_correct_run   # imported for the compare path


def test_unknown_pack_and_time_bound_are_said(tmp_path):
    from evalsuite.analysis.compare.tables import compare_main

    reasoning = "Six sevens. So 6 times 7 is 42.\n"
    a = make_run(tmp_path / "a", pack="no-such-pack", records=[rec("main/0", reasoning=reasoning, reasoning_tokens=9)])
    b = make_run(tmp_path / "b", pack="no-such-pack", records=[rec("main/0", reasoning=reasoning, reasoning_tokens=9)])
    out = io.StringIO()
    assert compare_main([a, b], first_correct=True, out=out, err=io.StringIO()) == 0
    assert "not available: the pack's grader cannot be loaded (unknown pack 'no-such-pack'" in out.getvalue()
    run = load_run(make_run(tmp_path / "c", records=[rec(f"main/{i}", reasoning=reasoning) for i in range(5)]))
    ticks = iter([0, 0, 0] + [1000] * 10)   # the run's clock: its start, then one reading per item
    searched = first_correct_run(run, [r["id"] for r in run.records], max_seconds_total=10, clock=lambda: next(ticks))
    assert (len(searched.found), searched.skipped) == (2, 3)


def test_end_to_end_through_the_runner_with_planted_reasoning(tmp_path, data_dir, run_cli):
    """Two runs of a planted server (<think> reasoning, as llama.cpp sends it in the content): one
    states the answer and stops, one states it and then checks; another finds it only late. The
    run folders go through `evalsuite run` and `compare --first-correct` reads them."""
    from fault_server import FaultServer, prompt_key

    from evalsuite.tasks import LoadOptions, get_pack

    pack = get_pack("gsm8k")
    items = pack.load(LoadOptions(data_dir=data_dir))[:4]
    checks = "".join(f"Check {i}: the steps still hold.\n" for i in range(40))
    wander = "".join(f"Could it be {i}? No.\n" for i in range(1000, 1040))

    def planted(shape):
        out = {}
        for item in items:
            found = f"Adding the parts gives {item.gold}.\n"
            reasoning = {"quick": found, "checks": found + checks, "late": wander + found}[shape]
            out[prompt_key(pack.prompt(item)[-1]["content"])] = f"<think>{reasoning}</think>The answer is {item.gold}"
        return out

    runs = []
    for shape in ("quick", "checks", "late"):
        with FaultServer(answers=planted(shape)) as server:
            folder = tmp_path / shape
            out = run_cli("run", "gsm8k", "--limit", "4", "-e", server.url, "--data-dir", data_dir,
                          "--run-dir", folder, "--label", shape, "--quiet")
            assert out.returncode == 0, out.stderr
            runs.append(folder)
    out = run_cli("compare", *runs, "--first-correct", "--json", tmp_path / "c.json")
    assert out.returncode == 0, out.stderr
    assert "answer found in the reasoning of 4 of 4 correct items" in out.stdout
    assert "checks vs quick on 4 items both got right" in out.stdout and "it mostly checked it longer" in out.stdout
    assert "late vs quick on 4 items both got right" in out.stdout and "it mostly found the answer later" in out.stdout
    data = json.loads((tmp_path / "c.json").read_text())["first_correct"]
    quick_items = data["runs"][0]["items"]
    assert all(i["char_offset"] == i["reasoning_chars"] for i in quick_items)   # found at the end of its reasoning
