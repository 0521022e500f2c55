"""Large runs with long reasoning and token logprobs: storage, and the cost of every command.

    python benchmarks/scale.py                       # 1,000 and 2,000 items x 1,000 tokens, extrapolated to 11,582
    python benchmarks/scale.py --sizes 11582         # the full size (slow on 2 cores: builds ~1.4 GB)
    python benchmarks/scale.py --client-items 300    # also `evalsuite run --logprobs 5` against the stub

What it does:
  1. builds, for each size N, two finished run folders of N items x T generated tokens with top-5
     logprobs (cmmlu-like ids; reasoning then a 4-token answer), written directly in the record
     format through evalsuite.store (slim records.jsonl, tokens.parquet, records.parquet,
     summary.json, manifest.json): A, and B identical to A except 10% of the items, which diverge
     at a random token to a token outside A's top-5 (a real divergence); for the diffs, the
     candidates of CANDIDATES (issue 37, the shapes real diffs have: shape_of, item_tokens): C
     every item real and never back, F every item a near-tie flip that re-merges after 1-8
     tokens, R a real divergence that re-merges, M three re-merging flips an item, X the mix
     (90 % identical, 8 % re-merging flips, 2 % real), D F's flips with every logprob a little
     off (another engine's float noise); A holds the near ties the flips take; issue 45: W every
     item a real divergence that re-merges (4 tokens in the middle none of A's top-5 lists,
     then A again), Y the mix 88/8/2/2 (identical, re-merging flips, real, W's shape), and AN,
     WN, YN the same without token ids (bytes only, as vLLM and SGLang send them; AN is A's
     twin answering 答案是 X), each diffed against AN;
  2. runs each command as its own process and reports wall, user+sys CPU and peak RSS from its
     rusage: `show A`, `compare A B`, `gate A B`, `diff A A` (all
     identical), `diff A B --json` (10% divergent), `diff A C --json` (C: every item divergent),
     `diff A F|R|M|X|D|W|Y --json`, `diff AN AN|WN|YN --json`, `report A B --diff` and
     `regrade A` (only the folders the --only commands need are built);
  3. with --client-items M: `evalsuite run cmmlu --logprobs 5` over M items against the stub of
     benchmarks/overhead.py answering T tokens with top-5 logprobs per item: client CPU per
     generated token, RSS at 10% and 90% of the run, and the end-of-run work, beside the floor
     measured right after it on the same stub (a bare aiohttp client that parses each event with
     orjson and keeps the text and logprob entries); --client-runs K alternates K such pairs;
  4. with two or more sizes, fits each figure linearly in N and prints the growth per 1,000
     items and the value extrapolated to --target items (marked "extrapolated").
Targets are printed beside the figures. Results: docs/performance.md.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from overhead import StubServer, default_data_dir, evalsuite_command, machine, measure  # noqa: E402
from large_run import LineCounter, rss_mb  # noqa: E402

TARGETS = {  # command: (wall s, peak RSS MB) on two 11,582-item runs
    "show": (5, 300), "compare": (5, 300), "gate": (5, 300),
    # issue 20 deliver 6: <= 10 s and <= 1 GB whether all items are identical or all divergent (and between)
    "diff identical": (10, 1024), "diff 10% real": (10, 1024), "diff all divergent": (10, 1024), "report": (30, 1024), "report --diff": (30, 1024),
    "regrade": (None, 500),
    # issue 37: divergences that re-merge <= 1 ms an item, the mix (90 % / 8 % / 2 %) <= 10 s
    "diff re-merging flips": (15, 1024), "diff real re-merging": (15, 1024), "diff several divergences": (15, 1024),
    "diff mix": (10, 1024), "diff drifted flips": (15, 1024),
    # issue 45: real divergences that re-merge (a few words outside A's top-5, then A again)
    # <= 1.3 ms an item, in runs with token ids and in runs without (bytes only: vLLM, SGLang)
    "diff real re-merging words": (15, 1024), "diff mix 88/8/2/2": (10, 1024),
    "diff identical (no ids)": (10, 1024), "diff real re-merging words (no ids)": (15, 1024),
    "diff mix 88/8/2/2 (no ids)": (10, 1024),
}
# the candidate run folders beside A, and what each holds (shape_of)
CANDIDATES = {"B": "real:10", "C": "real:1", "F": "flip", "R": "real-remerge", "M": "multi", "X": "mix",
              "D": "flip-drift", "W": "words", "Y": "mix-words",
              # a run pair without token ids (bytes only), answering 答案是 X: AN the baseline
              "AN": "A/noids", "WN": "words/noids", "YN": "mix-words/noids"}
DIFF_AGAINST = {"diff all divergent": "C", "diff re-merging flips": "F", "diff real re-merging": "R",
                "diff several divergences": "M", "diff mix": "X", "diff drifted flips": "D",
                "diff real re-merging words": "W", "diff mix 88/8/2/2": "Y",
                "diff identical (no ids)": "AN", "diff real re-merging words (no ids)": "WN",
                "diff mix 88/8/2/2 (no ids)": "YN"}
BASELINE_OF = {"AN": "AN", "WN": "AN", "YN": "AN"}     # else A
TARGET_BYTES_PER_TOKEN = 60
TARGET_CLIENT_US_PER_TOKEN = 20   # issue 22 (was 25)
TARGET_CLIENT_RSS_MB = 300
VOCAB = 32000
SUBJECTS = 67


# ----------------------------------------------------------------------------- building runs

def vocab():
    import pyarrow as pa

    words = [f" w{i}" if i % 3 else f"t{i}" for i in range(VOCAB)]
    answer = [" The", " answer", " is", " A", " B", " C", " D", "答", "案", "是"]
    return words + answer, pa.array(words + answer, pa.string())


# Where a baseline item holds its near ties (A's top-2 within TIE_MARGIN of its top-1): the
# positions a re-merging flip of the candidate takes. Fixed per item, so A serves every shape.
TIE_MARGIN = 0.01
TIE_SPOTS = 3


def tie_positions(n: int, body: int) -> list[int]:
    """Item n's near-tie positions, in order, spread over its reasoning."""
    import numpy as np

    rng = np.random.default_rng([7, n])
    third = (body - 40) // TIE_SPOTS      # >= 18 from 100 tokens an item: room for a flip of 8
    return [10 + s * third + int(rng.integers(0, max(1, third - 20))) for s in range(TIE_SPOTS)]


