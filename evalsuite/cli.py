"""The `evalsuite` command. Every command imports what it needs inside its function, so
`evalsuite --help` costs only typer."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional, Tuple

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode=None,
                  help="Does your LLM endpoint still give the right answers? Run task packs against "
                       "OpenAI-compatible servers, then diff, compare and gate the runs.")

DEFAULT_ENDPOINT = "http://127.0.0.1:8080/v1"  # llama.cpp's llama-server default


def _print_version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(f"evalsuite {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                          help="Print the version and exit.")) -> None:
    pass


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@app.command()
def run(
    pack: str = typer.Argument(..., metavar="PACK", help="Pack or preset name (see `evalsuite tasks`), or your own questions: a .jsonl/.json/.csv/.parquet/.toml file, or hf:OWNER/NAME (docs/own-data.md)."),
    endpoint: List[str] = typer.Option([], "--endpoint", "-e", metavar="URL", help=f"Base URL of an OpenAI-compatible server; repeat to spread items over replicas. Default {DEFAULT_ENDPOINT}."),
    model: Optional[str] = typer.Option(None, help="Model id to request (default: the first one /v1/models lists). A path to a .gguf file, with no --endpoint and nothing answering at the default endpoint, starts llama.cpp's llama-server on it for the run (from PATH or EVALSUITE_LLAMA_SERVER) and stops it after."),
    api: str = typer.Option("chat", help="chat (chat completions) or completions (raw prompt)."),
    concurrency: int = typer.Option(4, min=1, metavar="N", help="Requests in flight per endpoint."),
    limit: Optional[int] = typer.Option(None, min=1, metavar="N", help="Only the first N items (after --subset/--per-subset); of a preset or with --per-subset, N spread over the subsets."),
    subset: Optional[str] = typer.Option(None, help="Comma-separated subsets (or groups) of the pack."),
    per_subset: Optional[int] = typer.Option(None, min=1, metavar="N", help="Seeded stratified subsample: N items per subset."),
    seed: int = typer.Option(0, help="Seed of the --per-subset subsample."),
    fewshot: int = typer.Option(0, min=0, metavar="N", help="Few-shot examples from the dev split (packs that have one)."),
    data_dir: Optional[Path] = typer.Option(None, envvar="EVALSUITE_DATA_DIR", help="Offline data folder laid out like shared/data (default: the hub)."),
    skip_bad_rows: bool = typer.Option(False, help="Skip dataset rows without a usable gold answer instead of stopping."),
    fields: Optional[str] = typer.Option(None, metavar="KEY=COLUMN,...", help="Your file's columns: question=, answer=, choices= (a list column, or A|B|C|D), subset=, id= (default: found by name)."),
    kind: Optional[str] = typer.Option(None, help="Your file's grading kind: numeric, math, choice or text (default: choice when there are options, else inferred from each gold)."),
    template: Optional[str] = typer.Option(None, help="Your file's prompt template, with {question} (and {choices} for the lettered options)."),
    split: Optional[str] = typer.Option(None, help="With hf:OWNER/NAME: the split (default test)."),
    judge_endpoint: Optional[str] = typer.Option(None, metavar="URL", help="Ask this OpenAI-compatible endpoint to judge undecided/unextracted items and open (text) answers; stored beside the rule verdict (docs/own-data.md)."),
    judge_model: Optional[str] = typer.Option(None, help="Judge model id (default: the first one the judge endpoint lists)."),
    judge_api_key_env: Optional[str] = typer.Option(None, help="Environment variable holding the judge's API key (default OPENAI_API_KEY). Never written anywhere."),
    run_dir: Optional[Path] = typer.Option(None, help="Output folder (default results/<pack>-<time>)."),
    resume: Optional[Path] = typer.Option(None, help="Continue the run in this folder: items already recorded are skipped."),
    retry_errors: bool = typer.Option(False, help="With --resume: ask again the items that ended in errors."),
    temperature: float = typer.Option(0.0),
    top_p: float = typer.Option(1.0),
    request_seed: Optional[int] = typer.Option(0, help="The `seed` sent with each request."),
    samples: int = typer.Option(1, min=1, max=1024, metavar="N", help="Answers per item (with --temperature > 0): sample j is sent with seed = --request-seed + j; `show` gives avg@N, pass@k, maj@N (docs/sampling.md)."),
    max_tokens: Optional[int] = typer.Option(None, min=1, metavar="N", help="Output token cap (default: the pack's, 1024 for most; 4096 for svg)."),
    stop: List[str] = typer.Option([], metavar="TEXT", help="Stop sequence; repeatable."),
    reasoning_effort: Optional[str] = typer.Option(None, help="low / medium / high, for servers that take it."),
    logprobs: Optional[int] = typer.Option(None, min=0, max=20, metavar="N", help="Keep token logprobs with the top-K alternatives (needed by `evalsuite diff`)."),
    extra_body: Optional[str] = typer.Option(None, help='JSON object of server-specific fields, e.g. \'{"top_k": 1, "repeat_penalty": 1.0}\'.'),
    timeout: float = typer.Option(600.0, help="Seconds one request may take, start to end."),
    max_retries: int = typer.Option(5, min=0, metavar="N", help="Retries per item for 429, 5xx, timeouts and torn streams."),
    max_downtime: float = typer.Option(300.0, help="Stop the run when an endpoint has not answered for this many seconds."),
    serve: Optional[str] = typer.Option(None, metavar="COMMAND", help='Start this server command for the run, watch it, restart it if it dies, stop it at the end; {port} is filled with a free port (docs/engines.md). E.g. "llama-server -m model.gguf --port {port}".'),
    serve_timeout: float = typer.Option(600.0, help="With --serve: seconds the server may take to become ready."),
    max_restarts: int = typer.Option(3, min=0, metavar="N", help="With --serve: restarts of a server that dies or hangs before the run stops (exit 3)."),
    serve_hang_timeout: float = typer.Option(120.0, help="With --serve: a server whose /v1/models has not answered for this many seconds is killed and restarted."),
    stream: bool = typer.Option(True, help="Stream responses (time to first token). --no-stream for servers whose streams lack usage."),
    label: Optional[str] = typer.Option(None, help="A name for this run in comparisons (e.g. spec-on, IQ3_XXS)."),
    api_key_env: Optional[str] = typer.Option(None, help="Environment variable holding the API key (default OPENAI_API_KEY). Keys are never written anywhere."),
    check_model: bool = typer.Option(True, help="Refuse a --model the endpoint does not list."),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """Run a pack against an endpoint; records stream to RUN_DIR/records.jsonl."""
    from .run.runner import UsageError, run as run_pack
    from .run.settings import settings_from_options

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
         json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON.")) -> None:
    """Summary table of a run: accuracy (Wilson 95%), subsets, errors, tokens, timings."""
    from .analysis.summary import show_main

    raise typer.Exit(show_main(run_dir, json_out=json_out, echo=typer.echo))


@app.command()
def tasks(
    data_dir: Optional[Path] = typer.Option(None, envvar="EVALSUITE_DATA_DIR", help="The data folder `run` would read (default: the hub)."),
) -> None:
    """List the packs and presets, their item counts and where their data comes from."""
    from .tasks.listing import tasks_main

    raise typer.Exit(tasks_main(data_dir, echo=typer.echo))


# --- analysis commands ---


@app.command("regrade")
def regrade_cmd(
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="The run folder to re-grade (it is not modified)."),
    data_dir: Optional[Path] = typer.Option(None, envvar="EVALSUITE_DATA_DIR", help="Offline data folder, to reload items (option texts) for choice packs."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the changed verdicts as JSON here."),
    judge_endpoint: Optional[str] = typer.Option(None, metavar="URL", help="Also ask this endpoint to judge the undecided/unextracted and open (text) items (cached: verdicts already stored are not asked again); printed, the run folder is not changed."),
    judge_model: Optional[str] = typer.Option(None, help="Judge model id (default: the first one the judge endpoint lists)."),
    judge_api_key_env: Optional[str] = typer.Option(None, help="Environment variable holding the judge's API key (default OPENAI_API_KEY)."),
) -> None:
    """Re-grade stored answers with the current graders (no endpoint); list every changed verdict."""
    from .analysis.regrade import regrade_main

    judge = None
    if judge_endpoint:
        from .judge import JudgeSettings, regrade_judge

        judge = regrade_judge(JudgeSettings(judge_endpoint, judge_model, judge_api_key_env))
    raise typer.Exit(regrade_main(run_dir, data_dir=data_dir, json_out=json_out, judge=judge, echo=typer.echo))


@app.command("diff")
def diff_cmd(
    baseline: Path = typer.Argument(..., metavar="RUN_DIR", help="The baseline run folder (e.g. speculation off)."),
    candidate: Path = typer.Argument(..., metavar="RUN_DIR", help="The candidate run folder (e.g. speculation on)."),
    tau: Optional[float] = typer.Option(None, help="Near-tie threshold in nats (default 0.05, or by --precision)."),
    precision: Optional[str] = typer.Option(None, help="Set tau by engine precision: fp32, fp16, q8 (0.05), bf16 (0.15), fp8-kv (0.25)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the per-item verdicts and counts as JSON here."),
    html: Optional[Path] = typer.Option(None, help="Write a self-contained HTML report here."),
    fail_on: Optional[str] = typer.Option(None, help="Exit 1 when any divergence at least this bad: real, suspicious or near-tie."),
    rescore: Optional[str] = typer.Option(None, help="Baseline endpoint URL: re-score undetermined divergences there (calls the server)."),
    api_key_env: Optional[str] = typer.Option(None, help="With --rescore: environment variable holding the API key (default OPENAI_API_KEY)."),
    aa: Optional[Path] = typer.Option(None, "--aa", metavar="RUN_DIR", help="A repeat of the baseline (same server): classify the candidate against the engine's own noise."),
    teacher_forced: Optional[str] = typer.Option(None, metavar="URL", help="Candidate endpoint: score the baseline's generations there (vLLM prompt_logprobs) for drift along the whole text (calls the server)."),
    teacher_items: int = typer.Option(20, min=1, metavar="N", help="With --teacher-forced: how many items (one request each)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the counts line (and the noise floor's sentence with --aa); --json/--html are written in full."),
) -> None:
    """Speculation on vs off (or any serving change): identical, near-tie flip, or real divergence, per item."""
    from .lossless.command import diff_main

    raise typer.Exit(diff_main(baseline, candidate, tau=tau, precision=precision, json_path=json_out, html_path=html,
                               fail_on=fail_on, rescore_endpoint=rescore, echo=typer.echo, api_key_env=api_key_env,
                               aa=aa, teacher_endpoint=teacher_forced, teacher_items=teacher_items, quiet=quiet))


@app.command()
def lossless(
    pack: str = typer.Argument(..., metavar="PACK", help="Pack or preset name."),
    baseline_endpoint: Optional[str] = typer.Option(None, help="Base URL of the reference server (e.g. speculation off)."),
    candidate_endpoint: Optional[str] = typer.Option(None, help="Base URL of the server under test (e.g. speculation on)."),
    baseline_serve: Optional[str] = typer.Option(None, metavar="COMMAND", help='Instead of --baseline-endpoint: start this server command for the baseline run ({port} = a free port), e.g. "llama-server -m m.gguf --port {port}".'),
    candidate_serve: Optional[str] = typer.Option(None, metavar="COMMAND", help="Instead of --candidate-endpoint: start this server command for the candidate run (after the baseline's is stopped)."),
    serve_timeout: float = typer.Option(600.0, help="With --*-serve: seconds a server may take to become ready."),
    max_restarts: int = typer.Option(3, min=0, metavar="N", help="With --*-serve: restarts of a server that dies or hangs before its run stops."),
    limit: Optional[int] = typer.Option(None, min=1, metavar="N", help="Only the first N items."),
    subset: Optional[str] = typer.Option(None, help="Comma-separated subsets of the pack."),
    data_dir: Optional[Path] = typer.Option(None, envvar="EVALSUITE_DATA_DIR", help="Offline data folder laid out like shared/data."),
    model: Optional[str] = typer.Option(None, help="Model id to request (default: each endpoint's first)."),
    api: str = typer.Option("chat", help="chat or completions (completions makes --rescore exact)."),
    max_tokens: int = typer.Option(512, min=1, metavar="N"),
    logprobs: int = typer.Option(5, min=1, max=20, metavar="N", help="Top-K logprobs kept per token."),
    extra_body: Optional[str] = typer.Option(None, help="JSON object sent with every request to both servers."),
    concurrency: int = typer.Option(1, min=1, metavar="N", help="Requests in flight per endpoint. 1 keeps batching from changing the numbers."),
    timeout: float = typer.Option(600.0),
    stream: bool = typer.Option(True, help="--no-stream for servers whose streams lack usage."),
    run_dir: Optional[Path] = typer.Option(None, help="Folder for the two runs (default results/lossless-<pack>-<time>)."),
    tau: Optional[float] = typer.Option(None, help="Near-tie threshold in nats (default 0.05, or by --precision)."),
    precision: Optional[str] = typer.Option(None, help="fp32, fp16, q8, bf16 or fp8-kv: sets tau."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the diff as JSON here."),
    html: Optional[Path] = typer.Option(None, help="Write the HTML report here."),
    fail_on: Optional[str] = typer.Option(None, help="Exit 1 on: real, suspicious or near-tie."),
    rescore: bool = typer.Option(False, help="Re-score undetermined divergences on the baseline endpoint."),
    resume: Optional[Path] = typer.Option(None, help="Continue an interrupted lossless run: its folder (or the baseline/candidate run folder in it)."),
    retry_errors: bool = typer.Option(False, help="With --resume: ask again the items that ended in errors."),
    aa: bool = typer.Option(False, "--aa", help="Run the baseline twice (A/A) and classify the candidate against the engine's own noise."),
    aa_concurrency: Optional[int] = typer.Option(None, min=1, metavar="N", help="With --aa: the repeat's concurrency (default --concurrency), e.g. 8 to see batching noise."),
    teacher_forced: bool = typer.Option(False, help="Also score the baseline's generations on the candidate endpoint (vLLM prompt_logprobs): drift along the whole text."),
    samples: int = typer.Option(1, min=1, max=1024, metavar="N", help="Sample N answers per item at --temperature on both servers and test that they come from the same distribution (speculative sampling; docs/sampling.md)."),
    temperature: float = typer.Option(0.0, help="With --samples: the sampling temperature (0: greedy)."),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """Run a pack on a baseline and a candidate endpoint with logprobs, then diff them."""
    from .lossless.command import LosslessSettings, lossless_main

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
    serve: str = typer.Option(..., metavar="COMMAND", help='Server command with placeholders, e.g. "llama-server -m {model} --port {port}" ({port}: a free port).'),
    set_: List[str] = typer.Option([], "--set", metavar="NAME=V1,V2", help="Values of one placeholder; repeat for more (crossed)."),
    settings: Optional[Path] = typer.Option(None, metavar="FILE.toml", help="Settings from a TOML file: [set] NAME = [...] (crossed) and/or [[setting]] tables."),
    run_dir: Optional[Path] = typer.Option(None, help="Folder of the sweep (default results/sweep-<pack>-<time>); the same folder again continues it."),
    resume: Optional[Path] = typer.Option(None, help="Continue the sweep in this folder (or the run folder of one of its settings)."),
    report: Optional[Path] = typer.Option(None, help="The HTML report of all settings (default RUN_DIR/report.html)."),
    speed: bool = typer.Option(False, "--speed", help="After each setting's run, a speed profile of the same server command (evalsuite speed); its tg t/s, pp t/s, TTFT and acceptance as columns of one table (docs/speed.md)."),
    speed_pp: int = typer.Option(128, metavar="N", help="With --speed: prompt tokens of the profile."),
    speed_tg: int = typer.Option(32, metavar="N", help="With --speed: tokens generated per request."),
    speed_depth: str = typer.Option("0", metavar="N,N", help="With --speed: context depths (the table shows the first)."),
    speed_runs: int = typer.Option(3, min=1, metavar="N", help="With --speed: requests per test."),
    speed_workload: Optional[str] = typer.Option(None, metavar="KIND", help="With --speed: the packs' text of the prompts (math, code, prose, extract; default math)."),
) -> None:
    """One managed server and one run per setting (e.g. per quant), then the compare table and a report.
    Every other option is passed to each `evalsuite run` as typed (--limit, --data-dir, --max-tokens, ...)."""
    import functools

    from .serve.sweep import sweep_main

    quiet = "--quiet" in ctx.args or "-q" in ctx.args
    speed_of = None
    if speed:   # the profile's settings are made (and checked) by sweep_main, before any run
        from .speed.pack_sweep import SweepSpeed

        speed_of = functools.partial(SweepSpeed.from_options, pp=speed_pp, tg=speed_tg, depth=speed_depth,
                                     runs=speed_runs, workload=speed_workload, run_args=list(ctx.args), quiet=quiet)
    raise typer.Exit(sweep_main(pack, serve, set_, settings, list(ctx.args), run_command=_run_command, run_dir=run_dir,
                                resume=resume, report=report, quiet=quiet, speed=speed_of))


def _run_command(args: List[str]) -> int:
    """`evalsuite run ARGS` in this process (for sweep): its exit code."""
    import click

    command = typer.main.get_command(app).commands["run"]
    try:
        return int(command.main(args=args, prog_name="evalsuite run", standalone_mode=False) or 0)
    except click.exceptions.Exit as e:
        return int(e.exit_code)
    except click.ClickException as e:
        e.show()
        return 2


@app.command()
def speed(
    endpoint: Optional[str] = typer.Option(None, "--endpoint", "-e", metavar="URL", help=f"Base URL of an OpenAI-compatible server. Default {DEFAULT_ENDPOINT}."),
    model: Optional[str] = typer.Option(None, help="Model id to request (default: the first one /v1/models lists)."),
    pp: Optional[str] = typer.Option(None, metavar="N,N", help="Prompt sizes in the server's tokens, comma-separated (default 512). The chat template's tokens count in them."),
    tg: Optional[str] = typer.Option(None, metavar="N,N", help="Tokens generated per request (default 128); with --ignore-eos, exactly that many."),
    depth: Optional[str] = typer.Option(None, metavar="N,N", help="Context depths: tokens of text before each prompt (default 0)."),
    concurrency: Optional[str] = typer.Option(None, "--concurrency", "-c", metavar="N,N", help="Streams kept full at once (default 1): a new request starts the moment one ends."),
    runs: int = typer.Option(5, "--runs", "-r", min=1, metavar="N", help="Requests per stream per test: mean ± std and the 95% interval are over them."),
    workload: Optional[str] = typer.Option(None, metavar="KIND", help="The packs' text the prompts are made of: math, code, prose, extract, or mix (each reported apart). Default math."),
    prefix_cache: bool = typer.Option(False, "--prefix-cache", help="Also measure a context loaded once, then a prompt over it: the load and the cached prompt as rows of their own."),
    duration: Optional[str] = typer.Option(None, metavar="TIME", help="Soak: hold the first --concurrency for this long (90s, 30m, 1h) on pack prompts, then stop; requests, failures, restarts, aggregate t/s over time."),
    data_dir: Optional[Path] = typer.Option(None, envvar="EVALSUITE_DATA_DIR", help="Offline data folder laid out like shared/data (the prompts' text)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the profile as JSON here (after every test: a crash keeps what was measured)."),
    html: Optional[Path] = typer.Option(None, help="Write an HTML page with the table and plots here."),
    output: str = typer.Option("table", "--output", "-o", help="What to print: table (llama-bench's shape), json, csv or none."),
    label: Optional[str] = typer.Option(None, help="A name for this profile in comparisons (e.g. spec-on)."),
    api: str = typer.Option("chat", help="chat (chat completions) or completions (raw prompt)."),
    ignore_eos: bool = typer.Option(True, help="Send ignore_eos so every request generates exactly --tg tokens (llama-server, vLLM); --no-ignore-eos for servers that refuse it."),
    extra_body: Optional[str] = typer.Option(None, help="JSON object of server-specific fields sent with every request."),
    timeout: float = typer.Option(600.0, help="Seconds one request may take."),
    seed: int = typer.Option(0, help="Where in the packs' text the prompts start."),
    warmup: bool = typer.Option(True, help="One short request before the first test."),
    compare_with: Optional[Tuple[Path, Path]] = typer.Option(None, "--compare", metavar="A.json B.json", help="Instead of measuring: compare two profiles (as `evalsuite compare A.json B.json`)."),
    serve: Optional[str] = typer.Option(None, metavar="COMMAND", help='Start this server command, profile it, restart it if it dies (as `run` does), stop it at the end; {port} is a free port.'),
    set_: List[str] = typer.Option([], "--set", metavar="NAME=V1,V2", help="With --serve: one managed server and one profile per setting, as `sweep` (values of a {NAME} placeholder; repeat for more, crossed); then the compare and RUN_DIR/report.html."),
    run_dir: Optional[Path] = typer.Option(None, help="With --set: the folder of the profiles (default results/speed-sweep-<time>)."),
    serve_timeout: float = typer.Option(600.0, help="With --serve: seconds the server may take to become ready."),
    max_restarts: int = typer.Option(3, min=0, metavar="N", help="With --serve: restarts of a server that dies or hangs."),
    serve_hang_timeout: float = typer.Option(120.0, help="With --serve: a server whose /v1/models has not answered this long is killed and restarted."),
    api_key_env: Optional[str] = typer.Option(None, help="Environment variable holding the API key (default OPENAI_API_KEY)."),
    replay: Optional[Path] = typer.Option(None, "--replay", metavar="FILE", help="Replay a logged conversation (OpenAI chat JSONL: one message a line, or one conversation a line) turn by turn, each assistant turn sent with everything before it: per-turn context, cached tokens, TTFT, prefill and decode; mean/median decode, jitter (CV), worst turn, retention, cache hit share."),
    session: Optional[int] = typer.Option(None, "--session", metavar="TURNS", help="A synthetic session from the packs' text: TURNS turns whose context grows to --depth (the last), --tg tokens a turn; reported as --replay."),
    rate: Optional[str] = typer.Option(None, "--rate", metavar="R,R", help="Load by arrival rate: requests per second (Poisson, seeded; inf: all at once), e.g. 0.5,1,2,inf: TTFT/ITL/TPOT p50/p90/p99, goodput with --slo, the knee, the client's lag behind the schedule. With --replay/--session, sessions arrive at the rate. -e URL1,URL2 spreads them over endpoints."),
    slo: Optional[str] = typer.Option(None, "--slo", metavar="LIST", help="With --rate: limits a request must meet to count as good, e.g. ttft=1s,tpot=60ms (also itl=, e2e=, share=0.9: the share of requests a rate needs to be within the SLO)."),
    requests: int = typer.Option(60, "--requests", metavar="N", help="With --rate: requests (or sessions) per rate."),
    rate_seed: int = typer.Option(0, "--rate-seed", metavar="N", help="With --rate: the seed of the Poisson arrivals (the same seed, the same schedule)."),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """Speed profile of an endpoint, llama-bench style: prefill and decode t/s per depth and concurrency, TTFR/TTFT, speculative acceptance, on the packs' own text (docs/speed.md)."""
    from .speed.command import speed_cli

    raise typer.Exit(speed_cli(
        endpoint=endpoint, model=model, pp=pp, tg=tg, depth=depth, concurrency=concurrency, runs=runs, workload=workload,
        prefix_cache=prefix_cache, duration=duration, data_dir=data_dir, json_path=json_out, html_path=html,
        output=output, label=label, api=api, ignore_eos=ignore_eos, extra_body=extra_body, timeout=timeout, seed=seed,
        warmup=warmup, compare=compare_with, serve=serve, sets=set_, run_dir=run_dir, serve_timeout=serve_timeout,
        max_restarts=max_restarts, serve_hang_timeout=serve_hang_timeout, api_key_env=api_key_env, quiet=quiet,
        replay=replay, session_turns=session, rate=rate, slo=slo, requests=requests, rate_seed=rate_seed,
        argv=tuple(["evalsuite"] + sys.argv[1:]), echo=typer.echo))


