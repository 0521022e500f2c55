"""The run folder's layout: file names, schema numbers, record keys, the line reader
(records.jsonl: torn last line tolerated, the last record per id wins) and atomic writes.

See docs/records.md for the contract."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator

try:  # 2-3x faster to parse; the stdlib reads what it refuses (NaN, -Infinity)
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None

from .record import RECORD_SCHEMA, SAMPLE_FIELD, TOKEN_FIELD, slim  # noqa: F401  (the record's own names)

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"
PARQUET = "records.parquet"
SUMMARY = "summary.json"
TOKENS_LIVE = "tokens.arrows"
TOKENS = "tokens.parquet"
MANIFEST_SCHEMA = 1
SAMPLE_SEP = "\x1f"              # between an item id and a sample index in a record key (never in an id)


def sample_key(item_id: str, sample: int | None) -> str:
    """The key of one answer: the item id for sample 0 (and for every record of an unsampled
    run), `id<US>j` for sample j > 0. Resume, "the last record wins", compaction and the token
    streams all follow this key (docs/sampling.md)."""
    return item_id if not sample else f"{item_id}{SAMPLE_SEP}{int(sample)}"


def record_key(record: dict[str, Any]) -> str:
    return sample_key(record["id"], record.get(SAMPLE_FIELD))


class RunFolderError(ValueError):
    """A run folder that is missing, unreadable or corrupt; the message names the file."""


def loads(raw: bytes | str) -> Any:
    if _orjson is not None:
        try:
            return _orjson.loads(raw)
        except _orjson.JSONDecodeError:
            pass  # NaN / Infinity, which json.dumps writes and orjson refuses
    return json.loads(raw)


# ----------------------------------------------------------------------------- records

def _parse_lines(path: Path) -> Iterator[tuple[int, int, int, dict[str, Any]]]:
    """(line number, byte offset, byte length, record) for every record line, streamed. A
    torn last line (crash mid-write) is skipped; an unparseable line anywhere else is an
    error naming the line."""
    if not path.exists():
        return
    pending: tuple[int, str] | None = None   # a bad line, an error only if another line follows
    offset = 0
    with open(path, "rb") as f:
        for n, raw in enumerate(f):
            start, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            if pending is not None:
                raise RunFolderError(f"{path}: line {pending[0]} is not valid JSON ({pending[1]})")
            try:
                record = loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                pending = (n + 1, str(e))
                continue
            if not isinstance(record, dict) or "id" not in record:
                raise RunFolderError(f"{path}: line {n + 1} is not a record (no 'id')")
            yield n + 1, start, len(raw), record


def iter_record_lines(path: Path) -> Iterator[dict[str, Any]]:
    """Every record line in order, as written (old folders: logprobs inline)."""
    for _, _, _, record in _parse_lines(Path(path)):
        yield record


def _read(path: Path, drop: Iterable[str]) -> tuple[dict[str, dict[str, Any]], dict[str, tuple[int, int]]]:
    """(last slim record per id in first-seen order, byte span of each winning line that holds
    its logprobs inline)."""
    drop = tuple(drop)
    latest: dict[str, dict[str, Any]] = {}
    inline: dict[str, tuple[int, int]] = {}
    for _, start, length, record in _parse_lines(path):
        record, had_inline = slim(record)
        for key in drop:
            record.pop(key, None)
        record_id = record_key(record)
        latest[record_id] = record
        if had_inline:
            inline[record_id] = (start, length)
        else:
            inline.pop(record_id, None)
    return latest, inline


def read_records(path: Path, drop: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The last record per id (slim: no token logprobs), in the order ids first appeared.
    `drop` leaves out more bulky fields (messages, answer ...) for analyses that do not need them."""
    return list(_read(Path(path), drop)[0].values())


def read_manifest(run_dir: Path) -> dict[str, Any]:
    path = Path(run_dir) / MANIFEST
    if not path.exists():
        raise RunFolderError(f"{run_dir} is not a run folder: {MANIFEST} is missing")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise RunFolderError(f"{path} is not valid JSON ({e})") from None


# ----------------------------------------------------------------------------- atomic writes

def write_json_atomic(path: Path, data: Any) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=2, default=str)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class _AtomicFile:
    """A temporary file in the target's folder, renamed onto it only when complete."""

    def __init__(self, path: Path):
        self.path = Path(path)
        fd, self.tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
        os.close(fd)

    def __enter__(self) -> str:
        return self.tmp

    def __exit__(self, kind, *_: Any) -> None:
        if kind is None:
            with open(self.tmp, "rb") as f:
                os.fsync(f.fileno())
            os.replace(self.tmp, self.path)
        else:
            Path(self.tmp).unlink(missing_ok=True)


def _dumps_line(record: dict[str, Any]) -> bytes:
    # the stdlib's layout (", " and ": "), which people grep records.jsonl for
    return json.dumps(record, ensure_ascii=False, default=str).encode("utf-8") + b"\n"


def _is_record(raw: bytes) -> bool:
    try:
        record = loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return isinstance(record, dict) and "id" in record
