"""Your own questions as a pack (tasks/file.py): formats, field detection, bad rows named by
line or row, TOML beside the data, hub loading through `datasets` (a local dataset folder; the
offline error), and the pack rebuilt from the manifest's spec alone."""
from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest

from evalsuite.tasks import BadDataError, LoadOptions, open_pack, pack_for_manifest
from evalsuite.tasks.file import FileOptions, is_file_pack, open_file_pack, parse_fields
from evalsuite.tasks.pack import dataset_fingerprint

OWN = Path(__file__).parent / "data" / "own_questions.jsonl"

ROWS = [
    {"question": "What is 6 times 7?", "answer": "42", "subject": "arith"},
    {"question": "Which is a primary colour?", "A": "green", "B": "red", "C": "purple", "D": "orange",
     "answer": "B", "subject": "colours"},
    {"question": "Simplify $\\frac{2}{4}$.", "answer": "\\frac{1}{2}", "subject": "arith"},
    {"question": "Name the largest planet.", "answer": "Jupiter", "subject": "space"},
]


def write(path: Path, rows=ROWS) -> Path:
    suffix = path.suffix
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif suffix == ".json":
        path.write_text(json.dumps(rows), encoding="utf-8")
    elif suffix == ".csv":
        names = sorted({k for r in rows for k in r})
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, names)
            w.writeheader()
            w.writerows(rows)
    elif suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        names = sorted({k for r in rows for k in r})
        pq.write_table(pa.table({n: [r.get(n) for r in rows] for n in names}), path)
    return path


def load(name, opts=None, **kw):
    pack = open_pack(str(name), opts)
    return pack, pack.load(LoadOptions(**kw))


def test_is_file_pack_tells_files_from_pack_names():
    assert is_file_pack("q.jsonl") and is_file_pack("a/b.CSV") and is_file_pack("hf:me/set")
    assert not is_file_pack("gsm8k") and not is_file_pack("agieval-zh1200")


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv", ".parquet"])
def test_every_format_gives_the_same_items(tmp_path, suffix):
    pack, items = load(write(tmp_path / f"q{suffix}"))
    _, reference = load(write(tmp_path / "ref.jsonl"))
    assert [i.id for i in items] == ["arith/0", "colours/1", "arith/2", "space/3"]
    assert dataset_fingerprint(items) == dataset_fingerprint(reference)
    choice = items[1]
    assert choice.choices == ("green", "red", "purple", "orange") and choice.gold == "B"
    assert choice.meta["kind"] == "choice"
    assert items[3].meta == {"inferred_kind": "text"}
    assert pack.spec["sha256"] == hashlib.sha256((tmp_path / f"q{suffix}").read_bytes()).hexdigest()
    assert pack.name == f"file:q{suffix}"


def test_prompts_fill_the_question_and_lettered_options(tmp_path):
    pack, items = load(write(tmp_path / "q.jsonl"))
    text = pack.prompt(items[1])[0]["content"]
    assert "Which is a primary colour?" in text and "A. green\nB. red\nC. purple\nD. orange" in text
    assert "\\boxed{}" in pack.prompt(items[2])[0]["content"]   # braces of the template survive
    custom, items = load(tmp_path / "q.jsonl", FileOptions(template="Q: {question}\n{choices}\nbraces {} stay"))
    assert custom.prompt(items[1])[0]["content"].startswith("Q: Which is a primary colour?\nA. green")
    assert custom.template_hash() != pack.template_hash()


def test_grading_by_kind(tmp_path):
    pack, items = load(write(tmp_path / "q.jsonl"))
    by_id = {i.id: i for i in items}
    assert pack.grade(by_id["arith/0"], "6*7 = 42. The answer is 42").equal is True
    assert pack.grade(by_id["colours/1"], "The answer is B").equal is True
    assert pack.grade(by_id["colours/1"], "The answer is red").equal is True      # the option's text
    assert pack.grade(by_id["colours/1"], "The answer is C").equal is False
    assert pack.grade(by_id["arith/2"], "The answer is \\boxed{0.5}").equal is True
    assert pack.grade(by_id["space/3"], "The answer is Jupiter.").equal is True


def test_choice_answer_given_as_option_text_becomes_its_letter(tmp_path):
    rows = [{"question": "Pick red", "options": ["blue", "red"], "answer": "red"}]
    _, items = load(write(tmp_path / "q.jsonl", rows))
    assert items[0].gold == "B" and items[0].choices == ("blue", "red")


def test_named_fields_and_kind_from_options(tmp_path):
    rows = [{"q": "1+1?", "gold_value": "2", "qid": "x1", "group": "g"}]
    path = write(tmp_path / "q.jsonl", rows)
    with pytest.raises(BadDataError, match="no question field"):
        load(path)
    pack, items = load(path, FileOptions(fields=parse_fields("question=q,answer=gold_value,id=qid,subset=group"),
                                         kind="numeric"))
    assert items[0].id == "x1" and items[0].subset == "g" and items[0].meta["kind"] == "numeric"
    with pytest.raises(BadDataError, match="KEY=COLUMN"):
        parse_fields("nonsense")


