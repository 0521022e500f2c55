"""What one `evalsuite run` is asked to do: every setting the CLI, the Python API, `sweep` and
`lossless` pass to runner.run(), in one frozen value (docs/cli.md names each option)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .exchange import Decoding
from .errors import RetryPolicy


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