SHAPES = ("same", "real", "flip", "flip-drift", "real-remerge", "multi", "words")
WORDS = 4           # "words": the tokens the candidate writes instead of the baseline's
DRIFT = 0.002       # "flip-drift": the candidate's logprobs off by up to this fraction (another engine's float noise)


def item_tokens(n: int, t: int, seed: int, shape: str, k: int = 5, zh: bool = False):
    """(ids, logprobs, top ids, top logprobs) of item n. `shape` is what the candidate did:
    "same" (the baseline itself), "real" (leaves the baseline at a random position with a
    token its top-k did not list, and never comes back), "flip" (takes the baseline's near-tie
    top-2 at its first tie position, then 0-7 other tokens, and continues exactly as the
    baseline after 1-8 of its tokens: a re-merging near-tie flip), "real-remerge" (the same
    with a token outside the top-k), "multi" (a re-merging flip at each of the TIE_SPOTS tie
    positions), "flip-drift" (a "flip" whose logprobs all differ a little from the baseline's,
    as another engine's float noise makes them), "words" (issue 45: WORDS tokens in the middle
    of the reasoning replaced by as many others, none in the baseline's top-k there, each with
    the candidate's own top-k, then exactly the baseline: a real divergence that re-merges).
    `zh`: the answer reads "答案是 X" (whole characters) instead of " The answer is X"."""
    import numpy as np

    rng = np.random.default_rng([seed, n])
    body = t - 4
    ids = rng.integers(0, VOCAB, body, dtype=np.int64)
    lp = -rng.exponential(0.2, body)
    top_ids = rng.integers(0, VOCAB, (body, k), dtype=np.int64)
    top_lp = lp[:, None] - np.cumsum(rng.exponential(1.0, (body, k)), axis=1)
    top_ids[:, 0], top_lp[:, 0] = ids, lp
    ties = tie_positions(n, body)
    top_lp[ties, 1] = lp[ties] - TIE_MARGIN
    letter = VOCAB + 3 + n % 4
    if shape == "real":
        at = int(np.random.default_rng([seed + 1, n]).integers(5, body - 5))
        other = np.random.default_rng([seed + 2, n])
        ids[at:] = other.integers(0, VOCAB, body - at)
        while ids[at] in top_ids[at]:
            ids[at] = (ids[at] + 1) % VOCAB
        top_ids[at:, 0] = ids[at:]
        top_ids[at + 1:, 1:] = other.integers(0, VOCAB, (body - at - 1, k - 1))
        # A's logprobs at the divergence stay as they were (A's top-k, seen by B's engine)
        letter = VOCAB + 3 + (n + 1) % 4
    elif shape == "words":
        other = np.random.default_rng([seed + 4, n])
        at = body // 2 + int(other.integers(-body // 8, body // 8 + 1))
        for j in range(at, at + WORDS):
            ids[j] = other.integers(0, VOCAB)
            while ids[j] in top_ids[j]:
                ids[j] = (ids[j] + 1) % VOCAB
            top_ids[j] = np.concatenate([[ids[j]], other.integers(0, VOCAB, k - 1)])
            lp[j] = -other.exponential(0.2)
            top_lp[j] = lp[j] - np.concatenate([[0.0], np.cumsum(other.exponential(1.0, k - 1))])
    elif shape in ("flip", "flip-drift", "real-remerge", "multi"):
        other = np.random.default_rng([seed + 3, n])
        spots = ties if shape == "multi" else ties[:1]
        pieces, at = [], 0
        for spot in spots:
            left, inserted = int(other.integers(1, 9)), int(other.integers(1, 9))   # A's tokens replaced, B's put there
            new_ids = other.integers(0, VOCAB, inserted)
            if shape == "real-remerge":
                while new_ids[0] in top_ids[spot]:
                    new_ids[0] = (new_ids[0] + 1) % VOCAB
            else:
                new_ids[0] = top_ids[spot, 1]            # the baseline's near-tie runner-up
            new_top = other.integers(0, VOCAB, (inserted, k))
            new_top[:, 0] = new_ids
            new_lp = -other.exponential(0.2, inserted)
            new_top_lp = new_lp[:, None] - np.cumsum(other.exponential(1.0, (inserted, k)), axis=1)
            # at the divergence B's engine saw A's distribution, B's token first: a flip swaps
            # A's two near-tied tokens; a real one puts B's token above A's top-(k-1)
            new_top_lp[0] = top_lp[spot]
            new_top[0] = (top_ids[spot, [1, 0] + list(range(2, k))] if shape != "real-remerge"
                          else np.concatenate([new_ids[:1], top_ids[spot, :k - 1]]))
            new_lp[0] = new_top_lp[0, 0]
            pieces.append((slice(at, spot), new_ids, new_lp, new_top, new_top_lp))
            at = spot + left
        keep = [(ids[s], lp[s], top_ids[s], top_lp[s]) for s, *_ in pieces]
        parts = []
        for (s, *new), kept in zip(pieces, keep):
            parts += [kept, tuple(new)]
        parts.append((ids[at:], lp[at:], top_ids[at:], top_lp[at:]))
        ids, lp, top_ids, top_lp = (np.concatenate([p[c] for p in parts]) for c in range(4))
        body = len(ids)
        if shape == "flip-drift":
            top_lp = top_lp * (1 + DRIFT * other.random((len(top_lp), 1)))   # one factor a row: the order stays
            lp = top_lp[:, 0].copy()
    ids = np.concatenate([ids, [VOCAB + 7, VOCAB + 8, VOCAB + 9, letter] if zh else [VOCAB, VOCAB + 1, VOCAB + 2, letter]])
    lp = np.concatenate([lp, [-0.01, -0.01, -0.01, -0.02]])
    tail_top = np.array([[VOCAB + j] + [(VOCAB + j + 101 * m) % VOCAB for m in range(1, k)] for j in ((7, 8, 9) if zh else (0, 1, 2))]
                        + [[letter] + [(letter + 101 * m) % VOCAB for m in range(1, k)]])
    tail_lp = np.array([[v] + [v - 3.0 - m for m in range(1, k)] for v in (-0.01, -0.01, -0.01, -0.02)])
    return ids, lp, np.concatenate([top_ids, tail_top]), np.concatenate([top_lp, tail_lp])


