"""The Python API: run folders as typed objects, the analyses as functions returning data.

    import evalsuite
    a = evalsuite.open_run("results/spec-off")
    a.records                      # pandas DataFrame, one row per item
    a.tokens("main/3")             # pyarrow Table: that item's token stream
    evalsuite.compare(a, b)        # analysis.compare.Comparison (a dataclass; .to_dict())
    evalsuite.gate(a, b, max_drop=2.0)     # analysis.gate.checks.GateResult
    evalsuite.diff(a, b)           # lossless.runs.DiffResult

These wrap the functions the commands use; nothing here prints. pandas and pyarrow are imported
when a table is asked for, not when evalsuite is imported (docs/api.md).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Union

from .store import Run, load_run

RECORD_COLUMNS = ("id", "subset", "gold", "outcome", "equal", "extracted", "method", "reason", "extraction",
                  "finish_reason", "answer", "reasoning", "question", "prompt_tokens", "completion_tokens",
                  "reasoning_tokens", "ttft_s", "ttfa_s", "total_s", "attempts", "endpoint", "model",
                  "error_kind", "judge", "judge_reason", "judge_model")
# each column's pandas nullable dtype, whatever the records hold: a column no record fills
# (no reasoning_tokens sent, no errors) is still Int64 / string, never object (docs/api.md)
RECORD_DTYPES = {**{c: "string" for c in RECORD_COLUMNS}, "equal": "boolean",
                 **{c: "Int64" for c in ("prompt_tokens", "completion_tokens", "reasoning_tokens", "attempts")},
                 **{c: "Float64" for c in ("ttft_s", "ttfa_s", "total_s")}}


def _flat(record: dict[str, Any]) -> dict[str, Any]:
    from .judge import question_of

    verdict = record.get("verdict") or {}
    usage = record.get("usage") or {}
    timing = record.get("timing") or {}
    judge = record.get("judge") or {}
    return {
        "id": record.get("id"), "subset": record.get("subset"), "gold": record.get("gold"),
        "outcome": record.get("outcome"), "equal": verdict.get("equal"), "extracted": record.get("extracted"),
        "method": verdict.get("method"), "reason": verdict.get("reason"), "extraction": verdict.get("extraction"),
        "finish_reason": record.get("finish_reason"), "answer": record.get("answer"),
        "reasoning": record.get("reasoning"), "question": question_of(record),
        "prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"),
        "reasoning_tokens": usage.get("reasoning_tokens"), "ttft_s": timing.get("ttft_s"),
        "ttfa_s": timing.get("ttfa_s"), "total_s": timing.get("total_s"), "attempts": record.get("attempts"),
        "endpoint": record.get("endpoint"), "model": record.get("model"),
        "error_kind": (record.get("error") or {}).get("kind"),
        "judge": judge.get("verdict"), "judge_reason": judge.get("reason"), "judge_model": judge.get("model"),
    }


@dataclass(frozen=True)
class RunData:
    """One run folder: its manifest and summary as dicts, its records as a DataFrame."""

    path: Path
    manifest: dict[str, Any]
    run: Run                       # the store's view (raw record dicts, token streams)

    @property
    def name(self) -> str:
        return self.run.name

    @cached_property
    def summary(self) -> dict[str, Any]:
        from .analysis.summary import run_categories, summarize

        return summarize(self.manifest, self.run.records, categories=run_categories(self.manifest, self.path))

    @cached_property
    def records(self):
        """pandas DataFrame, one row per item in run order (RECORD_COLUMNS; nullable dtypes)."""
        import pandas as pd

        frame = pd.DataFrame([_flat(r) for r in self.run.records], columns=list(RECORD_COLUMNS))
        return frame.astype(RECORD_DTYPES)

    def tokens(self, item_id: str | None = None):
        """pyarrow Table of one item's token stream (docs/records.md columns), or of every item's
        (with an `item` column) when no id is given; None when the run kept no logprobs."""
        if item_id is not None:
            record = self.run.by_id.get(item_id)
            if record is None:
                raise KeyError(f"{self.path}: no record for item {item_id!r}")
            return self.run.tokens.table(item_id) if record.get("logprob_tokens") is not None else None
        import pyarrow as pa

        tables = []
        for record in self.run.records:
            if record.get("logprob_tokens") is None:
                continue
            table = self.run.tokens.table(record["id"])
            if table is not None:
                if "item" not in table.column_names:
                    table = table.add_column(0, "item", pa.array([record["id"]] * table.num_rows, pa.string()))
                tables.append(table)
        return pa.concat_tables(tables, promote_options="default") if tables else None


RunLike = Union[str, os.PathLike, RunData, Run]


def open_run(path: str | os.PathLike) -> RunData:
    """The run folder at `path` (RunFolderError when it is not one)."""
    run = load_run(path)
    return RunData(Path(path), run.manifest, run)


def _run(x: RunLike) -> Run:
    if isinstance(x, RunData):
        return x.run
    if isinstance(x, Run):
        return x
    return load_run(x)


def compare(*runs: RunLike, alpha: float = 0.05, use_judge: bool = False):
    """`evalsuite compare` as data: analysis.compare.Comparison (runs[1:] each against runs[0]).
    Rule verdicts unless use_judge (then outcomes follow the judge where it decided)."""
    from .analysis.compare.comparison import compare_runs
    from .analysis.judged import judge_note

    loaded, _ = judge_note([_run(r) for r in runs], use_judge)
    return compare_runs(loaded, alpha=alpha)


def gate(baseline: RunLike, candidate: RunLike, *, max_drop: float, alpha: float = 0.05, min_items: int = 1,
         max_errors: str | float | None = None, allow_underpowered: bool = False, use_judge: bool = False):
    """`evalsuite gate` as data: analysis.gate.checks.GateResult (code 0 pass / 1 fail, line, checks,
    details). Unusable input raises analysis.gate.settings.GateInputError. No pyproject values are read:
    every setting is an argument."""
    import tempfile

    from .analysis.gate.decide import evaluate
    from .analysis.gate.settings import resolve_settings

    def folder(x: RunLike) -> Path:
        return x.path if isinstance(x, (RunData, Run)) else Path(x)

    with tempfile.TemporaryDirectory() as empty:   # no pyproject.toml above it
        settings = resolve_settings(max_drop=max_drop, alpha=alpha, min_items=min_items, max_real=None, diff=None,
                                    config_start=Path(empty), max_errors=max_errors,
                                    allow_underpowered=allow_underpowered)
    from dataclasses import replace

    return evaluate(folder(baseline), folder(candidate), replace(settings, use_judge=use_judge))


def diff(baseline: RunLike, candidate: RunLike, *, tau: float | None = None, precision: str | None = None,
         aa: RunLike | None = None):
    """`evalsuite diff` as data: lossless.runs.DiffResult (.items, .counts, .to_dict()), each flip
    judged against the noise it can see (lossless/noise_scale.py; `aa`: a repeat of the baseline)."""
    from .lossless.noise_scale import aa_floor, rescale
    from .lossless.runs import diff_runs, tau_for

    base = _run(baseline)
    floor = None if aa is None else aa_floor(diff_runs(base, _run(aa), tau_for(tau, precision)).items)
    return rescale(diff_runs(base, _run(candidate), tau_for(tau, precision)), floor)


def discordant(a: RunLike, b: RunLike):
    """The items two runs grade differently (correct in one, not in the other; errors left out),
    as a DataFrame: id, subset, gold, and each run's outcome and extracted answer."""
    import pandas as pd

    ra, rb = _run(a), _run(b)
    rows = []
    for item_id, x in ra.by_id.items():
        y = rb.by_id.get(item_id)
        if y is None or "error" in (x.get("outcome"), y.get("outcome")):
            continue
        if (x.get("outcome") == "correct") != (y.get("outcome") == "correct"):
            rows.append({"id": item_id, "subset": x.get("subset"), "gold": x.get("gold"),
                         "outcome_a": x.get("outcome"), "outcome_b": y.get("outcome"),
                         "extracted_a": x.get("extracted"), "extracted_b": y.get("extracted")})
    return pd.DataFrame(rows, columns=["id", "subset", "gold", "outcome_a", "outcome_b", "extracted_a",
                                       "extracted_b"])


__all__ = ["RunData", "open_run", "compare", "gate", "diff", "discordant", "RECORD_COLUMNS"]
