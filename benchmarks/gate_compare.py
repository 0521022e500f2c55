"""`gate` and `compare` analysis time on two full-size paired runs (CMMLU: 11,582 items).

    python benchmarks/gate_compare.py                  # 11,582 items, half of them discordant
    python benchmarks/gate_compare.py --items 6000 --discordant 0.3 --out gate.json

Writes two run folders directly in the record format (docs/records.md; no logprobs) into a
temporary folder, then times, each the median of --runs:
  * load: reading both run folders (evalsuite.store.load_run);
  * gate: evalsuite.analysis.gate.decide.evaluate (loads both runs itself, pairs, exact McNemar, power);
  * compare: compare_runs + format_comparison on the loaded runs (Wilson, exact McNemar, subsets);
  * mcnemar: the exact two-sided binomial p alone, at the run's discordant count;
  * mcnemar_bigint: the earlier big-integer implementation (sum of math.comb) at the same count,
    for reference (skip with --no-bigint).
Target: gate and compare each <= 2 s of analysis time.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_S = 2.0
SUBJECTS = 67   # CMMLU's subject count


def record(item_id: str, subset: str, outcome: str, gold: str) -> dict:
    extracted = gold if outcome == "correct" else "ABCD"[("ABCD".index(gold) + 1) % 4]
    return {
        "schema": 1, "id": item_id, "subset": subset, "gold": gold, "prompt_sha256": "0" * 64,
        "messages": [{"role": "user", "content": f"question {item_id}"}], "prompt": None,
        "answer": f"答案是 {extracted}", "reasoning": None, "reasoning_source": None, "finish_reason": "stop",
        "extracted": extracted,
        "verdict": {"equal": outcome == "correct", "extracted": extracted, "method": "choice",
                    "reason": "benchmark", "extraction": "answer-is", "details": {}},
        "outcome": outcome, "error": None,
        "usage": {"prompt_tokens": 180, "completion_tokens": 12, "reasoning_tokens": None},
        "timing": {"started_at": "2026-01-01T00:00:00.000+00:00", "ttft_s": 0.05, "ttfa_s": 0.05, "total_s": 0.3},
        "server_timings": None, "logprobs": None, "endpoint": "http://127.0.0.1:8080/v1", "model": "m", "attempts": 1,
        "choices": ["甲", "乙", "丙", "丁"], "item_meta": {"lang": "zh", "kind": "choice"},
    }


def write_run(folder: Path, label: str, ids: list[str], subsets: list[str], outcomes: list[str], golds: list[str],
              started_at: str) -> Path:
    folder.mkdir(parents=True)
    manifest = {
        "schema": 1, "suite_version": "bench", "pack": "cmmlu", "pack_version": "1", "template_hash": "0" * 16,
        "load": {"subsets": [], "fewshot": 0, "per_subset": None, "seed": 0, "limit": None, "data_dir": None},
        "dataset": {"fingerprint": "b" * 64, "n_items": len(ids), "source": "benchmarks/gate_compare.py"},
        "item_ids": ids, "api": "chat", "endpoints": ["http://127.0.0.1:8080/v1"], "model": "m",
        "served_models": {}, "decoding": {"temperature": 0.0, "top_p": 1.0, "seed": 0, "max_tokens": 64, "stop": [],
                                          "reasoning_effort": None, "logprobs": None, "extra_body": {}},
        "client": {"concurrency": 32, "timeout": 600, "max_retries": 5, "max_downtime": 300}, "label": label,
        "started_at": started_at, "ended_at": started_at, "status": "finished", "argv": ["benchmark"],
    }
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with open(folder / "records.jsonl", "w", encoding="utf-8") as f:
        for i, s, o, g in zip(ids, subsets, outcomes, golds):
            f.write(json.dumps(record(i, s, o, g), ensure_ascii=False) + "\n")
    return folder


def make_runs(root: Path, n: int, discordant: float, seed: int) -> tuple[Path, Path, int]:
    rng = random.Random(seed)
    subsets = [f"subject{k % SUBJECTS}" for k in range(n)]
    ids = [f"{s}/{k}" for k, s in enumerate(subsets)]
    golds = [rng.choice("ABCD") for _ in range(n)]
    base, cand = [], []
    n_disc = 0
    for _ in range(n):
        a = rng.random() < 0.6
        if rng.random() < discordant:
            b = not a
            n_disc += 1
        else:
            b = a
        base.append("correct" if a else "wrong")
        cand.append("correct" if b else "wrong")
    return (write_run(root / "baseline", "baseline", ids, subsets, base, golds, "2026-01-01T00:00:00.000+00:00"),
            write_run(root / "candidate", "candidate", ids, subsets, cand, golds, "2026-01-01T01:00:00.000+00:00"),
            n_disc)


def bigint_p(k: int, n: int) -> float:
    """The earlier implementation: exact integers, O(n) big binomial coefficients."""
    weights = [math.comb(n, i) for i in range(n + 1)]
    seen = weights[k]
    return min(1.0, sum(w for w in weights if w <= seen) / 2**n)


def timed(fn, runs: int) -> tuple[float, list[float], object]:
    samples, result = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), samples, result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=11_582)
    ap.add_argument("--discordant", type=float, default=0.5, help="share of items where the two runs disagree")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-bigint", action="store_true", help="skip timing the earlier big-integer p-value")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)

    from evalsuite.analysis.compare.comparison import compare_runs
    from evalsuite.analysis.compare.tables import format_comparison
    from evalsuite.analysis.gate.decide import evaluate
    from evalsuite.analysis.gate.settings import GateSettings
    from evalsuite.analysis.stats import binomial_two_sided_p, mcnemar_exact
    from evalsuite.store import load_run

    with tempfile.TemporaryDirectory(prefix="gate-bench-") as tmp:
        base, cand, _ = make_runs(Path(tmp), args.items, args.discordant, args.seed)
        load_s, _, runs = timed(lambda: [load_run(base), load_run(cand)], args.runs)
        settings = GateSettings(max_drop=1.0, alpha=0.05)
        gate_s, gate_samples, gate_result = timed(lambda: evaluate(base, cand, settings), args.runs)
        compare_s, compare_samples, _ = timed(lambda: format_comparison(compare_runs(runs)), args.runs)
        pair_b = [r["outcome"] == "correct" for r in runs[0].records]
        pair_c = [r["outcome"] == "correct" for r in runs[1].records]
        m = mcnemar_exact(pair_b, pair_c)
        p_s, _, _ = timed(lambda: binomial_two_sided_p(m.b, m.b + m.c), args.runs)
        big_s = None
        if not args.no_bigint:
            big_s, _, big_p = timed(lambda: bigint_p(min(m.b, m.c), m.b + m.c), 1)
            assert math.isclose(big_p, m.p, rel_tol=1e-9, abs_tol=1e-300), (big_p, m.p)
    result = {
        "items": args.items, "discordant": m.b + m.c, "b": m.b, "c": m.c, "p": m.p,
        "load_s": load_s, "gate_s": gate_s, "gate_analysis_s": gate_s - load_s, "compare_s": compare_s,
        "mcnemar_s": p_s, "mcnemar_bigint_s": big_s, "gate_samples": gate_samples, "compare_samples": compare_samples,
        "gate_line": gate_result.line, "target_s": TARGET_S,
    }
    print(f"{args.items} paired items, {m.b + m.c} discordant (b={m.b}, c={m.c}), p={m.p:.3g}; median of {args.runs}")
    print(f"  load both runs            {load_s:8.3f} s")
    print(f"  gate (load + analysis)    {gate_s:8.3f} s   analysis ~{gate_s - load_s:.3f} s   target <= {TARGET_S:g} s")
    print(f"  compare (analysis)        {compare_s:8.3f} s   target <= {TARGET_S:g} s")
    print(f"  exact McNemar p           {p_s * 1000:8.3f} ms")
    if big_s is not None:
        print(f"  earlier big-integer p     {big_s:8.3f} s")
    ok = gate_s - load_s <= TARGET_S and compare_s <= TARGET_S
    print("OK" if ok else "SLOWER THAN TARGET")
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
