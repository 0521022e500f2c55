"""Issue 34 #1: a sampled gate must be able to fail. Two sampled runs of 20 items x 4 samples
whose rates are all equal passed `gate --max-drop 1` with "Δ +0.0 pp [+0.0, +0.0] ... p=1"
(an interval collapsed to a point, no power check), where the same gate on greedy runs of that
size exits 2. Now the sampled gate refuses what it cannot detect (exit 2 with the items or
samples needed), its interval stays open at rates of 0, 1 and ties, and with enough items it
still passes and fails on planted rates.

Runs are written by tests/runfactory.py with one record per (item, sample), as `run --samples N`
writes them."""
from __future__ import annotations

import io
import json
import random

import pytest
from runfactory import make_run, rec

from evalsuite.analysis.gate.decide import gate_main
from evalsuite.analysis.sampling.estimators import ItemSamples, paired_rates

SAMPLED = {"temperature": 0.7, "top_p": 1.0, "seed": 0}


def sampled_run(path, correct: list[int], k: int):
    """One sampled run: item n answered k times, the first correct[n] of them right."""
    records = []
    for n, c in enumerate(correct):
        for j in range(k):
            records.append(rec(f"main/{n}", "correct" if j < c else "wrong", sample=j))
    ids = [f"main/{n}" for n in range(len(correct))]
    fingerprint = f"fp-{len(correct)}-items"   # the same items on both sides
    return make_run(path, "gsm8k", records, decoding=SAMPLED, item_ids=ids, fingerprint=fingerprint,
                    extra_manifest={"samples": k})


def gate(tmp_path, base, cand, *args, name="g"):
    out = io.StringIO()
    json_path = tmp_path / f"{name}.json"
    code = gate_main(base, cand, config_start=tmp_path, out=out, json_path=json_path, **dict(args))
    return code, out.getvalue().strip(), json.loads(json_path.read_text())


def binomial_counts(rng: random.Random, probs: list[float], k: int, shift: float = 0.0) -> list[int]:
    return [sum(rng.random() < max(0.0, p - shift) for _ in range(k)) for p in probs]


# ---------------------------------------------------------------------------- 20 items x 4 samples


@pytest.mark.parametrize("rates", ["equal", "unequal"])
def test_twenty_items_four_samples_cannot_gate_a_one_point_drop(tmp_path, rates):
    rng = random.Random(3)
    base_counts = [rng.randrange(0, 5) for _ in range(20)]
    cand_counts = list(base_counts) if rates == "equal" else [min(4, c + rng.choice((-1, 0, 1))) if c else c
                                                              for c in base_counts]
    base = sampled_run(tmp_path / "a", base_counts, 4)
    cand = sampled_run(tmp_path / "b", cand_counts, 4)
    code, line, data = gate(tmp_path, base, cand, ("max_drop", 1.0))
    assert code == 2, line
    assert line.startswith("UNUSABLE: a 1 pp drop is undetectable here"), line
    # the items (or samples) a 1 pp drop needs, and the way out
    assert "paired items at 4 samples" in line and "samples per item" in line, line
    assert "--allow-underpowered" in line
    # --allow-underpowered runs it, loudly
    code, line, data = gate(tmp_path, base, cand, ("max_drop", 1.0), ("allow_underpowered", True), name="g2")
    assert code in (0, 1) and "WARNING underpowered" in line, line
    lo, hi = data["details"]["sampled"]["ci95_pp"]
    assert lo < hi, "the interval collapsed to a point"
    assert data["details"]["underpowered"]


