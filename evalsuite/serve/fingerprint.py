"""What is served, for the manifest's engine.managed entry: the model files and folders the
command names (size and sha256, partial past 1 GiB) and the program's version."""
from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any, Mapping, Sequence

from .process_group import _kill_group

FULL_HASH_MAX = 1 << 30          # files up to 1 GiB are hashed whole
PARTIAL_CHUNK = 16 << 20         # bigger ones: sha256 of the size, the first and the last 16 MiB
PARTIAL_METHOD = "sha256 of the size in bytes, the first 16 MiB and the last 16 MiB"


def file_fingerprint(path: Path) -> dict[str, Any]:
    """Size and sha256 of a model file; for files over 1 GiB a partial hash, said which."""
    size = path.stat().st_size
    h = hashlib.sha256()
    with open(path, "rb") as f:
        if size <= FULL_HASH_MAX:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
            return {"path": str(path), "size": size, "sha256": h.hexdigest()}
        h.update(f"{size}\n".encode())
        h.update(f.read(PARTIAL_CHUNK))
        f.seek(size - PARTIAL_CHUNK)
        h.update(f.read(PARTIAL_CHUNK))
    return {"path": str(path), "size": size, "sha256_partial": h.hexdigest(), "hash_method": PARTIAL_METHOD}


def folder_fingerprint(path: Path) -> dict[str, Any]:
    """A model folder (HF layout): its files' sizes and a partial hash over names, sizes and first MiB."""
    files = sorted(p for p in path.iterdir() if p.is_file())
    h = hashlib.sha256()
    total = 0
    for p in files:
        size = p.stat().st_size
        total += size
        h.update(f"{p.name}\n{size}\n".encode())
        with open(p, "rb") as f:
            h.update(f.read(1 << 20))
    return {"path": str(path), "kind": "folder", "size": total, "files": len(files), "sha256_partial": h.hexdigest(),
            "hash_method": "sha256 of each top-level file's name, size and first MiB, in name order"}


def model_paths(argv: Sequence[str]) -> list[Path]:
    """Every existing file or model folder the command names (after the program itself)."""
    found: list[Path] = []
    for word in argv[1:]:
        value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
        if not value or value.startswith("-") or len(value) > 4096:
            continue
        p = Path(value)
        try:
            if p.is_file() or (p.is_dir() and any((p / n).exists() for n in ("config.json", "model.safetensors"))):
                if p not in found:
                    found.append(p)
        except OSError:
            continue
    return found


def fingerprints(argv: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for p in model_paths(argv):
        try:
            out.append(file_fingerprint(p) if p.is_file() else folder_fingerprint(p))
        except OSError as e:
            out.append({"path": str(p), "error": str(e)})
    return out


def binary_version(argv: Sequence[str], env: Mapping[str, str], timeout: float = 15.0) -> dict[str, Any]:
    """The program's path and what its --version says; for `python -m MODULE` the module's
    distribution version. Bounded: a program that does not know --version and starts serving
    instead is killed after `timeout`."""
    program = shutil.which(argv[0]) or argv[0]
    out: dict[str, Any] = {"binary": str(Path(program).resolve()) if os.path.exists(program) else program}
    if "-m" in argv[1:-1] and Path(program).name.startswith("python"):
        module = argv[argv.index("-m") + 1].split(".")[0]
        probe = [program, "-c", "import importlib.metadata as m, sys; d = m.packages_distributions().get(sys.argv[1]) "
                 "or [sys.argv[1]]; print(d[0], m.version(d[0]))", module]
        out["module"] = module
    else:
        probe = [program, "--version"]
    try:
        proc = subprocess.Popen(probe, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=dict(os.environ, **env))
    except OSError as e:
        out["version"] = None
        out["version_error"] = str(e)
        return out
    try:
        text, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid, signal.SIGKILL)
        proc.communicate()
        out["version"] = None
        out["version_error"] = f"`{' '.join(probe[:2])}` did not end within {timeout:g} s"
        return out
    lines = [ln.strip() for ln in text.decode("utf-8", "replace").splitlines() if ln.strip()]
    out["version"] = " | ".join(lines[:3])[:400] if proc.returncode == 0 or lines else None
    return out
