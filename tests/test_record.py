"""The typed record (evalsuite.store.record): every list of record fields comes from it, lines
of every schema version read through it, and a run folder the previous release wrote still
loads, shows and regrades (tests/data/run_r24, README there)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalsuite.store import RECORD_SCHEMA, load_run, read_records
from evalsuite.store.record import (BULKY_FIELDS, FIELDS, INT_FIELDS, NESTED_FIELDS, STRING_FIELDS, Record, bulky,
                                    upgrade)

OLD_RUN = Path(__file__).parent / "data" / "run_r24"


def test_field_lists_are_the_ones_records_parquet_and_the_loaders_used():
    # records.parquet's column order and the loaders' drop lists, as they were spelled out before
    assert STRING_FIELDS == ("id", "subset", "gold", "prompt_sha256", "prompt", "answer", "reasoning",
                             "reasoning_source", "finish_reason", "extracted", "outcome", "endpoint", "model")
    assert INT_FIELDS == ("schema", "attempts", "logprob_tokens", "sample")
    assert NESTED_FIELDS == ("messages", "verdict", "error", "usage", "timing", "server_timings")
    assert BULKY_FIELDS == ("messages", "prompt", "answer", "reasoning", "server_timings")
    assert bulky(keep=("answer", "reasoning")) == ("messages", "prompt", "server_timings")        # gate
    assert bulky(keep=("answer", "reasoning", "server_timings")) == ("messages", "prompt")        # compare
    with pytest.raises(ValueError, match="verdict"):
        bulky(keep=("verdict",))
    assert all(f.metadata["meaning"] for f in FIELDS)


def test_every_field_the_docs_list_is_in_the_type():
    docs = (Path(__file__).parents[1] / "docs" / "records.md").read_text(encoding="utf-8")
    table = docs.split("## A record (one line of records.jsonl)")[1].split("### Outcomes")[0]
    documented = {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
    assert documented - {"logprobs"} == {f.name for f in FIELDS}   # logprobs: schema 1 only, migrated away


def test_a_schema_1_line_migrates_on_read():
    line = {"schema": 1, "id": "t/0", "answer": "4", "logprobs": [{"token": "4", "logprob": -0.1, "top": []}] * 3}
    record = Record.from_dict(line)
    assert record.logprob_tokens == 3 and record.schema == 1 and "logprobs" not in record.extra
    assert Record.from_dict({"id": "t/1"}).schema == 1                     # no version: the first one
    assert upgrade({"schema": 1, "id": "t/2", "logprobs": None}) == {"schema": 1, "id": "t/2", "logprob_tokens": None}


def test_unknown_fields_are_kept_and_lines_round_trip():
    line = {"schema": RECORD_SCHEMA, "id": "t/0", "choices": ["a", "b"], "item_meta": {"kind": "x"}, "later": {"n": 1}}
    record = Record.from_dict(line)
    assert record.extra == {"later": {"n": 1}} and record.choices == ("a", "b")
    assert record.to_dict() == {**{f.name: None for f in FIELDS if not f.metadata["optional"]}, **line}
    with pytest.raises(ValueError, match="no 'id'"):
        Record.from_dict({"answer": "4"})


def test_the_runner_no_longer_imports_an_analysis_for_item_fields():
    from test_import_graph import import_graph

    assert "evalsuite.analysis.regrade" not in import_graph()["evalsuite.run.runner"]


@pytest.fixture
def old_run(tmp_path) -> Path:
    run_dir = tmp_path / "run_r24"
    shutil.copytree(OLD_RUN, run_dir)
    return run_dir


def test_previous_release_run_folder_loads(old_run):
    run = load_run(old_run)
    assert run.manifest["status"] == "finished" and run.name == "release-r24"
    assert [r["id"] for r in run.records] == run.manifest["item_ids"] and len(run.records) == 3
    for r in run.records:
        record = Record.from_dict(r)
        assert record.extra == {}, "every field the previous release wrote is in the type"
        assert record.to_dict() == r
        entries = run.logprobs(r)                       # from tokens.parquet
        assert len(entries) == r["logprob_tokens"] == 6 and all(len(e["top"]) == 2 for e in entries)
        assert "".join(e["token"] for e in entries) == r["answer"]
    assert read_records(old_run / "records.jsonl", drop=BULKY_FIELDS)[0].keys().isdisjoint(BULKY_FIELDS)


def test_previous_release_run_folder_shows(old_run, run_cli):
    result = run_cli("show", str(old_run))
    assert result.returncode == 0, result.stderr
    assert "release-r24" in result.stdout and "gsm8k" in result.stdout


def test_previous_release_run_folder_regrades(old_run):
    from evalsuite.analysis.regrade import regrade

    # the items rebuilt from the records alone (the data folder it names is another machine's)
    manifest = json.loads((old_run / "manifest.json").read_text(encoding="utf-8"))
    manifest["load"].pop("data_dir")
    (old_run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert regrade(old_run) == []
    outcomes = [r["outcome"] for r in load_run(old_run).records]
    assert outcomes == ["wrong", "wrong", "wrong"]      # the stub's answers; regrade agreed with every one


def test_every_field_todays_writer_writes_is_in_the_type(data_dir, tmp_path, run_cli):
    from token_stub import TokenStub

    run_dir = tmp_path / "run"
    with TokenStub(n_tokens=6) as stub:
        result = run_cli("run", "gsm8k", "--endpoint", stub.url, "--data-dir", data_dir, "--limit", 2, "--samples", 2,
                         "--logprobs", 2, "--quiet", "--run-dir", run_dir)
    assert result.returncode == 0, result.stderr
    records = load_run(run_dir).records
    assert len(records) == 4
    for r in records:
        assert Record.from_dict(r).extra == {}, sorted(set(r) - {f.name for f in FIELDS})
        assert Record.from_dict(r).to_dict() == r