def test_the_refusal_names_enough_items_and_samples(tmp_path):
    """Each number the refusal gives is enough: that many items (or samples) pass the power check."""
    base = sampled_run(tmp_path / "a", [2] * 20, 4)
    cand = sampled_run(tmp_path / "b", [2] * 20, 4)
    code, line, data = gate(tmp_path, base, cand, ("max_drop", 5.0))
    assert code == 2, line
    power = data["details"]["power"]
    n_needed, k_needed = power["items_needed"], power["samples_needed"]
    assert n_needed > 20 and k_needed > 4, power
    more_items = sampled_run(tmp_path / "c", [2] * n_needed, 4)
    more_items_b = sampled_run(tmp_path / "d", [2] * n_needed, 4)
    code, line, _ = gate(tmp_path, more_items, more_items_b, ("max_drop", 5.0), name="g2")
    assert code == 0, line
    more_samples = sampled_run(tmp_path / "e", [k_needed // 2] * 20, k_needed)
    more_samples_b = sampled_run(tmp_path / "f", [k_needed // 2] * 20, k_needed)
    code, line, _ = gate(tmp_path, more_samples, more_samples_b, ("max_drop", 5.0), name="g3")
    assert code == 0, line


# ---------------------------------------------------------------------------- enough items


def test_enough_items_pass_the_same_rates_and_fail_a_planted_drop(tmp_path):
    rng = random.Random(11)
    probs = [rng.uniform(0.2, 0.9) for _ in range(400)]
    base = sampled_run(tmp_path / "a", binomial_counts(rng, probs, 16), 16)
    again = sampled_run(tmp_path / "b", binomial_counts(rng, probs, 16), 16)
    worse = sampled_run(tmp_path / "c", binomial_counts(rng, probs, 16, shift=0.10), 16)
    code, line, data = gate(tmp_path, base, again, ("max_drop", 5.0))
    assert code == 0 and line.startswith("PASS: "), line
    assert "WARNING" not in line and data["details"]["power"]["min_detectable_drop_pp"] < 5.0
    code, line, data = gate(tmp_path, base, worse, ("max_drop", 5.0), name="g2")
    assert code == 1 and line.startswith("FAIL: success rate dropped"), line
    lo, hi = data["details"]["sampled"]["ci95_pp"]
    assert hi < -5.0 < 0, (lo, hi)
    # at best these items could show a 0.1 pp drop, but with their spread a 1 pp drop would
    # pass unnoticed most of the time: refused on the 80%-power figure, with what it would take
    code, line, data = gate(tmp_path, base, again, ("max_drop", 1.0), name="g3")
    assert code == 2 and "the drop detectable with 80% power at α=0.05 is ~2.3 pp" in line, line
    assert data["details"]["power"]["best_case_drop_pp"] < 1.0 < data["details"]["power"]["min_detectable_drop_pp"]


# ---------------------------------------------------------------------------- the interval


def _items(counts: list[int], k: int) -> dict[str, ItemSamples]:
    return {f"i{n}": ItemSamples(f"i{n}", "main", k, c, 0, None, False) for n, c in enumerate(counts)}


@pytest.mark.parametrize("rate", [0, 4, 2])   # p = 0, p = 1, and a tie at 1/2 on every item
def test_interval_stays_open_at_zero_one_and_ties(rate):
    a, b = _items([rate] * 20, 4), _items([rate] * 20, 4)
    pair = paired_rates(a, b, list(a))
    lo, hi = pair.ci95_pp
    assert pair.delta_pp == 0.0
    assert lo < -1.0 and hi > 1.0, (lo, hi)       # 20 items x 4 samples cannot pin a difference to a point
    assert pair.p == 1.0
    # more items narrow it, as an interval that accounts for n must
    wide = hi - lo
    a, b = _items([rate] * 2000, 4), _items([rate] * 2000, 4)
    lo, hi = paired_rates(a, b, list(a)).ci95_pp
    assert 0 < hi - lo < wide / 5


def test_interval_covers_the_true_difference_at_extreme_rates():
    """Simulated coverage of the 95% interval over fixed items whose true rates sit at or near 0
    and 1 on both sides (where an observed-variance interval collapses most often)."""
    rng = random.Random(5)
    n_items, k, trials = 30, 4, 400
    p_a = [0.0] * 10 + [1.0] * 10 + [0.05] * 5 + [0.95] * 5
    p_b = [0.0] * 10 + [1.0] * 10 + [0.02] * 5 + [0.9] * 5
    truth = 100 * (sum(p_b) - sum(p_a)) / n_items
    covered = 0
    for _ in range(trials):
        a = _items(binomial_counts(rng, p_a, k), k)
        b = _items(binomial_counts(rng, p_b, k), k)
        lo, hi = paired_rates(a, b, list(a)).ci95_pp
        covered += lo <= truth <= hi
    assert covered / trials >= 0.93, covered / trials


# ---------------------------------------------------------------------------- as the issue ran it


def test_two_runs_of_a_server_that_answers_every_item_the_same_way(tmp_path, data_dir, run_cli):
    """20 GSM8K items, --samples 4 --temperature 0.7, twice against a server whose every item is
    always right or always wrong: today's main printed "PASS … Δ +0.0 pp [+0.0, +0.0] … p=1"."""
    from fault_server import prompt_key
    from sampling_stub import SamplingStub
    from evalsuite.tasks import LoadOptions, get_pack

    pack = get_pack("gsm8k")
    items = pack.load(LoadOptions(data_dir=data_dir))[:20]
    probs = {prompt_key(pack.prompt(i)[-1]["content"]): (i.gold, float(n % 2)) for n, i in enumerate(items)}
    with SamplingStub(probs) as stub:
        for name, seed in (("a", 0), ("b", 100)):
            proc = run_cli("run", "gsm8k", "--endpoint", stub.url, "--data-dir", data_dir, "--limit", 20, "--samples", 4,
                           "--temperature", 0.7, "--request-seed", seed, "--run-dir", tmp_path / name, "--quiet")
            assert proc.returncode == 0, proc.stderr
    gate = run_cli("gate", "--baseline", tmp_path / "a", "--candidate", tmp_path / "b", "--max-drop", 1,
                   "--junit", tmp_path / "g.xml")
    assert gate.returncode == 2, gate.stdout
    assert gate.stdout.startswith("UNUSABLE: a 1 pp drop is undetectable here") and "paired items at 4 samples" in gate.stdout
    assert 'name="samples_needed_for_max_drop"' in (tmp_path / "g.xml").read_text()
    # the seeds differ (other samples) and are said, not refused
    allowed = run_cli("gate", "--baseline", tmp_path / "a", "--candidate", tmp_path / "b", "--max-drop", 1,
                      "--allow-underpowered")
    assert allowed.returncode == 0 and "[-" in allowed.stdout and "[+0.0, +0.0]" not in allowed.stdout, allowed.stdout
    assert "compared across: request seed (other samples): baseline 0 vs candidate 100" in allowed.stdout


def test_the_best_case_bound_alone_refuses():
    """The exact bound (m items each losing one answer) refuses even where the normal
    approximation would pass: the rule, on its own numbers."""
    from evalsuite.analysis.gate.power import SampledPower, sampled_underpowered
    from evalsuite.analysis.gate.settings import GateSettings

    pw = SampledPower(n_pairs=100, samples=2, min_loss=6, best_case_pp=3.0, mde_pp=0.5, items_needed=300,
                      samples_needed=6)
    why = sampled_underpowered(pw, GateSettings(max_drop=1.0))
    assert why.startswith("a 1 pp drop is undetectable here: the smallest drop 100 paired items × 2 samples can "
                          "show significant at α=0.05 is 3 pp"), why
    assert sampled_underpowered(pw, GateSettings(max_drop=3.0)) is None
