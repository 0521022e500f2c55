"""The `evalsuite` command. Every command imports what it needs inside its function, so
`evalsuite --help` costs only typer. One grammar for every command (docs/cli.md, checked by
tests/test_cli_grammar.py): an option's help starts with its meaning, the same sentence wherever
the name is used (MEANS below); old spellings are hidden aliases that say they are deprecated."""
from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Any, List, Optional, Tuple

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode=None,
                  help="Does your LLM endpoint still give the right answers? Run task packs against "
                       "OpenAI-compatible servers, then diff, compare and gate the runs.")

DEFAULT_ENDPOINT = "http://127.0.0.1:8080/v1"  # llama.cpp's llama-server default
EXIT_USAGE, EXIT_BUG = 2, 70   # 70: EX_SOFTWARE, an error evalsuite did not expect (a bug: docs/cli.md)

# The meaning of each option that several commands share: the first sentence of its help, the same
# in every command (what follows it, a default or a hint, may differ; docs/cli.md says so).
MEANS = {
    "--alpha": "Significance level of the exact McNemar tests.",
    "--api": "chat (chat completions) or completions (raw prompt).",
    "--api-key-env": "Environment variable holding the API key (default OPENAI_API_KEY); keys are never written anywhere.",
    "--concurrency": "Requests in flight at once per endpoint.",
    "--data-dir": "Offline data folder laid out like shared/data (default: the hub).",
    "--diff": "A diff's JSON, as `evalsuite diff --json` writes it.",
    "--endpoint": f"Base URL of an OpenAI-compatible server (default {DEFAULT_ENDPOINT}).",
    "--equivalence-margin": "Equivalence margin in accuracy points (TOST).",
    "--extra-body": "JSON object of server-specific fields sent with every request.",
    "--fail-on": "Exit 1 when a divergence is at least this bad: real, suspicious or near-tie.",
    "--format": "What to print on stdout.",
    "--html": "Write a self-contained HTML page to this file.",
    "--json": "Write the result as JSON to this file.",
    "--judge-api-key-env": "Environment variable holding the judge's API key (default OPENAI_API_KEY).",
    "--judge-endpoint": "Base URL of an OpenAI-compatible server that judges answers the rules cannot.",
    "--judge-model": "Judge model id (default: the first one the judge endpoint lists).",
    "--label": "A name for this run or profile in comparisons (e.g. spec-on, IQ3_XXS).",
    "--limit": "At most N items: the first N of a pack with one subset; of several, a seeded sample spread evenly over them.",
    "--logprobs": "Keep token logprobs with the top-K alternatives.",
    "--max-restarts": "Restarts of a managed server that dies or hangs.",
    "--max-tokens": "Output token cap per answer.",
    "--model": "Model id to request (default: the first one /v1/models lists).",
    "--precision": "Set tau by engine precision: fp32, fp16, q8 (0.05), bf16 (0.15), fp8-kv (0.25).",
    "--quiet": "Hide the progress, not the result.",
    "--resume": "Continue the run in this folder: what is recorded is kept, the rest is asked.",
    "--retry-errors": "With --resume: ask again the items that ended in errors.",
    "--run-dir": "The output folder.",
    "--samples": "Answers per item, sampled at --temperature (docs/sampling.md).",
    "--serve": "A server command to start, watch, restart when it dies and stop at the end; {port} is filled with a free port.",
    "--serve-hang-timeout": "With --serve: a server whose /v1/models has not answered for this many seconds is killed and restarted.",
    "--serve-timeout": "Seconds a managed server may take to become ready.",
    "--set": "Values of one {NAME} placeholder of --serve; repeat for more (crossed).",
    "--size": "Width and height of each PNG, in pixels.",
    "--stream": "Stream responses (time to first token); --no-stream for servers whose streams lack usage.",
    "--subset": "Comma-separated subsets (or groups) of the pack.",
    "--tau": "Near-tie threshold in nats (default 0.05, or by --precision).",
    "--temperature": "Sampling temperature (0: greedy).",
    "--timeout": "Seconds one request may take, start to end.",
    "--use-judge": "Count the judge's verdict where it decided (default: rule verdicts only).",
}


def _help(name: str, more: str = "") -> str:
    return MEANS[name] + (f" {more}" if more else "")


class Format(str, Enum):   # --format: what a command prints (docs/cli.md)
    table = "table"
    json = "json"
    csv = "csv"
    none = "none"


class SummaryFormat(str, Enum):   # show's --format: a run's summary has no rows for csv
    table = "table"
    json = "json"


