"""The run folder: manifest.json, records.jsonl, the token streams, records.parquet, summary.json.

See docs/records.md for the contract. Writers append one line per finished item and flush
it; readers tolerate a torn last line and take the last record per id.

Token logprobs (`--logprobs K`) are ~100x bulkier than the rest of a record and only `diff`
reads them, so they live beside the records, column by column: while a run is live in
`tokens.arrows` (one Arrow IPC blob per record, appended and flushed before the record's line),
and in a finished run in `tokens.parquet` (item order, dictionary-encoded text, int32 ids,
float32 logprobs). A record says how many token entries it has (`logprob_tokens`); `load_run`
returns slim records and `Run.with_logprobs(record)` reads one item's tokens when asked. Run
folders from before the side file (logprobs inline in records.jsonl) load through the same API.

One file per concern: layout.py (names, schema numbers, record keys, the line reader, atomic
writes), tokens.py (token streams in memory, not-top-1 counting), token_files.py (tokens.arrows,
tokens.parquet, TokenStreams), records.py (RecordWriter, compaction, records.parquet) and run.py
(Run, load_run); record.py is the record's type, its version and its migration on read.
Importers use `evalsuite.store`; the names below are its public face.
"""
from __future__ import annotations

from .layout import (MANIFEST, MANIFEST_SCHEMA, PARQUET, RECORD_SCHEMA, RECORDS, SAMPLE_FIELD, SAMPLE_SEP, SUMMARY,
                     TOKEN_FIELD, TOKENS, TOKENS_LIVE, RunFolderError, iter_record_lines, loads, read_manifest,
                     read_records, record_key, sample_key, slim, write_json_atomic)
from .records import (DERIVED, INT_FIELDS, KNOWN_FIELDS, NESTED_FIELDS, STRING_FIELDS, RecordWriter, WrittenLines,
                      compact_records, write_parquet)
from .record import (BULKY_FIELDS, FIELDS, MEANINGS, Record, bulky, item_fields, upgrade)
from .run import Run, finish_pending, load_run
from .token_files import TokenParquetWriter, TokenStreams, _encode_blob, compact_tokens  # noqa: F401  (_encode_blob: tests)
from .tokens import (NOT_TOP1_EPS, TokenColumns, _entries, not_top1_count, not_top1_in_columns,  # noqa: F401  (_entries)
                     token_schema)

__all__ = [
    "MANIFEST", "MANIFEST_SCHEMA", "PARQUET", "RECORD_SCHEMA", "RECORDS", "SAMPLE_FIELD", "SAMPLE_SEP", "SUMMARY",
    "TOKEN_FIELD", "TOKENS", "TOKENS_LIVE", "RunFolderError", "iter_record_lines", "loads", "read_manifest",
    "read_records", "record_key", "sample_key", "slim", "write_json_atomic",
    "DERIVED", "INT_FIELDS", "KNOWN_FIELDS", "NESTED_FIELDS", "STRING_FIELDS", "RecordWriter", "WrittenLines",
    "compact_records", "write_parquet", "Run", "finish_pending", "load_run", "TokenParquetWriter", "TokenStreams", "compact_tokens",
    "BULKY_FIELDS", "FIELDS", "MEANINGS", "Record", "bulky", "item_fields", "upgrade",
    "NOT_TOP1_EPS", "TokenColumns", "not_top1_count", "not_top1_in_columns", "token_schema",
]
