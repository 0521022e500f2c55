"""`evalsuite sweep`: one managed server per setting, one run folder each, then compare and a report;
interrupted and started again, finished settings are not run again.

The "models" here are two answer files for tests/managed_server.py (one right everywhere, one
wrong on a fifth of the items), so the compare table has a real difference to show.
tests/engines/test_managed_llama_server.py sweeps two GGUF files on the real llama-server.
"""
from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys

import pytest

from fault_server import prompt_key
from test_serve import TESTS, alive, cli_args, env, gsm8k, lines, run_cli, wait_for

N = 40


@pytest.fixture()
def models(tmp_path, data_dir):
    pack, items = gsm8k(data_dir, N)
    good, worse = tmp_path / "good.json", tmp_path / "worse.json"
    key = {i.id: prompt_key(pack.prompt(i)[-1]["content"]) for i in items}
    good.write_text(json.dumps({key[i.id]: f"The answer is {i.gold}" for i in items}))
    worse.write_text(json.dumps({key[i.id]: f"The answer is {i.gold if n % 5 else '-1'}" for n, i in enumerate(items)}))
    return good, worse


def sweep_args(tmp_path, data_dir, models, *extra):
    serve = shlex.join([sys.executable, str(TESTS / "managed_server.py"), "--port", "{port}", "--answers", "{model}",
                        "--requests", "{model}.log"]) + " " + " ".join(map(str, extra))
    return ["sweep", "gsm8k", "--serve", serve, "--set", f"model={models[0]},{models[1]}", "--limit", N,
            "--data-dir", data_dir, "--run-dir", tmp_path / "sweep"]


def test_a_sweep_gives_one_run_folder_per_setting_a_compare_table_and_a_report(tmp_path, data_dir, models):
    proc = run_cli(*sweep_args(tmp_path, data_dir, models), "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    root = tmp_path / "sweep"
    folders = [root / "01-good", root / "02-worse"]
    for folder, label, correct in zip(folders, ("good", "worse"), (N, N - N // 5)):
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["status"] == "finished" and manifest["label"] == label
        assert json.loads((folder / "summary.json").read_text())["n_correct"] == correct
        assert manifest["engine"]["managed"]["argv"][5] == str(models[0] if label == "good" else models[1])
        assert not alive(int((folder / "server.pid").read_text()))
    # the compare table: the second setting against the first, paired
    assert "good" in proc.stdout and "worse" in proc.stdout and "-20.0 pp" in proc.stdout, proc.stdout
    assert json.loads((root / "compare.json").read_text())
    page = (root / "report.html").read_text()
    assert "good" in page and "worse" in page
    plan = json.loads((root / "sweep.json").read_text())
    assert [s["folder"] for s in plan["settings"]] == ["01-good", "02-worse"]


def test_an_interrupted_sweep_goes_on_without_redoing_a_finished_setting(tmp_path, data_dir, models):
    args = sweep_args(tmp_path, data_dir, models, "--delay", "0.05")
    root = tmp_path / "sweep"
    proc = subprocess.Popen(cli_args(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    assert wait_for(lambda: lines(root / "02-worse" / "records.jsonl") >= 5, timeout=120)
    first = {name: (root / "01-good" / name).read_bytes() for name in ("records.jsonl", "manifest.json")}
    asked_first = lines(models[0].with_name(models[0].name + ".log"))
    pid = int((root / "02-worse" / "server.pid").read_text())
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-3000:]
    assert not alive(pid)
    assert f"--resume {root}" in err
    # the command the interrupted run printed: the sweep, resumed from that run's folder
    printed = [line.strip() for line in err.splitlines() if line.strip().startswith("evalsuite sweep")]
    assert printed and printed[0].endswith(f"--resume {root / '02-worse'}"), err[-2000:]
    again = run_cli(*shlex.split(printed[0])[1:])
    assert again.returncode == 0, again.stderr[-3000:]
    assert "01-good" in again.stderr and "not run again" in again.stderr
    # the first setting: not asked again, its folder untouched
    assert lines(models[0].with_name(models[0].name + ".log")) == asked_first
    assert {name: (root / "01-good" / name).read_bytes() for name in first} == first
    recs = [json.loads(line) for line in (root / "02-worse" / "records.jsonl").read_text().splitlines()]
    assert len(recs) == N and len({r["id"] for r in recs}) == N
    assert json.loads((root / "02-worse" / "manifest.json").read_text()).get("resumed_at")
    assert "-20.0 pp" in again.stdout


def test_a_sweep_refuses_what_it_cannot_run(tmp_path, data_dir, models):
    proc = run_cli("sweep", "gsm8k", "--serve", "server -m {model} --port {port}", "--set", "quant=a,b",
                   "--run-dir", tmp_path / "s")
    assert proc.returncode == 2 and "{model}" in proc.stderr and "no --set gives it" in proc.stderr
    proc = run_cli("sweep", "gsm8k", "--serve", "server -m {model} --port {port}", "--set", "model=a,b",
                   "--endpoint", "http://127.0.0.1:1/v1", "--run-dir", tmp_path / "s")
    assert proc.returncode == 2 and "--endpoint is the sweep's own" in proc.stderr


def test_settings_from_a_toml_file(tmp_path):
    from evalsuite.serve.sweep import make_settings, read_settings_file

    path = tmp_path / "s.toml"
    path.write_text('[set]\nmodel = ["a/q4.gguf", "a/iq3_s.gguf"]\nctx = [4096, 8192]\n'
                    '[[setting]]\nmodel = "b/f16.gguf"\nctx = "4096"\nlabel = "F16 reference"\n')
    axes, explicit = read_settings_file(path)
    settings = make_settings(axes, explicit)
    assert [s.label for s in settings] == ["model=q4 ctx=4096", "model=q4 ctx=8192", "model=iq3_s ctx=4096",
                                           "model=iq3_s ctx=8192", "F16 reference"]
    assert settings[-1].folder == "05-F16_reference" and dict(settings[0].values) == {"model": "a/q4.gguf",
                                                                                     "ctx": "4096"}


def test_a_sweep_folder_is_not_continued_with_other_run_options(tmp_path, data_dir, models):
    proc = run_cli(*sweep_args(tmp_path, data_dir, models), "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    other = run_cli(*sweep_args(tmp_path, data_dir, models), "--max-tokens", 64)
    assert other.returncode == 2 and "differs in run_args" in other.stderr, other.stderr
    same = run_cli(*sweep_args(tmp_path, data_dir, models))   # --quiet or not: the same sweep
    assert same.returncode == 0 and same.stderr.count("not run again") == 2, same.stderr
