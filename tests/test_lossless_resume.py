"""`evalsuite lossless` interrupted mid-run prints a resume command, and that command works:
both runs are finished and diffed. Against a real llama-cpp-python server (server defaults)."""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest
from conftest import requires_llama

pytestmark = [pytest.mark.llama, requires_llama]

N_ITEMS = 30


def test_interrupted_lossless_resumes_with_the_printed_command(tmp_path, llama_server, data_dir):
    folder = tmp_path / "lossless"
    out_json = tmp_path / "d.json"
    cmd = [sys.executable, "-m", "evalsuite.cli", "lossless", "gsm8k", "--baseline-endpoint", llama_server.url,
           "--candidate-endpoint", llama_server.url, "--limit", str(N_ITEMS), "--max-tokens", "64",
           "--data-dir", str(data_dir), "--run-dir", str(folder), "--json", str(out_json), "--quiet"]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    records = folder / "baseline" / "records.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if records.exists() and len(records.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    printed = [line.strip() for line in err.splitlines() if line.strip().startswith("evalsuite lossless")]
    assert printed, err[-2000:]
    argv = shlex.split(printed[-1])
    assert "--resume" in argv and "--run-dir" not in argv
    done = len(records.read_text().splitlines())
    assert done < N_ITEMS
    again = subprocess.run([sys.executable, "-m", "evalsuite.cli", *argv[1:]], capture_output=True, text=True,
                           env=env, timeout=300)
    assert again.returncode in (0, 1), again.stderr[-3000:]
    assert "no such option" not in again.stderr
    data = json.loads(out_json.read_text())
    assert sum(data["counts"][k] for k in ("identical", "near_tie", "suspicious", "real", "not_greedy", "cut_prefix",
                                           "undetermined")) == N_ITEMS
    assert data["counts"]["identical"] == N_ITEMS          # one server against itself
    manifest = json.loads((folder / "baseline" / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest.get("resumed_at")
