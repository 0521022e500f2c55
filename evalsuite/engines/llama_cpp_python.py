"""llama-cpp-python's server (`python -m llama_cpp.server`).

Its request models (llama_cpp/server/types.py) default repeat_penalty to 1.1, applied before the
greedy pick (Llama._init_sampler adds the penalties sampler whatever the temperature);
presence/frequency penalties default to 0. Neutral: {"repeat_penalty": 1.0}. Its quirks the
client and runner handle: a prompt longer than its context gets HTTP 200 and an empty event
stream, and with --interrupt_requests (the default) a new request cuts the stream in flight.
No timings, no speculation counters, no `usage` in streams (even with stream_options), and its
GET /v1/models waits for the model's lock, held by the request being served: the watchdog
probes it with the request's own timeout (a probe that waits is busy, not stuck).
"""
from __future__ import annotations

from typing import Any

from .base import Engine, EngineProfile, Replies

NAME = "llama-cpp-python"
# what the client's stream_broken error says when a stream ends with [DONE] but no finish_reason
CUT_STREAM_WHY = ("llama-cpp-python does this when another request arrives; "
                  "start it with --interrupt_requests false, or run with --concurrency 1")


def detect(replies: Replies) -> EngineProfile | None:
    title = replies.title
    if "llama.cpp Python" in title:
        return EngineProfile(NAME, ((replies.openapi or {}).get("info") or {}).get("version"),
                             (f"openapi title {title!r}",))
    return None


def detect_by_owner(replies: Replies) -> EngineProfile | None:
    # llama-cpp-python's /v1/models says owned_by "me" (llama_cpp/server/app.py)
    return EngineProfile(NAME, None, ("owned_by me",)) if replies.owned == {"me"} else None


def empty_stream_may_be_overflow(events: int, dropped: bool, stalled: bool) -> bool:
    """llama-cpp-python answers a prompt longer than its context with HTTP 200 and an event
    stream that stays empty (it ends, hangs until the timeout, or the connection is reset before
    any event); the same request unstreamed says why (a 400 naming the context length), so the
    client sends it again unstreamed and the item is recorded as what it is, not as a torn
    stream or a timeout."""
    return not events and (dropped or stalled)


def interrupt_hint(summary: dict[str, Any], concurrency: int) -> str | None:
    """llama-cpp-python's server cuts a stream in flight when another request arrives
    (--interrupt_requests defaults to true): cut streams at concurrency > 1 on it get the fix."""
    cut = (summary.get("errors_by_kind") or {}).get("stream_broken", 0)
    if not cut or concurrency <= 1:
        return None
    return (f"{cut} stream(s) were cut: llama-cpp-python's server stops a stream when another request arrives "
            "(--interrupt_requests defaults to true). Start it with --interrupt_requests false, or run with "
            "--concurrency 1.")


ENGINE = Engine(
    name=NAME, detect=detect, detect_fallback=detect_by_owner, neutral={"repeat_penalty": 1.0},
    logprobs='OpenAI shape; a partial UTF-8 byte token is "" with neither bytes nor id',
    interrupt_hint=interrupt_hint, models_wait_for_requests=True,
    start_example="python -m llama_cpp.server --model model.gguf --port 8080 --interrupt_requests false")
