"""The two commands of the lossless check.

`evalsuite diff BASELINE CANDIDATE` (diff_main) diffs two finished runs (runs.py) and prints,
writes --json/--html (html.py) and, when asked, re-scores divergences (rescore.py).

`evalsuite lossless PACK --baseline-endpoint A --candidate-endpoint B`: run the pack greedily
on both servers with logprobs (baseline first), then `evalsuite diff` the two runs.

The two runs are ordinary run folders (RUN_DIR/baseline, RUN_DIR/candidate) made by
evalsuite.run.runner with identical decoding, so they can be diffed, shown or resumed later.
After an interruption the runner prints the same command with `--resume RUN_DIR/<role>`:
`--resume` takes the lossless folder or either run folder in it, continues both runs (a run
not started yet starts) and then diffs them.
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .runs import _finite, cyclic_gc_paused, diff_runs, exit_code, format_diff, load_diff_run, tau_for
from .tokens import DiffRefused

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


@dataclass(frozen=True)
class LosslessSettings:
    pack: str
    baseline_endpoint: str
    candidate_endpoint: str
    limit: int | None = None
    subsets: tuple[str, ...] = ()
    data_dir: Path | None = None
    model: str | None = None
    api: str = "chat"
    max_tokens: int = 512
    logprobs: int = 5
    extra_body: str | dict | None = None
    concurrency: int = 1        # continuous batching changes float reductions: keep 1 unless you know better
    timeout: float = 600.0
    stream: bool = True
    run_dir: Path | None = None
    tau: float | None = None
    precision: str | None = None
    json_path: Path | None = None
    html_path: Path | None = None
    fail_on: str | None = None
    rescore: bool = False
    quiet: bool = False
    argv: tuple[str, ...] = ()
    resume: Path | None = None       # the lossless folder, or its baseline/candidate run folder
    retry_errors: bool = False
    # managed servers (evalsuite.serve): started for their run, one at a time, instead of an endpoint
    baseline_serve: str | None = None
    candidate_serve: str | None = None
    serve_timeout: float = 600.0
    max_restarts: int = 3
    aa: bool = False                 # run the baseline twice: the engine's own noise (RUN_DIR/baseline-repeat)
    aa_concurrency: int | None = None   # the repeat's concurrency (None: --concurrency)
    teacher_forced: bool = False     # score the baseline's generations on the candidate endpoint
    samples: int = 1                 # > 1: sampled at `temperature`, tested in distribution (docs/sampling.md)
    temperature: float = 0.0


def parse_extra_body(value: str | dict | None) -> dict:
    if value is None or isinstance(value, dict):
        return dict(value or {})
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as e:
        raise ValueError(f"--extra-body is not valid JSON: {e}") from None
    if not isinstance(parsed, dict):
        raise ValueError("--extra-body must be a JSON object")
    return parsed


def lossless_root(s: LosslessSettings) -> Path:
    """The folder holding the two runs: --resume (the folder, or a run folder inside it),
    --run-dir, or a new one under results/."""
    if s.resume is not None:
        path = Path(s.resume)
        if path.name in ("baseline", "baseline-repeat", "candidate") and (path / "manifest.json").exists():
            return path.parent
        return path
    return s.run_dir or Path("results") / f"lossless-{s.pack}-{time.strftime('%Y%m%d-%H%M%S')}"


def run_settings(s: LosslessSettings, role: str, endpoint: str | None, folder: Path):
    from ..client.exchange import Decoding
    from ..run.settings import RunSettings

    # Greedy and seeded: the only thing left to differ is the server.
    decoding = Decoding(temperature=s.temperature, top_p=1.0, seed=0, max_tokens=s.max_tokens, logprobs=s.logprobs,
                        extra_body=parse_extra_body(s.extra_body))
    # The runner prints `argv` + `--resume <this run folder>` after an interruption: that is a
    # lossless command this function accepts (lossless_root), so argv is the lossless command as typed.
    resume = s.resume is not None and (folder / "manifest.json").exists()
    serve = s.baseline_serve if role in ("baseline", "baseline-repeat") else s.candidate_serve
    concurrency = s.aa_concurrency if role == "baseline-repeat" and s.aa_concurrency else s.concurrency
    return RunSettings(pack=s.pack, endpoints=(endpoint,) if endpoint and not serve else (), run_dir=folder, model=s.model, api=s.api, decoding=decoding,
                       concurrency=concurrency, timeout=s.timeout, data_dir=s.data_dir, subsets=s.subsets,
                       limit=s.limit, label=role, quiet=s.quiet, stream=s.stream, argv=s.argv,
                       resume=resume, retry_errors=resume and s.retry_errors,
                       serve=serve, serve_timeout=s.serve_timeout, max_restarts=s.max_restarts, samples=s.samples,
                       endpoint_option="--candidate-endpoint" if role == "candidate" else "--baseline-endpoint")


def diff_main(baseline: Any, candidate: Any, *, tau: float | None = None, precision: str | None = None,
              json_path: Any = None, html_path: Any = None, fail_on: str | None = None,
              rescore_endpoint: str | None = None, echo=print, api_key_env: str | None = None,
              aa: Any = None, teacher_endpoint: str | None = None, teacher_items: int = 20,
              quiet: bool = False) -> int:
    """`evalsuite diff`: returns the exit code (0 ok, 1 --fail-on tripped, 2 refused). `quiet`:
    only the counts line (and the noise floor's sentence) is printed."""
    with cyclic_gc_paused():
        return _diff_main(baseline, candidate, tau=tau, precision=precision, json_path=json_path,
                          html_path=html_path, fail_on=fail_on, rescore_endpoint=rescore_endpoint, echo=echo,
                          api_key_env=api_key_env, aa=aa, teacher_endpoint=teacher_endpoint,
                          teacher_items=teacher_items, quiet=quiet)


def _diff_main(baseline: Any, candidate: Any, *, tau: float | None, precision: str | None, json_path: Any,
               html_path: Any, fail_on: str | None, rescore_endpoint: str | None, echo, api_key_env: str | None,
               aa: Any, teacher_endpoint: str | None, teacher_items: int, quiet: bool = False) -> int:
    import sys
    from pathlib import Path

    from ..store import RunFolderError
    from ..analysis.outputs import OutputError, check_writable
    from .json_write import dump_indent1

    try:
        for flag, path in (("--json", json_path), ("--html", html_path)):
            if path:
                check_writable(path, flag)
        from .sampled import sampled_diff_main   # sampled runs: the same distribution? (docs/sampling.md)

        sampled = sampled_diff_main(baseline, candidate, json_path=json_path, html_path=html_path, fail_on=fail_on,
                                    echo=echo, quiet=quiet)
        if sampled is not None:
            return sampled
        runs = [load_diff_run(p) for p in (baseline, candidate)]
        result = diff_runs(runs[0], runs[1], tau_for(tau, precision))
        if rescore_endpoint:
            from .rescore import rescore_result
            result = rescore_result(result, runs[0], runs[1], rescore_endpoint, api_key_env)
        from .noise_scale import aa_floor, rescale

        floor = aa_result = None
        if aa is not None:      # the engine's own noise: the baseline against its repeat
            aa_result = diff_runs(runs[0], load_diff_run(aa), tau_for(tau, precision))
        # each flip judged against the noise the diff can see (noise_scale.py): the A/A floor, else its drift
        result = rescale(result, None if aa_result is None else aa_floor(aa_result.items))
        code = exit_code(result, fail_on)
        if aa_result is not None:
            from .noise import noise_floor
            floor = noise_floor(rescale(aa_result), result)
    except (RunFolderError, DiffRefused, OutputError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from .speed import speed_beside   # the candidate's speed-up on the same requests, beside the verdict

    speed = speed_beside(runs[0].by_id, runs[1].by_id, runs[1].manifest)
    summary = result.summary_line()   # the verdict's counts line, the speed line under it (-q: the counts only)
    echo(summary if quiet else format_diff(result).replace(summary, f"{summary}\n{speed.line()}", 1))
    extra: dict[str, Any] = {"speed": speed.to_dict()}
    if floor is not None:
        echo(f"noise floor (A/A {aa}): {floor.sentence}")
        extra["noise_floor"] = floor.to_dict()
        extra["noise_floor"]["aa_path"] = str(aa)
    if teacher_endpoint:       # the one other part that calls a server, when asked
        from .teacher import teacher_forced
        sample = [i.id for i in result.items][:teacher_items]
        forced = teacher_forced(runs[0], teacher_endpoint, sample, api_key_env=api_key_env)
        if not quiet:
            echo(forced.line())
        extra["teacher_forced"] = forced.to_dict()
    if json_path:
        # made only when asked (an item's dict costs ~40 us); the items as they are, before
        # _finite, which the writer applies where the json module writes them (orjson writes
        # a non-finite float as null and a tuple as a list, as _finite + json do)
        data = {**result.to_dict(finite_items=False), **extra}
        # written as encoded: an 11,582-item diff is ~50 MB of JSON in a few million pieces,
        # which json.dumps would hold as a list and a string at once
        partial = Path(str(json_path) + ".partial")
        try:
            with open(partial, "w", encoding="utf-8") as f:
                dump_indent1(data, f, prepare=_finite)   # json.dump(indent=1)'s bytes, the items by orjson
                f.write("\n")
            partial.replace(json_path)
        finally:
            partial.unlink(missing_ok=True)
    if html_path:
        from .html import render_html
        Path(html_path).write_text(render_html(result, noise_floor=floor and floor.sentence, speed=speed.line()),
                                   encoding="utf-8")
    return code


def lossless_main(s: LosslessSettings, echo: Callable[[str], None] = print) -> int:
    """Both runs, then the diff. Exit 0 clean, 1 --fail-on tripped or items ended in errors,
    2 bad usage / runs not comparable, 3 an endpoint went down (as `evalsuite run`)."""
    from ..run.runner import EXIT_ERRORS, EXIT_OK as RUN_OK, UsageError, run

    for role, endpoint, serve in (("baseline", s.baseline_endpoint, s.baseline_serve),
                                  ("candidate", s.candidate_endpoint, s.candidate_serve)):
        if bool(endpoint) == bool(serve):
            print(f"error: give --{role}-endpoint URL or --{role}-serve COMMAND (one of them)", file=sys.stderr)
            return EXIT_USAGE
    if s.teacher_forced and s.candidate_serve:
        print("error: --teacher-forced asks the candidate server after the runs: give --candidate-endpoint URL "
              "(a managed candidate is stopped when its run ends)", file=sys.stderr)
        return EXIT_USAGE
    if s.resume is not None and s.run_dir is not None and Path(s.run_dir) != lossless_root(s):
        print("error: give either --run-dir or --resume, not both", file=sys.stderr)
        return EXIT_USAGE
    from ..analysis.outputs import OutputError, check_writable

    root = lossless_root(s)
    try:   # before the runs, not after an hour of them
        for flag, path in (("--json", s.json_path), ("--html", s.html_path)):
            if path:
                inside_root(Path(path), root)
                check_writable(path, flag)
    except OutputError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if s.resume is not None and not root.is_dir():
        print(f"error: cannot resume {s.resume}: no such folder", file=sys.stderr)
        return EXIT_USAGE
    folders = {"baseline": root / "baseline", "candidate": root / "candidate"}
    order = [("baseline", s.baseline_endpoint), ("candidate", s.candidate_endpoint)]
    if s.aa or (s.resume is not None and (root / "baseline-repeat" / "manifest.json").exists()):
        folders["baseline-repeat"] = root / "baseline-repeat"
        order.insert(1, ("baseline-repeat", s.baseline_endpoint))
    codes = {}
    try:
        for role, endpoint in order:
            if not s.quiet:
                print(f"{role}: {endpoint or 'managed server'} -> {folders[role]}", file=sys.stderr)
            codes[role] = run(run_settings(s, role, endpoint, folders[role]))
            if codes[role] not in (RUN_OK, EXIT_ERRORS):
                print(f"error: the {role} run did not finish (exit {codes[role]}); its records are in {folders[role]}",
                      file=sys.stderr)
                return codes[role]
    except (UsageError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    # the servers' own draft counters around each run (the runner keeps them in the manifest)
    speculation = {role: _speculation_of(folders[role]) for role in folders}
    for role, report in speculation.items():
        if report:   # a lossless check compares speculation: each side's counters are said, even none
            echo(f"{role} {report['summary']}")
    if ((speculation["baseline"] or {}).get("during_run") or {}).get("drafted", 0) > 0:
        echo("warning: the baseline drafted tokens: run the baseline with speculation off, or its logprobs "
             "may be missing where drafts were accepted")
    from ..serve import run_with_server
    from ..serve.managed import ServerFailed

    try:   # a managed baseline is started again for the re-scoring, when asked for
        code = run_with_server(
            s.baseline_serve if s.rescore else None, folders["baseline"], log_name="server-rescore.log",
            ready_timeout=s.serve_timeout, quiet=s.quiet,
            fn=lambda url: diff_main(folders["baseline"], folders["candidate"], tau=s.tau, precision=s.precision,
                                     json_path=s.json_path, html_path=s.html_path, fail_on=s.fail_on,
                                     rescore_endpoint=(url or s.baseline_endpoint) if s.rescore else None, echo=echo,
                                     aa=folders.get("baseline-repeat"),
                                     teacher_endpoint=s.candidate_endpoint if s.teacher_forced else None))
    except ServerFailed as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if code == EXIT_OK and any(c == EXIT_ERRORS for c in codes.values()):
        from ..run.resume import resume_command

        print("some items ended in errors (undetermined in the diff); to ask them again:\n  "
              f"{resume_command(s.argv, root)} --retry-errors", file=sys.stderr)
        return EXIT_FAIL
    return code


def inside_root(path: Path, root: Path) -> None:
    """An output inside the folder lossless makes (`--run-dir R --html R/diff.html`): its folders
    are made now, as the runs would make R, so the check before the runs can pass. Outside R
    nothing is created: a missing folder there is the user's to fix."""
    from ..analysis.outputs import OutputError

    parent = path.parent.resolve()
    if parent == root.resolve() or root.resolve() in parent.parents:
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"the folder {path.parent} cannot be made ({e.strerror or e})") from None


def _speculation_of(run_dir: Path) -> dict | None:
    """The run's speculation report (manifest `speculation`, one endpoint per lossless run)."""
    from ..store import read_manifest

    try:
        reports = read_manifest(run_dir).get("speculation") or {}
    except (OSError, ValueError):
        return None
    return next(iter(reports.values()), None)
