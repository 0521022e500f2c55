"""`evalsuite speed --serve "llama-server -m {model} --port {port}" --set model=q4.gguf,iq3_s.gguf`:
one managed server and one speed profile per setting, as `evalsuite sweep` runs one pack run per
setting (the settings are made by sweep.py: --set crossed, labels from the values). Each profile
goes to ROOT/NN-label.json (its server log in ROOT/NN-label/), then every profile is compared
with the first and ROOT/report.html drawn."""
from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from .endpoint import UsageError, sweep_commands
from .settings import SpeedSettings


def speed_sweep(settings: SpeedSettings, sets: Sequence[str], root: Path | None,
                speed_main: Callable[..., int], echo: Callable[[str], None] | None = None) -> int:
    """0 every profile finished cleanly; else the worst exit code of a profile (2 bad usage).
    `speed_main(settings, echo=...)`: one profile, its exit code (command.speed_main)."""
    out = echo or print
    try:
        if not settings.serve:
            raise UsageError("--set needs --serve: a server command with {NAME} placeholders, one profile per setting")
        commands = sweep_commands(settings.serve, list(sets))
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    root = root or Path("results") / f"speed-sweep-{time.strftime('%Y%m%d-%H%M%S')}"
    root.mkdir(parents=True, exist_ok=True)
    codes, paths = [], []
    for n, (label, folder, command) in enumerate(commands, 1):
        path = root / f"{folder}.json"
        if not settings.quiet:
            print(f"[{n}/{len(commands)}] {label}: {command} -> {path}", file=sys.stderr)
        code = speed_main(replace(settings, serve=command, label=label, json_path=path, server_folder=root / folder,
                                  html_path=None), echo=out)
        codes.append(code)
        if path.exists():
            paths.append(path)
        if code == 2:
            return code
    if len(paths) > 1:
        from .compare import compare_main
        from .html import report_main

        out("")
        compare_main(paths)
        report_main(paths, root / "report.html")
    return max(codes) if codes else 0
