"""Hand-made run folders with known outcomes, written exactly as docs/records.md says.

Any test that needs a finished run without a server can build one here:

    a = make_run(tmp_path / "a", "gsm8k", records=[rec("main/0", "correct"), rec("main/1", "wrong")],
                 label="IQ3_S")

`rec(...)` builds one complete record (every field of the contract, with sensible
defaults); `make_run(...)` writes manifest.json and records.jsonl (one line per record,
in order) and returns the folder. Records may also be partial dicts: missing fields are
filled by `rec`. `paired_outcomes(...)` builds two outcome lists with chosen discordant
counts, for McNemar tests.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from evalsuite import __version__
from evalsuite.tasks.pack import Item, dataset_fingerprint

OUTCOMES = ("correct", "wrong", "unextracted", "truncated", "error")

DEFAULT_DECODING: dict[str, Any] = {
    "temperature": 0.0, "top_p": 1.0, "seed": 0, "max_tokens": 4096, "stop": None,
    "reasoning_effort": None, "logprobs": None, "extra_body": {},
}


def question_for(item_id: str) -> str:
    return f"Question {item_id}: what is the answer?"


def rec(
    item_id: str,
    outcome: str = "correct",
    *,
    subset: str | None = None,
    gold: str = "42",
    answer: str | None = None,
    reasoning: str | None = None,
    extracted: str | None = None,
    completion_tokens: int | None = 100,
    reasoning_tokens: int | None = None,
    prompt_tokens: int | None = 50,
    ttft_s: float | None = 0.1,
    total_s: float | None = 1.1,
    finish_reason: str | None = None,
    error_kind: str = "server_error",
    question: str | None = None,
    endpoint: str = "http://127.0.0.1:8080/v1",
    model: str | None = "test-model",
    **extra: Any,
) -> dict[str, Any]:
    """One complete record. `subset` defaults to the part of the id before the '/'.

    For `correct` the answer names the gold; for `wrong` it names something else. An
    `error` record has no answer, usage or verdict, as the runner writes it.
    """
    if outcome not in OUTCOMES:
        raise ValueError(f"rec({item_id!r}): unknown outcome {outcome!r}")
    subset = subset if subset is not None else item_id.split("/")[0]
    question = question if question is not None else question_for(item_id)
    messages = [{"role": "user", "content": question}]
    prompt_sha256 = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
    is_error = outcome == "error"
    if extracted is None and not is_error and outcome != "unextracted":
        extracted = gold if outcome == "correct" else f"not-{gold}"
    if answer is None and not is_error:
        answer = f"The answer is {extracted}." if extracted is not None else "I am not sure."
    if finish_reason is None and not is_error:
        finish_reason = "length" if outcome == "truncated" else "stop"
    verdict = None if is_error else {
        "equal": outcome == "correct" if outcome != "unextracted" else None,
        "extracted": extracted, "method": "exact" if outcome == "correct" else "none",
        "reason": f"hand-made {outcome}", "extraction": "answer-is" if extracted else None,
        "details": {},
    }
    record: dict[str, Any] = {
        "schema": 1,
        "id": item_id,
        "subset": subset,
        "gold": gold,
        "prompt_sha256": prompt_sha256,
        "messages": messages,
        "prompt": None,
        "answer": answer,
        "reasoning": reasoning,
        "reasoning_source": ("field" if reasoning is not None else None),
        "finish_reason": finish_reason,
        "extracted": extracted,
        "verdict": verdict,
        "outcome": outcome,
        "error": {"kind": error_kind, "message": f"hand-made {error_kind}", "status": 500} if is_error else None,
        "usage": {
            "prompt_tokens": None if is_error else prompt_tokens,
            "completion_tokens": None if is_error else completion_tokens,
            "reasoning_tokens": None if is_error else reasoning_tokens,
        },
        "timing": {
            "started_at": "2025-01-01T00:00:00Z",
            "ttft_s": None if is_error else ttft_s,
            "ttfa_s": None if is_error else ttft_s,
            "total_s": total_s,
        },
        "server_timings": None,
        "logprobs": None,
        "endpoint": endpoint,
        "model": None if is_error else model,
        "attempts": 1,
    }
    record.update(extra)
    return record


def complete(record: Mapping[str, Any]) -> dict[str, Any]:
    """Fill a partial record (at least `id`) up to the full contract."""
    if "id" not in record:
        raise ValueError(f"record without an id: {record!r}")
    if "usage" in record or "timing" in record or "verdict" in record:
        return dict(record)   # already in the contract's shape: written as given
    return rec(record["id"], **{k: v for k, v in record.items() if k != "id"})


def items_of(records: Sequence[Mapping[str, Any]]) -> list[Item]:
    return [Item(id=r["id"], subset=r["subset"], question=(r.get("messages") or [{}])[-1].get("content", ""),
                 gold=r["gold"]) for r in records]


def make_run(
    path: str | Path,
    pack: str = "gsm8k",
    records: Iterable[Mapping[str, Any]] = (),
    *,
    label: str | None = None,
    decoding: Mapping[str, Any] | None = None,
    model: str = "test-model",
    endpoint: str = "http://127.0.0.1:8080/v1",
    status: str = "finished",
    item_ids: Sequence[str] | None = None,
    fingerprint: str | None = None,
    api: str = "chat",
    extra_manifest: Mapping[str, Any] | None = None,
) -> Path:
    """Write a run folder at `path` and return it.

    `decoding` is merged over DEFAULT_DECODING. `item_ids` defaults to the records' ids
    (pass more to model an unfinished run); `fingerprint` defaults to
    tasks.pack.dataset_fingerprint over those records' items, so two runs built from the
    same ids, subsets, golds and questions share it, as real runs do.
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    full = [complete(r) for r in records]
    ids = list(item_ids) if item_ids is not None else [r["id"] for r in full]
    manifest: dict[str, Any] = {
        "schema": 1,
        "suite_version": __version__,
        "pack": pack,
        "pack_version": "1",
        "template_hash": "0" * 16,
        "load": {"subsets": [], "fewshot": 0, "per_subset": None, "seed": 0, "limit": None},
        "dataset": {
            "fingerprint": fingerprint if fingerprint is not None else dataset_fingerprint(items_of(full)),
            "n_items": len(ids),
            "source": "tests/runfactory.py",
        },
        "item_ids": ids,
        "api": api,
        "endpoints": [endpoint],
        "model": model,
        "served_models": {endpoint: [model]},
        "decoding": {**DEFAULT_DECODING, **dict(decoding or {})},
        "client": {"concurrency": 1, "timeout": 600, "max_retries": 2, "max_downtime": 300},
        "label": label,
        "started_at": "2025-01-01T00:00:00Z",
        "ended_at": "2025-01-01T01:00:00Z" if status == "finished" else None,
        "status": status,
        "argv": ["evalsuite", "run", pack],
    }
    manifest.update(extra_manifest or {})
    (path / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    with open(path / "records.jsonl", "w", encoding="utf-8") as f:
        for r in full:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def paired_outcomes(
    *, both_right: int = 0, a_only: int = 0, b_only: int = 0, both_wrong: int = 0,
) -> tuple[list[str], list[str]]:
    """Outcome lists for runs A and B with the given paired counts, in that order.

    a_only is McNemar's b (A right, B wrong); b_only is c (A wrong, B right).
    """
    a = ["correct"] * both_right + ["correct"] * a_only + ["wrong"] * b_only + ["wrong"] * both_wrong
    b = ["correct"] * both_right + ["wrong"] * a_only + ["correct"] * b_only + ["wrong"] * both_wrong
    return a, b


def runs_from_outcomes(
    tmp: Path, outcome_lists: Mapping[str, Sequence[str]], *, pack: str = "gsm8k",
    subsets: Sequence[str] = ("main",), **record_fields: Any,
) -> list[Path]:
    """One run per (label, outcomes) over the same ids; ids cycle through `subsets`."""
    paths = []
    for label, outcomes in outcome_lists.items():
        records = [rec(f"{subsets[n % len(subsets)]}/{n}", o, **record_fields) for n, o in enumerate(outcomes)]
        paths.append(make_run(Path(tmp) / label, pack, records, label=label))
    return paths
