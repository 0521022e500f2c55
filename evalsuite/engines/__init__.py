"""What each inference server is, what it reports and which of its quirks evalsuite handles:
one file per engine (llama_server.py, llama_cpp_python.py, vllm.py, sglang.py,
transformers_serve.py), each an `ENGINE = base.Engine(...)`; detect.py lists them in the order
detection tries them. The client and the runner ask here (the functions below) instead of
knowing engine names themselves.

Speculation counters are read by evalsuite/speculation.py (by the suffix every engine's
`spec_metrics` shares): the analyses read its manifest sentences, and they must not import this
run machinery.
"""
from __future__ import annotations

from typing import Any

from .base import PROBE_TIMEOUT_S, Engine, EngineProfile, Replies
from .detect import (
    BY_NAME,
    ENGINES,
    LLAMA_CPP_NEUTRAL,
    NEUTRAL_BY_ENGINE,
    _get_json as _get_json,   # re-exported: tests reach them here
    _root as _root,
    apply_neutral_settings,
    detect_engine,
    engine_settings,
    models_wait_for_requests,
    neutral_for,
    profile_from_replies,
)
from .greedy import GreedyCheck
from .llama_cpp_python import CUT_STREAM_WHY, empty_stream_may_be_overflow

# the chat delta fields that carry reasoning text, in the order they are tried
REASONING_FIELDS: tuple[str, ...] = tuple(dict.fromkeys(f for e in ENGINES for f in e.reasoning_fields))
# the response fields with per-response server timings
TIMINGS_KEYS: tuple[str, ...] = tuple(dict.fromkeys(e.timings_key for e in ENGINES if e.timings_key))


def reasoning_of(delta: Any) -> str | None:
    """The reasoning text of a chat delta or message, whichever engine's field carries it."""
    if delta is None:
        return None
    for name in REASONING_FIELDS:
        if delta.get(name):
            return delta.get(name)
    return None


def server_timings_of(chunk: dict[str, Any]) -> Any:
    """A response chunk's own timings (llama-server's `timings`), or None."""
    for key in TIMINGS_KEYS:
        if chunk.get(key):
            return chunk.get(key)
    return None


def interrupt_hint(engine: dict[str, Any], summary: dict[str, Any], concurrency: int) -> str | None:
    """The end-of-run line of the first detected engine that explains the run's errors
    (llama-cpp-python's cut streams at concurrency > 1), from the manifest's `engine` entry."""
    names = {e.get("engine") for e in (engine or {}).get("endpoints") or ()}
    for e in ENGINES:
        if e.name in names and e.interrupt_hint is not None:
            hint = e.interrupt_hint(summary, concurrency)
            if hint:
                return hint
    return None


def start_examples() -> str:
    """One line per engine that says how to start it, for the "nothing answers" error."""
    return "".join(f"  {e.start_example}   ({e.name})\n" for e in ENGINES if e.start_example)


__all__ = ["start_examples", "PROBE_TIMEOUT_S", "Engine", "EngineProfile", "Replies", "BY_NAME", "ENGINES", "LLAMA_CPP_NEUTRAL",
           "NEUTRAL_BY_ENGINE", "apply_neutral_settings", "models_wait_for_requests", "detect_engine", "engine_settings", "neutral_for",
           "profile_from_replies", "GreedyCheck", "CUT_STREAM_WHY", "empty_stream_may_be_overflow",
           "REASONING_FIELDS", "TIMINGS_KEYS", "reasoning_of", "server_timings_of", "interrupt_hint"]
