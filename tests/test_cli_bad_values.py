"""Issue 42 #3: every command given bad values (a missing folder, an unwritable output, a malformed
number or list, a URL that refuses, a file of the wrong kind) exits 2 with one line that names the
option and the value (a positional argument: the value), and no traceback. Indented hint lines
may follow that line (how to start a server); nothing else. The commands run in this process
through the CLI's own entry point (`evalsuite.cli.main`), so an exception no command caught shows
up here as what it is. An error no command expected is a bug: one line with the path of the file
holding its traceback, exit 70, checked at the end in a real process."""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evalsuite import cli

RUN_R24 = Path(__file__).parent / "data" / "run_r24"


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """The inputs, by name: a run folder, a speed profile, a text file, a folder, a refusing URL."""
    from evalsuite.speed.rows import Profile, write_profile

    root = tmp_path_factory.mktemp("bad-values")
    shutil.copytree(RUN_R24, root / "run")
    write_profile(root / "speed.json", Profile(model="m", endpoint="http://127.0.0.1:8080/v1", rows=()))
    (root / "notes.txt").write_text("not a run, not JSON, not TOML = [\n", encoding="utf-8")
    (root / "folder").mkdir()
    with socket.socket() as s:   # a port nothing listens on: connections are refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return {"run": str(root / "run"), "profile": str(root / "speed.json"), "txt": str(root / "notes.txt"),
            "dir": str(root / "folder"), "missing": str(root / "no-such-folder"), "url": f"http://127.0.0.1:{port}/v1",
            "root": str(root)}


