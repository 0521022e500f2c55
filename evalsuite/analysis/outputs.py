"""Output paths checked before any analysis runs: a path that cannot be written is a usage
error (exit 2) said in one line, never a traceback after the verdict was printed (exit 1 reads
as "fail" to a CI)."""
from __future__ import annotations

import os
from pathlib import Path


class OutputError(ValueError):
    """An output path that cannot be written; the message names the option and the path."""


def check_writable(path: str | os.PathLike, option: str, folder: bool = False) -> Path:
    """Raise OutputError unless `path` can be written: a file (or, with folder=True, a folder
    that is created when missing) whose parent exists and is writable. Nothing is created."""
    p = Path(path)
    if folder:
        existing = p
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if existing.exists() and not existing.is_dir():
            raise OutputError(f"{option} {p}: {existing} is a file, not a folder")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise OutputError(f"{option} {p}: {existing} is not writable")
        return p
    if p.is_dir():
        raise OutputError(f"{option} {p}: is a folder, not a file")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise OutputError(f"{option} {p}: the folder {parent} does not exist")
    if p.exists() and not os.access(p, os.W_OK):
        raise OutputError(f"{option} {p}: the file is not writable")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{option} {p}: the folder {parent} is not writable")
    return p
