"""Reading a pack's rows: local original-format files, or a hub dataset through `datasets`.

With a data folder (--data-dir / EVALSUITE_DATA_DIR, laid out like shared/data) the files are
read with the standard library's json and csv readers: exact for these formats, offline, and
without the 1.5 CPU-seconds that importing `datasets` costs. Without one, `datasets` fetches
the hub id (online users). Either way the rows come back as plain dicts in file order, so an
item's index -- its stable id -- is the same on both paths.
"""
from __future__ import annotations

import csv
import json
import threading
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Iterator

from .pack import BadDataError

MAX_ROWS = 1_000_000


def require_file(data_dir: Path, relpath: str, pack: str) -> Path:
    path = Path(data_dir) / relpath
    if not Path(data_dir).is_dir():
        raise BadDataError(f"{pack}: data folder {data_dir} does not exist")
    if not path.is_file():
        raise BadDataError(f"{pack}: expected {relpath} under the data folder {data_dir} "
                           f"(layout: gsm8k/test.jsonl, math500/test.jsonl, agieval/*.jsonl, "
                           f"ceval/val/*.csv, cmmlu/test/*.csv)")
    return path


BUNDLED = Path(__file__).resolve().parent / "data"   # official files the package carries (data/README.md)


def bundled_file(relpath: str) -> Path:
    """A data file shipped inside the package, laid out as under a data folder."""
    return BUNDLED / relpath


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise BadDataError(f"{path}: row {n} is not valid JSON ({e.msg})") from None
            if not isinstance(row, dict):
                raise BadDataError(f"{path}: row {n} is not a JSON object")
            rows.append(row)
            if len(rows) > MAX_ROWS:
                raise BadDataError(f"{path}: more than {MAX_ROWS} rows")
    return rows


def read_csv(path: Path) -> list[dict[str, Any]]:
    # newline="" lets csv handle CRLF and line breaks inside quoted fields (C-Eval has both)
    with open(path, encoding="utf-8-sig", newline="") as f:
        return list(csv.DictReader(f))


OFFLINE_HINT = "use --data-dir DIR (or set EVALSUITE_DATA_DIR) with the original files"


def unreachable(url: str, timeout: float = 5.0) -> str | None:
    """Why the host of `url` cannot be reached (DNS or connect), or None when it can: asked after
    a download failed, so that "offline" is said as such instead of "file not found"."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url if "://" in url else "https://" + url)
    host = "huggingface.co" if parts.scheme == "hf" else parts.hostname or ""
    port = parts.port or (80 if parts.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except socket.gaierror as e:
        return f"offline: the host {host} does not resolve (DNS: {e.strerror or e})"
    except OSError as e:
        return f"offline: cannot connect to {host}:{port} ({e.strerror or e})"
    return None


def hub_url() -> str:
    """The hub `datasets` downloads from (HF_ENDPOINT, as huggingface_hub reads it)."""
    import os

    return os.environ.get("HF_ENDPOINT") or "https://huggingface.co"


def read_hub(hub_id: str, config: str | None, split: str) -> list[dict[str, Any]]:
    # One quick check first: offline, `datasets` would retry the hub for half a minute (six
    # retry lines) before failing. Unreachable, the hub is not asked: the local `datasets` cache
    # is tried alone (offline mode for this load only), and without the dataset there, "offline"
    # is said at once.
    offline = unreachable(hub_url(), timeout=3.0)
    from datasets import load_dataset  # lazy: only online users pay for it

    try:
        with hub_offline() if offline else nullcontext():
            dataset = load_dataset(hub_id, config, split=split)
    except Exception as e:  # offline, unknown id, ... -- say what was tried and how to go offline
        offline = offline or unreachable(hub_url())
        if offline:
            raise BadDataError(f"{offline}: could not load {hub_id} from the hub (nor from the local datasets "
                               f"cache); {OFFLINE_HINT}") from None
        raise BadDataError(
            f"could not load {hub_id}{'/' + config if config else ''} [{split}] from the hub ({type(e).__name__}: {e}). "
            f"Offline, pass --data-dir DIR (or set EVALSUITE_DATA_DIR) with the original files.") from None
    return [dict(row) for row in dataset]


# The environment variables `datasets` and `huggingface_hub` read at import (and child processes
# read); once imported, their module settings below hold the switch.
OFFLINE_ENV = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
_OFFLINE_LOCK = threading.Lock()


@contextmanager
def hub_offline() -> Iterator[None]:
    """Cache only while inside, then every switch as it was: the hub found unreachable once does
    not keep a notebook or a long-lived process (the Python API) offline after the network is back."""
    import os

    import datasets.config
    import huggingface_hub.constants

    with _OFFLINE_LOCK:   # two loads in threads: the second must not save the first's "offline"
        switches = [(module, name, getattr(module, name))
                    for module, name in ((datasets.config, "HF_HUB_OFFLINE"), (datasets.config, "HF_DATASETS_OFFLINE"),
                                         (huggingface_hub.constants, "HF_HUB_OFFLINE"))
                    if hasattr(module, name)]
        env = {name: os.environ.get(name) for name in OFFLINE_ENV}
        try:
            os.environ.update(dict.fromkeys(OFFLINE_ENV, "1"))
            for module, name, _ in switches:
                setattr(module, name, True)
            yield
        finally:
            for module, name, old in switches:
                setattr(module, name, old)
            for name, old in env.items():
                if old is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = old
