"""Regrade without a data folder: records carry what grading needs (option texts, kind, a
preset's pack); records too old to carry it are refused with a message naming --data-dir."""
from __future__ import annotations

import json

import pytest
from runfactory import make_run, rec

from evalsuite.analysis.regrade import item_fields, regrade
from evalsuite.tasks import Item, get_pack


def graded_record(pack_name: str, item: Item, answer: str, old: bool = False) -> dict:
    """A record as the runner writes it (item_fields included), graded with the stored verdict
    deliberately wrong so a re-grade must change it."""
    verdict = get_pack(pack_name).grade(item, answer)
    r = rec(item.id, "wrong" if verdict.equal else "correct", subset=item.subset, gold=item.gold, answer=answer,
            extracted="stale")
    if not old:
        r.update(item_fields(item))
    return r


def test_agieval_cloze_and_choice_regrade_without_data(tmp_path):
    cloze = Item(id="math/0", subset="math", question="1/2 + 1/2 = ?", gold="1", meta={"lang": "en", "kind": "cloze"})
    choice = Item(id="lsat/0", subset="lsat", question="?", gold="B", choices=("red apple", "green pear", "blue"),
                  meta={"lang": "en", "kind": "choice"})
    records = [graded_record("agieval", cloze, "so the answer is \\boxed{1}"),
               graded_record("agieval", choice, "The answer is green pear.")]
    run = make_run(tmp_path / "run", "agieval", records=records)
    changes = regrade(run)
    assert {c.id for c in changes} == {"math/0", "lsat/0"}
    by_id = {c.id: c for c in changes}
    assert by_id["math/0"].new_equal is True
    assert by_id["lsat/0"].new_equal is True and by_id["lsat/0"].new_extracted == "B"   # matched by option text


def test_cmmlu_option_text_matching_kept(tmp_path):
    item = Item(id="anatomy/0", subset="anatomy", question="?", gold="C", choices=("心脏", "肝脏", "肾脏", "肺"),
                meta={"lang": "zh", "kind": "choice", "fewshot": (("q", "A"),)})
    fields = item_fields(item)
    assert "fewshot" not in fields["item_meta"] and fields["choices"] == ["心脏", "肝脏", "肾脏", "肺"]
    run = make_run(tmp_path / "run", "cmmlu", records=[graded_record("cmmlu", item, "答案是肾脏")])
    (change,) = regrade(run)
    assert change.new_equal is True and change.new_extracted == "C"


def test_preset_regrade_without_data(tmp_path):
    from evalsuite.tasks._exam import rename

    inner = Item(id="math/3", subset="math", question="?", gold="2", meta={"lang": "zh", "kind": "cloze"})
    item = rename(inner, "agieval")
    preset = "agieval-zh1200"
    run = make_run(tmp_path / "run", preset, records=[graded_record(preset, item, "\\boxed{2}")])
    (change,) = regrade(run)
    assert change.new_equal is True


@pytest.mark.parametrize("pack_name,item", [
    ("agieval", Item(id="math/0", subset="math", question="?", gold="1", meta={"lang": "en", "kind": "cloze"})),
    ("cmmlu", Item(id="anatomy/0", subset="anatomy", question="?", gold="C", choices=("a", "b", "c", "d"),
                   meta={"lang": "zh", "kind": "choice"})),
])
def test_old_records_without_item_fields_are_refused_naming_data_dir(tmp_path, pack_name, item):
    run = make_run(tmp_path / "run", pack_name, records=[graded_record(pack_name, item, "\\boxed{1}", old=True)])
    with pytest.raises(ValueError, match="--data-dir"):
        regrade(run)


def test_regrade_cli_refusal_is_a_clear_error(tmp_path, run_cli):
    item = Item(id="math/0", subset="math", question="?", gold="1", meta={"lang": "en", "kind": "cloze"})
    run = make_run(tmp_path / "run", "agieval", records=[graded_record("agieval", item, "\\boxed{1}", old=True)])
    out = run_cli("regrade", run)
    assert out.returncode == 2 and "--data-dir" in out.stderr and "Traceback" not in out.stderr
    assert "'kind'" not in out.stderr.split("error:")[-1][:10]


def test_runner_records_carry_item_fields():
    from evalsuite.client.exchange import Request, Response
    from evalsuite.run.records import response_record

    item = Item(id="lsat/0", subset="lsat", question="?", gold="B", choices=("x", "y"), meta={"lang": "en", "kind": "choice"})
    response = Response(answer="B", reasoning=None, reasoning_source=None, finish_reason="stop",
                        usage={"prompt_tokens": 1, "completion_tokens": 1, "reasoning_tokens": None},
                        timing={}, server_timings=None, logprobs=None, model="m", endpoint="e")
    verdict = get_pack("agieval").grade(item, "B")
    r = response_record(item, Request(item_id=item.id, messages=({"role": "user", "content": "?"},)), response, verdict, 1)
    assert r["choices"] == ["x", "y"] and r["item_meta"] == {"lang": "en", "kind": "choice"}
    json.dumps(r)
