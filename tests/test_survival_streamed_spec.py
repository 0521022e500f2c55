"""Issue 34 #4: for a streamed speculative run (llama-server sends the draft tokens it accepted
without logprobs) `diff --json` put the divergence at token 38 while the survival curve dropped
at token 1: the walk in common compared the two runs' logprob entries position by position,
and the candidate's entries skip every drafted token. Positions without logprobs are unscored,
not a divergence: the survival curve, the drift and the divergence index agree on every item.

The pair is made by the real client against two loopback servers: tests/token_stub.py (every
token with its logprobs: speculation off) and tests/spec_stub.py (the same tokens, each scored
one followed by a chunk of three accepted drafts without logprobs; some items diverge at a
planted token)."""
from __future__ import annotations

import json

from fault_server import prompt_key
from spec_stub import SpecStub
from token_stub import TokenStub

N_ITEMS, N_TOKENS = 24, 40


def kaplan_meier(ends: list[int], events: list[bool]) -> list[tuple[int, float]]:
    """S(t) at each event time, by the book."""
    s, out = 1.0, [(0, 1.0)]
    for t in sorted({e for e, ev in zip(ends, events) if ev}):
        at_risk = sum(1 for e in ends if e >= t)
        deaths = sum(1 for e, ev in zip(ends, events) if ev and e == t)
        s *= 1 - deaths / at_risk
        out.append((t, s))
    return out


def test_streamed_spec_pair_survival_drift_and_divergence_agree(run_cli, tmp_path, data_dir):
    from evalsuite.tasks import LoadOptions, get_pack

    pack = get_pack("gsm8k")
    items = pack.load(LoadOptions(data_dir=data_dir))[:N_ITEMS]
    planted = {items[n].id: 5 + 4 * (n % 7) for n in range(0, N_ITEMS, 3)}     # tokens 5..29
    diverge = {prompt_key(pack.prompt(i)[-1]["content"]): planted[i.id] for i in items if i.id in planted}
    common = ("--data-dir", data_dir, "--limit", N_ITEMS, "--logprobs", 5, "--concurrency", 4, "--quiet")
    with TokenStub(n_tokens=N_TOKENS) as off, SpecStub(n_tokens=N_TOKENS, draft=3, diverge=diverge) as on:
        for url, name in ((off.url, "spec-off"), (on.url, "spec-on")):
            proc = run_cli("run", "gsm8k", "--endpoint", url, "--run-dir", tmp_path / name, *common)
            assert proc.returncode == 0, proc.stderr[-2000:]
    out = tmp_path / "diff.json"
    proc = run_cli("diff", tmp_path / "spec-off", tmp_path / "spec-on", "--json", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())
    by_id = {i["id"]: i for i in data["items"]}
    assert set(by_id) == {i.id for i in items}
    ends, events = [], []
    for item_id, item in by_id.items():
        drift = item["drift"]
        assert drift is not None, item
        if item_id in planted:
            # the divergence where it was planted, the drift's walk ending there, a divergence
            assert item["class"] == "real" and item["token_index"] == planted[item_id], item
            assert drift["prefix_tokens"] == planted[item_id], (item_id, drift)
        else:
            assert item["class"] == "identical", item
            assert drift["prefix_tokens"] == N_TOKENS, (item_id, drift)   # the whole text, not where entries skip
        # only positions scored on both sides are measured: never more than the walk
        assert drift["tokens"] <= drift["prefix_tokens"]
        assert drift["tokens"] > 0 and drift["kl_mean"] == 0.0      # the same numbers where both scored
        ends.append(drift["prefix_tokens"])
        events.append(item_id in planted)
    summary = data["drift"]
    assert summary["divergences"] == len(planted) == data["counts"]["real"]
    assert summary["walked_tokens"] == sum(ends)
    curve = [tuple(p) for p in summary["survival"]]
    expected = kaplan_meier(ends, events)
    assert curve[:len(expected)] == [(t, s) for t, s in expected] or all(
        a[0] == b[0] and abs(a[1] - b[1]) < 1e-12 for a, b in zip(curve, expected)), (curve, expected)
    first_drop = next(t for t, s in curve if s < 1.0)
    assert first_drop == min(planted.values()) == 5, curve     # not token 1
