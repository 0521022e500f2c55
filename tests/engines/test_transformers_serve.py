"""`transformers serve` end to end on the tiny HF model: prompt-lookup speculation off vs on, and
a perturbed-weights candidate. The server ignores `logprobs`, so `diff` compares texts: items
whose texts are byte-identical are `identical`, the others `undetermined` with the reason, and
nothing is ever called a near tie or a real divergence without numbers.

Prompt lookup is switched on in the model folder's generation_config.json (the server's default
for requests that send no `generation_config`), so both runs send the same request body.
Whether it drafted is not observable from outside (no /metrics, no field in the response, no log
line): tf_probe/sitecustomize.py, on the servers' PYTHONPATH, counts the tokens prompt lookup
proposed and the model kept, so a candidate that never speculated fails the test.
Measured on 2 shared cores: ready in ~11 s; one request at a time.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from engines.engine_e2e import N_ITEMS, assert_identical_texts_are_identical, diff, lossless, run, texts
from engine_servers import TransformersServer

pytestmark = [pytest.mark.transformers, pytest.mark.slow]

N = min(N_ITEMS, 100)
PROBE = Path(__file__).parent / "tf_probe"


def probed(counts: Path) -> dict:
    """The server environment that counts prompt lookup's drafts into `counts`."""
    return {"env": {"PYTHONPATH": str(PROBE), "EVALSUITE_TF_PROBE": str(counts)}}


def lookup_steps(counts: Path) -> list[tuple[int, int]]:
    """(drafted, accepted) per verification step so far."""
    if not counts.exists():
        return []
    return [tuple(map(int, line.split())) for line in counts.read_text().splitlines() if line.strip()]


def with_prompt_lookup(model: Path, folder: Path, tokens: int = 5) -> Path:
    """The same weights, with prompt-lookup decoding as the model's default generation config."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in model.iterdir():
        if f.name != "generation_config.json" and not (folder / f.name).exists():
            (folder / f.name).symlink_to(f)
    config = json.loads((model / "generation_config.json").read_text())
    config.update(prompt_lookup_num_tokens=tokens, do_sample=False)
    (folder / "generation_config.json").write_text(json.dumps(config))
    return folder


@pytest.fixture(scope="module")
def baseline_server(transformers_py, tiny_hf, tmp_path_factory):
    server = TransformersServer(tiny_hf(), **probed(tmp_path_factory.mktemp("probe") / "baseline.txt")).start()
    yield server
    server.stop()


def test_prompt_lookup_on_vs_off_is_lossless(transformers_py, tmp_path, data_dir, tiny_hf, baseline_server):
    counts = tmp_path / "lookup-probe.txt"
    with TransformersServer(with_prompt_lookup(tiny_hf(), tmp_path / "lookup-model"), **probed(counts)) as cand:
        before = len(lookup_steps(counts))     # the start-up request's
        data = lossless(tmp_path, data_dir, baseline_server.url, cand.url, "tf-lookup", "--no-stream",
                        n_items=N)
    steps = lookup_steps(counts)[before:]
    drafted, accepted = sum(d for d, _ in steps), sum(a for _, a in steps)
    print(f"transformers prompt lookup: {accepted} of {drafted} drafted tokens accepted in {len(steps)} steps")
    assert drafted > 0 and accepted > 0, f"prompt lookup never drafted ({len(steps)} steps): the test would prove nothing"
    assert not lookup_steps(Path(baseline_server.env["EVALSUITE_TF_PROBE"])), "the baseline speculated"
    base_dir, cand_dir = tmp_path / "tf-lookup" / "baseline", tmp_path / "tf-lookup" / "candidate"
    same = assert_identical_texts_are_identical(data, base_dir, cand_dir)
    bad = [(i["id"], i["class"], i["reason"]) for i in data["items"] if i["class"] != "identical"]
    assert not bad, bad
    assert same == N


def test_without_logprobs_only_differing_texts_are_undetermined(transformers_py, tmp_path, data_dir, tiny_hf,
                                                               baseline_server):
    base_dir = run(tmp_path, data_dir, baseline_server.url, "base", n_items=N)
    with TransformersServer(tiny_hf(perturb=0.05)) as cand:
        cand_dir = run(tmp_path, data_dir, cand.url, "perturbed", n_items=N)
    data = diff(tmp_path, base_dir, cand_dir, "perturbed")
    tb, tc = texts(base_dir), texts(cand_dir)
    same = assert_identical_texts_are_identical(data, base_dir, cand_dir)
    differ = [i for i in data["items"] if tb[i["id"]] != tc[i["id"]]]
    print(f"transformers perturbed: {data['counts']}; {same} byte-identical")
    assert differ, "the perturbed model changed no text: the test would prove nothing"
    for item in differ:
        assert item["class"] == "undetermined", (item["id"], item["class"], item["reason"])
        assert "logprob" in item["reason"], item["reason"]
