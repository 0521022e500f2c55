"""What a run writes for one job: the record of a graded response, or of an error (the fields
and their meaning: docs/records.md; the typed reader: store/record.py)."""
from __future__ import annotations

from typing import Any

from ..client.exchange import Request, Response
from ..client.errors import EndpointError
from ..store import RECORD_SCHEMA, SAMPLE_FIELD, TOKEN_FIELD
from ..store.record import item_fields


def _sample_field(request: Request) -> dict[str, Any]:
    return {} if request.sample is None else {SAMPLE_FIELD: request.sample}


def outcome_of(response: Response, verdict) -> str:
    # the one rule (store.record.verdict_outcome), which regrade's words use too
    from ..store.record import verdict_outcome

    return verdict_outcome(verdict.equal, verdict.extracted, response.finish_reason)


def response_record(item, request: Request, response: Response, verdict, attempts: int) -> dict[str, Any]:
    return {
        "schema": RECORD_SCHEMA, "id": item.id, "subset": item.subset, "gold": item.gold,
        "prompt_sha256": request.sha256,
        "messages": list(request.messages) if request.messages is not None else None,
        "prompt": request.prompt,
        "answer": response.answer, "reasoning": response.reasoning, "reasoning_source": response.reasoning_source,
        "finish_reason": response.finish_reason,
        "extracted": verdict.extracted, "verdict": verdict.to_dict(), "outcome": outcome_of(response, verdict),
        "error": None, "usage": response.usage, "timing": response.timing, "server_timings": response.server_timings,
        TOKEN_FIELD: None if response.logprobs is None else len(response.logprobs),
        "endpoint": response.endpoint, "model": response.model, "attempts": attempts,
        **item_fields(item), **_sample_field(request),
    }


def error_record(item, request: Request, error: EndpointError, endpoint: str, attempts: int,
                 started_at: str, elapsed: float, response: Response | None = None) -> dict[str, Any]:
    return {
        "schema": RECORD_SCHEMA, "id": item.id, "subset": item.subset, "gold": item.gold,
        "prompt_sha256": request.sha256,
        "messages": list(request.messages) if request.messages is not None else None,
        "prompt": request.prompt,
        "answer": response.answer if response else None, "reasoning": response.reasoning if response else None,
        "reasoning_source": response.reasoning_source if response else None,
        "finish_reason": response.finish_reason if response else None,
        "extracted": None, "verdict": None, "outcome": "error", "error": error.to_dict(),
        "usage": response.usage if response else {"prompt_tokens": None, "completion_tokens": None, "reasoning_tokens": None},
        "timing": response.timing if response else {"started_at": started_at, "ttft_s": None, "ttfa_s": None, "total_s": elapsed},
        "server_timings": None, TOKEN_FIELD: None, "endpoint": endpoint, "model": response.model if response else None,
        "attempts": attempts, **_sample_field(request),
    }