def _print_version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(f"evalsuite {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                          help="Print the version and exit.")) -> None:
    pass


def _fail(message: str, code: int = EXIT_USAGE) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


# --- the grammar's shared pieces: old spellings, outputs, inputs ---


def _old(*names: str, flag: bool = False) -> Any:
    """A hidden alias for an old spelling (docs/cli.md, "Old spellings"): it works for one more
    version and says so on stderr."""
    return typer.Option(False if flag else None, *names, hidden=True)


def _renamed(old: str, old_value: Any, new: str, new_value: Any, new_default: Any = None) -> Any:
    """The value given under an old spelling (one deprecation line on stderr), else the new one's."""
    if old_value is None or old_value is False:
        return new_value
    typer.echo(f"deprecated: {old} is now {new} (docs/cli.md); the old spelling goes in the next version", err=True)
    if new_value != new_default:
        _fail(f"{old} is the old spelling of {new}: give {new} only")
    return old_value


def _writable(option: str, path: Optional[Path], folder: bool = False) -> None:
    """An output (a file, or a folder made when missing) that cannot be written is exit 2 before
    any work (docs/cli.md)."""
    if path is not None:
        from .analysis.outputs import OutputError, check_writable

        try:
            check_writable(path, option, folder=folder)
        except OutputError as e:
            _fail(str(e))


def _folder(option: str, path: Optional[Path]) -> Optional[Path]:
    """An input folder named on the command line must be one (--data-dir missing is exit 2, not a
    fallback). EVALSUITE_DATA_DIR is left to the command: a command that reads no data (regrade of
    your own file, tasks) still runs under a stale one."""
    import os

    if path is not None and not Path(path).is_dir() and os.environ.get("EVALSUITE_DATA_DIR") != str(path):
        _fail(f"{option} {path}: " + ("a file, not a folder" if Path(path).exists() else "no such folder"))
    return path


def _run_folders(paths: List[Path], name: str = "RUN_DIR") -> None:
    """A speed profile where a run folder is wanted is named as such, not "no run folder"."""
    from .speed.rows import is_profile_file

    for p in paths:
        if p is not None and is_profile_file(p):
            _fail(f"{name} {p} is a speed profile, not a run folder (`evalsuite compare` and `report` read profiles)")
        if p is not None and name.startswith("--") and not Path(p).is_dir():
            _fail(f"{name} {p}: no run folder there")


def _profiles(paths: List[Path], command: str) -> bool:
    """True when every path is a speed profile; a mix of profiles and run folders is exit 2."""
    from .speed.rows import is_profile_file

    profiles = [p for p in paths if is_profile_file(p)]
    if profiles and len(profiles) < len(paths):
        other = next(p for p in paths if p not in profiles)
        what = "a run folder" if other.is_dir() else ("not a speed profile" if other.exists() else "missing")
        _fail(f"{command}: {profiles[0]} is a speed profile and {other} is {what}: a speed profile and a run folder "
              "cannot be compared; give only profiles (`evalsuite speed --json`) or only run folders")
    return bool(profiles)


def _two_runs(first: Optional[Path], second: Optional[Path], baseline: Optional[Path],
              candidate: Optional[Path]) -> Tuple[Optional[Path], Optional[Path]]:
    """gate's runs: --baseline/--candidate name their places, the positional runs fill the rest in order."""
    named = [baseline, candidate]
    free = [p for p in (first, second) if p is not None]
    named = [p if p is not None or not free else free.pop(0) for p in named]
    if free:
        _fail(f"RUN_DIR {free[0]}: one run too many (gate BASELINE CANDIDATE, or --baseline/--candidate RUN_DIR)")
    if (named[0] is None) != (named[1] is None):
        _fail(f"{'--candidate' if named[1] is None else '--baseline'}: missing; give both runs: "
              "gate BASELINE CANDIDATE (or --baseline RUN_DIR --candidate RUN_DIR)")
    return named[0], named[1]


def _check_judge(endpoint: Optional[str], model: Optional[str], api_key_env: Optional[str]) -> None:
    """A judge that does not answer is exit 2 before anything is read or rendered."""
    if endpoint:
        from .judge import JudgeSettings, check_judge

        try:
            check_judge(JudgeSettings(endpoint, model, api_key_env))
        except ValueError as e:
            _fail(str(e))


def _quiet(more: str = "") -> Any:
    return typer.Option(False, "--quiet/--no-quiet", "-q", help=_help("--quiet", more))


# --- the commands ---


@app.command()
def run(
    pack: str = typer.Argument(..., metavar="PACK", help="Pack or preset name (see `evalsuite tasks`), or your own questions: a .jsonl/.json/.csv/.parquet/.toml file, or hf:OWNER/NAME (docs/own-data.md)."),
    endpoint: List[str] = typer.Option([], "--endpoint", "-e", metavar="URL", help=_help("--endpoint", "Repeat to spread items over replicas.")),
    model: Optional[str] = typer.Option(None, help=_help("--model", "`smollm2` (the real model `evalsuite[demo]` installs), or a path to a .gguf file with no --endpoint and nothing answering at the default endpoint, starts a server on it for the run and stops it after: llama.cpp's llama-server (PATH or EVALSUITE_LLAMA_SERVER), else llama-cpp-python's.")),
    api: str = typer.Option("chat", help=_help("--api")),
    concurrency: int = typer.Option(4, "--concurrency", "-c", min=1, metavar="N", help=_help("--concurrency")),
    limit: Optional[int] = typer.Option(None, min=1, metavar="N", help=_help("--limit", "Seeded by --seed, after --subset/--per-subset; the summary names the subsets it covered.")),
    subset: Optional[str] = typer.Option(None, help=_help("--subset")),
    per_subset: Optional[int] = typer.Option(None, min=1, metavar="N", help="Seeded stratified subsample: N items per subset."),
    seed: int = typer.Option(0, help="Seed of the --limit and --per-subset samples."),
    fewshot: int = typer.Option(0, min=0, metavar="N", help="Few-shot examples from the dev split (packs that have one)."),
    data_dir: Optional[Path] = typer.Option(None, envvar="EVALSUITE_DATA_DIR", metavar="DIR", help=_help("--data-dir")),
    skip_bad_rows: bool = typer.Option(False, help="Skip dataset rows without a usable gold answer instead of stopping."),
    fields: Optional[str] = typer.Option(None, metavar="KEY=COLUMN,...", help="Your file's columns: question=, answer=, choices= (a list column, or A|B|C|D), subset=, id= (default: found by name)."),
    kind: Optional[str] = typer.Option(None, help="Your file's grading kind: numeric, math, choice or text (default: choice when there are options, else inferred from each gold)."),
    template: Optional[str] = typer.Option(None, help="Your file's prompt template, with {question} (and {choices} for the lettered options)."),
    split: Optional[str] = typer.Option(None, help="With hf:OWNER/NAME: the split (default test)."),
    judge_endpoint: Optional[str] = typer.Option(None, metavar="URL", help=_help("--judge-endpoint", "Undecided/unextracted items and open (text) answers; stored beside the rule verdict (docs/own-data.md).")),
    judge_model: Optional[str] = typer.Option(None, help=_help("--judge-model")),
    judge_api_key_env: Optional[str] = typer.Option(None, help=_help("--judge-api-key-env")),
    run_dir: Optional[Path] = typer.Option(None, metavar="DIR", help=_help("--run-dir", "Default results/<pack>-<time>.")),
    resume: Optional[Path] = typer.Option(None, metavar="RUN_DIR", help=_help("--resume")),
    retry_errors: bool = typer.Option(False, help=_help("--retry-errors")),
    temperature: float = typer.Option(0.0, help=_help("--temperature")),
    top_p: float = typer.Option(1.0, help="Nucleus sampling: the top_p sent with each request."),
    request_seed: Optional[int] = typer.Option(0, help="The `seed` sent with each request."),
    samples: int = typer.Option(1, min=1, max=1024, metavar="N", help=_help("--samples", "Sample j is sent with seed = --request-seed + j; `show` gives avg@N, pass@k, maj@N.")),
    max_tokens: Optional[int] = typer.Option(None, min=1, metavar="N", help=_help("--max-tokens", "Default: the pack's, 1024 for most; 4096 for svg (lossless: 512).")),
    stop: List[str] = typer.Option([], metavar="TEXT", help="Stop sequence; repeatable."),
    reasoning_effort: Optional[str] = typer.Option(None, help="low / medium / high, for servers that take it."),
    logprobs: Optional[int] = typer.Option(None, min=0, max=20, metavar="N", help=_help("--logprobs", "Default off here (lossless: 5); `evalsuite diff` needs them.")),
    extra_body: Optional[str] = typer.Option(None, help=_help("--extra-body", 'E.g. \'{"top_k": 1, "repeat_penalty": 1.0}\'.')),
    timeout: float = typer.Option(600.0, help=_help("--timeout")),
    max_retries: int = typer.Option(5, min=0, metavar="N", help="Retries per item for 429, 5xx, timeouts and torn streams."),
    max_downtime: float = typer.Option(300.0, help="Stop the run when an endpoint has not answered for this many seconds."),
    serve: Optional[str] = typer.Option(None, metavar="COMMAND", help=_help("--serve", 'E.g. "llama-server -m model.gguf --port {port}" (docs/engines.md).')),
    serve_timeout: float = typer.Option(600.0, help=_help("--serve-timeout", "With --serve.")),
    max_restarts: int = typer.Option(3, min=0, metavar="N", help=_help("--max-restarts", "With --serve: after that the run stops (exit 3).")),
    serve_hang_timeout: float = typer.Option(120.0, help=_help("--serve-hang-timeout")),
    stream: bool = typer.Option(True, help=_help("--stream")),
    label: Optional[str] = typer.Option(None, help=_help("--label")),
    api_key_env: Optional[str] = typer.Option(None, help=_help("--api-key-env")),
    check_model: bool = typer.Option(True, help="Refuse a --model the endpoint does not list."),
    quiet: bool = _quiet("The summary's one line and the run folder are still printed."),
) -> None:
    """Run a pack against an endpoint; records stream to RUN_DIR/records.jsonl."""
    from .errors import UsageError
    from .run.runner import run as run_pack
    from .run.settings import settings_from_options

    _folder("--data-dir", data_dir)
    _writable("--run-dir", run_dir, folder=True)
    try:
        settings = settings_from_options(
            pack, endpoint=endpoint, model=model, api=api, concurrency=concurrency, limit=limit, subset=subset,
            per_subset=per_subset, seed=seed, fewshot=fewshot, data_dir=data_dir, skip_bad_rows=skip_bad_rows,
            fields=fields, kind=kind, template=template, split=split, judge_endpoint=judge_endpoint,
            judge_model=judge_model, judge_api_key_env=judge_api_key_env, run_dir=run_dir, resume=resume,
            retry_errors=retry_errors, temperature=temperature, top_p=top_p, request_seed=request_seed,
            samples=samples, max_tokens=max_tokens, stop=stop, reasoning_effort=reasoning_effort, logprobs=logprobs,
            extra_body=extra_body, timeout=timeout, max_retries=max_retries, max_downtime=max_downtime, serve=serve,
            serve_timeout=serve_timeout, max_restarts=max_restarts, serve_hang_timeout=serve_hang_timeout,
            stream=stream, label=label, api_key_env=api_key_env, check_model=check_model, quiet=quiet,
            default_endpoint=DEFAULT_ENDPOINT, argv=["evalsuite"] + sys.argv[1:])
    except UsageError as e:
        _fail(str(e))
    if samples > 1 and temperature == 0:
        typer.echo(f"note: --samples {samples} at temperature 0: greedy answers differ only where the server is "
                   "not deterministic; pass --temperature (e.g. 0.6) to sample", err=True)
    try:
        code = run_pack(settings)
    except UsageError as e:
        _fail(str(e))
    raise typer.Exit(code)


@app.command()
def show(run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run folder."),
         format: Optional[SummaryFormat] = typer.Option(None, help=_help("--format", "table (default) or json.")),
         old_json: bool = _old("--json", flag=True)) -> None:
    """Summary table of a run: accuracy (Wilson 95%), subsets, errors, tokens, timings."""
    from .analysis.summary import show_main

    chosen = _renamed("--json", "json" if old_json else None, "--format json", format and format.value)
    _run_folders([run_dir])
    raise typer.Exit(show_main(run_dir, json_out=chosen == "json", echo=typer.echo))


@app.command()
def tasks(
    data_dir: Optional[Path] = typer.Option(None, envvar="EVALSUITE_DATA_DIR", metavar="DIR", help=_help("--data-dir", "The folder `run` would read.")),
) -> None:
    """List the packs and presets, their item counts and where their data comes from."""
    from .tasks.listing import tasks_main

    raise typer.Exit(tasks_main(_folder("--data-dir", data_dir), echo=typer.echo))


# --- analysis commands ---


@app.command("regrade")
def regrade_cmd(
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="The run folder to re-grade (it is not modified)."),
    data_dir: Optional[Path] = typer.Option(None, envvar="EVALSUITE_DATA_DIR", metavar="DIR", help=_help("--data-dir", "To reload items (option texts) for choice packs.")),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="PATH", help=_help("--json", "The changed verdicts.")),
    judge_endpoint: Optional[str] = typer.Option(None, metavar="URL", help=_help("--judge-endpoint", "Undecided/unextracted and open (text) items, cached (verdicts already stored are not asked again); printed, the run folder is not changed.")),
    judge_model: Optional[str] = typer.Option(None, help=_help("--judge-model")),
    judge_api_key_env: Optional[str] = typer.Option(None, help=_help("--judge-api-key-env")),
) -> None:
    """Re-grade stored answers with the current graders (no endpoint); list every changed verdict."""
    from .analysis.regrade import regrade_main

    _run_folders([run_dir])
    _folder("--data-dir", data_dir)
    _check_judge(judge_endpoint, judge_model, judge_api_key_env)
    judge = None
    if judge_endpoint:
        from .judge import JudgeSettings, regrade_judge

        judge = regrade_judge(JudgeSettings(judge_endpoint, judge_model, judge_api_key_env))
    raise typer.Exit(regrade_main(run_dir, data_dir=data_dir, json_out=json_out, judge=judge, echo=typer.echo))


