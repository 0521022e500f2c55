"""What a run process imports for its finishing step (issue 37: the run's fixed cost): pyarrow
without pandas always, and without numpy where the run hands pyarrow no numpy arrays (no
--logprobs); records.parquet written that way is the one a normal process writes."""
from __future__ import annotations

import json
import subprocess
import sys

from fault_server import FaultServer
from test_reliability import child_env, evalsuite_cmd, gsm8k_items, right_answers

WARM = """
import sys
from evalsuite.run.runner import _warm_finish_imports
_warm_finish_imports(numbers={numbers})
loaded = {{name: name in sys.modules for name in ("pyarrow", "pyarrow.parquet", "numpy", "pandas")}}
import numpy   # still importable by whoever needs it after
print(__import__("json").dumps(loaded))
"""


def warmed(numbers: bool) -> dict[str, bool]:
    out = subprocess.run([sys.executable, "-c", WARM.format(numbers=numbers)], capture_output=True, text=True,
                         timeout=120, env=child_env())
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_run_without_logprobs_imports_pyarrow_without_numpy_or_pandas():
    assert warmed(False) == {"pyarrow": True, "pyarrow.parquet": True, "numpy": False, "pandas": False}
    # with logprobs the token streams are numpy arrays: numpy stays, pandas still never
    assert warmed(True) == {"pyarrow": True, "pyarrow.parquet": True, "numpy": True, "pandas": False}


def test_records_parquet_of_a_numpy_less_run_process_reads_as_its_records(data_dir, tmp_path):
    from evalsuite.store import load_run

    pack, items = gsm8k_items(data_dir, 6)
    with FaultServer(right_answers(pack, items[:4])) as server:
        run_dir = tmp_path / "run"
        cmd = [sys.executable, "-X", "importtime"] + evalsuite_cmd()[1:] + [
            "run", "gsm8k", "--endpoint", server.url, "--data-dir", str(data_dir), "--limit", "6",
            "--run-dir", str(run_dir), "--quiet"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=child_env())
    assert r.returncode == 0, r.stderr[-3000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    # (importtime lists an import that failed too, as a bare name: a loaded package has submodules)
    assert "pyarrow.parquet" in imported and not any(n.startswith(("numpy.", "pandas.")) for n in imported)
    run = load_run(run_dir)
    lines = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
    assert [r["id"] for r in lines] == run.manifest["item_ids"]
    import pyarrow.parquet as pq

    table = pq.read_table(run_dir / "records.parquet").to_pylist()
    assert [row["id"] for row in table] == [r["id"] for r in lines]
    assert [row["outcome"] for row in table] == [r["outcome"] for r in lines]
    assert sum(row["outcome"] == "correct" for row in table) == 4
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["n_correct"] == 4 and summary["n_items"] == 6
