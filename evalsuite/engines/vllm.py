"""vLLM.

By default it takes sampling defaults from the model's generation_config.json
(repetition_penalty 1.05 for some models), applied at temperature 0 too. Neutral:
{"repetition_penalty": 1.0}. Speculation counters at /metrics (one series per engine label,
summed; none at all while speculation is off); no per-response timings.
"""
from __future__ import annotations

from .base import Engine, EngineProfile, Replies

NAME = "vllm"


def detect(replies: Replies) -> EngineProfile | None:
    if "vllm" not in replies.owned:
        return None
    version = replies.version
    v = version.get("version") if isinstance(version, dict) else None
    return EngineProfile(NAME, v, ("owned_by vllm",) + (("GET /version",) if v else ()))


ENGINE = Engine(
    name=NAME, detect=detect, neutral={"repetition_penalty": 1.0},
    spec_metrics=("vllm:spec_decode_num_draft_tokens_total", "vllm:spec_decode_num_accepted_tokens_total"),
    reasoning_fields=("reasoning_content", "reasoning"), start_example="vllm serve MODEL --port 8080",
    logprobs='OpenAI chat shape with bytes; a character split over byte tokens gives entries with token "" '
             "and its text in a later chunk; legacy completions' top_logprobs collide on \"\"")
