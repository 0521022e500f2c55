"""The record: one line of records.jsonl, typed and versioned.

`Record` lists every field a record has, with its meaning (docs/records.md is the long form),
its records.parquet column and whether it is bulky (large, read by few analyses: loaders may
drop it). Every list of record fields in the code comes from here: the fields the run's
finishing step and `show` leave out (`BULKY_FIELDS`), what `compare` and `gate` leave out
(`bulky(keep=...)`), and records.parquet's columns.

Versions (`schema` in each line, `RECORD_SCHEMA` now): 1 held the token logprobs inline
(`logprobs`); 2 keeps them in the side file and says how many there are (`logprob_tokens`).
Migration is on read: `upgrade(line)` brings a line of any older version to the current shape
(the run folder on disk is never rewritten), and `Record.from_dict` reads any version. The
`schema` field keeps the version the line was written in. Fields added later without a version
bump (`choices`, `item_meta`, `judge`, `sample`) are optional: absent means the old behaviour.
A field this version does not know is kept in `extra`, never dropped.

Analyses keep reading records as dicts (`load_run`); `Record` is their type, for readers who
want one and for the checks that the writer and this definition agree.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

RECORD_SCHEMA = 2
TOKEN_FIELD = "logprob_tokens"   # in a record: how many token entries the side file holds for it
SAMPLE_FIELD = "sample"          # in a record of a sampled run (`run --samples N`): the sample index, 0..N-1


def _f(meaning: str, parquet: str | None = None, bulky: bool = False, default: Any = None, optional: bool = False):
    """A record field: `parquet` is its records.parquet column kind ("string", "int", "nested"
    as JSON; None: kept in the `extra` column); `optional` fields are left out of a line when
    unset (absent means the old behaviour)."""
    return field(default=default, metadata={"meaning": meaning, "parquet": parquet, "bulky": bulky,
                                            "optional": optional})


@dataclass(frozen=True)
class Record:
    """One answer to one item, as records.jsonl holds it (schema RECORD_SCHEMA). Field order is
    records.parquet's column order within each kind."""

    id: str = _f("the item's stable id, the same across runs and machines (`<subset>/<index>`)", "string")
    schema: int = _f("record schema version the line was written in (2; 1 had `logprobs` inline)", "int",
                     default=RECORD_SCHEMA)
    subset: str | None = _f("the item's subset (pack subject; for a preset `pack/subject`)", "string")
    gold: str | None = _f("the reference answer", "string")
    prompt_sha256: str | None = _f("sha256 of the exact messages (chat) or prompt (completions) sent", "string")
    messages: list | None = _f("the chat messages sent (`[{role, content}]`), for chat runs", "nested", bulky=True)
    prompt: str | None = _f("the prompt sent, for completions runs", "string", bulky=True)
    answer: str | None = _f("the answer part of the response (reasoning removed); graders see only this", "string",
                            bulky=True)
    reasoning: str | None = _f("the reasoning part (`reasoning_content`/`reasoning`, or inside <think>...</think>)",
                               "string", bulky=True)
    reasoning_source: str | None = _f("`field`, `think-tags`, or null when there was none", "string")
    finish_reason: str | None = _f("as the server sent it (`stop`, `length`, ...)", "string")
    extracted: str | None = _f("the answer the grader read from `answer` (null: none found)", "string")
    verdict: dict | None = _f("`{equal, extracted, method, reason, extraction, details}` from evalsuite.graders",
                              "nested")
    outcome: str | None = _f("`correct`, `wrong`, `unextracted`, `truncated` or `error`", "string")
    error: dict | None = _f("`{kind, message, status}` when `outcome == \"error\"`", "nested")
    usage: dict | None = _f("`{prompt_tokens, completion_tokens, reasoning_tokens}` from the server's `usage`",
                            "nested")
    timing: dict | None = _f("`{started_at, ttft_s, ttfa_s, total_s}`: seconds on a monotonic clock; streamed "
                             "records also `connect_s`, `written_s`, `first_byte_s`, `first_chunk_s`, "
                             "`reused_connection` (optional)", "nested")
    server_timings: dict | None = _f("the server's own `timings` object when it sends one (llama.cpp does)",
                                     "nested", bulky=True)
    endpoint: str | None = _f("the base URL that answered (credentials removed)", "string")
    model: str | None = _f("the model id the response named", "string")
    attempts: int | None = _f("HTTP attempts made for this record (1 = no retry)", "int")
    logprob_tokens: int | None = _f("with --logprobs K: token entries the side file holds for it (schema 2)", "int")
    sample: int | None = _f("in a sampled run: the sample index j (0..N-1); absent: 0", "int", optional=True)
    choices: tuple | None = _f("the item's option texts in letter order (empty: none); absent in older runs")
    item_meta: dict | None = _f("the item's small metadata its grader reads; absent in older runs")
    judge: dict | None = _f("only for items a judge decided: `{verdict, reason, model, ...}`", optional=True)
    extra: Mapping[str, Any] = field(default_factory=dict, metadata={"meaning": "fields this version does not know",
                                                                     "parquet": None, "bulky": False,
                                                                     "optional": True})

    @classmethod
    def from_dict(cls, line: Mapping[str, Any]) -> "Record":
        """A record from a line of any schema version (migrated on read: `upgrade`)."""
        if not isinstance(line, Mapping) or "id" not in line:
            raise ValueError(f"not a record (no 'id'): {str(line)[:120]}")
        data = upgrade(dict(line))
        known = {k: data.pop(k) for k in list(data) if k in _NAMES}
        known.setdefault("schema", 1)
        if isinstance(known.get("choices"), list):
            known["choices"] = tuple(known["choices"])
        return cls(**known, extra=data)

    def to_dict(self) -> dict[str, Any]:
        """The line as the writer writes it (optional fields only when set)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "extra":
                continue
            value = getattr(self, f.name)
            if f.metadata["optional"] and value is None:
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        out.update(self.extra)
        return out


FIELDS = tuple(f for f in fields(Record) if f.name != "extra")
_NAMES = frozenset(f.name for f in FIELDS)
MEANINGS = {f.name: f.metadata["meaning"] for f in FIELDS}
BULKY_FIELDS = tuple(f.name for f in FIELDS if f.metadata["bulky"])


def bulky(keep: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The bulky fields but those in `keep`: what a loader that reads `keep` can leave out."""
    unknown = set(keep) - set(BULKY_FIELDS)
    if unknown:
        raise ValueError(f"not bulky record fields: {sorted(unknown)}")
    return tuple(name for name in BULKY_FIELDS if name not in keep)


