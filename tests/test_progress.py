"""The progress display of `evalsuite run`: a live bar on a terminal (run here on a pseudo-terminal),
plain lines when stderr is not a terminal (CI logs), nothing with --quiet; the endpoint-down
state shows while the server is away."""
from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fault_server import FaultServer, prompt_key

from evalsuite.analysis.stats import wilson
from evalsuite.run.progress import Progress, clock

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def gsm8k_answers(data_dir: Path, n: int) -> dict[str, str]:
    from evalsuite.tasks import LoadOptions, get_pack

    pack = get_pack("gsm8k")
    items = pack.load(LoadOptions(data_dir=data_dir))[:n]
    return {prompt_key(pack.prompt(i)[-1]["content"]): f"The answer is {i.gold}" for i in items}


def run_args(server: FaultServer, data_dir: Path, run_dir: Path, n: int, *extra) -> list[str]:
    return [sys.executable, "-m", "evalsuite.cli", "run", "gsm8k", "--endpoint", server.url, "--data-dir",
            str(data_dir), "--limit", str(n), "--concurrency", "2", "--run-dir", str(run_dir), *extra]


def env() -> dict[str, str]:
    return dict({k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}, COLUMNS="160", TERM="xterm")


def run_on_pty(args: list[str], timeout: float = 120) -> tuple[int, str]:
    """Run with stderr (and stdin/stdout) on a pseudo-terminal; return (exit code, all it drew)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(args, stdin=follower, stdout=follower, stderr=follower, env=env(), close_fds=True)
    os.close(follower)
    out = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:   # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(leader)
    code = proc.wait(timeout=10)
    return code, out.decode("utf-8", "replace")


def test_live_bar_on_a_terminal(data_dir, tmp_path):
    n = 12
    with FaultServer(gsm8k_answers(data_dir, n), delay=0.15) as server:
        code, drawn = run_on_pty(run_args(server, data_dir, tmp_path / "run", n))
    assert code == 0, drawn[-3000:]
    assert "\x1b[" in drawn                       # drawn with terminal control codes, redrawn in place
    text = ANSI.sub("", drawn)
    assert "━" in text                            # the bar
    assert f"{n}/{n}" in text
    assert "acc 100.0%" in text
    assert "errors 0" in text and "retrying" in text
    assert re.search(r"out tok/s [\d,]+", text)   # the stub sends usage: a number, not n/a
    assert "ETA " in text
    # the first frames come before 5 items are done: no ETA guessed from them
    first = text.index("ETA ")
    assert text[first:first + 5] == "ETA -"


def test_plain_lines_when_not_a_terminal_and_nothing_when_quiet(data_dir, tmp_path):
    n = 6
    with FaultServer(gsm8k_answers(data_dir, n)) as server:
        plain = subprocess.run(run_args(server, data_dir, tmp_path / "a", n), capture_output=True, text=True,
                               timeout=120, env=env())
        quiet = subprocess.run(run_args(server, data_dir, tmp_path / "b", n, "--quiet"), capture_output=True,
                               text=True, timeout=120, env=env())
    assert plain.returncode == 0, plain.stderr
    assert "\x1b[" not in plain.stderr and "\r" not in plain.stderr
    lines = [line for line in plain.stderr.splitlines() if line.startswith(f"{n}/{n} |")]
    assert lines, plain.stderr
    assert re.fullmatch(rf"{n}/{n} \| acc 100\.0% \| errors 0 \| retrying 0 \| out tok/s [\d,]+ \| ETA 0m00s", lines[-1])
    assert quiet.returncode == 0, quiet.stderr
    assert not any(" | acc " in line for line in quiet.stderr.splitlines()), quiet.stderr
    # -q hides the progress, not the result: one summary line and the run folder (issue 42)
    assert quiet.stdout.strip() == f"gsm8k: accuracy 100.0% [{100 * wilson(n, n)[0]:.1f}, 100.0] ({n} correct of {n} items; 0 errors)"
    assert f"run folder: {tmp_path / 'b'}" in quiet.stderr


class _Endpoint:
    def __init__(self, url: str):
        self.url = url


class _States:
    def __init__(self, urls, down_since=None, retired=None, retrying=0):
        self.endpoints = [_Endpoint(u) for u in urls]
        self.down_since = dict(down_since or {})
        self.retired = dict(retired or {})
        self.retrying = retrying


class _Stream:
    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def record(outcome: str, completion_tokens: int | None = None, endpoint: str = "http://a/v1") -> dict:
    usage = None if completion_tokens is None else {"completion_tokens": completion_tokens}
    return {"outcome": outcome, "usage": usage, "endpoint": endpoint}


@pytest.fixture()
def frozen_clock(monkeypatch) -> float:
    """evalsuite.run.progress's clock stopped: a figure such as "1m05s" or "ETA 9m00s" read a second
    later on a loaded machine would be "1m06s"; the test sets the times it means instead."""
    import types

    import evalsuite.run.progress as progress

    monkeypatch.setattr(progress, "time", types.SimpleNamespace(monotonic=lambda: 1000.0))
    return 1000.0


def test_line_fields_no_usage_down_endpoints_and_eta(frozen_clock):
    p = Progress(total=100, done=0, quiet=False, stream=_Stream())
    for outcome in ("correct", "wrong", "error"):
        p.update(record(outcome))
    assert "out tok/s n/a" in p.line()            # no usage from the server: unknown, not 0
    assert "acc 50.0%" in p.line() and "errors 1" in p.line()
    assert "ETA -" in p.line()                    # three items: too few to guess from
    p.t0 -= 60                                    # 60 s in, 10 items done -> 90 left at 6 s each
    for _ in range(7):
        p.update(record("correct", 10))
    assert "ETA 9m00s" in p.line()
    assert "out tok/s n/a" not in p.line()

    now = frozen_clock
    p.watch(_States(["http://a/v1", "http://b/v1"], down_since={"http://b/v1": now - 65},
                    retired={"http://b/v1": {"reason": "refused"}}, retrying=2))
    line = p.line()
    assert "retrying 2" in line and "http://b/v1 out of rotation for 1m05s" in line
    assert "http://a/v1" not in line              # an endpoint that answers is not listed in a plain line
    assert "ETA 9m00s" in line                    # another endpoint answers: the ETA stays
    p.watch(_States(["http://a/v1"], down_since={"http://a/v1": now - 30}))
    assert "http://a/v1 DOWN for 0m30s" in p.line()
    assert "ETA -" in p.line()                    # no ETA while the only endpoint is down


def test_live_frame_lists_each_endpoint_when_there_are_several(frozen_clock):
    from rich.console import Console

    p = Progress(total=10, done=0, quiet=False, stream=_Stream())
    p.update(record("correct", 5, "http://a/v1"))
    p.watch(_States(["http://a/v1", "http://b/v1"], down_since={"http://b/v1": frozen_clock - 12}))
    console = Console(width=160, record=True, file=_Stream())
    console.print(p.renderable())
    frame = console.export_text()
    assert "1/10" in frame and "acc 100.0%" in frame
    assert re.search(r"http://a/v1\s+up\s+1 done", frame), frame
    assert re.search(r"http://b/v1\s+DOWN for 0m12s\s+0 done", frame), frame


def test_clock():
    assert clock(5) == "0m05s" and clock(125) == "2m05s" and clock(3 * 3600 + 120) == "3h02m"