SERVE = "python -c pass --port {port} {a}"   # never started: each case fails before
# (id, arguments, what the error line must name: the option and the value, or a positional's value)
CASES = [
    # run
    ("run: missing --data-dir", ["run", "gsm8k", "--data-dir", "{missing}"], ["--data-dir", "{missing}"]),
    ("run: refusing --endpoint", ["run", "gsm8k", "-e", "{url}", "--limit", "1", "--run-dir", "{root}/r1"], ["--endpoint", "{url}"]),
    ("run: malformed --concurrency", ["run", "gsm8k", "--concurrency", "x"], ["--concurrency", "x"]),
    ("run: malformed --extra-body", ["run", "gsm8k", "--extra-body", "{x"], ["--extra-body", "{x"]),
    ("run: unwritable --run-dir", ["run", "gsm8k", "--run-dir", "{txt}/r"], ["--run-dir", "{txt}/r"]),
    ("run: a text file as PACK", ["run", "{txt}", "-e", "{url}"], ["{txt}"]),
    ("run: malformed --fields", ["run", "{root}/q.jsonl", "--fields", "question"], ["--fields", "question"]),
    # show
    ("show: missing RUN_DIR", ["show", "{missing}"], ["{missing}"]),
    ("show: a speed profile", ["show", "{profile}"], ["{profile}", "speed profile"]),
    ("show: a text file", ["show", "{txt}"], ["{txt}"]),
    ("show: --format csv", ["show", "{run}", "--format", "csv"], ["--format", "csv"]),
    # tasks
    ("tasks: missing --data-dir", ["tasks", "--data-dir", "{missing}"], ["--data-dir", "{missing}"]),
    ("tasks: a file as --data-dir", ["tasks", "--data-dir", "{txt}"], ["--data-dir", "{txt}"]),
    # regrade
    ("regrade: missing RUN_DIR", ["regrade", "{missing}"], ["{missing}"]),
    ("regrade: a folder as --json", ["regrade", "{run}", "--json", "{dir}"], ["--json", "{dir}"]),
    ("regrade: refusing --judge-endpoint", ["regrade", "{run}", "--judge-endpoint", "{url}"], ["--judge-endpoint", "{url}"]),
    # diff
    ("diff: missing RUN_DIR", ["diff", "{run}", "{missing}"], ["{missing}"]),
    ("diff: malformed --tau", ["diff", "{run}", "{run}", "--tau", "abc"], ["--tau", "abc"]),
    ("diff: unwritable --json", ["diff", "{run}", "{run}", "--json", "{txt}/d.json"], ["--json", "{txt}/d.json"]),
    ("diff: unwritable --html", ["diff", "{run}", "{run}", "--html", "{dir}"], ["--html", "{dir}"]),
    ("diff: unknown --fail-on", ["diff", "{run}", "{run}", "--fail-on", "bogus"], ["--fail-on", "bogus"]),
    ("diff: missing --aa-run", ["diff", "{run}", "{run}", "--aa-run", "{missing}"], ["--aa-run", "{missing}"]),
    ("diff: a speed profile", ["diff", "{profile}", "{run}"], ["{profile}", "speed profile"]),
    # lossless
    ("lossless: refusing --baseline-endpoint", ["lossless", "gsm8k", "--baseline-endpoint", "{url}", "--candidate-endpoint",
                                                "{url}", "--limit", "1", "--run-dir", "{root}/l1", "-q"], ["--baseline-endpoint", "{url}"]),
    ("lossless: malformed --max-tokens", ["lossless", "gsm8k", "--max-tokens", "x"], ["--max-tokens", "x"]),
    ("lossless: unwritable --json", ["lossless", "gsm8k", "--baseline-endpoint", "{url}", "--candidate-endpoint", "{url}",
                                     "--json", "{txt}/l.json"], ["--json", "{txt}/l.json"]),
    ("lossless: missing --data-dir", ["lossless", "gsm8k", "--data-dir", "{missing}"], ["--data-dir", "{missing}"]),
    # sweep
    ("sweep: malformed --set", ["sweep", "gsm8k", "--serve", SERVE, "--set", "a"], ["--set", "a"]),
    ("sweep: missing --settings", ["sweep", "gsm8k", "--serve", SERVE, "--settings", "{missing}.toml"],
     ["--settings", "{missing}.toml"]),
    ("sweep: a text file as --settings", ["sweep", "gsm8k", "--serve", SERVE, "--settings", "{txt}"], ["--settings", "{txt}"]),
    ("sweep: unwritable --html", ["sweep", "gsm8k", "--serve", SERVE, "--set", "a=1", "--html", "{txt}/s.html"],
     ["--html", "{txt}/s.html"]),
    ("sweep: malformed --speed-depth", ["sweep", "gsm8k", "--serve", SERVE, "--set", "a=1", "--speed", "--speed-depth", "0,x"],
     ["--speed-depth", "0,x"]),
    # speed
    ("speed: refusing --endpoint", ["speed", "-e", "{url}", "--pp", "8", "--tg", "2", "--runs", "1", "--no-warmup"],
     ["--endpoint", "{url}"]),
    ("speed: malformed --pp list", ["speed", "-e", "{url}", "--pp", "64,x"], ["--pp", "64,x"]),
    ("speed: malformed --concurrency list", ["speed", "-e", "{url}", "-c", "1,x"], ["--concurrency", "1,x"]),
    ("speed: unwritable --json", ["speed", "-e", "{url}", "--json", "{txt}/p.json"], ["--json", "{txt}/p.json"]),
    ("speed: unknown --format", ["speed", "--format", "yaml"], ["--format", "yaml"]),
    ("speed: malformed --duration", ["speed", "-e", "{url}", "--duration", "5x"], ["--duration", "5x"]),
    ("speed: a run folder to --compare", ["speed", "--compare", "{profile}", "{run}"], ["{profile}", "{run}", "cannot be compared"]),
    # svg-render
    ("svg-render: missing RUN_DIR", ["svg-render", "{missing}"], ["{missing}"]),
    ("svg-render: refusing --judge-endpoint", ["svg-render", "{run}", "--judge-endpoint", "{url}"], ["--judge-endpoint", "{url}"]),
    ("svg-render: malformed --size", ["svg-render", "{run}", "--size", "x"], ["--size", "x"]),
    ("svg-render: a speed profile", ["svg-render", "{profile}"], ["{profile}", "speed profile"]),
    # gallery
    ("gallery: missing RUN_DIR", ["gallery", "{missing}"], ["{missing}"]),
    ("gallery: unwritable --html", ["gallery", "{run}", "--no-render", "--html", "{txt}/g.html"], ["--html", "{txt}/g.html"]),
    ("gallery: --size out of range", ["gallery", "{run}", "--size", "5"], ["--size", "5"]),
    # compare
    ("compare: missing RUN_DIR", ["compare", "{run}", "{missing}"], ["{missing}"]),
    ("compare: a profile and a run folder", ["compare", "{profile}", "{run}"], ["{profile}", "{run}", "cannot be compared"]),
    ("compare: a folder as --json", ["compare", "{run}", "{run}", "--json", "{dir}"], ["--json", "{dir}"]),
    ("compare: unwritable --plots-dir", ["compare", "{run}", "{run}", "--plots-dir", "{txt}/p"], ["--plots-dir", "{txt}/p"]),
    ("compare: malformed --alpha", ["compare", "{run}", "{run}", "--alpha", "x"], ["--alpha", "x"]),
    # gate
    ("gate: missing CANDIDATE", ["gate", "{run}", "{missing}", "--max-drop", "1"], ["{missing}"]),
    ("gate: unwritable --junit", ["gate", "{run}", "{run}", "--max-drop", "1", "--junit", "{txt}/g.xml"], ["--junit", "{txt}/g.xml"]),
    ("gate: malformed --max-errors", ["gate", "{run}", "{run}", "--max-drop", "1", "--max-errors", "abc"], ["--max-errors", "abc"]),
    ("gate: a text file as --diff", ["gate", "--diff", "{txt}"], ["--diff", "{txt}"]),
    ("gate: a speed profile", ["gate", "{profile}", "{run}", "--max-drop", "1"], ["{profile}", "speed profile"]),
    # report
    ("report: a run folder and a profile", ["report", "{run}", "{profile}"], ["{run}", "{profile}", "cannot be compared"]),
    ("report: unwritable --html", ["report", "{run}", "--html", "{txt}/r.html"], ["--html", "{txt}/r.html"]),
    ("report: a text file as --diff", ["report", "{run}", "--diff", "{txt}"], ["--diff", "{txt}"]),
    ("report: malformed --transcripts", ["report", "{run}", "--transcripts", "x"], ["--transcripts", "x"]),
    ("report: missing RUN_DIR", ["report", "{missing}"], ["{missing}"]),
]