def shape_of(n: int, spec: str) -> str:
    """The shape of item n in a candidate built to `spec`: "A" (the baseline), "real:E" (every
    E-th item real, the rest the same), a shape of SHAPES for every item, "mix" (per 100
    items: 90 the same, 8 re-merging flips, 2 real) or "mix-words" (88 the same, 8 re-merging
    flips, 2 real, 2 real re-merging "words")."""
    if spec == "A":
        return "same"
    if spec.startswith("real:"):
        return "real" if n % int(spec[5:]) == 0 else "same"
    if spec == "mix":
        r = (n * 37) % 100        # spread over the run, not in blocks
        return "flip" if r < 8 else "real" if r < 10 else "same"
    if spec == "mix-words":
        r = (n * 37) % 100
        return "flip" if r < 8 else "real" if r < 10 else "words" if r < 12 else "same"
    if spec not in SHAPES:
        raise SystemExit(f"unknown candidate spec {spec!r}")
    return spec


def token_table(ids, lp, top_ids, top_lp, vocab_arr, body: int, with_ids: bool = True):
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    t, k = top_ids.shape
    token = pc.take(vocab_arr, pa.array(ids))
    top_token = pc.take(vocab_arr, pa.array(top_ids.ravel()))
    offsets = pa.array(np.arange(0, t * k + 1, k, dtype=np.int32))
    part = pa.array(["reasoning"] * body + ["answer"] * (t - body), pa.string())
    from evalsuite.store import token_schema

    def id_array(values):            # no ids: as a server that sends none (vLLM, SGLang) leaves them
        return pa.array(values.astype(np.int32)) if with_ids else pa.nulls(len(values), pa.int32())
    cols = [token, pc.cast(token, pa.binary()), id_array(ids), pa.array(lp.astype(np.float32)), part,
            pa.ListArray.from_arrays(offsets, top_token), pa.ListArray.from_arrays(offsets, pc.cast(top_token, pa.binary())),
            pa.ListArray.from_arrays(offsets, id_array(top_ids.ravel())),
            pa.ListArray.from_arrays(offsets, pa.array(top_lp.ravel().astype(np.float32)))]
    return pa.Table.from_arrays(cols, schema=token_schema())