@app.command("diff")
def diff_cmd(
    baseline: Path = typer.Argument(..., metavar="RUN_DIR", help="The baseline run folder (e.g. speculation off)."),
    candidate: Path = typer.Argument(..., metavar="RUN_DIR", help="The candidate run folder (e.g. speculation on)."),
    tau: Optional[float] = typer.Option(None, help=_help("--tau")),
    precision: Optional[str] = typer.Option(None, help=_help("--precision")),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="PATH", help=_help("--json", "The per-item verdicts and counts.")),
    html: Optional[Path] = typer.Option(None, metavar="PATH", help=_help("--html")),
    fail_on: Optional[str] = typer.Option(None, help=_help("--fail-on")),
    rescore_url: Optional[str] = typer.Option(None, metavar="URL", help="The baseline's endpoint: re-score undetermined divergences there (calls the server)."),
    api_key_env: Optional[str] = typer.Option(None, help=_help("--api-key-env", "With --rescore-url or --teacher-url.")),
    aa_run: Optional[Path] = typer.Option(None, metavar="RUN_DIR", help="A repeat of the baseline (same server): classify the candidate against the engine's own noise."),
    teacher_url: Optional[str] = typer.Option(None, metavar="URL", help="The candidate's endpoint: score the baseline's generations there (vLLM prompt_logprobs) for drift along the whole text (calls the server)."),
    teacher_items: int = typer.Option(20, min=1, metavar="N", help="With --teacher-url: how many items (one request each)."),
    quiet: bool = _quiet("Only the counts line (and the noise floor's sentence with --aa-run); --json/--html are written in full."),
    old_rescore: Optional[str] = _old("--rescore"),
    old_aa: Optional[Path] = _old("--aa"),
    old_teacher: Optional[str] = _old("--teacher-forced"),
) -> None:
    """Speculation on vs off (or any serving change): identical, near-tie flip, or real divergence, per item."""
    from .lossless.command import diff_main

    rescore_url = _renamed("--rescore URL", old_rescore, "--rescore-url", rescore_url)
    aa_run = _renamed("--aa RUN_DIR", old_aa, "--aa-run", aa_run)
    teacher_url = _renamed("--teacher-forced URL", old_teacher, "--teacher-url", teacher_url)
    _run_folders([baseline, candidate])
    _run_folders([aa_run], "--aa-run")
    raise typer.Exit(diff_main(baseline, candidate, tau=tau, precision=precision, json_path=json_out, html_path=html,
                               fail_on=fail_on, rescore_endpoint=rescore_url, echo=typer.echo, api_key_env=api_key_env,
                               aa=aa_run, teacher_endpoint=teacher_url, teacher_items=teacher_items, quiet=quiet))