def test_every_command_has_cases():
    from typer.main import get_command

    assert {args[0] for _, args, _ in CASES} == set(get_command(cli.app).commands)


def filled(text: str, place: dict[str, str]) -> str:
    for key, value in place.items():
        text = text.replace("{" + key + "}", value)
    return text


def run_main(monkeypatch, capsys, args: list[str]) -> tuple[object, str, str]:
    """`evalsuite ARGS` through the CLI's entry point, in this process: (exit code, stdout, stderr);
    an exception that escapes it is returned as the code."""
    monkeypatch.setattr(sys, "argv", ["evalsuite", *args])
    try:
        cli.main()
        code: object = 0
    except SystemExit as e:
        code = e.code
    except Exception as e:   # what a user would see as a traceback
        import traceback

        code = "Traceback (most recent call last):\n" + "".join(traceback.format_exception(e)[-3:])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name, args, names", CASES, ids=[c[0] for c in CASES])
def test_a_bad_value_is_exit_2_and_one_line_naming_it(name, args, names, place, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALSUITE_DATA_DIR", raising=False)   # a missing data folder is the case's, not the machine's
    (Path(place["root"]) / "q.jsonl").write_text('{"question": "1+1?", "answer": "2"}\n', encoding="utf-8")
    args, names = [filled(a, place) for a in args], [filled(n, place) for n in names]
    code, out, err = run_main(monkeypatch, capsys, args)
    said = [line for line in err.splitlines() if line.strip() and not line.startswith(("deprecated:", "note:"))]
    if not said:   # the gate says UNUSABLE on stdout
        said = [line for line in out.splitlines() if line.strip()]
    assert "Traceback" not in f"{code}{out}{err}", f"{name}: a traceback\n{code}\n{err}"
    assert code == 2, f"{name}: exit {code}, not 2\n{out}\n{err}"
    assert said, f"{name}: said nothing"
    first, rest = said[0], said[1:]
    missing = [n for n in names if n not in first]
    assert not missing, f"{name}: the line does not name {missing}:\n{first}"
    assert all(line.startswith((" ", "\t")) for line in rest), f"{name}: more than one line:\n" + "\n".join(said)
    assert not first.startswith("Usage:"), first


def test_an_unexpected_error_is_one_line_with_its_traceback_in_a_file(tmp_path):
    """A bug (here: show_main raising) is not bad input: one line saying so, the traceback in a
    file the line names, exit 70. In a real process, through the real entry point."""
    script = textwrap.dedent("""
        import evalsuite.analysis.summary as summary

        def broken(*args, **kwargs):
            raise KeyError("planted")

        summary.show_main = broken
        from evalsuite.cli import main
        main()
    """)
    env = {"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script, "show", str(RUN_R24)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert done.returncode == 70, done
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "bug" in lines[0] and "KeyError" in lines[0], lines
    logs = list(tmp_path.glob("evalsuite-traceback-*.txt"))
    assert len(logs) == 1 and str(logs[0]) in lines[0]
    text = logs[0].read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in text and "planted" in text and "evalsuite show" in text


def test_a_stale_evalsuite_data_dir_is_left_to_the_command(monkeypatch, capsys, tmp_path):
    """--data-dir named on the command line must be a folder; the same folder from the environment
    is the command's to judge (regrade of your own file reads no data: it still runs)."""
    monkeypatch.setenv("EVALSUITE_DATA_DIR", str(tmp_path / "stale"))
    code, _, err = run_main(monkeypatch, capsys, ["tasks"])
    assert code == 0, err
    code, _, err = run_main(monkeypatch, capsys, ["tasks", "--data-dir", str(tmp_path / "gone")])
    assert code == 2 and f"--data-dir {tmp_path / 'gone'}: no such folder" in err
