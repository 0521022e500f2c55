"""The engine's own noise: a server that flips near ties at random differs from itself (A/A);
a candidate with the same flip rate is "within the engine's own noise", one that also diverges
for real is "beyond it" (exact test on divergent items, bootstrap over items for KL)."""
from __future__ import annotations

import json

import pytest

from noise_stub import NoiseStub

N = 60


def _lossless(run_cli, tmp_path, data_dir, base_url, cand_url, name):
    out = tmp_path / f"{name}.json"
    proc = run_cli("lossless", "gsm8k", "--baseline-endpoint", base_url, "--candidate-endpoint", cand_url,
                   "--limit", N, "--max-tokens", 24, "--logprobs", 5, "--data-dir", data_dir,
                   "--run-dir", tmp_path / name, "--json", out, "--quiet", "--aa")
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.stdout


def test_same_flip_rate_is_within_the_noise_and_real_divergences_are_beyond(run_cli, tmp_path, data_dir):
    with NoiseStub(flip_rate=0.06, seed=1) as base, NoiseStub(flip_rate=0.06, seed=2) as same, \
            NoiseStub(flip_rate=0.06, real_rate=0.5, seed=3) as worse:
        within, out = _lossless(run_cli, tmp_path, data_dir, base.url, same.url, "same")
        beyond, out_beyond = _lossless(run_cli, tmp_path, data_dir, base.url, worse.url, "worse")
    floor = within["noise_floor"]
    print(f"same flip rate: {floor['summary']}\nreal divergences too: {beyond['noise_floor']['summary']}")
    assert floor["aa_divergent"] > 0, "the A/A pair never differed: the test would prove nothing"
    assert floor["verdict"] == "within", floor
    assert "within the engine's own noise" in out
    assert within["counts"]["real"] == 0
    floor = beyond["noise_floor"]
    assert floor["verdict"] == "beyond" and floor["p_value"] < 0.01, floor
    assert floor["ab_divergent"] > floor["aa_divergent"]
    assert f"beyond it: {floor['ab_divergent']} items diverge where A/A diverges on {floor['aa_divergent']} (p = " \
        in out_beyond
    assert (tmp_path / "worse" / "baseline-repeat" / "manifest.json").exists()


def test_diff_aa_option_reads_a_repeat(run_cli, tmp_path, data_dir):
    with NoiseStub(flip_rate=0.06, seed=1) as base, NoiseStub(flip_rate=0.06, real_rate=0.5, seed=3) as worse:
        _lossless(run_cli, tmp_path, data_dir, base.url, worse.url, "l")
    root = tmp_path / "l"
    out = tmp_path / "d.json"
    proc = run_cli("diff", root / "baseline", root / "candidate", "--aa-run", root / "baseline-repeat", "--json", out)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["noise_floor"]["verdict"] == "beyond" and "noise floor (A/A" in proc.stdout
    assert data["drift"]["kl_note"].startswith("KL over the tokens both top-K lists name")


# ---------------------------------------------------------------------------- issue 34 #3


def test_kl_of_float32_rounded_logprobs_is_far_below_the_stated_floor():
    """The floor (KL_FLOOR nats per token) is above what the logprobs' own rounding gives: the
    same distributions, once as float64 and once rounded to float32 (as servers compute and the
    token store keeps them) and once one float32 step (ulp) off, never reach a tenth of it."""
    import numpy as np
    import pyarrow as pa

    from evalsuite.lossless.drift import position_drift
    from evalsuite.lossless.noise import KL_FLOOR
    from evalsuite.store import TokenColumns

    rng = np.random.default_rng(0)
    worst = 0.0
    for trial in range(200):
        k = int(rng.integers(1, 21))
        logits = rng.normal(0, float(rng.choice([1.0, 4.0, 12.0])), 32_000)
        lp = logits - np.logaddexp.reduce(logits)
        top = np.argsort(-lp)[:k]

        def entries(values):
            return [{"token": f"t{top[0]}", "bytes": None, "id": int(top[0]), "logprob": float(values[0]),
                     "part": "answer", "top": [{"token": f"t{i}", "bytes": None, "id": int(i), "logprob": float(v)}
                                               for i, v in zip(top, values)]}]
        exact = lp[top]
        f32 = exact.astype(np.float32)
        ulp = np.nextafter(f32, np.float32(0)).astype(np.float64)
        tables = [pa.Table.from_batches([TokenColumns.from_entries(entries(v)).to_arrow()]) for v in (exact, f32, ulp)]
        for other in tables[1:]:
            values = position_drift(tables[0], other, 1)
            worst = max(worst, float(values.kl.max()))
    assert KL_FLOOR == 1e-6
    assert worst < KL_FLOOR / 10, worst