@app.command()
def lossless(
    pack: str = typer.Argument(..., metavar="PACK", help="Pack or preset name."),
    baseline_endpoint: Optional[str] = typer.Option(None, metavar="URL", help="Base URL of the reference server (e.g. speculation off)."),
    candidate_endpoint: Optional[str] = typer.Option(None, metavar="URL", help="Base URL of the server under test (e.g. speculation on)."),
    baseline_serve: Optional[str] = typer.Option(None, metavar="COMMAND", help='Instead of --baseline-endpoint: start this server command for the baseline run ({port} = a free port), e.g. "llama-server -m m.gguf --port {port}".'),
    candidate_serve: Optional[str] = typer.Option(None, metavar="COMMAND", help="Instead of --candidate-endpoint: start this server command for the candidate run (after the baseline's is stopped)."),
    serve_timeout: float = typer.Option(600.0, help=_help("--serve-timeout", "With --*-serve.")),
    max_restarts: int = typer.Option(3, min=0, metavar="N", help=_help("--max-restarts", "With --*-serve: after that its run stops.")),
    limit: Optional[int] = typer.Option(None, min=1, metavar="N", help=_help("--limit", "Seed 0, the same items on both servers.")),
    subset: Optional[str] = typer.Option(None, help=_help("--subset")),
    data_dir: Optional[Path] = typer.Option(None, envvar="EVALSUITE_DATA_DIR", metavar="DIR", help=_help("--data-dir")),
    model: Optional[str] = typer.Option(None, help=_help("--model", "Of each endpoint.")),
    api: str = typer.Option("chat", help=_help("--api", "completions makes --rescore exact.")),
    max_tokens: int = typer.Option(512, min=1, metavar="N", help=_help("--max-tokens", "Default 512 here, not the pack's (run: 1024 for most): a lossless check compares tokens, and the first divergence is early.")),
    logprobs: int = typer.Option(5, min=1, max=20, metavar="N", help=_help("--logprobs", "Default 5 here (run: off): the diff reads them.")),
    extra_body: Optional[str] = typer.Option(None, help=_help("--extra-body", "To both servers.")),
    concurrency: int = typer.Option(1, "--concurrency", "-c", min=1, metavar="N", help=_help("--concurrency", "Default 1 here (run: 4): batching can change the numbers.")),
    timeout: float = typer.Option(600.0, help=_help("--timeout")),
    stream: bool = typer.Option(True, help=_help("--stream")),
    run_dir: Optional[Path] = typer.Option(None, metavar="DIR", help=_help("--run-dir", "Of the two runs; default results/lossless-<pack>-<time>.")),
    tau: Optional[float] = typer.Option(None, help=_help("--tau")),
    precision: Optional[str] = typer.Option(None, help=_help("--precision")),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="PATH", help=_help("--json", "The diff.")),
    html: Optional[Path] = typer.Option(None, metavar="PATH", help=_help("--html", "The diff.")),
    fail_on: Optional[str] = typer.Option(None, help=_help("--fail-on")),
    rescore: bool = typer.Option(False, help="Re-score undetermined divergences on the baseline endpoint."),
    resume: Optional[Path] = typer.Option(None, metavar="RUN_DIR", help=_help("--resume", "An interrupted lossless run's folder (or the baseline/candidate run folder in it).")),
    retry_errors: bool = typer.Option(False, help=_help("--retry-errors")),
    aa: bool = typer.Option(False, help="Run the baseline twice (A/A) and classify the candidate against the engine's own noise."),
    aa_concurrency: Optional[int] = typer.Option(None, min=1, metavar="N", help="With --aa: the repeat's concurrency (default --concurrency), e.g. 8 to see batching noise."),
    teacher_forced: bool = typer.Option(False, help="Also score the baseline's generations on the candidate endpoint (vLLM prompt_logprobs): drift along the whole text."),
    samples: int = typer.Option(1, min=1, max=1024, metavar="N", help=_help("--samples", "On both servers; the diff tests that they come from the same distribution (speculative sampling).")),
    temperature: float = typer.Option(0.0, help=_help("--temperature", "With --samples.")),
    quiet: bool = _quiet(),
) -> None:
    """Run a pack on a baseline and a candidate endpoint with logprobs, then diff them."""
    from .lossless.command import LosslessSettings, lossless_main

    _folder("--data-dir", data_dir)
    _writable("--run-dir", run_dir, folder=True)
    raise typer.Exit(lossless_main(LosslessSettings(
        pack=pack, baseline_endpoint=baseline_endpoint, candidate_endpoint=candidate_endpoint, limit=limit,
        subsets=tuple(s.strip() for s in subset.split(",") if s.strip()) if subset else (), data_dir=data_dir,
        model=model, api=api, max_tokens=max_tokens, logprobs=logprobs, extra_body=extra_body,
        concurrency=concurrency, timeout=timeout, stream=stream, run_dir=run_dir, tau=tau, precision=precision,
        json_path=json_out, html_path=html, fail_on=fail_on, rescore=rescore, quiet=quiet,
        argv=tuple(["evalsuite"] + sys.argv[1:]), resume=resume, retry_errors=retry_errors, samples=samples,
        baseline_serve=baseline_serve, candidate_serve=candidate_serve, serve_timeout=serve_timeout,
        max_restarts=max_restarts,
        aa=aa or aa_concurrency is not None, aa_concurrency=aa_concurrency, teacher_forced=teacher_forced,
        temperature=temperature),
        echo=typer.echo))


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def sweep(
    ctx: typer.Context,
    pack: str = typer.Argument(..., metavar="PACK", help="Pack or preset name."),
    serve: str = typer.Option(..., metavar="COMMAND", help=_help("--serve", 'Its {NAME} placeholders take the --set values, e.g. "llama-server -m {model} --port {port}".')),
    set_: List[str] = typer.Option([], "--set", metavar="NAME=V1,V2", help=_help("--set")),
    settings: Optional[Path] = typer.Option(None, metavar="FILE.toml", help="Settings from a TOML file: [set] NAME = [...] (crossed) and/or [[setting]] tables."),
    run_dir: Optional[Path] = typer.Option(None, metavar="DIR", help=_help("--run-dir", "Of the sweep; default results/sweep-<pack>-<time>; the same folder again continues it.")),
    resume: Optional[Path] = typer.Option(None, metavar="RUN_DIR", help=_help("--resume", "The sweep's folder (or the run folder of one of its settings).")),
    html: Optional[Path] = typer.Option(None, metavar="PATH", help=_help("--html", "The report of all settings; default RUN_DIR/report.html.")),
    speed: bool = typer.Option(False, help="After each setting's run, a speed profile of the same server command (evalsuite speed); its tg t/s, pp t/s, TTFT and acceptance as columns of one table (docs/speed.md)."),
    speed_pp: int = typer.Option(128, metavar="N", help="With --speed: prompt tokens of the profile."),
    speed_tg: int = typer.Option(32, metavar="N", help="With --speed: tokens generated per request."),
    speed_depth: str = typer.Option("0", metavar="N,N", help="With --speed: context depths (the table shows the first)."),
    speed_runs: int = typer.Option(3, min=1, metavar="N", help="With --speed: requests per test."),
    speed_workload: Optional[str] = typer.Option(None, metavar="KIND", help="With --speed: the packs' text of the prompts (math, code, prose, extract; default math)."),
    old_report: Optional[Path] = _old("--report"),
) -> None:
    """One managed server and one run per setting (e.g. per quant), then the compare table and a report.
    Every other option is passed to each `evalsuite run` as typed (--limit, --data-dir, --max-tokens, ...)."""
    import functools

    from .serve.sweep import sweep_main

    html = _renamed("--report", old_report, "--html", html)
    _writable("--run-dir", run_dir, folder=True)
    root = resume or run_dir
    if html is not None and not (root is not None and Path(root).resolve() in Path(html).resolve().parents):
        _writable("--html", html)   # outside the sweep's folder (which the sweep makes): checked before any run
    quiet = "--quiet" in ctx.args or "-q" in ctx.args
    speed_of = None
    if speed:   # the profile's settings are made (and checked) by sweep_main, before any run
        from .speed.pack_sweep import SweepSpeed

        speed_of = functools.partial(SweepSpeed.from_options, pp=speed_pp, tg=speed_tg, depth=speed_depth,
                                     runs=speed_runs, workload=speed_workload, run_args=list(ctx.args), quiet=quiet)
    raise typer.Exit(sweep_main(pack, serve, set_, settings, list(ctx.args), run_command=_run_command, run_dir=run_dir,
                                resume=resume, report=html, quiet=quiet, speed=speed_of))


