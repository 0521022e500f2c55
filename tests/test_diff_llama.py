"""`evalsuite lossless` / `evalsuite diff` against real llama.cpp servers (llama-cpp-python) on tiny
generated GGUFs: a control (speculation on vs off), near ties (the same weights stored q8_0) and
real divergences (perturbed weights). Every item's verdict is asserted. The servers run with
their defaults (repeat_penalty 1.1 in llama-cpp-python) and no --extra-body: evalsuite itself
must make temperature 0 greedy.

Measured on 2 cores (one server thread each): ~0.1 s per 128-token item, so each run of 60
gsm8k items is ~8 s; the whole file ~1.5 min with server start-ups.
"""
from __future__ import annotations

import json
import sys

import pytest
from conftest import requires_llama
from llama_server import LlamaServer
from tiny_gguf import write_tiny_gguf

from evalsuite.lossless.tokens import VERDICTS

pytestmark = [pytest.mark.llama, requires_llama]

N_ITEMS = 60
MAX_TOKENS = 128
TAU = 0.05
# the reasons that make an item honestly undetermined with llama-cpp-python (no bytes, no ids)
OPAQUE_OR_STOP = ("partial UTF-8", "stopped")


def lossless(run_cli, tmp_path, data_dir, base_url, cand_url, name, *extra):
    out_json = tmp_path / f"{name}.json"
    proc = run_cli("lossless", "gsm8k", "--baseline-endpoint", base_url, "--candidate-endpoint", cand_url,
                   "--limit", N_ITEMS, "--max-tokens", MAX_TOKENS, "--logprobs", 5, *extra,
                   "--data-dir", data_dir, "--run-dir", tmp_path / name, "--json", out_json, "--html",
                   tmp_path / f"{name}.html", "--tau", TAU, "--quiet", timeout=600)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    lossless.stderr = proc.stderr
    print(proc.stdout[:3000], file=sys.stderr)
    data = json.loads(out_json.read_text())
    assert sum(data["counts"][k] for k in VERDICTS) == N_ITEMS
    assert "<script" not in (tmp_path / f"{name}.html").read_text()
    return data


def servers(model_path, draft_candidate: bool, candidate_path=None):
    base = LlamaServer(model_path).start()
    try:
        cand = LlamaServer(candidate_path or model_path, draft=draft_candidate).start()
    except Exception:
        base.stop()
        raise
    return base, cand


def test_control_speculation_on_vs_off_is_lossless(tmp_path, tiny_models, data_dir, run_cli):
    base, cand = servers(tiny_models("f32"), draft_candidate=True)
    try:
        data = lossless(run_cli, tmp_path, data_dir, base.url, cand.url, "control")
    finally:
        base.stop(), cand.stop()
    for item in data["items"]:
        # prompt-lookup speculation verifies drafts with the same f32 weights: every item identical,
        # or at worst a near-tie flip
        assert item["class"] in ("identical", "near_tie"), item
        if item["class"] == "near_tie":
            assert abs(item["margin"]) <= TAU
    assert data["counts"]["identical"] >= N_ITEMS - 2
    assert data["counts"]["real"] == data["counts"]["suspicious"] == 0


def test_same_weights_stored_q8_0_give_only_near_ties(tmp_path, tiny_models, data_dir, run_cli):
    # logit_scale 0.5 flattens the distributions (ties are common); q8_0 storage moves each logprob
    # by ~0.02 nats, under tau. Speculation on vs off on one file gave no flip at all (measured),
    # so the storage precision is the change under test here.
    f32 = write_tiny_gguf(tmp_path / "flat-f32.gguf", dtype="f32", logit_scale=0.5)
    q8 = write_tiny_gguf(tmp_path / "flat-q8_0.gguf", dtype="q8_0", logit_scale=0.5)
    base, cand = servers(f32, draft_candidate=True, candidate_path=q8)
    try:
        data = lossless(run_cli, tmp_path, data_dir, base.url, cand.url, "q8")
    finally:
        base.stop(), cand.stop()
    near = [i for i in data["items"] if i["class"] == "near_tie"]
    # evalsuite recognised llama-cpp-python and sent repeat_penalty 1.0 itself, and said so
    manifest = json.loads((tmp_path / "q8" / "baseline" / "manifest.json").read_text())
    assert manifest["engine"]["endpoints"][0]["engine"] == "llama-cpp-python"
    assert manifest["engine"]["neutral_sent"] == {"repeat_penalty": 1.0}
    assert manifest["decoding"]["extra_body"] == {"repeat_penalty": 1.0}
    assert data["baseline"]["not_top1"] == 0 and data["candidate"]["not_top1"] == 0
    assert "not the server's own top-1" not in lossless.stderr
    for item in data["items"]:
        if item["class"] == "near_tie":
            assert abs(item["margin"]) <= TAU and item["token_index"] is not None
            assert item["baseline_token"]["rank_baseline"] is not None and item["candidate_token"]["rank_baseline"] is not None
        elif item["class"] == "undetermined":
            assert any(word in item["reason"] for word in OPAQUE_OR_STOP), item["reason"]
        else:
            assert item["class"] == "identical", (item["id"], item["class"], item["reason"])
    assert len(near) >= 3
    assert any(abs(i["margin"]) <= 1e-3 for i in near)
    assert data["counts"]["real"] == 0 and data["counts"]["suspicious"] == 0


