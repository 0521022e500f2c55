"""Managed servers (`run --serve`): evalsuite starts the server, watches it, restarts it when it
dies or hangs, and stops its process group at the end, on Ctrl-C and on errors.

The managed command here is tests/managed_server.py, a real server process (the fault server of
the reliability tests, answering every gsm8k item right) that logs "PID KEY" for every
completion request it receives, so a test can tell which server process was asked what.
tests/engines/test_managed_llama_server.py does the same with the real llama-server.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest

from fault_server import prompt_key

TESTS = Path(__file__).resolve().parent


def gsm8k(data_dir: Path, n: int):
    from evalsuite.tasks import LoadOptions, get_pack

    pack = get_pack("gsm8k")
    return pack, pack.load(LoadOptions(data_dir=data_dir))[:n]


@pytest.fixture()
def answers(tmp_path, data_dir) -> Path:
    pack, items = gsm8k(data_dir, 200)
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({prompt_key(pack.prompt(i)[-1]["content"]): f"The answer is {i.gold}" for i in items}))
    return path


def serve_command(answers: Path, requests: Path, *extra) -> str:
    return shlex.join([sys.executable, str(TESTS / "managed_server.py"), "--port", "{port}", "--answers", str(answers),
                       "--requests", str(requests), *map(str, extra)])


def cli_args(*args) -> list[str]:
    return [sys.executable, "-m", "evalsuite.cli", *map(str, args)]


def env() -> dict:
    return dict({k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}, PYTHONUNBUFFERED="1")


def run_cli(*args, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(cli_args(*args), capture_output=True, text=True, timeout=timeout, env=env())


def alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
        return True
    except ProcessLookupError:
        return False


def pid_of(folder):
    """The managed server's PID now (None while the file is being rewritten)."""
    try:
        return int((folder / "server.pid").read_text())
    except (OSError, ValueError):
        return None


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def kill_managed(pid: int, requests: Path) -> None:
    """SIGKILL the managed server `pid` if it is still this test's (its command line names this
    test's requests log): a PID read from server.pid may be gone by then, and with pid_max 32768
    and parallel test workers the number can already be another test's process."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        if Path("/proc/self").exists():
            return   # gone
        cmdline = str(requests).encode()   # no /proc: trust the PID
    if str(requests).encode() in cmdline:
        os.kill(pid, signal.SIGKILL)


def wait_for(predicate, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def requests_by_key(path: Path) -> dict[str, list[int]]:
    out: dict[str, list[int]] = defaultdict(list)
    for line in path.read_text().splitlines():
        pid, key = line.split()
        out[key].append(int(pid))
    return out


# ----------------------------------------------------------------------------- units

def test_the_command_is_split_and_its_placeholders_filled():
    from evalsuite.client.errors import UsageError
    from evalsuite.serve.command import parse_command

    argv, env_, host, port = parse_command("CUDA_VISIBLE_DEVICES=1 llama-server -m '{model}' --port {port} "
                                           "--spec '{\"n\": 8}'", {"model": "my q4.gguf"})
    assert env_ == {"CUDA_VISIBLE_DEVICES": "1"} and host == "127.0.0.1"
    assert argv[:3] == ["llama-server", "-m", "my q4.gguf"] and argv[4] == str(port) and 1024 < port < 65536
    assert argv[-1] == '{"n": 8}'   # JSON braces are not placeholders
    assert parse_command("vllm serve M --host 0.0.0.0 --port=8001")[2:] == ("127.0.0.1", 8001)
    with pytest.raises(UsageError, match=r"placeholder \{quant\}.*--set quant="):
        parse_command("llama-server -m {quant}.gguf --port {port}")
    with pytest.raises(UsageError, match=r"names no port.*--port \{port\}"):
        parse_command("llama-server -m x.gguf")


def test_big_model_files_get_a_partial_hash_that_says_so(tmp_path, monkeypatch):
    import evalsuite.serve.fingerprint as serve

    small, big = tmp_path / "small.gguf", tmp_path / "big.gguf"
    small.write_bytes(b"x" * 1000)
    big.write_bytes(os.urandom(3000))
    monkeypatch.setattr(serve, "FULL_HASH_MAX", 2000)
    monkeypatch.setattr(serve, "PARTIAL_CHUNK", 100)
    a = serve.file_fingerprint(small)
    assert a == {"path": str(small), "size": 1000, "sha256": hashlib.sha256(b"x" * 1000).hexdigest()}
    b = serve.file_fingerprint(big)
    data = big.read_bytes()
    assert b["size"] == 3000 and "sha256" not in b and "first" in b["hash_method"]
    assert b["sha256_partial"] == hashlib.sha256(b"3000\n" + data[:100] + data[-100:]).hexdigest()
    assert serve.model_paths(["llama-server", "-m", str(small), "--lora=" + str(big), "--port", "1"]) == [small, big]


def test_keys_in_the_command_are_never_recorded():
    from evalsuite.serve.command import _redact_env, redact_argv

    assert redact_argv(["vllm", "serve", "M", "--api-key", "sk-1", "--hf-token=hf_2", "x-sk-3"], "sk-3") == \
        ["vllm", "serve", "M", "--api-key", "***", "--hf-token=***", "x-***"]
    assert _redact_env({"HF_TOKEN": "hf_x", "VLLM_CPU_KVCACHE_SPACE": "1"}) == {"HF_TOKEN": "***",
                                                                               "VLLM_CPU_KVCACHE_SPACE": "1"}


def test_a_chosen_port_taken_before_the_server_listens_moves_the_first_start_to_another(tmp_path, answers, monkeypatch):
    # `{port}` is a port that was free a moment ago; another process can take it before the server
    # binds it (seen on loaded machines). The first start moves to another free port; a port the
    # user wrote stays theirs and fails with the reason.
    import asyncio
    import socket

    import evalsuite.serve.command as command
    from evalsuite.serve.managed import ManagedServer, ServerFailed, lost_the_port

    assert lost_the_port("0.00.003.309 E srv  start: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 1")
    assert lost_the_port("OSError: [Errno 98] error while attempting to bind on address ('127.0.0.1', 8000): "
                         "address already in use")
    assert not lost_the_port("cannot load the model file")
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    taken = holder.getsockname()[1]
    real_free_port, handed = command.free_port, []

    def free_port(host="127.0.0.1"):
        handed.append(taken if not handed else real_free_port(host))
        return handed[-1]

    monkeypatch.setattr(command, "free_port", free_port)
    server = ManagedServer(serve_command(answers, tmp_path / "requests.log"), tmp_path / "a", quiet=True)
    assert server.port == taken
    try:
        asyncio.run(server.start())
        assert server.port != taken and server.port == handed[-1] and len(handed) == 2
        assert str(server.port) in server.argv
    finally:
        server.stop()
    fixed = serve_command(answers, tmp_path / "requests.log").replace("{port}", str(taken))
    with pytest.raises(ServerFailed, match="already in use"):
        asyncio.run(ManagedServer(fixed, tmp_path / "b", quiet=True).start())
    holder.close()


# ----------------------------------------------------------------------------- end to end

def test_run_serve_starts_the_server_records_it_and_stops_it(tmp_path, data_dir, answers):
    folder, requests = tmp_path / "run", tmp_path / "requests.log"
    proc = run_cli("run", "gsm8k", "--serve", serve_command(answers, requests), "--limit", 20, "--data-dir", data_dir,
                   "--run-dir", folder, "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["n_items"] == 20 and summary["n_correct"] == 20
    manifest = json.loads((folder / "manifest.json").read_text())
    managed = manifest["engine"]["managed"]
    pid = pid_of(folder)
    assert not alive(pid), "the server is still running after the run"
    assert managed["command"].startswith(shlex.quote(sys.executable)) and "--port" in managed["argv"]
    assert manifest["endpoints"] == [f"http://127.0.0.1:{managed['port']}/v1"]
    assert managed["binary"] == str(Path(sys.executable).resolve()) and "Python 3" in managed["version"]
    # the files the command names, with their size and hash
    by_path = {m["path"]: m for m in managed["models"]}
    assert by_path[str(answers)]["sha256"] == hashlib.sha256(answers.read_bytes()).hexdigest()
    assert by_path[str(answers)]["size"] == answers.stat().st_size
    assert managed["log"] == "server.log" and f"ready on {managed['port']}" in (folder / "server.log").read_text()
    assert "server_restarts" not in manifest
    assert set(requests_by_key(requests)) and all(len(p) == 1 for p in requests_by_key(requests).values())


def test_a_server_killed_twice_is_restarted_twice_and_nothing_is_lost_or_asked_twice(tmp_path, data_dir, answers):
    folder, requests = tmp_path / "run", tmp_path / "requests.log"
    records = folder / "records.jsonl"
    killed: list[int] = []

    def killer():
        for at in (50, 120):
            if not wait_for(lambda: lines(records) >= at):
                return
            pid = pid_of(folder)
            kill_managed(pid, requests)
            killed.append(pid)
            # the next kill goes to the restarted process
            wait_for(lambda: pid_of(folder) != pid)

    thread = threading.Thread(target=killer)
    thread.start()
    # --delay 0.05: the 80 items after the second kill take >= 1 s, time for the killer thread to
    # act on a loaded machine before the run is over (0.02 left it 0.4 s)
    proc = run_cli("run", "gsm8k", "--serve", serve_command(answers, requests, "--delay", 0.05), "--limit", 200,
                   "--concurrency", 4, "--data-dir", data_dir, "--run-dir", folder)
    thread.join()
    assert len(killed) == 2, "the server was not killed twice: the test proved nothing"
    assert proc.returncode == 0, proc.stderr[-3000:]
    recs = [json.loads(line) for line in records.read_text().splitlines()]
    assert len(recs) == 200 and len({r["id"] for r in recs}) == 200
    assert all(r["outcome"] == "correct" for r in recs)
    manifest = json.loads((folder / "manifest.json").read_text())
    events = manifest["server_restarts"]
    assert [e["pid"] for e in events] == killed
    assert all(e["exit_code"] == -9 and "SIGKILL" in e["reason"] and e["outcome"] == "restarted" for e in events)
    assert all("ready on" in e["log_tail"] for e in events)
    final = pid_of(folder)
    assert final not in killed and not any(alive(p) for p in killed + [final])
    # each item was asked at most once per server process, and only a killed process was asked
    # an item that another process then answered: an item in flight was asked again once, and
    # no recorded item was asked again
    asked = requests_by_key(requests)
    assert len(asked) == 200
    for key, pids in asked.items():
        assert len(pids) == len(set(pids)), (key, pids)
        assert all(p in killed for p in pids[:-1]), (key, pids)
    again = sum(len(p) > 1 for p in asked.values())
    assert again <= 2 * 4, again   # at most the requests in flight at each kill
    assert "the managed server exited with code -9 (SIGKILL)" in proc.stderr
    show = run_cli("show", folder)
    assert show.returncode == 0 and "server restarts: 2" in show.stdout, show.stdout
    page = tmp_path / "report.html"
    report = run_cli("report", folder, "--html", page, "--transcripts", 0)
    assert report.returncode == 0, report.stderr
    html = page.read_text()
    assert "Server restarts" in html and html.count("exited with code -9 (SIGKILL)") == 2


def test_past_max_restarts_the_run_stops_resumably(tmp_path, data_dir, answers):
    folder, requests = tmp_path / "run", tmp_path / "requests.log"
    records = folder / "records.jsonl"

    def killer():
        for at in (20, 40):
            if not wait_for(lambda: lines(records) >= at):
                return
            pid = pid_of(folder)
            kill_managed(pid, requests)
            wait_for(lambda: pid_of(folder) != pid)   # the restart: a Python server's start, loaded

    thread = threading.Thread(target=killer)
    thread.start()
    command = serve_command(answers, requests, "--delay", 0.05)   # >= 0.75 s after the second kill (see above)
    proc = run_cli("run", "gsm8k", "--serve", command, "--limit", 100, "--max-restarts", 1, "--data-dir", data_dir,
                   "--run-dir", folder)
    thread.join()
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert "--max-restarts 1" in proc.stderr and "--resume" in proc.stderr
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["status"] == "stopped"
    assert [e["outcome"] for e in manifest["server_restarts"]] == ["restarted", "given up"]
    assert not alive(pid_of(folder))
    done = lines(records)
    assert 0 < done < 100
    again = run_cli("run", "gsm8k", "--serve", command, "--limit", 100, "--data-dir", data_dir, "--resume", folder)
    assert again.returncode == 0, again.stderr[-3000:]
    recs = [json.loads(line) for line in records.read_text().splitlines()]
    assert len(recs) == 100 and len({r["id"] for r in recs}) == 100
    # the resume keeps the first invocation's restarts
    assert len(json.loads((folder / "manifest.json").read_text())["server_restarts"]) == 2


def test_a_server_that_stops_answering_is_killed_and_restarted(tmp_path, data_dir, answers):
    folder, requests = tmp_path / "run", tmp_path / "requests.log"
    proc = run_cli("run", "gsm8k", "--serve", serve_command(answers, requests, "--hang-after", 15), "--limit", 40,
                   "--serve-hang-timeout", 3, "--timeout", 30, "--data-dir", data_dir, "--run-dir", folder, "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    manifest = json.loads((folder / "manifest.json").read_text())
    events = manifest["server_restarts"]
    # the restarted server hangs after 15 more: every hang is noticed and ended
    assert events and all("stopped answering" in e["reason"] and e["outcome"] == "restarted" for e in events)
    recs = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
    assert len(recs) == 40 and all(r["outcome"] == "correct" for r in recs)


@pytest.mark.parametrize("extra,expected", [
    (("--exit-at-start", 7), "exited with code 7 before it was ready"),
    (("--never-ready",), "was not ready within 3 s"),
])
def test_a_server_that_never_becomes_ready_fails_with_its_log_tail(tmp_path, data_dir, answers, extra, expected):
    folder, requests = tmp_path / "run", tmp_path / "requests.log"
    proc = run_cli("run", "gsm8k", "--serve", serve_command(answers, requests, *extra), "--limit", 5,
                   "--serve-timeout", 3, "--data-dir", data_dir, "--run-dir", folder)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert expected in proc.stderr
    tail = "cannot load the model file" if "--exit-at-start" in extra else "ready on"
    assert tail in proc.stderr and str(folder / "server.log") in proc.stderr
    assert not alive(pid_of(folder))
    assert not (folder / "records.jsonl").exists()


def test_ctrl_c_stops_the_server_and_the_resume_starts_it_again(tmp_path, data_dir, answers):
    folder, requests = tmp_path / "run", tmp_path / "requests.log"
    command = serve_command(answers, requests, "--delay", 0.05)
    proc = subprocess.Popen(cli_args("run", "gsm8k", "--serve", command, "--limit", 60, "--data-dir", data_dir,
                                     "--run-dir", folder, "--quiet"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    assert wait_for(lambda: lines(folder / "records.jsonl") >= 10)
    pid = pid_of(folder)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-3000:]
    assert not alive(pid)
    assert "--resume" in err and "--serve" in err
    again = run_cli("run", "gsm8k", "--serve", command, "--limit", 60, "--data-dir", data_dir, "--resume", folder,
                    "--quiet")
    assert again.returncode == 0, again.stderr[-3000:]
    assert lines(folder / "records.jsonl") == 60


def test_a_killed_evalsuite_takes_its_server_with_it(tmp_path, data_dir, answers):
    folder, requests = tmp_path / "run", tmp_path / "requests.log"
    proc = subprocess.Popen(cli_args("run", "gsm8k", "--serve", serve_command(answers, requests, "--delay", 0.05),
                                     "--limit", 60, "--data-dir", data_dir, "--run-dir", folder, "--quiet"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env())
    assert wait_for(lambda: lines(folder / "records.jsonl") >= 5)
    pid = pid_of(folder)
    proc.kill()
    proc.wait(30)
    # PR_SET_PDEATHSIG sends it SIGTERM at once; 30 s leaves a loaded machine time to act on it
    assert wait_for(lambda: not alive(pid), timeout=30), "the server outlived the evalsuite process"


def test_serve_and_endpoint_together_are_refused(tmp_path):
    proc = run_cli("run", "gsm8k", "--serve", "x --port {port}", "--endpoint", "http://127.0.0.1:1/v1",
                   "--run-dir", tmp_path / "r")
    assert proc.returncode == 2 and "either --endpoint or --serve" in proc.stderr


def test_a_gguf_model_and_no_llama_server_falls_back_to_the_python_server(tmp_path, data_dir):
    from evalsuite.serve.managed import something_listens

    if something_listens("http://127.0.0.1:8080/v1"):
        pytest.skip("something listens on 127.0.0.1:8080 here: the embedded default would not start")
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")   # not a model: the server that tries it says so, and the run stops with exit 2
    proc = subprocess.run(cli_args("run", "gsm8k", "--model", model, "--limit", 2, "--data-dir", data_dir,
                                   "--run-dir", tmp_path / "r"), capture_output=True, text=True, timeout=120,
                          env=dict(env(), EVALSUITE_LLAMA_SERVER=str(tmp_path / "no-such-llama-server")))
    assert proc.returncode == 2, proc.stderr
    assert "serving with llama-cpp-python's server" in proc.stderr and "-m llama_cpp.server" in proc.stderr
    assert "Failed to load model" in proc.stderr   # the server's own log tail says why
    missing = run_cli("run", "gsm8k", "--model", tmp_path / "nope.gguf", "--run-dir", tmp_path / "r2")
    assert missing.returncode == 2 and "no such GGUF file" in missing.stderr


def test_no_server_of_either_kind_says_how_to_get_one(monkeypatch):
    from evalsuite.client.errors import UsageError
    from evalsuite.serve import embedded

    monkeypatch.setattr(embedded, "find_llama_server", lambda: None)
    monkeypatch.setattr(embedded, "has_python_server", lambda: False)
    with pytest.raises(UsageError) as e:
        embedded.embedded_command("model.gguf", 4, 512)
    message = str(e.value)
    assert "found neither" in message and "llama-cpp-python[server]" in message
    assert "brew install llama.cpp" in message and "--serve" in message


def test_the_managed_server_leaves_a_core_to_evalsuite(monkeypatch):
    from evalsuite.serve import embedded

    monkeypatch.setattr(embedded, "find_llama_server", lambda: "/opt/llama-server")
    for cores, threads in ((1, 1), (2, 1), (8, 7)):
        monkeypatch.setattr(embedded.os, "sched_getaffinity", lambda pid, n=cores: set(range(n)))
        argv = embedded.embedded_command("m.gguf", 4, 512).command.split()
        assert argv[argv.index("-t") + 1] == argv[argv.index("-tb") + 1] == str(threads)
    monkeypatch.setattr(embedded, "find_llama_server", lambda: None)
    monkeypatch.setattr(embedded, "has_python_server", lambda: True)
    python = embedded.embedded_command("m.gguf", 4, 512, alias="smollm2")
    assert (python.concurrency, python.stream, python.model) == (1, False, "smollm2")
    assert "--interrupt_requests False" in python.command and "--n_threads 7" in python.command


def test_a_port_already_taken_is_refused_not_asked(tmp_path, data_dir, answers):
    from fault_server import FaultServer

    with FaultServer(answers={}) as other:   # answers "I do not know." to everything
        command = serve_command(answers, tmp_path / "requests.log").replace("'{port}'", str(other.port))
        command = command.replace("{port}", str(other.port))
        proc = run_cli("run", "gsm8k", "--serve", command, "--limit", 3, "--data-dir", data_dir,
                       "--run-dir", tmp_path / "r")
    assert proc.returncode == 2 and f"port {other.port} on 127.0.0.1 is already in use" in proc.stderr, proc.stderr
    assert other.completions == 0


def test_a_server_that_cannot_be_restarted_stops_the_run_with_what_each_start_said(tmp_path, data_dir, answers):
    folder, requests = tmp_path / "run", tmp_path / "requests.log"
    command = serve_command(answers, requests, "--delay", 0.05, "--once", tmp_path / "started")

    def killer():
        if wait_for(lambda: lines(folder / "records.jsonl") >= 5):
            kill_managed(pid_of(folder), requests)

    thread = threading.Thread(target=killer)
    thread.start()
    t0 = time.monotonic()
    proc = run_cli("run", "gsm8k", "--serve", command, "--limit", 60, "--max-restarts", 2, "--data-dir", data_dir,
                   "--run-dir", folder)
    thread.join()
    assert proc.returncode == 3, proc.stderr[-3000:]
    (event,) = json.loads((folder / "manifest.json").read_text())["server_restarts"]
    assert event["outcome"] == "given up" and event["attempts"] == 2
    assert len(event["failed_starts"]) == 2 and all("the GPU is gone" in f for f in event["failed_starts"])
    assert time.monotonic() - t0 >= 0.5 + 1.0   # the back-off between the tries
    assert "--max-restarts 2" in proc.stderr
    assert 5 <= lines(folder / "records.jsonl") < 60


def test_lossless_takes_an_endpoint_or_a_serve_command_per_side(tmp_path):
    both = run_cli("lossless", "gsm8k", "--baseline-endpoint", "http://127.0.0.1:1/v1", "--baseline-serve",
                   "x --port {port}", "--candidate-endpoint", "http://127.0.0.1:1/v1", "--run-dir", tmp_path / "l")
    assert both.returncode == 2 and "--baseline-endpoint URL or --baseline-serve COMMAND" in both.stderr
    neither = run_cli("lossless", "gsm8k", "--baseline-serve", "x --port {port}", "--run-dir", tmp_path / "l")
    assert neither.returncode == 2 and "--candidate-endpoint URL or --candidate-serve COMMAND" in neither.stderr