def _run_command(args: List[str]) -> int:
    """`evalsuite run ARGS` in this process (for sweep): its exit code."""
    return _invoke(_command().commands["run"], args, "evalsuite run")


@app.command()
def speed(
    endpoint: Optional[str] = typer.Option(None, "--endpoint", "-e", metavar="URL", help=_help("--endpoint")),
    model: Optional[str] = typer.Option(None, help=_help("--model")),
    pp: Optional[str] = typer.Option(None, metavar="N,N", help="Prompt sizes in the server's tokens, comma-separated (default 512). The chat template's tokens count in them."),
    tg: Optional[str] = typer.Option(None, metavar="N,N", help="Tokens generated per request (default 128); with --ignore-eos, exactly that many."),
    depth: Optional[str] = typer.Option(None, metavar="N,N", help="Context depths: tokens of text before each prompt (default 0)."),
    concurrency: Optional[str] = typer.Option(None, "--concurrency", "-c", metavar="N,N", help=_help("--concurrency", "A comma list here, one test per value (default 1); each stream starts a new request the moment one ends.")),
    runs: int = typer.Option(5, "--runs", "-r", min=1, metavar="N", help="Requests per stream per test: mean ± std and the 95% interval are over them."),
    workload: Optional[str] = typer.Option(None, metavar="KIND", help="The packs' text the prompts are made of: math, code, prose, extract, or mix (each reported apart). Default math."),
    prefix_cache: bool = typer.Option(False, help="Also measure a context loaded once, then a prompt over it: the load and the cached prompt as rows of their own."),
    duration: Optional[str] = typer.Option(None, metavar="TIME", help="Soak: hold the first --concurrency for this long (90s, 30m, 1h) on pack prompts, then stop; requests, failures, restarts, aggregate t/s over time."),
    data_dir: Optional[Path] = typer.Option(None, envvar="EVALSUITE_DATA_DIR", metavar="DIR", help=_help("--data-dir", "The prompts' text.")),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="PATH", help=_help("--json", "The profile, after every test: a crash keeps what was measured.")),
    html: Optional[Path] = typer.Option(None, metavar="PATH", help=_help("--html", "The table and plots.")),
    format: Optional[Format] = typer.Option(None, help=_help("--format", "table (default; llama-bench's shape), json, csv or none.")),
    label: Optional[str] = typer.Option(None, help=_help("--label")),
    api: str = typer.Option("chat", help=_help("--api")),
    ignore_eos: bool = typer.Option(True, help="Send ignore_eos so every request generates exactly --tg tokens (llama-server, vLLM); --no-ignore-eos for servers that refuse it."),
    extra_body: Optional[str] = typer.Option(None, help=_help("--extra-body")),
    timeout: float = typer.Option(600.0, help=_help("--timeout")),
    text_seed: int = typer.Option(0, metavar="N", help="Where in the packs' text the prompts start."),
    warmup: bool = typer.Option(True, help="One short request before the first test."),
    compare_with: Optional[Tuple[Path, Path]] = typer.Option(None, "--compare", metavar="A.json B.json", help="Instead of measuring: compare two profiles (as `evalsuite compare A.json B.json`)."),
    serve: Optional[str] = typer.Option(None, metavar="COMMAND", help=_help("--serve", "Profiled as `run` runs a pack.")),
    set_: List[str] = typer.Option([], "--set", metavar="NAME=V1,V2", help=_help("--set", "With --serve: one managed server and one profile per setting, as `sweep`; then the compare and RUN_DIR/report.html.")),
    run_dir: Optional[Path] = typer.Option(None, metavar="DIR", help=_help("--run-dir", "With --set: of the profiles; default results/speed-sweep-<time>.")),
    serve_timeout: float = typer.Option(600.0, help=_help("--serve-timeout", "With --serve.")),
    max_restarts: int = typer.Option(3, min=0, metavar="N", help=_help("--max-restarts", "With --serve.")),
    serve_hang_timeout: float = typer.Option(120.0, help=_help("--serve-hang-timeout")),
    api_key_env: Optional[str] = typer.Option(None, help=_help("--api-key-env")),
    replay: Optional[Path] = typer.Option(None, metavar="FILE", help="Replay a logged conversation (OpenAI chat JSONL: one message a line, or one conversation a line) turn by turn, each assistant turn sent with everything before it: per-turn context, cached tokens, TTFT, prefill and decode; mean/median decode, jitter (CV), worst turn, retention, cache hit share."),
    session: Optional[int] = typer.Option(None, metavar="TURNS", help="A synthetic session from the packs' text: TURNS turns whose context grows to --depth (the last), --tg tokens a turn; reported as --replay."),
    rate: Optional[str] = typer.Option(None, metavar="R,R", help="Load by arrival rate: requests per second (Poisson, seeded; inf: all at once), e.g. 0.5,1,2,inf: TTFT/ITL/TPOT p50/p90/p99, goodput with --slo, the knee, the client's lag behind the schedule. With --replay/--session, sessions arrive at the rate. -e URL1,URL2 spreads them over endpoints."),
    slo: Optional[str] = typer.Option(None, metavar="LIST", help="With --rate: limits a request must meet to count as good, e.g. ttft=1s,tpot=60ms (also itl=, e2e=, share=0.9: the share of requests a rate needs to be within the SLO)."),
    requests: int = typer.Option(60, min=1, metavar="N", help="With --rate: requests (or sessions) per rate."),
    rate_seed: int = typer.Option(0, metavar="N", help="With --rate: the seed of the Poisson arrivals (the same seed, the same schedule)."),
    quiet: bool = _quiet(),
    old_output: Optional[str] = _old("--output", "-o"),
    old_seed: Optional[int] = _old("--seed"),
) -> None:
    """Speed profile of an endpoint, llama-bench style: prefill and decode t/s per depth and concurrency, TTFR/TTFT, speculative acceptance, on the packs' own text (docs/speed.md)."""
    from .speed.command import speed_cli

    output = _renamed("-o/--output", old_output, "--format", format and format.value) or "table"
    text_seed = _renamed("--seed", old_seed, "--text-seed", text_seed, new_default=0)
    _folder("--data-dir", data_dir)
    _writable("--json", json_out)
    _writable("--html", html)
    _writable("--run-dir", run_dir, folder=True)
    if compare_with:
        _profiles(list(compare_with), "speed --compare")
    raise typer.Exit(speed_cli(
        endpoint=endpoint, model=model, pp=pp, tg=tg, depth=depth, concurrency=concurrency, runs=runs, workload=workload,
        prefix_cache=prefix_cache, duration=duration, data_dir=data_dir, json_path=json_out, html_path=html,
        output=output, label=label, api=api, ignore_eos=ignore_eos, extra_body=extra_body, timeout=timeout,
        seed=text_seed, warmup=warmup, compare=compare_with, serve=serve, sets=set_, run_dir=run_dir,
        serve_timeout=serve_timeout, max_restarts=max_restarts, serve_hang_timeout=serve_hang_timeout,
        api_key_env=api_key_env, quiet=quiet, replay=replay, session_turns=session, rate=rate, slo=slo,
        requests=requests, rate_seed=rate_seed, argv=tuple(["evalsuite"] + sys.argv[1:]), echo=typer.echo))


