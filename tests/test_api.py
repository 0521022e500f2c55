"""The Python API (evalsuite/api.py): docs/api.md's example runs as written, and each function
returns the data its command prints."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import evalsuite
from runfactory import make_run, rec

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def two_runs(root: Path) -> tuple[Path, Path]:
    ids = [f"{s}/{i}" for s in ("alg", "geo") for i in range(10)]
    off = make_run(root / "results" / "spec-off", "gsm8k", [rec(i, "correct", completion_tokens=100 + n)
                                                           for n, i in enumerate(ids)], label="spec-off")
    outcomes = {ids[1]: "wrong", ids[4]: "unextracted", ids[12]: "error"}
    on = make_run(root / "results" / "spec-on", "gsm8k",
                  [rec(i, outcomes.get(i, "correct"), completion_tokens=110 + n) for n, i in enumerate(ids)],
                  label="spec-on")
    return off, on


def test_the_docs_example_runs(tmp_path, monkeypatch, capsys):
    two_runs(tmp_path)
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) >= 3
    scope: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), scope)
    out = capsys.readouterr().out
    assert "spec-off 1.0 spec-on" in out
    flips = scope["flips"]
    assert sorted(flips["id"]) == ["alg/1", "alg/4"]           # the error is left out
    assert scope["pair"].mcnemar.b == 2 and scope["pair"].mcnemar.c == 0
    assert scope["result"].code in (0, 1) and scope["result"].line.startswith(("PASS", "FAIL"))
    assert (tmp_path / "tokens.png").stat().st_size > 1000


def test_open_run_is_typed_and_the_frame_keeps_missing_values(tmp_path):
    off, on = two_runs(tmp_path)
    run = evalsuite.open_run(on)
    assert isinstance(run, evalsuite.RunData) and run.manifest["label"] == "spec-on"
    frame = run.records
    assert len(frame) == 20 and list(frame.columns)[:4] == ["id", "subset", "gold", "outcome"]
    err = frame[frame["id"] == "geo/2"].iloc[0]
    assert err["outcome"] == "error" and err["error_kind"] == "server_error"
    assert str(err["completion_tokens"]) == "<NA>"             # not 0
    assert run.summary["n_errors"] == 1
    assert run.tokens("alg/0") is None                          # no --logprobs in this run
    with pytest.raises(KeyError):
        run.tokens("nope/0")


def test_gate_and_compare_return_data(tmp_path):
    off, on = two_runs(tmp_path)
    result = evalsuite.gate(off, on, max_drop=1.0, allow_underpowered=True)
    assert result.code == 1 and result.details["b"] == 2 and result.details["errors_excluded"] == 1
    cmp = evalsuite.compare(str(off), str(on))
    assert cmp.runs[0].accuracy == 1.0 and cmp.pairs[0].delta_pp == pytest.approx(-100 * 2 / 19)
    from evalsuite.analysis.gate.settings import GateInputError
    with pytest.raises(GateInputError):
        evalsuite.gate(off, tmp_path / "missing", max_drop=1.0)


def test_token_streams_as_arrow(tmp_path):
    import pyarrow as pa

    from evalsuite.store import RecordWriter, TokenColumns

    off, _ = two_runs(tmp_path)
    # one record with a token stream written the way the runner writes it
    record = rec("alg/0", "correct")
    record.pop("logprobs")
    record["schema"] = 2
    columns = TokenColumns.from_entries([{"token": "4", "bytes": [52], "id": 7, "logprob": -0.5, "part": "answer",
                                          "top": [{"token": "4", "bytes": [52], "id": 7, "logprob": -0.5}]}])
    writer = RecordWriter(off / "records.jsonl")
    writer.append(record, columns)
    writer.close()
    run = evalsuite.open_run(off)
    table = run.tokens("alg/0")
    assert isinstance(table, pa.Table) and table.num_rows == 1 and table.column("token").to_pylist() == ["4"]
    everything = run.tokens()
    assert everything.column("item").to_pylist() == ["alg/0"]


def test_import_evalsuite_does_not_import_pandas():
    code = "import sys, evalsuite; evalsuite.open_run; print('pandas' in sys.modules, 'pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