def build_run(path: Path, n_items: int, n_tokens: int, spec: str = "A", seed: int = 0) -> dict:
    """A finished run folder written through evalsuite.store, as `evalsuite run` leaves one.
    `spec`: shape_of's, with "/noids" for tokens without ids and answers in Chinese."""
    from evalsuite.analysis.summary import summarize
    from evalsuite.store import (MANIFEST, RECORDS, SUMMARY, TOKENS, TokenParquetWriter, iter_record_lines,
                                 read_records, write_json_atomic, write_parquet)

    t0 = time.perf_counter()
    path.mkdir(parents=True, exist_ok=True)
    words, vocab_arr = vocab()
    spec, _, variant = spec.partition("/")
    noids = variant == "noids"
    ids_all = [f"subject{n % SUBJECTS:02d}/{n // SUBJECTS}" for n in range(n_items)]
    body = n_tokens - 4
    with open(path / RECORDS, "w", encoding="utf-8") as records, TokenParquetWriter(path / TOKENS) as tokens:
        for n, item_id in enumerate(ids_all):
            ids, lp, top_ids, top_lp = item_tokens(n, n_tokens, seed, shape_of(n, spec), zh=noids)
            body = len(ids) - 4
            tokens.add(item_id, token_table(ids, lp, top_ids, top_lp, vocab_arr, body, with_ids=not noids))
            texts = [words[i] for i in ids.tolist()]
            letter = texts[-1].strip()
            gold = "ABCD"[n % 4] if n % 13 else "ABCD"[(n + 2) % 4]   # A is right on ~92% of the items
            question = f"Question {item_id}: which of the following is right? " + "lorem ipsum " * 20
            messages = [{"role": "user", "content": question}]
            record = {
                "schema": 2, "id": item_id, "subset": item_id.split("/")[0], "gold": gold,
                "prompt_sha256": hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest(),
                "messages": messages, "prompt": None,
                "answer": "".join(texts[body:]), "reasoning": "".join(texts[:body]), "reasoning_source": "field",
                "finish_reason": "stop", "extracted": letter,
                "verdict": {"equal": letter == gold, "extracted": letter, "method": "choice", "reason": "letter",
                            "extraction": "answer-is", "details": {}},
                "outcome": "correct" if letter == gold else "wrong", "error": None,
                "usage": {"prompt_tokens": 300, "completion_tokens": len(ids), "reasoning_tokens": body},
                "timing": {"started_at": "2026-11-30T00:00:00+00:00", "ttft_s": 0.05, "ttfa_s": 2.0 + n % 7, "total_s": 2.5 + n % 7},
                "server_timings": None, "logprob_tokens": len(ids), "endpoint": "http://127.0.0.1:8080/v1",
                "model": "stub", "attempts": 1,
            }
            records.write(json.dumps(record, ensure_ascii=False) + "\n")
    manifest = {
        "schema": 1, "suite_version": "0.1.0", "pack": "cmmlu", "pack_version": "1", "template_hash": "0" * 16,
        "load": {"subsets": [], "fewshot": 0, "per_subset": None, "seed": 0, "limit": None, "data_dir": None},
        "dataset": {"fingerprint": hashlib.sha256(f"{n_items}".encode()).hexdigest(), "n_items": n_items, "source": "scale.py"},
        "item_ids": ids_all, "api": "chat", "endpoints": ["http://127.0.0.1:8080/v1"], "model": "stub",
        "served_models": {}, "decoding": {"temperature": 0.0, "top_p": 1.0, "seed": 0, "max_tokens": n_tokens + 100,
                                          "stop": [], "reasoning_effort": None, "logprobs": 5, "extra_body": {}},
        "client": {"concurrency": 32, "timeout": 600, "max_retries": 5, "max_downtime": 300},
        "label": path.name, "started_at": "2026-11-30T00:00:00+00:00",
        "ended_at": "2026-11-30T01:00:00+00:00", "status": "finished", "argv": ["scale.py"],
    }
    write_parquet(path, iter_record_lines(path / RECORDS))
    write_json_atomic(path / SUMMARY, summarize(manifest, read_records(path / RECORDS, drop=("messages", "answer", "reasoning"))))
    write_json_atomic(path / MANIFEST, manifest)
    size = sum(p.stat().st_size for p in path.iterdir())
    return {"items": n_items, "tokens": n_items * n_tokens, "bytes": size, "bytes_per_token": size / (n_items * n_tokens),
            "files": {p.name: p.stat().st_size for p in path.iterdir()}, "build_s": time.perf_counter() - t0}