@app.command("svg-render")
def svg_render(
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run folder of the svg pack."),
    size: int = typer.Option(512, min=16, max=4096, metavar="PIXELS", help=_help("--size")),
    timeout: float = typer.Option(20.0, help="Seconds one render may take."),
    force: bool = typer.Option(False, help="Render again even where RUN/renders/ has a PNG."),
    judge_endpoint: Optional[str] = typer.Option(None, metavar="URL", help=_help("--judge-endpoint", "Here: score each SVG (writes RUN/judge.jsonl).")),
    judge_model: Optional[str] = typer.Option(None, help=_help("--judge-model")),
    judge_api_key_env: str = typer.Option("OPENAI_API_KEY", help=_help("--judge-api-key-env")),
) -> None:
    """Render each SVG answer safely to RUN/renders/<id>.png (and optionally judge it)."""
    from .svg.render import svg_render_main

    _run_folders([run_dir])
    _check_judge(judge_endpoint, judge_model, judge_api_key_env)
    raise typer.Exit(svg_render_main(run_dir, size=size, timeout=timeout, force=force, judge_endpoint=judge_endpoint,
                                     judge_model=judge_model, judge_api_key_env=judge_api_key_env, echo=typer.echo))


@app.command()
def gallery(
    run_dirs: List[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders of the svg pack, shown side by side."),
    html: Path = typer.Option(Path("gallery.html"), metavar="PATH", help=_help("--html")),
    render: bool = typer.Option(True, help="Render missing PNGs into each RUN/renders/ first (--no-render: use what is there)."),
    size: int = typer.Option(512, min=16, max=4096, metavar="PIXELS", help=_help("--size")),
    timeout: float = typer.Option(20.0, help="Seconds one render may take."),
    old_output: Optional[Path] = _old("--output", "-o"),
) -> None:
    """One self-contained HTML page: each prompt, every run's render, stats and rule checks."""
    from .analysis.gallery import gallery_main

    html = _renamed("-o/--output", old_output, "--html", html, new_default=Path("gallery.html"))
    _run_folders(run_dirs)
    _writable("--html", html)
    raise typer.Exit(gallery_main(run_dirs, html, render=render, size=size, timeout=timeout, echo=typer.echo))


@app.command()
def compare(
    runs: List[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders (or speed profiles' JSON); each is compared against the first."),
    sweep: Optional[str] = typer.Option(None, help="Order the runs by this setting and print one sweep table (a manifest key, or a key in decoding / decoding.extra_body, e.g. label, max_tokens, thinking_budget)."),
    alpha: float = typer.Option(0.05, help=_help("--alpha")),
    plots_dir: Optional[Path] = typer.Option(None, metavar="DIR", help="Write the PNG plots into this folder."),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="PATH", help=_help("--json", "The figures.")),
    first_correct: bool = typer.Option(False, help="Also find the tokens to the first correct answer inside each reasoning (grades its prefixes; bounded in time): found later, or checked longer?"),
    equivalence_margin: Optional[float] = typer.Option(None, help=_help("--equivalence-margin", "Also say, for each run vs the first, whether accuracy is equivalent within ±this many points, worse, or undecided with the items needed.")),
    use_judge: bool = typer.Option(False, help=_help("--use-judge")),
    old_plots: Optional[Path] = _old("--plots"),
) -> None:
    """Accuracy (Wilson 95%), exact McNemar vs the first run, per-subset deltas, reasoning length and time to solution.
    Of speed profiles (JSON from `evalsuite speed --json`): the speedup of each row, with its interval."""
    plots_dir = _renamed("--plots", old_plots, "--plots-dir", plots_dir)
    if _profiles(runs, "compare"):
        from .speed.compare import compare_main as speed_compare

        raise typer.Exit(speed_compare(runs, json_path=json_out))
    from .analysis.compare.tables import compare_main

    raise typer.Exit(compare_main(runs, sweep_key=sweep, alpha=alpha, plots_dir=plots_dir, json_path=json_out,
                                  equivalence_margin=equivalence_margin, first_correct=first_correct,
                                  use_judge=use_judge))


@app.command()
def gate(
    baseline_dir: Optional[Path] = typer.Argument(None, metavar="BASELINE", help="The baseline run folder."),
    candidate_dir: Optional[Path] = typer.Argument(None, metavar="CANDIDATE", help="The candidate run folder."),
    baseline: Optional[Path] = typer.Option(None, metavar="RUN_DIR", help="The baseline run folder: BASELINE's other spelling."),
    candidate: Optional[Path] = typer.Option(None, metavar="RUN_DIR", help="The candidate run folder: CANDIDATE's other spelling."),
    max_drop: Optional[float] = typer.Option(None, help="Fail when accuracy drops by more than this many percentage points (and significantly)."),
    alpha: Optional[float] = typer.Option(None, help=_help("--alpha", "Here: of the drop (default 0.05; 1 drops the condition).")),
    min_items: Optional[int] = typer.Option(None, help="Exit 2 when fewer paired items than this (default 1)."),
    diff: Optional[Path] = typer.Option(None, metavar="FILE", help=_help("--diff", "Its counts.real and counts.undetermined are checked; alone (no runs): a diff-only gate.")),
    max_real: Optional[int] = typer.Option(None, help="With --diff: fail when more than this many real divergences (default 0)."),
    max_undetermined: Optional[int] = typer.Option(None, help="With --diff: fail when more than this many undetermined items (default 0: one may hide a real divergence)."),
    equivalence_margin: Optional[float] = typer.Option(None, help=_help("--equivalence-margin", "Pass only when the paired accuracy difference's (1 − 2α) interval (90% at α 0.05) lies inside ±this many points: equivalent / worse / undecided: N more items.")),
    junit: Optional[Path] = typer.Option(None, metavar="PATH", help="Write a JUnit XML report to this file."),
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="PATH", help=_help("--json", "The verdict, each check and its figures.")),
    max_errors: Optional[str] = typer.Option(None, help="Fail when more candidate items errored than this: a count, or a percentage like 2% (default: no more than the baseline)."),
    allow_underpowered: bool = typer.Option(False, help="Run a gate too small to detect --max-drop anyway (a loud warning instead of exit 2)."),
    use_judge: bool = typer.Option(False, help=_help("--use-judge")),
    allow_settings_mismatch: bool = typer.Option(False, help="Gate runs made with settings that change the answers (prompt template, decoding, item set) anyway: the differences are printed and written in the JUnit/JSON output instead of exit 2."),
) -> None:
    """CI gate: exit 0 pass, 1 fail, 2 unusable input. Defaults may live in pyproject.toml [tool.evalsuite.gate]."""
    from .analysis.gate.decide import gate_main

    baseline, candidate = _two_runs(baseline_dir, candidate_dir, baseline, candidate)
    _run_folders([baseline, candidate])
    raise typer.Exit(gate_main(baseline, candidate, max_drop=max_drop, alpha=alpha, min_items=min_items,
                               diff=diff, max_real=max_real, junit=junit, max_errors=max_errors,
                               allow_underpowered=allow_underpowered, max_undetermined=max_undetermined,
                               equivalence_margin=equivalence_margin, json_path=json_out, use_judge=use_judge,
                               allow_settings_mismatch=allow_settings_mismatch))


@app.command()
def report(
    runs: List[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders (or speed profiles' JSON); each is compared against the first."),
    html: Path = typer.Option(Path("report.html"), metavar="PATH", help=_help("--html")),
    diff: Optional[Path] = typer.Option(None, metavar="FILE", help=_help("--diff", "Its divergences go in the page.")),
    transcripts: int = typer.Option(8, min=0, metavar="N", help="Sample transcripts to include (disagreements first)."),
    alpha: float = typer.Option(0.05, help=_help("--alpha")),
    old_output: Optional[Path] = _old("--output", "-o"),
    old_samples: Optional[int] = _old("--samples"),
) -> None:
    """One self-contained HTML page: tables, plots, verdict, sample transcripts (reasoning folded).
    Of speed profiles (JSON): their tables, the speedups against the first, the plots."""
    html = _renamed("-o/--output", old_output, "--html", html, new_default=Path("report.html"))
    transcripts = _renamed("--samples", old_samples, "--transcripts", transcripts, new_default=8)
    if _profiles(runs, "report"):
        from .speed.html import report_main as speed_report

        raise typer.Exit(speed_report(runs, html))
    from .analysis.report import report_main

    raise typer.Exit(report_main(runs, html, diff=diff, samples=transcripts, alpha=alpha))


GRADER_SETTINGS = ("EVALSUITE_GRADER_TIMEOUT", "EVALSUITE_GRADER_WORKERS")


def _check_grader_settings() -> None:
    """A bad EVALSUITE_GRADER_* value stops every command before it starts (the graders read them
    on first use, which in a run comes after the server was asked). Unset, nothing is imported."""
    import os

    if any(os.environ.get(name, "").strip() for name in GRADER_SETTINGS):
        try:
            from .graders import sandbox  # noqa: F401  (reads and checks them)
        except ValueError as e:   # sandbox.BadGraderSetting, raised while the module is read
            typer.echo(f"error: {e}", err=True)
            raise SystemExit(EXIT_USAGE) from None


def _command() -> Any:
    command = typer.main.get_command(app)
    # an argument with a metavar shows only it in --help (`RUN_DIR`, not `RUN_DIR <list[Path]>`)
    for sub in getattr(command, "commands", {}).values():
        for param in sub.params:
            if isinstance(param, typer.core.TyperArgument) and param.metavar:
                param.display_type_rich = lambda ctx: None
    return command


def _invoke(command: Any, args: Optional[List[str]], prog_name: str) -> int:
    """Run a click command; its exit code. A usage error (a malformed number, an unknown option) is
    one line, `error: ...`, exit 2, not click's usage block. Click's exceptions are told by their
    shape: typer carries its own copy of click, so they are not always `click`'s classes."""
    try:
        return int(command.main(args=args, prog_name=prog_name, standalone_mode=False) or 0)
    except Exception as e:
        if type(e).__name__ == "Abort":   # Ctrl-C while parsing (older click)
            typer.echo("interrupted", err=True)
            return 130
        if not (hasattr(e, "exit_code") and hasattr(e, "format_message")):
            raise
        if type(e).__name__ == "NoArgsIsHelpError":   # `evalsuite` alone: the help
            e.show()
            return int(e.exit_code)
        ctx = getattr(e, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        typer.echo(f"error: {e.format_message()}{hint}", err=True)
        return int(e.exit_code)


def _crashed(error: BaseException) -> int:
    """An error no command expected is a bug: one line that says so and where its traceback was
    written (a bug must stay reportable), exit 70. EVALSUITE_TRACEBACK=1 prints it too."""
    import os
    import platform
    import shlex
    import tempfile
    import traceback

    from . import __version__

    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    if os.environ.get("EVALSUITE_TRACEBACK"):
        sys.stderr.write(text)
    try:
        fd, path = tempfile.mkstemp(prefix="evalsuite-traceback-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(f"evalsuite {__version__}, Python {platform.python_version()}, {platform.platform()}\n"
                    f"$ {shlex.join(['evalsuite', *sys.argv[1:]])}\n\n{text}")
        where = f"the traceback is in {path}: please report it with that file"
    except OSError as e:
        where = f"its traceback could not be written ({e.strerror or e}); EVALSUITE_TRACEBACK=1 prints it"
    said = (str(error).strip().splitlines() or [""])[0][:200]
    typer.echo(f"error: evalsuite failed unexpectedly ({type(error).__name__}{': ' + said if said else ''}); "
               f"this is a bug, not your input; {where}", err=True)
    return EXIT_BUG


def main(args: Optional[List[str]] = None) -> None:
    _check_grader_settings()
    try:
        code = _invoke(_command(), args, "evalsuite")
    except Exception as e:   # a bug: one line, the traceback in a file
        code = _crashed(e)
    sys.exit(code)


if __name__ == "__main__":
    main()
