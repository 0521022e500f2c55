"""The command that resumes a run: the original command line with --resume RUN_DIR. Apart from
manifest.py (which imports the packs' dataset fingerprint) so the lossless command can print it
without reaching the packs."""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Sequence


def resume_command(argv: Sequence[str], run_dir: Path) -> str:
    """The original command with --run-dir/--resume replaced by --resume RUN_DIR."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("--run-dir", "--resume"):
            skip = True
            continue
        if arg.startswith(("--run-dir=", "--resume=")) or arg == "--retry-errors":
            continue
        out.append(arg)
    return shlex.join(out + ["--resume", str(run_dir)])