# ----------------------------------------------------------------------------- commands

def commands(a: Path, b: Path, out: Path) -> dict[str, list[str]]:
    es = evalsuite_command()
    return {
        "show": es + ["show", str(a)],
        "compare": es + ["compare", str(a), str(b)],
        "gate": es + ["gate", str(a), str(b), "--max-drop", "0.5"],
        "diff identical": es + ["diff", str(a), str(a)],
        "diff 10% real": es + ["diff", str(a), str(b), "--json", str(out / "diff.json")],
        # issue 20: every item diverges (half way on average), drift metrics included
        "diff all divergent": es + ["diff", str(a), str(a.parent / "C"), "--json", str(out / "diff-all.json")],
        # issue 37: the shapes real diffs have (shape_of, item_tokens)
        "diff re-merging flips": es + ["diff", str(a), str(a.parent / "F"), "--json", str(out / "diff-flip.json")],
        "diff real re-merging": es + ["diff", str(a), str(a.parent / "R"), "--json", str(out / "diff-real-remerge.json")],
        "diff several divergences": es + ["diff", str(a), str(a.parent / "M"), "--json", str(out / "diff-multi.json")],
        "diff mix": es + ["diff", str(a), str(a.parent / "X"), "--json", str(out / "diff-mix.json")],
        "diff drifted flips": es + ["diff", str(a), str(a.parent / "D"), "--json", str(out / "diff-drift.json")],
        # issue 45: real divergences that re-merge, with token ids and without (AN: A without ids)
        **{name: es + ["diff", str(a.parent / BASELINE_OF.get(DIFF_AGAINST[name], "A")), str(a.parent / DIFF_AGAINST[name]),
                       "--json", str(out / f"diff-{DIFF_AGAINST[name]}.json")]
           for name in ("diff real re-merging words", "diff mix 88/8/2/2", "diff identical (no ids)",
                        "diff real re-merging words (no ids)", "diff mix 88/8/2/2 (no ids)")},
        "report": es + ["report", str(a), str(b), "--html", str(out / "report-plain.html")],
        "report --diff": es + ["report", str(a), str(b), "--diff", str(out / "diff.json"), "--html", str(out / "report.html")],
        "regrade": es + ["regrade", str(a)],
    }