@app.command("svg-render")
def svg_render(
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run folder of the svg pack."),
    size: int = typer.Option(512, min=16, max=4096, metavar="PIXELS", help="Width and height of each PNG."),
    timeout: float = typer.Option(20.0, help="Seconds one render may take."),
    force: bool = typer.Option(False, help="Render again even where RUN/renders/ has a PNG."),
    judge_endpoint: Optional[str] = typer.Option(None, help="Also ask this OpenAI-compatible endpoint to score each SVG (writes RUN/judge.jsonl)."),
    judge_model: Optional[str] = typer.Option(None, help="Judge model id (default: the first one the judge endpoint lists)."),
    judge_api_key_env: str = typer.Option("OPENAI_API_KEY", help="Environment variable holding the judge's API key."),
) -> None:
    """Render each SVG answer safely to RUN/renders/<id>.png (and optionally judge it)."""
    from .svg.render import svg_render_main

    raise typer.Exit(svg_render_main(run_dir, size=size, timeout=timeout, force=force, judge_endpoint=judge_endpoint,
                                     judge_model=judge_model, judge_api_key_env=judge_api_key_env, echo=typer.echo))


@app.command()
def gallery(
    run_dirs: List[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders of the svg pack, shown side by side."),
    output: Path = typer.Option(Path("gallery.html"), "--output", "-o", help="The HTML file to write."),
    render: bool = typer.Option(True, help="Render missing PNGs into each RUN/renders/ first (--no-render: use what is there)."),
    size: int = typer.Option(512, min=16, max=4096, metavar="PIXELS"),
    timeout: float = typer.Option(20.0, help="Seconds one render may take."),
) -> None:
    """One self-contained HTML page: each prompt, every run's render, stats and rule checks."""
    from .analysis.gallery import gallery_main

    raise typer.Exit(gallery_main(run_dirs, output, render=render, size=size, timeout=timeout, echo=typer.echo))


@app.command()
def compare(
    runs: List[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders (or speed profiles' JSON); each is compared against the first."),
    sweep: Optional[str] = typer.Option(None, help="Order the runs by this setting and print one sweep table (a manifest key, or a key in decoding / decoding.extra_body, e.g. label, max_tokens, thinking_budget)."),
    alpha: float = typer.Option(0.05, help="Significance level of the exact McNemar tests."),
    plots: Optional[Path] = typer.Option(None, help="Write the PNG plots into this folder."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the figures as JSON to this file."),
    first_correct: bool = typer.Option(False, help="Also find the tokens to the first correct answer inside each reasoning (grades its prefixes; bounded in time): found later, or checked longer?"),
    equivalence_margin: Optional[float] = typer.Option(None, help="Also say, for each run vs the first, whether accuracy is equivalent within ±this many points (TOST), worse, or undecided with the items needed."),
    use_judge: bool = typer.Option(False, help="Count the judge's verdict where it decided (default: rule verdicts only)."),
) -> None:
    """Accuracy (Wilson 95%), exact McNemar vs the first run, per-subset deltas, reasoning length and time to solution.
    Of speed profiles (JSON from `evalsuite speed --json`): the speedup of each row, with its interval."""
    from .speed.rows import is_profile_file

    if runs and all(is_profile_file(p) for p in runs):
        from .speed.compare import compare_main as speed_compare

        raise typer.Exit(speed_compare(runs, json_path=json_out))
    from .analysis.compare.tables import compare_main

    raise typer.Exit(compare_main(runs, sweep_key=sweep, alpha=alpha, plots_dir=plots, json_path=json_out,
                                  equivalence_margin=equivalence_margin, first_correct=first_correct,
                                  use_judge=use_judge))


@app.command()
def gate(
    baseline: Optional[Path] = typer.Option(None, help="The baseline run folder."),
    candidate: Optional[Path] = typer.Option(None, help="The candidate run folder."),
    max_drop: Optional[float] = typer.Option(None, help="Fail when accuracy drops by more than this many percentage points (and significantly)."),
    alpha: Optional[float] = typer.Option(None, help="Significance of the drop, exact McNemar (default 0.05; 1 drops the condition)."),
    min_items: Optional[int] = typer.Option(None, help="Exit 2 when fewer paired items than this (default 1)."),
    diff: Optional[Path] = typer.Option(None, help="JSON from `evalsuite diff --json`; its counts.real and counts.undetermined are checked. Alone (no --baseline/--candidate): a diff-only gate."),
    max_real: Optional[int] = typer.Option(None, help="With --diff: fail when more than this many real divergences (default 0)."),
    max_undetermined: Optional[int] = typer.Option(None, help="With --diff: fail when more than this many undetermined items (default 0: one may hide a real divergence)."),
    equivalence_margin: Optional[float] = typer.Option(None, help="Pass only when the paired accuracy difference's (1 − 2α) interval (90% at α 0.05) lies inside ±this many points (TOST): equivalent / worse / undecided: N more items."),
    junit: Optional[Path] = typer.Option(None, help="Write a JUnit XML report here."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the verdict, each check and its figures as JSON here."),
    max_errors: Optional[str] = typer.Option(None, help="Fail when more candidate items errored than this: a count, or a percentage like 2% (default: no more than the baseline)."),
    allow_underpowered: bool = typer.Option(False, help="Run a gate too small to detect --max-drop anyway (a loud warning instead of exit 2)."),
    use_judge: bool = typer.Option(False, help="Count the judge's verdict where it decided (default: rule verdicts only)."),
    allow_settings_mismatch: bool = typer.Option(False, help="Gate runs made with settings that change the answers (prompt template, decoding, item set) anyway: the differences are printed and written in the JUnit/JSON output instead of exit 2."),
) -> None:
    """CI gate: exit 0 pass, 1 fail, 2 unusable input. Defaults may live in pyproject.toml [tool.evalsuite.gate]."""
    from .analysis.gate.decide import gate_main

    raise typer.Exit(gate_main(baseline, candidate, max_drop=max_drop, alpha=alpha, min_items=min_items,
                               diff=diff, max_real=max_real, junit=junit, max_errors=max_errors,
                               allow_underpowered=allow_underpowered, max_undetermined=max_undetermined,
                               equivalence_margin=equivalence_margin, json_path=json_out, use_judge=use_judge,
                               allow_settings_mismatch=allow_settings_mismatch))


@app.command()
def report(
    runs: List[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders (or speed profiles' JSON); each is compared against the first."),
    output: Path = typer.Option(Path("report.html"), "--output", "-o", help="The HTML file to write."),
    diff: Optional[Path] = typer.Option(None, help="JSON from `evalsuite diff --json`: its divergences go in the page."),
    samples: int = typer.Option(8, min=0, metavar="N", help="Sample transcripts to include (disagreements first)."),
    alpha: float = typer.Option(0.05, help="Significance level of the exact McNemar tests."),
) -> None:
    """One self-contained HTML page: tables, plots, verdict, sample transcripts (reasoning folded).
    Of speed profiles (JSON): their tables, the speedups against the first, the plots."""
    from .speed.rows import is_profile_file

    if runs and all(is_profile_file(p) for p in runs):
        from .speed.html import report_main as speed_report

        raise typer.Exit(speed_report(runs, output))
    from .analysis.report import report_main

    raise typer.Exit(report_main(runs, output, diff=diff, samples=samples, alpha=alpha))


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
            raise SystemExit(2) from None


def main() -> None:
    _check_grader_settings()
    command = typer.main.get_command(app)
    # an argument with a metavar shows only it in --help (`RUN_DIR`, not `RUN_DIR <list[Path]>`)
    for sub in getattr(command, "commands", {}).values():
        for param in sub.params:
            if isinstance(param, typer.core.TyperArgument) and param.metavar:
                param.display_type_rich = lambda ctx: None
    command()


if __name__ == "__main__":
    main()