def test_perturbed_weights_are_real_divergences(tmp_path, tiny_models, data_dir, run_cli):
    base, cand = servers(tiny_models("f32"), draft_candidate=False, candidate_path=tiny_models("f32", perturb=0.5))
    try:
        data = lossless(run_cli, tmp_path, data_dir, base.url, cand.url, "perturbed")
    finally:
        base.stop(), cand.stop()
    real = [i for i in data["items"] if i["class"] == "real"]
    for item in data["items"]:
        assert item["class"] in ("real", "undetermined"), (item["id"], item["class"], item["reason"])
        if item["class"] == "undetermined":
            assert any(word in item["reason"] for word in OPAQUE_OR_STOP), item["reason"]
        else:
            assert item["margin"] is None or item["margin"] > 2 * TAU
    assert len(real) >= N_ITEMS // 3
    assert sum(1 for i in real if i["margin"] is not None and i["margin"] > 1.0) >= N_ITEMS // 4


def test_server_default_sampler_is_named_not_greedy_never_real(tmp_path, tiny_models, data_dir, run_cli):
    # what a run without evalsuite's neutral settings looks like: repeat_penalty 1.1 set by hand
    # (llama-cpp-python's default). The same weights stored f32 and q8_0: no divergence is real.
    f32 = write_tiny_gguf(tmp_path / "flat-f32.gguf", dtype="f32", logit_scale=0.5)
    q8 = write_tiny_gguf(tmp_path / "flat-q8_0.gguf", dtype="q8_0", logit_scale=0.5)
    base, cand = servers(f32, draft_candidate=False, candidate_path=q8)
    try:
        data = lossless(run_cli, tmp_path, data_dir, base.url, cand.url, "penalised",
                        "--extra-body", json.dumps({"repeat_penalty": 1.1}))
    finally:
        base.stop(), cand.stop()
    assert data["baseline"]["not_top1"] > 0                       # measured and reported per run
    assert "were not the server's own top-1" in lossless.stderr  # the end-of-run warning
    assert data["counts"]["real"] == 0 and data["counts"]["suspicious"] == 0
    for item in data["items"]:
        assert item["class"] in ("identical", "not_greedy", "near_tie", "undetermined"), (item["id"], item["reason"])
        if item["class"] == "not_greedy":
            assert "repeat_penalty" in item["reason"]


def test_unstreamed_partial_bytes_blame_no_other_server(tmp_path, tiny_models, data_dir, run_cli):
    # --no-stream on llama-cpp-python: the text holds whole characters, the logprob tokens of
    # partial UTF-8 bytes read "". The reasons must not blame SGLang or llama-server drafts.
    f32 = write_tiny_gguf(tmp_path / "flat-f32.gguf", dtype="f32", logit_scale=0.5)
    q8 = write_tiny_gguf(tmp_path / "flat-q8_0.gguf", dtype="q8_0", logit_scale=0.5)
    base, cand = servers(f32, draft_candidate=False, candidate_path=q8)
    try:
        data = lossless(run_cli, tmp_path, data_dir, base.url, cand.url, "nostream", "--no-stream")
    finally:
        base.stop(), cand.stop()
    for item in data["items"]:
        assert "SGLang" not in item["reason"] and "speculative" not in item["reason"], item["reason"]
        assert "do not spell its text" not in item["reason"], item["reason"]
        if item["class"] == "undetermined":
            assert any(word in item["reason"] for word in OPAQUE_OR_STOP), item["reason"]
    assert data["counts"]["real"] == 0 and data["counts"]["suspicious"] == 0, data["summary"]
    assert data["counts"]["near_tie"] >= 3
