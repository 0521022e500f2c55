"""The `evalsuite` command. Every command imports what it needs inside its function, so
`evalsuite --help` costs only typer."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode=None,
                  help="Does your LLM endpoint still give the right answers? Run task packs against "
                       "OpenAI-compatible servers, then diff, compare and gate the runs.")

DEFAULT_ENDPOINT = "http://127.0.0.1:8080/v1"  # llama.cpp's llama-server default


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@app.command()
def run(
    pack: str = typer.Argument(..., metavar="PACK", help="Pack or preset name (see `evalsuite tasks`)."),
    endpoint: List[str] = typer.Option([], "--endpoint", "-e", metavar="URL", help=f"Base URL of an OpenAI-compatible server; repeat to spread items over replicas. Default {DEFAULT_ENDPOINT}."),
    model: Optional[str] = typer.Option(None, help="Model id to request (default: the first one /v1/models lists)."),
    api: str = typer.Option("chat", help="chat (chat completions) or completions (raw prompt)."),
    concurrency: int = typer.Option(4, min=1, metavar="N", help="Requests in flight per endpoint."),
    limit: Optional[int] = typer.Option(None, min=1, metavar="N", help="Only the first N items (after --subset/--per-subset)."),
    subset: Optional[str] = typer.Option(None, help="Comma-separated subsets (or groups) of the pack."),
    per_subset: Optional[int] = typer.Option(None, min=1, metavar="N", help="Seeded stratified subsample: N items per subset."),
    seed: int = typer.Option(0, help="Seed of the --per-subset subsample."),
    fewshot: int = typer.Option(0, min=0, metavar="N", help="Few-shot examples from the dev split (packs that have one)."),
    data_dir: Optional[Path] = typer.Option(None, envvar="EVALSUITE_DATA_DIR", help="Offline data folder laid out like shared/data (default: the hub)."),
    skip_bad_rows: bool = typer.Option(False, help="Skip dataset rows without a usable gold answer instead of stopping."),
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
    stream: bool = typer.Option(True, help="Stream responses (time to first token). --no-stream for servers whose streams lack usage."),
    label: Optional[str] = typer.Option(None, help="A name for this run in comparisons (e.g. spec-on, IQ3_XXS)."),
    api_key_env: Optional[str] = typer.Option(None, help="Environment variable holding the API key (default OPENAI_API_KEY). Keys are never written anywhere."),
    check_model: bool = typer.Option(True, help="Refuse a --model the endpoint does not list."),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """Run a pack against an endpoint; records stream to RUN_DIR/records.jsonl."""
    import json
    import time

    from .client import Decoding
    from .errors import RetryPolicy
    from .runner import RunSettings, UsageError, run as run_pack

    if api not in ("chat", "completions"):
        _fail(f"--api must be chat or completions, not {api!r}")
    if resume and run_dir and resume != run_dir:
        _fail("give either --run-dir or --resume, not both")
    if retry_errors and not resume:
        _fail("--retry-errors needs --resume RUN_DIR")
    extra = {}
    if extra_body:
        try:
            extra = json.loads(extra_body)
        except json.JSONDecodeError as e:
            _fail(f"--extra-body is not valid JSON: {e}")
        if not isinstance(extra, dict):
            _fail("--extra-body must be a JSON object")
    folder = resume or run_dir or Path("results") / f"{pack}-{time.strftime('%Y%m%d-%H%M%S')}{'-' + label if label else ''}"
    settings = RunSettings(
        pack=pack, endpoints=tuple(endpoint or [DEFAULT_ENDPOINT]), run_dir=folder, model=model, api=api,
        decoding=Decoding(temperature=temperature, top_p=top_p, seed=request_seed, max_tokens=max_tokens,
                          stop=tuple(stop), reasoning_effort=reasoning_effort, logprobs=logprobs, extra_body=extra),
        concurrency=concurrency, timeout=timeout, retry=RetryPolicy(max_retries=max_retries),
        max_downtime=max_downtime, data_dir=data_dir,
        subsets=tuple(s.strip() for s in subset.split(",") if s.strip()) if subset else (),
        per_subset=per_subset, seed=seed, fewshot=fewshot, limit=limit, skip_bad_rows=skip_bad_rows, label=label,
        resume=resume is not None, retry_errors=retry_errors, api_key_env=api_key_env, quiet=quiet,
        check_model=check_model, stream=stream, argv=tuple(["evalsuite"] + sys.argv[1:]), samples=samples,
    )
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
    import json

    from .analysis.summary import format_summary, summarize
    from .store import RunFolderError, finish_pending, load_run

    try:
        run_ = load_run(run_dir, drop=("messages", "prompt", "answer", "reasoning", "server_timings"))
    except RunFolderError as e:
        _fail(str(e))
    pending = finish_pending(run_)
    if pending:
        typer.echo(f"note: {pending}", err=True)
    summary = summarize(run_.manifest, run_.records)
    typer.echo(json.dumps(summary, ensure_ascii=False, indent=2) if json_out else format_summary(summary, run_.manifest))


@app.command()
def tasks() -> None:
    """List the packs and presets, their item counts and where their data comes from."""
    from .tasks import get_pack, pack_names

    rows = []
    from .tasks.presets import PRESETS

    packs = [(name, get_pack(name)) for name in pack_names()] + [(name, make()) for name, make in PRESETS.items()]
    for name, pack in packs:
        rows.append((name, "" if pack.count is None else str(pack.count), pack.description, pack.source))
    width = max(len(r[0]) for r in rows)
    typer.echo(f"{'pack'.ljust(width)}  {'items':>6}  description / data")
    for name, count, desc, source in rows:
        typer.echo(f"{name.ljust(width)}  {count:>6}  {desc}")
        typer.echo(f"{''.ljust(width)}  {'':>6}  data: {source}")


# --- analysis commands ---


@app.command("regrade")
def regrade_cmd(
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="The run folder to re-grade (it is not modified)."),
    data_dir: Optional[Path] = typer.Option(None, envvar="EVALSUITE_DATA_DIR", help="Offline data folder, to reload items (option texts) for choice packs."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the changed verdicts as JSON here."),
) -> None:
    """Re-grade stored answers with the current graders (no endpoint); list every changed verdict."""
    import json

    from .analysis.outputs import OutputError, check_writable
    from .analysis.regrade import regrade, summarise
    from .store import RunFolderError, load_run

    try:
        if json_out:
            check_writable(json_out, "--json")
        n_records = len(load_run(run_dir).records)
        changes = regrade(run_dir, data_dir=data_dir)
    except (RunFolderError, OutputError, ValueError, KeyError) as e:
        _fail(str(e))
    for c in changes:
        typer.echo(f"{c.id}\t{c.old_equal} -> {c.new_equal}\t{c.old_extracted!r} -> {c.new_extracted!r}\t[{c.new_method}] {c.reason}")
    typer.echo(summarise(changes, n_records))
    if json_out:
        json_out.write_text(json.dumps([c.to_dict() for c in changes], ensure_ascii=False, indent=2), encoding="utf-8")


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
) -> None:
    """Speculation on vs off (or any serving change): identical, near-tie flip, or real divergence, per item."""
    from .lossless.command import diff_main

    raise typer.Exit(diff_main(baseline, candidate, tau=tau, precision=precision, json_path=json_out, html_path=html,
                               fail_on=fail_on, rescore_endpoint=rescore, echo=typer.echo, api_key_env=api_key_env))


@app.command()
def lossless(
    pack: str = typer.Argument(..., metavar="PACK", help="Pack or preset name."),
    baseline_endpoint: str = typer.Option(..., help="Base URL of the reference server (e.g. speculation off)."),
    candidate_endpoint: str = typer.Option(..., help="Base URL of the server under test (e.g. speculation on)."),
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
        temperature=temperature), echo=typer.echo))


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
    import os

    from .store import RunFolderError
    from .svg_render import render_run

    try:
        entries = render_run(run_dir, size=size, timeout_s=timeout, force=force)
    except (RunFolderError, ValueError) as e:
        _fail(str(e))
    counts: dict = {}
    for e in entries:
        counts[e.status] = counts.get(e.status, 0) + 1
    blank = sum(1 for e in entries if e.blank)
    typer.echo(f"{run_dir}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + f"; {blank} blank")
    if judge_endpoint:
        from .svg_judge import judge_run

        results = judge_run(run_dir, judge_endpoint, judge_model, api_key=os.environ.get(judge_api_key_env))
        scored = [r.score for r in results if r.score is not None]
        mean = f"{sum(scored) / len(scored):.2f}" if scored else "—"
        typer.echo(f"judge: {len(scored)}/{len(results)} scored, mean {mean} -> {run_dir / 'judge.jsonl'}")


@app.command()
def gallery(
    run_dirs: List[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders of the svg pack, shown side by side."),
    output: Path = typer.Option(Path("gallery.html"), "--output", "-o", help="The HTML file to write."),
    render: bool = typer.Option(True, help="Render missing PNGs into each RUN/renders/ first (--no-render: use what is there)."),
    size: int = typer.Option(512, min=16, max=4096, metavar="PIXELS"),
    timeout: float = typer.Option(20.0, help="Seconds one render may take."),
) -> None:
    """One self-contained HTML page: each prompt, every run's render, stats and rule checks."""
    from .analysis.gallery import write_gallery
    from .store import RunFolderError

    try:
        path = write_gallery(run_dirs, output, render=render, size=size, timeout_s=timeout)
    except (RunFolderError, ValueError) as e:
        _fail(str(e))
    typer.echo(f"wrote {path}")


