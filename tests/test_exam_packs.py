"""AGIEval, C-Eval, CMMLU and their presets, read from the real files in ../shared/data."""
from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from conftest import EXTRA_BODY, requires_llama
from evalsuite.tasks import BadDataError, LoadOptions, get_pack
from evalsuite.tasks._exam import allocate
from evalsuite.tasks.pack import dataset_fingerprint

EXAM_PACKS = ("agieval", "ceval", "cmmlu")


def manifest_counts(data_dir: Path) -> dict[str, int]:
    """Rows per data file, from the per-file tables of MANIFEST.md ("| `ceval/val/law_val.csv` | 24 |")."""
    text = (data_dir / "MANIFEST.md").read_text(encoding="utf-8")
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^\| `([^`]+)` \| (\d+) \|", text, re.MULTILINE)}


@pytest.fixture(scope="module")
def loaded(data_dir):
    """pack name -> all its items (loaded once per module)."""
    return {name: get_pack(name).load(LoadOptions(data_dir=data_dir)) for name in EXAM_PACKS}


# --- counts and shapes ---------------------------------------------------------------------

def test_counts_per_subset_match_the_manifest(data_dir, loaded):
    files = manifest_counts(data_dir)
    expected = {
        "agieval": {k[len("agieval/"):-len(".jsonl")]: v for k, v in files.items() if k.startswith("agieval/")},
        "ceval": {k[len("ceval/val/"):-len("_val.csv")]: v for k, v in files.items() if k.startswith("ceval/val/")},
        "cmmlu": {k[len("cmmlu/test/"):-len(".csv")]: v for k, v in files.items() if k.startswith("cmmlu/test/")},
    }
    for name in EXAM_PACKS:
        pack = get_pack(name)
        got = Counter(item.subset for item in loaded[name])
        assert dict(got) == expected[name], name
        assert sorted(pack.subsets) == sorted(expected[name]), name
        assert pack.count == sum(expected[name].values()) == len(loaded[name])
    assert (len(loaded["agieval"]), len(loaded["ceval"]), len(loaded["cmmlu"])) == (7272, 1346, 11582)


def test_ids_are_subset_and_row_index_and_unique(loaded):
    for name, items in loaded.items():
        assert len({item.id for item in items}) == len(items), name
        for item in items:
            subset, index = item.id.rsplit("/", 1)
            assert subset == item.subset and index.isdigit()
    assert loaded["ceval"][0].id == "accountant/0" and loaded["cmmlu"][0].id == "agronomy/0"


def test_categories_follow_the_official_tables():
    ceval, cmmlu = get_pack("ceval"), get_pack("cmmlu")
    assert Counter(ceval.categories.values()) == {"STEM": 20, "Social Science": 10, "Humanities": 11, "Other": 11}
    assert set(ceval.categories) == set(ceval.subsets)
    assert set(cmmlu.categories) == set(cmmlu.subsets) and len(cmmlu.subsets) == 67
    assert set(cmmlu.categories.values()) == {"STEM", "Humanities", "Social Science", "Other", "China specific"}
    assert Counter(cmmlu.categories.values())["China specific"] == 15
    assert ceval.categories["college_programming"] == "STEM" and ceval.categories["logic"] == "Humanities"
    assert cmmlu.categories["ancient_chinese"] == "China specific" and cmmlu.categories["virology"] == "STEM"


def test_agieval_quirks_are_read(loaded):
    by_id = {item.id: item for item in loaded["agieval"]}
    multi = {item.id: item.gold for item in loaded["agieval"] if item.meta["kind"] == "choice" and len(item.gold) > 1}
    assert multi == {"gaokao-mathqa/148": "AD", "gaokao-mathqa/149": "ACD", "gaokao-mathqa/245": "ABD",
                     "gaokao-mathqa/246": "AC", "gaokao-mathqa/247": "BCD", "gaokao-mathqa/285": "CD",
                     "gaokao-mathqa/286": "AC"}
    assert all(len(by_id[f"jec-qa-ca/{i}"].gold) == 1 for i in range(533))  # one-element list labels
    assert Counter(i.subset for i in loaded["agieval"] if i.subset.startswith("sat-")) == {
        "sat-en": 206, "sat-en-without-passage": 206, "sat-math": 220}  # rows without an `answer` key
    cloze = [i for i in loaded["agieval"] if i.meta["kind"] == "cloze"]
    assert len(cloze) == 1118 and all(i.gold and not i.choices for i in cloze)
    assert by_id["gaokao-mathcloze/0"].gold == "2"
    aqua = by_id["aqua-rat/0"]
    assert aqua.choices[0] == "5(√3 + 1)" and len(aqua.choices) == 5 and aqua.gold == "A"  # "(A)" prefix gone
    assert by_id["logiqa-zh/0"].question.startswith("某乡镇进行新区规划")  # passage before question


def read_csv_plain(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_csv_cells_are_text_exactly_as_in_the_files(data_dir, loaded):
    """No NaN for "NA"/"None", no 0.5 for "0.50": every cell equals a plain csv-module read."""
    for name, split, columns, suffix in (("ceval", "val", ("question", "A", "B", "C", "D", "answer"), "_val"),
                                         ("cmmlu", "test", ("Question", "A", "B", "C", "D", "Answer"), "")):
        items = {item.id: item for item in loaded[name]}
        for subject in get_pack(name).subsets:
            for index, row in enumerate(read_csv_plain(data_dir / name / split / f"{subject}{suffix}.csv")):
                item = items[f"{subject}/{index}"]
                clean = [row[c].replace("\r\n", "\n").strip() for c in columns]
                assert item.question == clean[0] and item.choices == tuple(clean[1:5]) and item.gold == clean[5]


def test_ceval_crlf_inside_fields_becomes_lf(loaded):
    multiline = [i for i in loaded["ceval"] if "\n" in i.question]
    assert multiline and not any("\r" in i.question or any("\r" in c for c in i.choices) for i in loaded["ceval"])


# --- choosing items ------------------------------------------------------------------------

def test_groups_expand_and_unknown_subsets_list_the_valid_names(data_dir):
    pack = get_pack("agieval")
    zh = pack.load(LoadOptions(data_dir=data_dir, subsets=("agieval-zh",), per_subset=1))
    assert {i.subset for i in zh} == {"logiqa-zh", "jec-qa-kd", "jec-qa-ca", "gaokao-chinese", "gaokao-geography",
                                      "gaokao-history", "gaokao-biology", "gaokao-chemistry", "gaokao-physics",
                                      "gaokao-mathqa", "gaokao-mathcloze"}
    en = pack.load(LoadOptions(data_dir=data_dir, subsets=("agieval-en",), per_subset=1))
    assert len(en) == 10 and "gaokao-english" in {i.subset for i in en}
    with pytest.raises(BadDataError, match=r"unknown subset\(s\) gaokao-art.*gaokao-history.*agieval-zh \(group\)"):
        pack.load(LoadOptions(data_dir=data_dir, subsets=("gaokao-art",)))
    with pytest.raises(BadDataError, match="unknown subset.*nope.*accountant"):
        get_pack("ceval").load(LoadOptions(data_dir=data_dir, subsets=("nope",)))


def test_seeded_subsample_is_stable(data_dir):
    agieval = get_pack("agieval").load(LoadOptions(data_dir=data_dir, subsets=("gaokao-history", "logiqa-en"),
                                                   per_subset=3, seed=7))
    assert [i.id for i in agieval] == ["gaokao-history/186", "gaokao-history/194", "gaokao-history/212",
                                       "logiqa-en/118", "logiqa-en/145", "logiqa-en/518"]
    ceval = get_pack("ceval").load(LoadOptions(data_dir=data_dir, subsets=("law",), per_subset=4, seed=1))
    assert [i.id for i in ceval] == ["law/3", "law/4", "law/9", "law/18"]


def test_fingerprints_equal_for_the_same_selection_only(data_dir):
    pack = get_pack("cmmlu")
    opts = LoadOptions(data_dir=data_dir, subsets=("virology", "arts"), per_subset=5, seed=3)
    first, again = pack.load(opts), pack.load(opts)
    assert dataset_fingerprint(first) == dataset_fingerprint(again)
    other = pack.load(LoadOptions(data_dir=data_dir, subsets=("virology", "arts"), per_subset=5, seed=4))
    assert dataset_fingerprint(other) != dataset_fingerprint(first)


def test_allocate_spreads_evenly_and_respects_sizes():
    quota = allocate(10, {"a": 100, "b": 2, "c": 100}, seed=0)
    assert sum(quota.values()) == 10 and quota["b"] == 2 and abs(quota["a"] - quota["c"]) <= 1
    assert allocate(10, {"a": 100, "b": 2, "c": 100}, seed=0) == quota
    with pytest.raises(BadDataError):
        allocate(10, {"a": 3, "b": 3}, seed=0)


# --- presets -------------------------------------------------------------------------------

def test_agieval_zh1200_is_the_documented_selection(data_dir):
    preset = get_pack("agieval-zh1200")
    items = preset.load(LoadOptions(data_dir=data_dir))
    assert len(items) == 1200 == preset.count
    assert Counter(i.subset for i in items) == {s: 150 for s in (
        "gaokao-history", "gaokao-biology", "gaokao-chinese", "gaokao-english", "gaokao-physics",
        "gaokao-geography", "gaokao-chemistry", "logiqa-zh")}
    assert [i.id for i in items[:5]] == ["gaokao-history/0", "gaokao-history/1", "gaokao-history/2",
                                         "gaokao-history/5", "gaokao-history/7"]
    assert dataset_fingerprint(items) == "59e7aa6f41b74043f6a00d2f55ea4316efcecfb7a0c5a568880e1d7e8e9a9df4"
    same = get_pack("agieval").load(LoadOptions(data_dir=data_dir, per_subset=150, seed=0, subsets=(
        "gaokao-history", "gaokao-biology", "gaokao-chinese", "gaokao-english", "gaokao-physics",
        "gaokao-geography", "gaokao-chemistry", "logiqa-zh")))
    assert dataset_fingerprint(same) == dataset_fingerprint(items)
    with pytest.raises(BadDataError, match="fixes its items"):
        preset.load(LoadOptions(data_dir=data_dir, per_subset=3))
    with pytest.raises(BadDataError, match="seed 0"):
        preset.load(LoadOptions(data_dir=data_dir, seed=5))


def test_ceval220_cmmlu200_is_one_pack_with_prefixed_subsets(data_dir, loaded):
    preset = get_pack("ceval220-cmmlu200")
    items = preset.load(LoadOptions(data_dir=data_dir))
    assert len(items) == 420 == preset.count and len({i.id for i in items}) == 420
    assert Counter(i.id.split("/")[0] for i in items) == {"ceval": 220, "cmmlu": 200}
    assert [i.id for i in items[:3]] == ["ceval/accountant/6", "ceval/accountant/23", "ceval/accountant/25"]
    assert [i.id for i in items if i.id.startswith("cmmlu/")][:3] == ["cmmlu/agronomy/12", "cmmlu/agronomy/66",
                                                                       "cmmlu/agronomy/112"]
    assert dataset_fingerprint(items) == "c17dfe2125112ab8e4f891c76121041fc3c09232d6feca216a19a68f80b9255f"
    per_subject = Counter(i.subset for i in items)
    assert sorted(Counter(v for s, v in per_subject.items() if s.startswith("ceval/")).items()) == [(4, 40), (5, 12)]
    assert sorted(Counter(v for s, v in per_subject.items() if s.startswith("cmmlu/")).items()) == [(2, 1), (3, 66)]
    assert all(i.subset == i.id.rsplit("/", 1)[0] and i.subset in preset.categories for i in items)
    assert preset.categories["ceval/accountant"] == "ceval/Other"
    # prompt and grade delegate to the item's own pack
    inner = {i.id: i for i in loaded["ceval"]}["accountant/6"]
    assert preset.prompt(items[0]) == get_pack("ceval").prompt(inner)
    assert preset.grade(items[0], f"答案：{inner.gold}").equal is True
    narrowed = preset.load(LoadOptions(data_dir=data_dir, subsets=("ceval/law",)))
    assert {i.subset for i in narrowed} == {"ceval/law"} and 4 <= len(narrowed) <= 5


# --- bad rows ------------------------------------------------------------------------------

def test_bad_rows_name_file_and_row_unless_skipped(tmp_path):
    (tmp_path / "agieval").mkdir()
    rows = [{"passage": None, "question": "q0", "options": ["(A)x", "(B)y"], "label": "A", "answer": None, "other": None},
            {"passage": None, "question": "q1", "options": ["(A)x", "(B)y"], "label": None, "answer": None, "other": None},
            {"passage": None, "question": "q2", "options": ["(A)x", "(B)y"], "label": "Z", "answer": None, "other": None}]
    path = tmp_path / "agieval" / "gaokao-history.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    opts = LoadOptions(data_dir=tmp_path, subsets=("gaokao-history",))
    with pytest.raises(BadDataError, match=re.escape(str(path)) + r": row 1: label None"):
        get_pack("agieval").load(opts)
    kept = get_pack("agieval").load(LoadOptions(data_dir=tmp_path, subsets=("gaokao-history",), skip_bad_rows=True))
    assert [i.id for i in kept] == ["gaokao-history/0"]

    (tmp_path / "cmmlu" / "test").mkdir(parents=True)
    csv_path = tmp_path / "cmmlu" / "test" / "arts.csv"
    csv_path.write_text(",Question,A,B,C,D,Answer\n0,q,a,b,c,d,B\n1,q,a,b,c,d,\n2,q,a,b,c,d,E\n", encoding="utf-8")
    with pytest.raises(BadDataError, match=re.escape(str(csv_path)) + r": row 1: Answer ''"):
        get_pack("cmmlu").load(LoadOptions(data_dir=tmp_path, subsets=("arts",)))
    kept = get_pack("cmmlu").load(LoadOptions(data_dir=tmp_path, subsets=("arts",), skip_bad_rows=True))
    assert [i.id for i in kept] == ["arts/0"]

    (tmp_path / "ceval" / "val").mkdir(parents=True)
    no_answer = tmp_path / "ceval" / "val" / "law_val.csv"
    no_answer.write_text("id,question,A,B,C,D\r\n0,q,a,b,c,d\r\n", encoding="utf-8")
    with pytest.raises(BadDataError, match=re.escape(str(no_answer)) + ".*answer"):
        get_pack("ceval").load(LoadOptions(data_dir=tmp_path, subsets=("law",)))
    with pytest.raises(BadDataError, match="file not found"):
        get_pack("ceval").load(LoadOptions(data_dir=tmp_path, subsets=("logic",)))


# --- prompts and grading -----------------------------------------------------------------------

def test_prompts_are_in_the_item_language_and_ask_for_the_letter(loaded):
    by_id = {i.id: i for i in loaded["agieval"]}
    zh = get_pack("agieval").prompt(by_id["gaokao-history/0"])[0]["content"]
    assert "答案：" in zh and "A. 中华文明" in zh and "多选" not in zh
    assert "一个或多个正确选项" in get_pack("agieval").prompt(by_id["gaokao-mathqa/148"])[0]["content"]
    en = get_pack("agieval").prompt(by_id["lsat-ar/0"])[0]["content"]
    assert 'Answer: ' in en and "E. " in en and "答案" not in en
    assert "\\boxed{}" in get_pack("agieval").prompt(by_id["math/0"])[0]["content"]
    ceval = get_pack("ceval").prompt(loaded["ceval"][0])
    assert ceval == [{"role": "user", "content": ceval[0]["content"]}] and "注册会计师" in ceval[0]["content"]
    assert "农学" in get_pack("cmmlu").prompt(loaded["cmmlu"][0])[0]["content"]


def test_fewshot_uses_the_dev_split_as_earlier_turns(data_dir):
    for name, subject, dev_file, column in (("ceval", "accountant", "ceval/dev/accountant_dev.csv", "answer"),
                                            ("cmmlu", "agronomy", "cmmlu/dev/agronomy.csv", "Answer")):
        golds = [row[column] for row in read_csv_plain(data_dir / dev_file)[:2]]
        pack = get_pack(name)
        items = pack.load(LoadOptions(data_dir=data_dir, subsets=(subject,), fewshot=2))
        messages = pack.prompt(items[0])
        assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
        assert [m["content"] for m in messages[1:4:2]] == [f"答案：{g}" for g in golds]
        assert messages[0]["content"].count("最后一行只写") == 1 and messages[-1] == pack.prompt(items[0])[-1]
        assert pack.template_hash(2) != pack.template_hash(0)
        with pytest.raises(BadDataError, match="5 examples"):
            pack.load(LoadOptions(data_dir=data_dir, subsets=(subject,), fewshot=6))
    with pytest.raises(BadDataError, match="no dev split"):
        get_pack("agieval").load(LoadOptions(data_dir=data_dir, fewshot=1))


def test_grading_correct_wrong_and_unextracted(loaded):
    by_id = {i.id: i for i in loaded["agieval"]}
    pack = get_pack("agieval")
    item = by_id["gaokao-history/0"]
    right = pack.grade(item, f"分析……故选{item.gold}。")
    assert right.equal is True and right.method == "choice" and right.extracted == item.gold
    wrong_letter = next(c for c in "ABCD" if c != item.gold)
    wrong = pack.grade(item, f"答案：{wrong_letter}")
    assert wrong.equal is False and wrong.extracted == wrong_letter and "answer-cue" in wrong.reason
    unclear = pack.grade(item, "答案是A或B")
    assert unclear.equal is None and unclear.extracted is None and unclear.method == "none"
    multi = by_id["gaokao-mathqa/245"]  # gold "ABD", written "A B D" in the file
    assert pack.grade(multi, "故选：D、B、A").equal is True
    assert pack.grade(multi, "答案：AB").equal is False


def test_cloze_items_go_to_the_math_grader(loaded):
    item = {i.id: i for i in loaded["agieval"]}["gaokao-mathcloze/0"]  # gold "2"
    assert get_pack("agieval").grade(item, "所以 $a=\\boxed{2}$").equal is True
    assert get_pack("agieval").grade(item, "所以 $a=\\boxed{3}$").equal is False


def test_online_sources_are_pinned_original_files():
    from evalsuite.tasks import agieval, ceval, cmmlu

    online = LoadOptions(data_dir=None)
    assert agieval._location(online, "logiqa-zh") == (
        "https://raw.githubusercontent.com/ruixiangcui/AGIEval/4673402118fa180356be106f0fc73350bd5bc7df"
        "/data/v1_1/logiqa-zh.jsonl")
    assert cmmlu._location(online, "test", "arts").endswith("/CMMLU/d6e7b716d8ac694f38969a6c0407437d1fded799"
                                                            "/data/test/arts.csv")
    assert ceval._location(online, "val", "law") == f"zip://val/law_val.csv::{ceval.HUB_ZIP}"


def test_tasks_command_lists_the_exam_packs_with_counts(run_cli):
    r = run_cli("tasks", timeout=120)
    assert r.returncode == 0, r.stderr
    counts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+)\s+(\d+)\s", r.stdout, re.MULTILINE)}
    assert {k: counts.get(k) for k in ("agieval", "ceval", "cmmlu", "agieval-zh1200", "ceval220-cmmlu200")} == {
        "agieval": 7272, "ceval": 1346, "cmmlu": 11582, "agieval-zh1200": 1200, "ceval220-cmmlu200": 420}


# --- end to end against the llama.cpp test server ------------------------------------------

@pytest.mark.llama
@requires_llama
def test_run_ceval_and_preset_against_llama_server(llama_server, data_dir, run_cli, tmp_path):
    common = ["--endpoint", llama_server.url, "--data-dir", data_dir, "--extra-body", json.dumps(EXTRA_BODY),
              "--max-tokens", "16", "--quiet"]
    for pack, limit in (("ceval", 5), ("ceval220-cmmlu200", 4)):
        run_dir = tmp_path / pack
        r = run_cli("run", pack, "--limit", limit, "--run-dir", run_dir, *common)
        assert r.returncode == 0, r.stderr
        manifest = json.loads((run_dir / "manifest.json").read_text())
        records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines() if line.strip()]
        assert manifest["pack"] == pack and manifest["dataset"]["n_items"] == limit
        assert manifest["template_hash"] == get_pack(pack).template_hash(0)
        assert len(records) == limit
        assert all(rec["outcome"] in {"correct", "wrong", "unextracted", "truncated"} for rec in records)
        assert all(rec["verdict"]["method"] in {"choice", "none"} for rec in records)
    preset_records = [json.loads(line) for line in (tmp_path / "ceval220-cmmlu200" / "records.jsonl").read_text().splitlines()]
    # --limit 4 on the preset: a seeded sample over its subsets, one item from each of four (issue 42)
    subsets = [r["subset"] for r in preset_records]
    assert len(set(subsets)) == 4 and all(s.startswith(("ceval/", "cmmlu/")) for s in subsets), subsets