def test_a_bad_jsonl_row_is_named_by_its_line_and_skippable(tmp_path):
    path = tmp_path / "q.jsonl"
    lines = [json.dumps(r) for r in ROWS[:2]] + ["", json.dumps({"question": "no answer here"}), json.dumps(ROWS[3])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(BadDataError) as e:
        load(path)
    assert "line 4" in str(e.value) and "no answer field" in str(e.value) and "--skip-bad-rows" in str(e.value)
    _, items = load(path, skip_bad_rows=True)
    assert [i.id for i in items] == ["arith/0", "colours/1", "space/3"]   # the others keep their ids
    path.write_text(json.dumps(ROWS[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(BadDataError, match=r"line 2 not valid JSON"):
        load(path)


def test_bad_rows_in_csv_and_json_and_repeated_ids(tmp_path):
    rows = [dict(ROWS[0]), {"question": "multi\nline", "answer": "1", "subject": "x"}, {"question": "", "answer": "3"}]
    path = write(tmp_path / "q.csv", rows)
    with pytest.raises(BadDataError, match=r"line 5 has an empty question"):   # header + a two-line row
        load(path)
    with pytest.raises(BadDataError, match=r"row 2 \(0-based\) has an empty question"):
        load(write(tmp_path / "q.json", rows))
    dup = [{"id": "a", "question": "x", "answer": "1"}, {"id": "a", "question": "y", "answer": "2"}]
    with pytest.raises(BadDataError, match=r"line 2 repeats the id 'a' of line 1"):
        load(write(tmp_path / "d.jsonl", dup))
    bad_choice = [{"question": "x", "A": "p", "B": "q", "answer": "E"}]
    with pytest.raises(BadDataError, match="neither an option letter"):
        load(write(tmp_path / "c.jsonl", bad_choice))


def test_toml_beside_the_data(tmp_path):
    rows = [{"q": "2+3?", "a": "5", "t": "sums"}]
    write(tmp_path / "data.jsonl", rows)
    (tmp_path / "questions.toml").write_text(
        'data = "data.jsonl"\nkind = "numeric"\ntemplate = "Compute: {question}"\nsystem = "Be brief."\n'
        '[fields]\nquestion = "q"\nanswer = "a"\nsubset = "t"\n', encoding="utf-8")
    pack, items = load(tmp_path / "questions.toml")
    assert items[0].id == "sums/0" and pack.prompt(items[0])[0]["content"] == "Compute: 2+3?"
    assert pack.system == "Be brief." and pack.spec["path"] == str((tmp_path / "data.jsonl").resolve())
    # the command line wins over the file
    pack2, _ = load(tmp_path / "questions.toml", FileOptions(template="Now: {question}"))
    assert pack2.prompt(items[0])[0]["content"] == "Now: 2+3?"
    (tmp_path / "bad.toml").write_text('data = "data.jsonl"\ncolour = "red"\n', encoding="utf-8")
    with pytest.raises(BadDataError, match="unknown key.*colour"):
        load(tmp_path / "bad.toml")


def test_pack_rebuilt_from_the_manifest_spec_without_the_file(tmp_path):
    path = write(tmp_path / "q.jsonl")
    pack, items = load(path)
    manifest = {"pack": pack.name, "pack_spec": json.loads(json.dumps(dict(pack.spec)))}
    path.unlink()
    again = pack_for_manifest(manifest)
    for item in items:
        assert again.prompt(item) == pack.prompt(item)
        for answer in ("The answer is 42", "The answer is B", "The answer is Jupiter", "\\boxed{\\frac{1}{2}}"):
            assert again.grade(item, answer) == pack.grade(item, answer)
    assert again.template_hash() == pack.template_hash()


def test_the_suite_file_of_200_own_questions_loads_with_four_kinds():
    pack, items = load(OWN)
    assert len(items) == 200
    kinds = {i.meta.get("kind") for i in items}
    assert kinds == {"numeric", "math", "choice", "text"}
    assert {i.subset for i in items} == {"numeric", "latex", "choice", "text"}
    assert all(len(i.choices) == 4 for i in items if i.meta["kind"] == "choice")


def test_hub_loader_reads_a_local_dataset_folder_and_records_its_fingerprint(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "myset"
    folder.mkdir()
    write(folder / "test.jsonl")
    pack = open_file_pack(f"hf:{folder}")          # split "test" by default
    items = pack.load(LoadOptions())
    assert len(items) == 4 and items[1].choices == ("green", "red", "purple", "orange")
    assert pack.name == f"hf:{folder}" and pack.spec["hub_fingerprint"]
    with pytest.raises(BadDataError, match=r"\[train\].*Unknown split"):
        open_file_pack(f"hf:{folder}", FileOptions(split="train")).load(LoadOptions())


def test_hub_offline_error_says_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    pack = open_file_pack("hf:nobody-here/no-such-set-23")
    with pytest.raises(BadDataError) as e:
        pack.load(LoadOptions())
    assert "hf:nobody-here/no-such-set-23" in str(e.value)


def test_cli_names_the_bad_row_before_asking_any_server(tmp_path, run_cli):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps({"question": "x"}) + "\n", encoding="utf-8")
    # nothing listens on this port: the file is read (and refused) first
    r = run_cli("run", path, "--endpoint", "http://127.0.0.1:9/v1", "--run-dir", tmp_path / "run", timeout=60)
    assert r.returncode == 2, r.stderr
    assert "line 2" in r.stderr and "no answer field" in r.stderr
    assert not (tmp_path / "run" / "records.jsonl").exists()


def test_file_options_are_refused_for_a_builtin_pack(run_cli, tmp_path):
    r = run_cli("run", "gsm8k", "--kind", "numeric", "--endpoint", "http://127.0.0.1:9/v1", "--run-dir", tmp_path / "r")
    assert r.returncode == 2 and "apply to your own questions" in r.stderr
