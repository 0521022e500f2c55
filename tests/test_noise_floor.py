"""The engine's own noise: a server that flips near ties at random differs from itself (A/A);
a candidate with the same flip rate is "within the engine's own noise", one that also diverges
for real is "beyond it" (exact test on divergent items, bootstrap over items for KL)."""
from __future__ import annotations

import json

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
    proc = run_cli("diff", root / "baseline", root / "candidate", "--aa", root / "baseline-repeat", "--json", out)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["noise_floor"]["verdict"] == "beyond" and "noise floor (A/A" in proc.stdout
    assert data["drift"]["kl_note"].startswith("KL over the tokens both top-K lists name")
