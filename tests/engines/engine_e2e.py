"""The CLI steps the engine tests share: `evalsuite lossless`, `run`, `diff`, run as a user would
(a separate process), and the checks every lossless result must pass."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

N_ITEMS = int(os.environ.get("EVALSUITE_ENGINE_ITEMS", "100"))
MAX_TOKENS = 48
CLI_TIMEOUT = 1500
VERDICTS = ("identical", "near_tie", "suspicious", "real", "undetermined")


def cli(*args, timeout: float = CLI_TIMEOUT) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "evalsuite.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)
    print(f"[{time.monotonic() - t0:.1f} s] evalsuite {' '.join(map(str, args[:1]))}: exit {proc.returncode}\n"
          f"{proc.stdout[-2500:]}", file=sys.stderr)
    return proc


def lossless(tmp_path: Path, data_dir: Path, base_url: str, cand_url: str, name: str, *extra,
             n_items: int = N_ITEMS) -> dict:
    out_json = tmp_path / f"{name}.json"
    proc = cli("lossless", "gsm8k", "--baseline-endpoint", base_url, "--candidate-endpoint", cand_url,
               "--limit", n_items, "--max-tokens", MAX_TOKENS, "--logprobs", 5, "--data-dir", data_dir,
               "--run-dir", tmp_path / name, "--json", out_json, "--quiet", *extra)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    data = json.loads(out_json.read_text())
    assert sum(data["counts"][k] for k in VERDICTS) == n_items, data["counts"]
    data["cli_output"] = proc.stdout
    return data


def run(tmp_path: Path, data_dir: Path, url: str, name: str, *extra, n_items: int = N_ITEMS,
        logprobs: int = 5) -> Path:
    folder = tmp_path / name
    proc = cli("run", "gsm8k", "--endpoint", url, "--limit", n_items, "--max-tokens", MAX_TOKENS,
               "--logprobs", logprobs, "--concurrency", 1, "--data-dir", data_dir, "--run-dir", folder,
               "--label", name, "--quiet", *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return folder


def diff(tmp_path: Path, base: Path, cand: Path, name: str, *extra) -> dict:
    out_json = tmp_path / f"{name}.json"
    proc = cli("diff", base, cand, "--json", out_json, *extra)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return json.loads(out_json.read_text())


def records(run_dir: Path) -> dict[str, dict]:
    from evalsuite.store import load_run

    return load_run(run_dir).by_id


def texts(run_dir: Path) -> dict[str, tuple[str, str]]:
    return {i: (r.get("answer") or "", r.get("reasoning") or "") for i, r in records(run_dir).items()}


def assert_identical_texts_are_identical(data: dict, base_dir: Path, cand_dir: Path) -> int:
    """Every item whose answer and reasoning are byte-identical must be `identical`; returns how many."""
    tb, tc = texts(base_dir), texts(cand_dir)
    same = 0
    for item in data["items"]:
        if tb.get(item["id"]) == tc.get(item["id"]):
            same += 1
            assert item["class"] == "identical", (item["id"], item["class"], item["reason"])
    return same


def start_all(*servers):
    """Start servers side by side (vLLM takes a minute each); stops the started ones on failure."""
    errors: list[BaseException] = []

    def start(server):
        try:
            server.start()
        except BaseException as exc:  # reported below, after the others have had their chance
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(s,)) for s in servers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        for s in servers:
            s.stop()
        raise errors[0]
    for s in servers:
        print(f"{s.name} on port {s.port}: ready in {s.start_seconds:.1f} s, first request {s.warm_up_seconds:.1f} s",
              file=sys.stderr)
    return servers
