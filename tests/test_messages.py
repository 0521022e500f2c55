"""What `run` says when it cannot start: no server (the "start a server" hint, reached before any
download), an endpoint whose host name does not resolve (said as DNS, not a timeout), and a hub
that cannot be reached ("offline: use --data-dir")."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_cli(*args: str, env_extra: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "EVALSUITE_DATA_DIR")}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "evalsuite.cli", "run", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_no_server_and_no_data_says_start_a_server_before_any_download(tmp_path):
    # agieval without --data-dir would download its files; with nothing listening it must not try
    started = time.monotonic()
    done = run_cli("agieval", "--endpoint", f"http://127.0.0.1:{free_port()}/v1", "--limit", "2",
                   "--run-dir", str(tmp_path / "run"),
                   env_extra={"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 2, done.stderr
    assert "nothing answers at" in done.stderr and "Start an OpenAI-compatible server first" in done.stderr
    assert "file not found" not in done.stderr
    assert time.monotonic() - started < 60


def test_endpoint_dns_failure_is_named(tmp_path, data_dir):
    done = run_cli("gsm8k", "--endpoint", "http://no-such-host.invalid:8080/v1", "--data-dir", str(data_dir),
                   "--limit", "2", "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 2, done.stderr
    assert "DNS lookup of the host 'no-such-host.invalid' failed" in done.stderr, done.stderr
    assert "does not resolve" in done.stderr
    assert "APITimeoutError" not in done.stderr and "Traceback" not in done.stderr


def test_unreachable_says_offline_and_why():
    from evalsuite.tasks._data import unreachable

    assert unreachable("https://no-such-host.invalid/data.jsonl").startswith(
        "offline: the host no-such-host.invalid does not resolve (DNS")
    assert unreachable(f"http://127.0.0.1:{free_port()}/x").startswith("offline: cannot connect to 127.0.0.1:")
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        assert unreachable(f"http://127.0.0.1:{listening.getsockname()[1]}/x") is None


def test_download_from_an_unreachable_host_says_offline_use_data_dir():
    from evalsuite.tasks import BadDataError
    from evalsuite.tasks._exam import read_jsonl

    with pytest.raises(BadDataError) as failed:
        read_jsonl("https://no-such-host.invalid/agieval/sat-math.jsonl")
    message = str(failed.value)
    assert "offline" in message and "--data-dir" in message and "file not found" not in message, message