def measure_commands(a: Path, b: Path, out: Path, only: list[str] | None, timeout: float) -> dict:
    results = {}
    for name, cmd in commands(a, b, out).items():
        if only and name not in only:
            continue
        if name == "report --diff" and not (out / "diff.json").exists():
            continue
        cmd = ["timeout", str(int(timeout))] + cmd
        r = measure(cmd)
        r = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items() if k not in ("stdout",)}
        for html in ("report.html", "report-plain.html"):
            if name.startswith("report") and (out / html).exists() and (html == "report.html") == (name == "report --diff"):
                r["html_mb"] = round((out / html).stat().st_size / 2**20, 2)
        results[name] = r
        note = " (timed out)" if r["rc"] == 124 else (f" rc {r['rc']}" if r["rc"] not in (0, 1) else "")
        print(f"  {name:<36} wall {r['wall_s']:8.2f} s  cpu {r['cpu_s']:8.2f} s  rss {r['rss_mb']:7.1f} MB{note}",
              file=sys.stderr, flush=True)
    return results


# ----------------------------------------------------------------------------- the client

def measure_client(items: int, tokens: int, data_dir: Path, concurrency: int, runs: int = 1) -> dict:
    """`runs` times each, alternating: evalsuite's run, then the bare floor on the same stub.
    The median run (by CPU) is reported, with each run's pair."""
    from statistics import median

    pairs = []
    for _ in range(runs):
        ours = _measure_client_once(items, tokens, data_dir, concurrency)
        pairs.append((ours, ours.pop("bare")))
    ours, bare = sorted(pairs, key=lambda p: p[0]["cpu_s"])[(len(pairs) - 1) // 2]
    ratios = [o["us_per_token"] / b["us_per_token"] for o, b in pairs]
    return dict(ours, bare=bare, x_bare=round(median(ratios), 2),
                runs=[{"us_per_token": o["us_per_token"], "bare_us_per_token": b["us_per_token"]} for o, b in pairs])


def _measure_client_once(items: int, tokens: int, data_dir: Path, concurrency: int) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="evalsuite-scale-client-"))
    run_dir = tmp / "run"
    server = StubServer(0.0, "letter", tokens=tokens, top=5)
    from overhead import byte_compile
    byte_compile()
    samples = []
    try:
        cmd = evalsuite_command() + ["run", "cmmlu", "--endpoint", server.url, "--data-dir", str(data_dir),
                                     "--limit", str(items), "--concurrency", str(concurrency), "--logprobs", "5",
                                     "--max-tokens", str(tokens + 100), "--run-dir", str(run_dir), "--quiet"]
        counter = LineCounter(run_dir / "records.jsonl")
        with open(tmp / "stderr.txt", "wb") as err:
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
            finish_started = None
            while True:
                done, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if done:
                    break
                n = counter.update()
                if n >= items and finish_started is None:
                    finish_started = time.perf_counter() - t0
                samples.append({"t": time.perf_counter() - t0, "records": n, "rss_mb": rss_mb(proc.pid)})
                time.sleep(0.1)
            wall = time.perf_counter() - t0
        rc = os.waitstatus_to_exitcode(status)
        if rc not in (0, 1):
            raise SystemExit(f"evalsuite run failed (rc {rc}):\n{(tmp / 'stderr.txt').read_text()[-3000:]}")
        size = sum(p.stat().st_size for p in run_dir.iterdir())
        bare = measure_bare_logprobs(server, items, tokens, concurrency)
    finally:
        server_cpu = server.stop()
    shutil.rmtree(tmp, ignore_errors=True)

    def rss_at(fraction: float):
        for s in samples:
            if s["records"] >= fraction * items:
                return round(s["rss_mb"], 1)
        return None

    cpu = usage.ru_utime + usage.ru_stime
    return {"items": items, "tokens_per_item": tokens, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "us_per_token": round(1e6 * cpu / (items * tokens), 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "rss_10pct_mb": rss_at(0.1), "rss_90pct_mb": rss_at(0.9),
            "finish_s": None if finish_started is None else round(wall - finish_started, 2),
            "run_folder_bytes_per_token": round(size / (items * tokens), 1), "stub_cpu_s": round(server_cpu, 2),
            "bare": bare}


def bare_logprobs_main(url: str, items: int, concurrency: int, tokens: int) -> None:
    """The floor under the client's per-token cost: aiohttp, the same streamed requests with
    top-5 logprobs, each event parsed with orjson (the client's parser) and its text and logprob
    entries kept until the answer ends; nothing graded, nothing written."""
    import asyncio

    import aiohttp
    import orjson

    async def main() -> int:
        semaphore = asyncio.Semaphore(concurrency)
        kept = 0
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
            async def one(n: int) -> None:
                nonlocal kept
                payload = {"model": "stub", "messages": [{"role": "user", "content": f"question {n}"}],
                           "max_tokens": tokens + 100, "temperature": 0.0, "logprobs": True, "top_logprobs": 5,
                           "stream": True, "stream_options": {"include_usage": True}}
                async with semaphore:
                    async with session.post(f"{url}/chat/completions", json=payload) as response:
                        parts, entries = [], []
                        async for line in response.content:
                            if line.startswith(b"data: ") and not line.startswith(b"data: [DONE]"):
                                event = orjson.loads(line[6:])
                                for choice in event.get("choices") or ():
                                    delta = choice.get("delta") or {}
                                    parts.append(delta.get("content") or delta.get("reasoning_content") or "")
                                    entries.extend((choice.get("logprobs") or {}).get("content") or ())
                        kept += len(entries)

            await asyncio.gather(*(one(n) for n in range(items)))
        return kept

    print(asyncio.run(main()))


def measure_bare_logprobs(server, items: int, tokens: int, concurrency: int) -> dict:
    result = measure([sys.executable, __file__, "bare-logprobs", server.url, str(items), str(concurrency), str(tokens)])
    if result["rc"] != 0:
        raise SystemExit(f"the bare client failed:\n{result['stderr']}")
    kept = int(result["stdout"].split()[-1])
    return {"cpu_s": round(result["cpu_s"], 2), "tokens": kept, "us_per_token": round(1e6 * result["cpu_s"] / kept, 2)}


# ----------------------------------------------------------------------------- report

def fit(xs: list[int], ys: list[float]) -> tuple[float, float]:
    """Least squares y = a + b x."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else 0.0
    return my - b * mx, b


def print_report(report: dict, target_items: int) -> None:
    sizes = sorted(report["sizes"], key=int)
    print(f"\nruns of N items x {report['tokens']} tokens, top-5 logprobs; machine: {report['machine']}")
    print("\nstorage (one run folder):")
    for n in sizes:
        s = report["sizes"][n]["storage"]
        print(f"  N={int(n):>6}: {s['bytes'] / 2**20:8.1f} MB, {s['bytes_per_token']:.1f} bytes/token "
              f"(target <= {TARGET_BYTES_PER_TOKEN}); " + ", ".join(f"{k} {v / 2**20:.1f} MB" for k, v in s["files"].items()))
    names = list(TARGETS)
    head = "".join(f"{'N=' + str(n):>22}" for n in sizes)
    extra = len(sizes) > 1 and int(sizes[-1]) != target_items
    print("\n(each cell: wall s / CPU s / peak RSS MB; the fit is on CPU, which a shared machine disturbs less than wall)")
    print(f"{'command':<36}{head}" + (f"{'CPU, RSS per 1,000 items':>28}{'N=' + str(target_items) + ' (extrapolated)':>30}" if extra else "")
          + "   target")
    for name in names:
        cells, cpus, rsss, xs = [], [], [], []
        for n in sizes:
            r = report["sizes"][n]["commands"].get(name)
            if r is None:
                cells.append(f"{'-':>22}")
                continue
            cells.append(f"{r['wall_s']:>6.1f}/{r['cpu_s']:>5.1f} s {r['rss_mb']:>5.0f} MB")
            xs.append(int(n))
            cpus.append(r["cpu_s"])
            rsss.append(r["rss_mb"])
        line = f"{name:<36}" + "".join(f"{c:>22}" for c in cells)
        if extra and len(xs) > 1:
            ac, bc = fit(xs, cpus)
            ar, br = fit(xs, rsss)
            line += f"{1000 * bc:>12.2f} s {1000 * br:>7.1f} MB {ac + bc * target_items:>14.1f} s {ar + br * target_items:>7.0f} MB  "
        wall_t, rss_t = TARGETS[name]
        line += f"   <= {wall_t if wall_t else '-'} s, <= {rss_t} MB"
        print(line)
    if report.get("client"):
        c = report["client"]
        floor = (f"the bare aiohttp + orjson floor {c['bare']['us_per_token']} us/token on the same stub, "
                 f"evalsuite {c['x_bare']}x it (median of {len(c['runs'])}); ") if "bare" in c else ""   # older --out files
        print(f"\nclient, `evalsuite run cmmlu --logprobs 5`, {c['items']} items x {c['tokens_per_item']} tokens: "
              f"{c['cpu_s']} CPU s = {c['us_per_token']} us/token (target <= {TARGET_CLIENT_US_PER_TOKEN}); {floor}"
              f"RSS {c['rss_10pct_mb']} MB at 10%, {c['rss_90pct_mb']} MB at 90%, peak {c['peak_rss_mb']} MB "
              f"(target <= {TARGET_CLIENT_RSS_MB}); end-of-run {c['finish_s']} s; folder {c['run_folder_bytes_per_token']} B/token")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bare-logprobs"]:
        return bare_logprobs_main(argv[1], int(argv[2]), int(argv[3]), int(argv[4]))
    if argv[:1] == ["build"]:
        path, n, tokens, spec = argv[1], int(argv[2]), int(argv[3]), argv[4]
        info = build_run(Path(path), n, tokens, spec)
        print(f"  {info['bytes'] / 2**20:.1f} MB, {info['bytes_per_token']:.1f} B/token, {info['build_s']:.0f} s",
              file=sys.stderr, flush=True)
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",") if x], default=[1000, 2000],
                   help="comma-separated item counts; \"\" for none (--client-items alone)")
    p.add_argument("--tokens", type=int, default=1000, help="generated tokens per item")
    p.add_argument("--target", type=int, default=11582, help="extrapolate to this many items")
    p.add_argument("--only", type=lambda s: s.split(","), default=None, help="comma-separated command names")
    p.add_argument("--client-items", type=int, default=0, help="also measure `evalsuite run --logprobs 5` on this many items")
    p.add_argument("--client-concurrency", type=int, default=32)
    p.add_argument("--client-runs", type=int, default=1, help="client runs (each beside the bare floor), median reported")
    p.add_argument("--timeout", type=float, default=900, help="per command, seconds")
    p.add_argument("--data-dir", default=str(default_data_dir()))
    p.add_argument("--workdir", type=Path, default=None, help="keep the run folders here (reused when present)")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--from-json", type=Path, default=None, help="print the report of an earlier --out, measure nothing")
    args = p.parse_args(argv)
    if args.from_json:
        return print_report(json.loads(args.from_json.read_text()), args.target)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="evalsuite-scale-"))
    report = {"tokens": args.tokens, "machine": machine(), "sizes": {}}
    try:
        for n in args.sizes:
            folder = work / f"n{n}-t{args.tokens}"
            a, b = folder / "A", folder / "B"
            storage = None
            wanted = {DIFF_AGAINST[name] for name in DIFF_AGAINST if not args.only or name in args.only}
            wanted |= {BASELINE_OF[w] for w in wanted if w in BASELINE_OF}
            for path, spec in [(a, "A")] + [(folder / name, spec) for name, spec in CANDIDATES.items()]:
                if path.name not in {"A", "B"} | wanted:
                    continue
                if not (path / "manifest.json").exists():
                    # in a child: this process stays small, so the commands it forks start small
                    # (a fork's RSS counts in the child's peak until it execs)
                    print(f"building {path} ...", file=sys.stderr, flush=True)
                    subprocess.run([sys.executable, __file__, "build", str(path), str(n), str(args.tokens), spec],
                                   check=True)
                if path == a:
                    size = sum(q.stat().st_size for q in a.iterdir())
                    storage = {"bytes": size, "bytes_per_token": size / (n * args.tokens),
                               "files": {q.name: q.stat().st_size for q in a.iterdir()}}
            print(f"N={n}: measuring", file=sys.stderr, flush=True)
            report["sizes"][str(n)] = {"storage": storage, "commands": measure_commands(a, b, folder, args.only, args.timeout)}
        if args.client_items:
            print(f"client: {args.client_items} items", file=sys.stderr, flush=True)
            report["client"] = measure_client(args.client_items, args.tokens, Path(args.data_dir), args.client_concurrency,
                                              args.client_runs)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    print_report(report, args.target)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
