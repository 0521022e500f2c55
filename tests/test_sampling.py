"""`run --samples N`, avg@N / pass@k / maj@N, paired gates on success rates, and the check that
a candidate's sampled answers come from the baseline's distribution (docs/sampling.md).

The stub (tests/sampling_stub.py) gives each item a known probability of a correct answer and
answers as a seeded sampler would: the same (seed, prompt) always gets the same answer.
"""
from __future__ import annotations

import json
import math
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from fault_server import FaultServer, prompt_key
from sampling_stub import SamplingStub

from evalsuite.analysis.sampling.estimators import ks_for, majority, pass_at_k


def gsm8k_items(data_dir: Path, n: int):
    from evalsuite.tasks import LoadOptions, get_pack

    pack = get_pack("gsm8k")
    return pack, pack.load(LoadOptions(data_dir=data_dir))[:n]


def planted(pack, items, seed: int = 5, low: float = 0.2, high: float = 0.9) -> dict[str, tuple[str, float]]:
    """Each item's probability of a correct answer: known, spread over [low, high]."""
    rng = random.Random(seed)
    return {prompt_key(pack.prompt(i)[-1]["content"]): (i.gold, rng.uniform(low, high)) for i in items}


def evalsuite(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return subprocess.run([sys.executable, "-m", "evalsuite.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=dict(env, PYTHONUNBUFFERED="1"))


def raw_records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines() if line.strip()]


def sampled_run(url: str, data_dir: Path, run_dir: Path, n_items: int, samples: int, *extra) -> subprocess.CompletedProcess:
    r = evalsuite("run", "gsm8k", "--endpoint", url, "--data-dir", data_dir, "--limit", n_items, "--samples", samples,
                  "--temperature", 0.8, "--concurrency", 8, "--run-dir", run_dir, "--quiet", *extra)
    assert r.returncode == 0, r.stderr
    return r


# ---------------------------------------------------------------------------- pure functions


def test_pass_at_k_is_the_unbiased_estimator():
    for n in range(1, 21):
        for c in range(n + 1):
            for k in range(1, n + 1):
                direct = 1 - math.comb(n - c, k) / math.comb(n, k)
                assert pass_at_k(n, c, k) == pytest.approx(direct, abs=1e-12), (n, c, k)
    assert ks_for(16) == [1, 2, 4, 8, 16] and ks_for(10) == [1, 2, 4, 8, 10] and ks_for(1) == [1]
    with pytest.raises(ValueError):
        pass_at_k(4, 1, 5)


def test_majority_breaks_ties_by_the_earliest_vote():
    assert majority(["7", "8", "8", "7"]) == ("7", True)
    assert majority(["8", "7", "7", "8"]) == ("8", True)
    assert majority([None, "8", "7", "7"]) == ("7", False)
    assert majority([None, None]) == (None, False)


def test_distribution_check_on_planted_samples():
    """The permutation chi-square on synthetic answers: the same distribution passes at about the
    rate alpha says (here: not at all on these seeds), a 10-point shift on every item is found."""
    from evalsuite.lossless.sampled import distribution_test

    rng = random.Random(3)
    probs = [rng.uniform(0.2, 0.9) for _ in range(80)]

    def draw(p, n):
        return ["right" if rng.random() < p else "wrong" for _ in range(n)]

    same = {str(i): (draw(p, 32), draw(p, 32)) for i, p in enumerate(probs)}
    worse = {str(i): (draw(p, 32), draw(p - 0.1, 32)) for i, p in enumerate(probs)}
    a, b = distribution_test("answers", same, 0.05), distribution_test("answers", worse, 0.05)
    assert a.verdict() == "consistent with the same distribution", a.p
    assert b.verdict().startswith("differs (p = "), b.p
    assert a.min_shift is not None and 0 < a.min_shift < 0.1   # these N can see a 10-point shift


# ---------------------------------------------------------------------------- run --samples N


# 32 samples of 60 items: enough for the pooled chi-square to see a 10-point shift (its smallest
# detectable shift with 16 samples is ~11 points on these items; docs/sampling.md)
N_ITEMS, N_SAMPLES = 60, 32


@pytest.fixture(scope="module")
def stub_runs(data_dir, tmp_path_factory):
    """Two runs of the same sampling stub with other request seeds, one of a stub 10 points worse."""
    pack, items = gsm8k_items(data_dir, N_ITEMS)
    probs = planted(pack, items)
    root = tmp_path_factory.mktemp("sampled")
    out = {"pack": pack, "items": items, "probs": probs}
    with SamplingStub(probs) as stub:
        sampled_run(stub.url, data_dir, root / "base", N_ITEMS, N_SAMPLES, "--logprobs", 1)
        out["seeds"] = Counter(stub.seeds)
        out["requests"] = stub.completions
        sampled_run(stub.url, data_dir, root / "again", N_ITEMS, N_SAMPLES, "--logprobs", 1, "--request-seed", 1000)
    with SamplingStub(probs, shift=0.1) as worse:
        sampled_run(worse.url, data_dir, root / "worse", N_ITEMS, N_SAMPLES, "--logprobs", 1, "--request-seed", 2000)
    out.update(base=root / "base", again=root / "again", worse=root / "worse")
    return out


def test_samples_are_recorded_per_item_and_sample_with_seed_plus_j(stub_runs):
    records = raw_records(stub_runs["base"])
    keys = Counter((r["id"], r["sample"]) for r in records)
    assert len(keys) == N_ITEMS * N_SAMPLES and set(keys.values()) == {1}
    assert stub_runs["requests"] == N_ITEMS * N_SAMPLES   # one request per sample, none repeated
    assert stub_runs["seeds"] == Counter({j: N_ITEMS for j in range(N_SAMPLES)})
    ids = [r["id"] for r in records]
    assert ids == [i.id for i in stub_runs["items"] for _ in range(N_SAMPLES)]   # compacted in item, sample order
    manifest = json.loads((stub_runs["base"] / "manifest.json").read_text())
    assert manifest["samples"] == N_SAMPLES and manifest["decoding"]["temperature"] == 0.8


def test_avg_and_pass_at_k_match_the_known_probabilities_and_the_records(stub_runs):
    summary = json.loads((stub_runs["base"] / "summary.json").read_text())
    s = summary["sampling"]
    probs = [stub_runs["probs"][prompt_key(stub_runs["pack"].prompt(i)[-1]["content"])][1] for i in stub_runs["items"]]
    # within their intervals, against the truth
    lo, hi = s["avg_ci95"]
    assert lo <= sum(probs) / len(probs) <= hi
    for k in s["ks"]:
        truth = sum(1 - (1 - p) ** k for p in probs) / len(probs)
        plo, phi = s["pass_at_k"][str(k)]["ci95"]
        assert plo <= truth <= phi, (k, truth, plo, phi)
    # exactly, against a direct computation from the records
    per_item: dict[str, list[dict]] = {}
    for r in raw_records(stub_runs["base"]):
        per_item.setdefault(r["id"], []).append(r)
    counts = [(len(rs), sum(r["outcome"] == "correct" for r in rs)) for rs in per_item.values()]
    assert s["avg"] == pytest.approx(sum(c / n for n, c in counts) / len(counts), abs=1e-12)
    assert summary["accuracy"] == s["avg"] and summary["n_items"] == N_ITEMS and summary["n_answers"] == N_ITEMS * N_SAMPLES
    for k in s["ks"]:
        direct = sum(1 - math.comb(n - c, k) / math.comb(n, k) for n, c in counts) / len(counts)
        assert s["pass_at_k"][str(k)]["estimate"] == pytest.approx(direct, abs=1e-12)
    maj = 0
    for rs in per_item.values():
        votes = Counter(r["extracted"] for r in rs)
        top = max(votes.values())
        first_top = next(r["extracted"] for r in rs if votes[r["extracted"]] == top)
        maj += first_top == rs[0]["gold"]
    assert s["maj"]["estimate"] == pytest.approx(maj / len(per_item))
    assert s["all_correct"] + s["some_correct"] + s["none_correct"] == pytest.approx(1.0)
    assert s["some_correct"] == pytest.approx(sum(0 < c < n for n, c in counts) / len(counts))
    shown = evalsuite("show", stub_runs["base"])
    assert shown.returncode == 0 and f"avg@{N_SAMPLES}" in shown.stdout and "pass@k k=1" in shown.stdout and f"maj@{N_SAMPLES}" in shown.stdout


def test_gate_and_distribution_check_same_stub_other_seeds_pass(stub_runs, tmp_path):
    gate = evalsuite("gate", "--baseline", stub_runs["base"], "--candidate", stub_runs["again"], "--max-drop", 5)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert gate.stdout.startswith("PASS: ") and "paired permutation test" in gate.stdout
    out = tmp_path / "d.json"
    diff = evalsuite("diff", stub_runs["base"], stub_runs["again"], "--json", out, "--fail-on", "real")
    assert diff.returncode == 0, diff.stdout + diff.stderr
    data = json.loads(out.read_text())
    assert data["verdict"] == "consistent with the same distribution", diff.stdout
    assert data["first_tokens"] is not None   # logprobs kept: the first generated token is tested too
    compare = evalsuite("compare", stub_runs["base"], stub_runs["again"])
    assert compare.returncode == 0 and "no significant change in success rate" in compare.stdout, compare.stdout


def test_gate_and_distribution_check_ten_points_worse_fail(stub_runs, tmp_path):
    gate = evalsuite("gate", "--baseline", stub_runs["base"], "--candidate", stub_runs["worse"], "--max-drop", 5)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert gate.stdout.startswith("FAIL: success rate dropped")
    out = tmp_path / "d.json"
    diff = evalsuite("diff", stub_runs["base"], stub_runs["worse"], "--json", out, "--fail-on", "real")
    assert diff.returncode == 1, diff.stdout + diff.stderr
    data = json.loads(out.read_text())
    assert data["verdict"].startswith("differs (p = ") and data["answers"]["p"] < 0.05
    # the distribution check in the gate: a lax --max-drop passes the rates, the diff fails it
    gate = evalsuite("gate", "--baseline", stub_runs["base"], "--candidate", stub_runs["worse"], "--max-drop", 50,
                     "--diff", out)
    assert gate.returncode == 1 and gate.stdout.startswith("FAIL: distribution check"), gate.stdout
    compare = evalsuite("compare", stub_runs["base"], stub_runs["worse"])
    assert "success rate down" in compare.stdout and "items whose rate moved most" in compare.stdout


def test_sampled_against_greedy_is_refused_with_the_reason(stub_runs, data_dir, tmp_path):
    with SamplingStub(stub_runs["probs"]) as stub:
        r = evalsuite("run", "gsm8k", "--endpoint", stub.url, "--data-dir", data_dir, "--limit", N_ITEMS,
                      "--run-dir", tmp_path / "greedy", "--quiet")
        assert r.returncode == 0, r.stderr
    assert "sample" not in raw_records(tmp_path / "greedy")[0]   # unsampled runs: records as before
    gate = evalsuite("gate", "--baseline", stub_runs["base"], "--candidate", tmp_path / "greedy", "--max-drop", 5)
    assert gate.returncode == 2 and "is sampled" in gate.stdout and "one answer per item" in gate.stdout, gate.stdout
    compare = evalsuite("compare", tmp_path / "greedy", stub_runs["base"])
    assert compare.returncode == 2 and "is sampled" in compare.stderr
    diff = evalsuite("diff", tmp_path / "greedy", stub_runs["base"])
    assert diff.returncode == 2 and "is sampled" in diff.stderr
    report = evalsuite("report", stub_runs["base"], tmp_path / "greedy", "--html", tmp_path / "r.html")
    assert report.returncode == 2 and "is sampled" in report.stderr and not (tmp_path / "r.html").exists()


def test_limit_counts_items_and_resume_refuses_another_n(data_dir, tmp_path):
    pack, items = gsm8k_items(data_dir, 5)
    with SamplingStub(planted(pack, items)) as stub:
        sampled_run(stub.url, data_dir, tmp_path / "r", 5, 3)
        assert len(raw_records(tmp_path / "r")) == 15
        r = evalsuite("run", "gsm8k", "--endpoint", stub.url, "--data-dir", data_dir, "--limit", 5, "--samples", 4,
                      "--temperature", 0.8, "--resume", tmp_path / "r", "--quiet")
        assert r.returncode == 2 and "samples: 3 -> 4" in r.stderr


def test_killed_sampled_run_resumes_each_item_and_sample_exactly_once(data_dir, tmp_path):
    """SIGKILL mid-run: the resume asks only the (item, sample) pairs without a record, and the
    finished run is the same, answer for answer, as a clean one (the seeds make it so)."""
    n_items, samples = 12, 4
    pack, items = gsm8k_items(data_dir, n_items)
    probs = planted(pack, items)
    common = ["--endpoint", None, "--data-dir", data_dir, "--limit", n_items, "--samples", samples,
              "--temperature", 0.8, "--concurrency", 2, "--quiet"]
    with SamplingStub(probs, delay=0.05) as stub:
        common[1] = stub.url
        run_dir = tmp_path / "killed"
        proc = subprocess.Popen([sys.executable, "-m", "evalsuite.cli", "run", "gsm8k", *map(str, common),
                                 "--run-dir", str(run_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            path = run_dir / "records.jsonl"
            if path.exists() and path.read_bytes().count(b"\n") >= 10:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        stub.wait_for_closed_connections()   # every request sent before the kill counted in `asked`
        before = {(r["id"], r["sample"]): r for r in raw_records(run_dir)}
        assert 10 <= len(before) < n_items * samples
        asked = stub.completions
        r = evalsuite("run", "gsm8k", *common, "--resume", run_dir)
        assert r.returncode == 0, r.stderr
        assert stub.completions - asked == n_items * samples - len(before)
        after = raw_records(run_dir)
        assert Counter((x["id"], x["sample"]) for x in after) == Counter(
            {(i.id, j): 1 for i in items for j in range(samples)})
        for x in after:
            if (x["id"], x["sample"]) in before:
                assert x == before[(x["id"], x["sample"])]   # nothing recorded was changed
        clean = tmp_path / "clean"
        assert evalsuite("run", "gsm8k", *common, "--run-dir", clean).returncode == 0
    answers = {(x["id"], x["sample"]): x["answer"] for x in after}
    assert answers == {(x["id"], x["sample"]): x["answer"] for x in raw_records(clean)}


def test_faults_are_retried_and_recorded_per_item_and_sample(data_dir, tmp_path):
    """Injected 5xx / 429 / torn streams: every (item, sample) ends with exactly one record, and
    every request the server saw is counted in one record's attempts; --retry-errors asks again
    exactly the answers that errored."""
    n_items, samples = 10, 4
    pack, items = gsm8k_items(data_dir, n_items)
    answers = {prompt_key(pack.prompt(i)[-1]["content"]): f"The answer is {i.gold}" for i in items}
    always = prompt_key(pack.prompt(items[3])[-1]["content"])
    with FaultServer(answers=answers, rates={"503": 0.1, "429": 0.05, "torn": 0.05}, seed=3, retry_after="0",
                     script={always: ("503",)}) as server:
        run_dir = tmp_path / "faulty"
        r = evalsuite("run", "gsm8k", "--endpoint", server.url, "--data-dir", data_dir, "--limit", n_items,
                      "--samples", samples, "--temperature", 0.8, "--max-retries", 2, "--concurrency", 4,
                      "--run-dir", run_dir, "--quiet")
        assert r.returncode == 1, r.stderr
        records = raw_records(run_dir)
        assert Counter((x["id"], x["sample"]) for x in records) == Counter(
            {(i.id, j): 1 for i in items for j in range(samples)})
        assert sum(x["attempts"] for x in records) == server.completions
        errored = {(x["id"], x["sample"]) for x in records if x["outcome"] == "error"}
        assert {(items[3].id, j) for j in range(samples)} <= errored
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["sampling"]["n_answer_errors"] == len(errored)
    with FaultServer(answers=answers) as healthy:
        r = evalsuite("run", "gsm8k", "--endpoint", healthy.url, "--data-dir", data_dir, "--limit", n_items,
                      "--samples", samples, "--temperature", 0.8, "--resume", run_dir, "--retry-errors", "--quiet")
        assert r.returncode == 0, r.stderr
        assert healthy.completions == len(errored)
    assert len(raw_records(run_dir)) == n_items * samples


# ---------------------------------------------------------------------------- a real engine


@pytest.mark.llama
def test_real_llama_cpp_samples_differ_and_reproduce(llama_server, data_dir, tmp_path):
    """llama-cpp-python on the tiny GGUF, temperature 0.8, 16 samples: an item's samples differ,
    and a rerun sends the same seeds and gets the same answers (llama-cpp-python reseeds its
    sampler per request; one request at a time, so no batching changes the numbers). Two other
    seed ranges of the same server are "consistent" on the first generated token."""
    n_items, samples = 3, 16
    common = ["--endpoint", llama_server.url, "--data-dir", data_dir, "--limit", n_items, "--samples", samples,
              "--temperature", 0.8, "--max-tokens", 12, "--concurrency", 1, "--logprobs", 1, "--quiet"]
    for name, seed in (("a", 0), ("b", 0), ("c", 5000)):
        r = evalsuite("run", "gsm8k", *common, "--request-seed", seed, "--run-dir", tmp_path / name, timeout=600)
        assert r.returncode == 0, r.stderr
    a, b = raw_records(tmp_path / "a"), raw_records(tmp_path / "b")
    assert len(a) == n_items * samples
    per_item: dict[str, set[str]] = {}
    for x in a:
        per_item.setdefault(x["id"], set()).add(x["answer"])
    assert all(len(answers) > 1 for answers in per_item.values()), per_item
    assert {(x["id"], x["sample"]): x["answer"] for x in a} == {(x["id"], x["sample"]): x["answer"] for x in b}
    diff = evalsuite("diff", tmp_path / "a", tmp_path / "c")
    assert diff.returncode == 0, diff.stderr
    assert "first generated token: consistent with the same distribution" in diff.stdout, diff.stdout


def test_report_of_sampled_runs_shows_pass_at_k_curves(stub_runs, tmp_path):
    page = tmp_path / "report.html"
    r = evalsuite("report", stub_runs["base"], stub_runs["worse"], "--html", page)
    assert r.returncode == 0, r.stderr
    html = page.read_text()
    assert '<img alt="pass@k curves" src="data:image/png;base64,' in html
    assert "pass@32" in html and "success rate down" in html and "Items whose rate moved most" in html
    assert "None" not in html.split("</style>")[1]


@pytest.mark.llama
@pytest.mark.slow
def test_real_llama_cpp_speculative_sampling_consistent_perturbed_differs(tiny_models, data_dir, tmp_path):
    """`lossless --samples 16 --temperature 0.8` on llama-cpp-python: prompt-lookup speculation on
    vs off (the same f32 file) is "consistent with the same distribution"; the perturbed weights
    of the engine tests "differ". The tiny random model extracts no answers, so the first
    generated token carries the test."""
    from llama_server import LlamaServer

    def lossless(base_url: str, cand_url: str, name: str) -> dict:
        out = tmp_path / f"{name}.json"
        r = evalsuite("lossless", "gsm8k", "--baseline-endpoint", base_url, "--candidate-endpoint", cand_url,
                      "--samples", 16, "--temperature", 0.8, "--limit", 12, "--max-tokens", 4, "--logprobs", 1,
                      "--data-dir", data_dir, "--run-dir", tmp_path / name, "--json", out, "--quiet", timeout=900)
        # exit 1 when some samples ended as errors: a first token that is end-of-text gives an empty
        # answer, which the client records as `empty_response` (left out of the test on both sides)
        assert r.returncode in (0, 1), r.stderr[-3000:]
        return json.loads(out.read_text())

    base = LlamaServer(tiny_models("f32")).start()
    try:
        spec = LlamaServer(tiny_models("f32"), draft=True).start()
        try:
            on_off = lossless(base.url, spec.url, "spec")
        finally:
            spec.stop()
        perturbed = LlamaServer(tiny_models("f32", perturb=0.5)).start()
        try:
            other = lossless(base.url, perturbed.url, "perturbed")
        finally:
            perturbed.stop()
    finally:
        base.stop()
    print(json.dumps({"spec": on_off["first_tokens"]["p"], "perturbed": other["first_tokens"]["p"],
                      "min_shift": on_off["first_tokens"]["min_detectable_shift"]}), file=sys.stderr)
    assert on_off["verdict"] == "consistent with the same distribution", on_off["first_tokens"]
    assert other["first_tokens"]["verdict"].startswith("differs"), other["first_tokens"]


# ---------------------------------------------------------------------------- the store's key


def test_store_keys_records_and_token_streams_by_item_and_sample(tmp_path):
    """Live (tokens.arrows) and compacted (tokens.parquet): each (item, sample) keeps its own
    record and token stream; the last record per (item, sample) wins; compaction orders by item,
    then sample; records without `sample` keep the item id as their key."""
    from evalsuite.store import (RECORDS, RecordWriter, TokenColumns, compact_records, compact_tokens, load_run,
                                 record_key, sample_key)

    def entries(word: str) -> list[dict]:
        return [{"token": word, "bytes": list(word.encode()), "id": len(word), "logprob": -0.5, "part": "answer",
                 "top": []}]

    (tmp_path / "manifest.json").write_text(json.dumps({"item_ids": ["b", "a"], "samples": 2, "status": "running"}))
    writer = RecordWriter(tmp_path / RECORDS)
    for item, j, word in (("a", 1, "a1"), ("b", 0, "b0"), ("a", 0, "a0"), ("b", 1, "b1-old"), ("b", 1, "b1")):
        writer.append({"id": item, "sample": j, "outcome": "correct", "answer": word},
                      TokenColumns.from_entries(entries(word)))
    writer.close()
    for finished in (False, True):
        run = load_run(tmp_path)
        assert len(run.records) == 4
        for r in run.records:
            assert run.logprobs(r)[0]["token"] == r["answer"]
        if not finished:
            compact_records(tmp_path, ["b", "a"])
            compact_tokens(tmp_path, ["b", "a"])
    assert [(r["id"], r["sample"]) for r in load_run(tmp_path).records] == [("b", 0), ("b", 1), ("a", 0), ("a", 1)]
    assert not (tmp_path / "tokens.arrows").exists() and (tmp_path / "tokens.parquet").exists()
    assert record_key({"id": "x"}) == "x" == sample_key("x", 0) == sample_key("x", None)
    assert record_key({"id": "x", "sample": 3}) != record_key({"id": "x", "sample": 0})
