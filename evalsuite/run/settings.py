"""What one `evalsuite run` is asked to do: every setting the CLI, the Python API, `sweep` and
`lossless` pass to runner.run(), in one frozen value (docs/cli.md names each option).
settings_from_options turns the `run` command's options into one, checked."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..client.exchange import Decoding
from ..client.errors import RetryPolicy
from ..errors import UsageError


@dataclass(frozen=True)
class RunSettings:
    pack: str
    endpoints: tuple[str, ...]
    run_dir: Path
    model: str | None = None
    api: str = "chat"
    decoding: Decoding = field(default_factory=Decoding)
    concurrency: int = 4
    timeout: float = 600.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_downtime: float = 300.0
    data_dir: Path | None = None
    subsets: tuple[str, ...] = ()
    per_subset: int | None = None
    seed: int = 0
    fewshot: int = 0
    limit: int | None = None
    skip_bad_rows: bool = False
    label: str | None = None
    resume: bool = False
    retry_errors: bool = False
    api_key_env: str | None = None
    quiet: bool = False
    check_model: bool = True
    stream: bool = True
    argv: tuple[str, ...] = ()
    file_options: Any = None       # tasks.file.FileOptions for a PACK that is a file or hf:NAME
    judge: Any = None              # judge.JudgeSettings: --judge-endpoint (evalsuite/judge.py)
    # a managed server (evalsuite.serve): the command evalsuite starts, watches and restarts
    serve: str | None = None
    serve_timeout: float = 600.0
    max_restarts: int = 3
    serve_hang_timeout: float = 120.0
    managed: Any = None          # its Supervisor, set by serve.serve_and_run while the run goes
    samples: int = 1     # answers per item (docs/sampling.md): sample j is asked with seed = decoding.seed + j
    skipped_rows: tuple[tuple[str, str], ...] = ()   # (where, why) of the rows --skip-bad-rows left out
    endpoint_option: str = "--endpoint"   # the option that named the endpoints, for messages (lossless: --baseline-endpoint)


def settings_from_options(
    pack: str, *, endpoint: Sequence[str], model: str | None, api: str, concurrency: int, limit: int | None,
    subset: str | None, per_subset: int | None, seed: int, fewshot: int, data_dir: Path | None, skip_bad_rows: bool,
    fields: str | None, kind: str | None, template: str | None, split: str | None, judge_endpoint: str | None,
    judge_model: str | None, judge_api_key_env: str | None, run_dir: Path | None, resume: Path | None,
    retry_errors: bool, temperature: float, top_p: float, request_seed: int | None, samples: int,
    max_tokens: int | None, stop: Sequence[str], reasoning_effort: str | None, logprobs: int | None,
    extra_body: str | None, timeout: float, max_retries: int, max_downtime: float, serve: str | None,
    serve_timeout: float, max_restarts: int, serve_hang_timeout: float, stream: bool, label: str | None,
    api_key_env: str | None, check_model: bool, quiet: bool, default_endpoint: str, argv: Sequence[str],
) -> RunSettings:
    """`evalsuite run`'s options (each by its option's name), checked, as one RunSettings; a
    UsageError names the option that is wrong. With --model FILE.gguf and neither --endpoint nor
    --serve, the run serves the file itself when nothing answers at `default_endpoint`
    (serve/embedded.py); the default run folder is results/<pack>-<time>[-<label>]."""
    import json
    import time

    if api not in ("chat", "completions"):
        raise UsageError(f"--api must be chat or completions, not {api!r}")
    if resume and run_dir and resume != run_dir:
        raise UsageError("give either --run-dir or --resume, not both")
    if retry_errors and not resume:
        raise UsageError("--retry-errors needs --resume RUN_DIR")
    extra = {}
    if extra_body:
        try:
            extra = json.loads(extra_body)
        except json.JSONDecodeError as e:
            raise UsageError(f"--extra-body {extra_body!r} is not valid JSON: {e}") from None
        if not isinstance(extra, dict):
            raise UsageError(f"--extra-body {extra_body!r} must be a JSON object")
    if serve and endpoint:
        raise UsageError("give either --endpoint or --serve, not both: --serve starts the server and asks it")
    if not serve and not endpoint and model:
        from ..serve.embedded import embedded_server

        embedded = embedded_server(pack, model, concurrency, max_tokens, default_endpoint)
        if embedded is not None:
            serve, model = embedded.command, embedded.model
            concurrency = embedded.concurrency or concurrency
            stream = stream if embedded.stream is None else embedded.stream
            if embedded.note and not quiet:
                print(f"note: {embedded.note}", file=sys.stderr)
    from ..tasks.file import is_file_pack

    # a file pack's folder is named by the file's stem (a path given would nest folders)
    folder_name = Path(pack.removeprefix("hf:")).name.rsplit(".", 1)[0] if is_file_pack(pack) else pack
    folder = resume or run_dir or Path("results") / f"{folder_name}-{time.strftime('%Y%m%d-%H%M%S')}{'-' + label if label else ''}"
    file_options = judge = None
    try:
        if fields or kind or template or split:
            from ..tasks.file import FileOptions, parse_fields

            if not is_file_pack(pack):
                raise UsageError(f"--fields, --kind, --template and --split apply to your own questions (a .jsonl/.json/.csv/"
                                 f".parquet/.toml file or hf:OWNER/NAME), not to the pack {pack!r}")

            file_options = FileOptions(fields=parse_fields(fields), kind=kind, template=template, split=split)
        if judge_endpoint:
            from ..judge import JudgeSettings

            judge = JudgeSettings(endpoint=judge_endpoint, model=judge_model, api_key_env=judge_api_key_env)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return RunSettings(
        pack=pack, endpoints=() if serve else tuple(endpoint or [default_endpoint]), run_dir=folder, model=model, api=api,
        decoding=Decoding(temperature=temperature, top_p=top_p, seed=request_seed, max_tokens=max_tokens,
                          stop=tuple(stop), reasoning_effort=reasoning_effort, logprobs=logprobs, extra_body=extra),
        concurrency=concurrency, timeout=timeout, retry=RetryPolicy(max_retries=max_retries),
        max_downtime=max_downtime, data_dir=data_dir,
        subsets=tuple(s.strip() for s in subset.split(",") if s.strip()) if subset else (),
        per_subset=per_subset, seed=seed, fewshot=fewshot, limit=limit, skip_bad_rows=skip_bad_rows, label=label,
        resume=resume is not None, retry_errors=retry_errors, api_key_env=api_key_env, quiet=quiet,
        check_model=check_model, stream=stream, argv=tuple(argv), samples=samples,
        file_options=file_options, judge=judge,
        serve=serve, serve_timeout=serve_timeout, max_restarts=max_restarts,
        serve_hang_timeout=serve_hang_timeout,
    )