@app.command()
def compare(
    runs: List[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders; each is compared against the first."),
    sweep: Optional[str] = typer.Option(None, help="Order the runs by this setting and print one sweep table (a manifest key, or a key in decoding / decoding.extra_body, e.g. label, max_tokens, thinking_budget)."),
    alpha: float = typer.Option(0.05, help="Significance level of the exact McNemar tests."),
    plots: Optional[Path] = typer.Option(None, help="Write the PNG plots into this folder."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the figures as JSON to this file."),
) -> None:
    """Accuracy (Wilson 95%), exact McNemar vs the first run, per-subset deltas, reasoning length and time to solution."""
    from .analysis.compare_tables import compare_main

    raise typer.Exit(compare_main(runs, sweep_key=sweep, alpha=alpha, plots_dir=plots, json_path=json_out))


@app.command()
def gate(
    baseline: Optional[Path] = typer.Option(None, help="The baseline run folder."),
    candidate: Optional[Path] = typer.Option(None, help="The candidate run folder."),
    max_drop: Optional[float] = typer.Option(None, help="Fail when accuracy drops by more than this many percentage points (and significantly)."),
    alpha: Optional[float] = typer.Option(None, help="Significance of the drop, exact McNemar (default 0.05; 1 drops the condition)."),
    min_items: Optional[int] = typer.Option(None, help="Exit 2 when fewer paired items than this (default 1)."),
    diff: Optional[Path] = typer.Option(None, help="JSON from `evalsuite diff --json`; its counts.real is checked."),
    max_real: Optional[int] = typer.Option(None, help="With --diff: fail when more than this many real divergences (default 0)."),
    junit: Optional[Path] = typer.Option(None, help="Write a JUnit XML report here."),
    max_errors: Optional[str] = typer.Option(None, help="Fail when more candidate items errored than this: a count, or a percentage like 2% (default: no more than the baseline)."),
    allow_underpowered: bool = typer.Option(False, help="Run a gate too small to detect --max-drop anyway (a loud warning instead of exit 2)."),
) -> None:
    """CI gate: exit 0 pass, 1 fail, 2 unusable input. Defaults may live in pyproject.toml [tool.evalsuite.gate]."""
    from .analysis.gate import gate_main

    raise typer.Exit(gate_main(baseline, candidate, max_drop=max_drop, alpha=alpha, min_items=min_items,
                               diff=diff, max_real=max_real, junit=junit, max_errors=max_errors,
                               allow_underpowered=allow_underpowered))


@app.command()
def report(
    runs: List[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders; each is compared against the first."),
    output: Path = typer.Option(Path("report.html"), "--output", "-o", help="The HTML file to write."),
    diff: Optional[Path] = typer.Option(None, help="JSON from `evalsuite diff --json`: its divergences go in the page."),
    samples: int = typer.Option(8, min=0, metavar="N", help="Sample transcripts to include (disagreements first)."),
    alpha: float = typer.Option(0.05, help="Significance level of the exact McNemar tests."),
) -> None:
    """One self-contained HTML page: tables, plots, verdict, sample transcripts (reasoning folded)."""
    from .analysis.report import report_main

    raise typer.Exit(report_main(runs, output, diff=diff, samples=samples, alpha=alpha))


def main() -> None:
    command = typer.main.get_command(app)
    # an argument with a metavar shows only it in --help (`RUN_DIR`, not `RUN_DIR <list[Path]>`)
    for sub in getattr(command, "commands", {}).values():
        for param in sub.params:
            if isinstance(param, typer.core.TyperArgument) and param.metavar:
                param.display_type_rich = lambda ctx: None
    command()


if __name__ == "__main__":
    main()
