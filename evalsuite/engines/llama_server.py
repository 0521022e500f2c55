"""llama.cpp's C++ `llama-server`.

Its request defaults are neutral (repeat_penalty 1.0, DRY off), but the server's own command
line can change them; /props shows the defaults it applies (default_generation_settings), so any
that is not neutral is sent back at its neutral value. It reports per-response `timings`
(prompt_n, predicted_ms, ..., and draft_n / draft_n_accepted when drafting happened) and, started
with `--metrics`, speculation counters at /metrics. A token from a speculative step comes back
with logprob 0.0 and no alternatives: a missing number, not certainty (client/logprobs.py).
"""
from __future__ import annotations

from typing import Any

from .base import Engine, EngineProfile, Replies

NAME = "llama.cpp"
# neutral values of the fields that change which token a greedy decoder picks
LLAMA_CPP_NEUTRAL = {"repeat_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0, "dry_multiplier": 0.0}


def has_props(props: Any) -> bool:
    """/props in llama-server's shape: enough to know it without asking anything else."""
    return isinstance(props, dict) and ("default_generation_settings" in props or "build_info" in props)


def detect(replies: Replies) -> EngineProfile | None:
    props, owned = replies.props, replies.owned
    if has_props(props):
        settings = props.get("default_generation_settings") or {}
        params = settings.get("params") if isinstance(settings.get("params"), dict) else settings
        defaults = {k: params[k] for k in LLAMA_CPP_NEUTRAL if k in params}
        return EngineProfile(NAME, props.get("build_info"), ("GET /props",) + tuple(f"owned_by {o}" for o in owned),
                             defaults)
    return None


def detect_by_owner(replies: Replies) -> EngineProfile | None:
    return EngineProfile(NAME, None, ("owned_by llamacpp",)) if "llamacpp" in replies.owned else None


def neutral_for(profile: EngineProfile) -> dict[str, Any]:
    """Only what /props shows is not neutral."""
    return {k: LLAMA_CPP_NEUTRAL[k] for k, v in profile.server_defaults.items()
            if isinstance(v, (int, float)) and float(v) != LLAMA_CPP_NEUTRAL[k]}


ENGINE = Engine(
    name=NAME, detect=detect, detect_fallback=detect_by_owner, neutral={}, neutral_for=neutral_for,
    spec_metrics=("llamacpp:spec_decode_num_draft_tokens_total", "llamacpp:spec_decode_num_accepted_tokens_total"),
    start_example="llama-server -m model.gguf --port 8080",
    timings_key="timings", reasoning_fields=("reasoning_content",),
    logprobs="chat shape in /v1/completions too; a partial UTF-8 token merged into one entry (align on bytes); "
             "speculative tokens: logprob 0.0 with no alternatives, or null streamed")