def test_aa_pair_differing_by_float_noise_only_is_within(run_cli, tmp_path, data_dir):
    """The same tokens everywhere, the numbers moved by float noise (relative 1e-6): today's main
    said "beyond it: mean KL … vs A/A 0 nats"; KL below the floor is zero."""
    with NoiseStub(seed=1) as base, NoiseStub(seed=2, jitter=1e-6) as noisy:
        data, out = _lossless(run_cli, tmp_path, data_dir, base.url, noisy.url, "float")
    floor = data["noise_floor"]
    print(floor["summary"])
    assert floor["kl_ab_mean"] > 0 and floor["kl_aa_mean"] == 0, floor   # the noise is there to be seen
    assert floor["verdict"] == "within", floor
    assert floor["kl_floor"] == 1e-6 and floor["kl_test"]["p_value"] == 1.0, floor
    assert "below the numerical floor" in floor["summary"], floor["summary"]


def test_beyond_names_its_test_and_a_disagreement_is_said(run_cli, tmp_path, data_dir):
    """A real drift of the numbers with no token flipped: the KL test rejects at α (named in the
    sentence and the JSON), the divergent-item test does not, and the sentence says they disagree."""
    with NoiseStub(seed=1) as base, NoiseStub(seed=2, jitter=1e-2) as drifted:
        data, out = _lossless(run_cli, tmp_path, data_dir, base.url, drifted.url, "drift")
    floor = data["noise_floor"]
    print(floor["summary"])
    assert floor["verdict"] == "beyond", floor
    test = floor["kl_test"]
    assert test["name"].startswith("one-sided paired sign-flip permutation test") and test["p_value"] < floor["alpha"]
    assert test["name"] in floor["summary"] and f"p = {test['p_value']:.3g}" in floor["summary"]
    assert floor["p_value"] >= floor["alpha"]            # no item diverges more often than A/A
    assert "the two tests disagree" in floor["summary"], floor["summary"]
    assert "0 items diverge where A/A diverges on 0 (p = 1" in floor["summary"]   # both tests in the sentence


def test_three_items_of_drift_are_not_beyond_a_test_at_alpha():
    """Three items, each with more KL in A/B than in A/A: a bootstrap interval over three items
    sits above 0, but no test at α can reject with three sign flips (smallest p = 1/8): within."""
    from types import SimpleNamespace as NS

    from evalsuite.lossless.noise import noise_floor

    def diff(kls):
        return NS(items=[NS(id=f"i{n}", verdict="identical", reason="", drift=NS(kl_mean=k)) for n, k in enumerate(kls)])
    floor = noise_floor(diff([0.0, 0.0, 0.0]), diff([1e-3, 2e-3, 1.5e-3]))
    assert floor.kl_diff_ci[0] > 0                  # what the verdict used to rest on
    assert floor.kl_p_value == 0.125 and floor.verdict == "within", floor.sentence
    floor = noise_floor(diff([0.0] * 8), diff([1e-3] * 8))
    assert floor.kl_p_value == pytest.approx(1 / 256) and floor.verdict == "beyond", floor.sentence