def _parquet(kind: str) -> tuple[str, ...]:
    return tuple(f.name for f in FIELDS if f.metadata["parquet"] == kind)


# records.parquet: the string and int fields as columns, nested fields as JSON strings
STRING_FIELDS = _parquet("string")
INT_FIELDS = _parquet("int")
NESTED_FIELDS = _parquet("nested")


# ----------------------------------------------------------------------------- migration on read

def slim(record: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The record without inline token logprobs (an old-format line), and whether it had them."""
    if "logprobs" not in record:
        return record, False
    entries = record.pop("logprobs")
    if isinstance(entries, list):
        record[TOKEN_FIELD] = len(entries)
    else:
        record.setdefault(TOKEN_FIELD, None)
    return record, isinstance(entries, list)


def _from_v1(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 -> 2: the inline `logprobs` become a count (`logprob_tokens`); the entries stay
    on disk in the line, read back by `Run.logprobs`."""
    return slim(record)[0]


_MIGRATIONS = {1: _from_v1}   # version v -> the step to v + 1


def upgrade(record: dict[str, Any]) -> dict[str, Any]:
    """A record line of any older schema in the current shape (changed in place). `schema`
    still says what the line was written in."""
    version = record.get("schema")
    version = version if isinstance(version, int) and not isinstance(version, bool) else 1
    for v in range(version, RECORD_SCHEMA):
        record = _MIGRATIONS[v](record)
    if "logprobs" in record:   # a line that says schema 2 but holds them inline: read as schema 1 is
        record = _from_v1(record)
    return record


# ----------------------------------------------------------------------------- writing

# item metadata kept in records for re-grading; few-shot examples are prompt material, not grading input
META_SKIPPED = frozenset({"fewshot"})
MAX_META_BYTES = 4096


def item_fields(item: Any) -> dict[str, Any]:
    """The record fields re-grading needs beyond id/subset/gold: option texts and small metadata."""
    meta = {}
    for k, v in dict(item.meta or {}).items():
        if k in META_SKIPPED:
            continue
        try:
            if len(json.dumps(v, ensure_ascii=False)) <= MAX_META_BYTES:
                meta[k] = v
        except (TypeError, ValueError):
            continue
    return {"choices": list(item.choices), "item_meta": meta}


def verdict_outcome(equal: bool | None, extracted: Any, finish_reason: str | None) -> str:
    """A graded record's outcome word from its verdict: the words `run` records and every command
    prints (correct, wrong, unextracted, truncated). A cut-off response is "truncated", never
    "wrong"; an answer complete enough to be graded correct before the cut still counts."""
    if finish_reason == "length" and not equal:
        return "truncated"
    if equal is None or extracted is None:
        return "unextracted"   # no answer found, or an ambiguous one: counted apart from wrong
    return "correct" if equal else "wrong"
