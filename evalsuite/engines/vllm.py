"""vLLM.

By default it takes sampling defaults from the model's generation_config.json
(repetition_penalty 1.05 for some models), applied at temperature 0 too. Neutral:
{"repetition_penalty": 1.0}. Speculation counters at /metrics (one series per engine label,
summed; none at all while speculation is off); no per-response timings.
"""
from __future__ import annotations

from typing import Any, Callable

from .base import Engine, EngineProfile, Replies

NAME = "vllm"


def detect(replies: Replies) -> EngineProfile | None:
    if "vllm" not in replies.owned:
        return None
    version = replies.version
    v = version.get("version") if isinstance(version, dict) else None
    return EngineProfile(NAME, v, ("owned_by vllm",) + (("GET /version",) if v else ()))


SETTING = "VLLM_BATCH_INVARIANT"


def determinism(get: Callable[[str], Any]) -> dict[str, Any]:
    """vLLM's batch-invariant mode is the server's environment variable VLLM_BATCH_INVARIANT=1,
    not a request field. The server shows its VLLM_* environment only at GET /server_info
    (`vllm_env`), a development endpoint served with VLLM_SERVER_DEV_MODE=1 (vLLM 0.32);
    otherwise it is not reported, and nothing is guessed."""
    info = get("/server_info")
    env = info.get("vllm_env") if isinstance(info, dict) else None
    if isinstance(env, dict):
        value = env.get(SETTING)
        return {"setting": SETTING, "value": bool(value) if isinstance(value, (bool, int)) else False,
                "source": "GET /server_info vllm_env" + ("" if SETTING in env else f" (no {SETTING}: off)")}
    return {"setting": SETTING, "value": None,
            "source": "not reported by the server (batch invariance is its VLLM_BATCH_INVARIANT=1 environment "
                      "variable, shown only at GET /server_info with VLLM_SERVER_DEV_MODE=1)"}


ENGINE = Engine(
    name=NAME, detect=detect, neutral={"repetition_penalty": 1.0}, determinism=determinism,
    spec_metrics=("vllm:spec_decode_num_draft_tokens_total", "vllm:spec_decode_num_accepted_tokens_total"),
    reasoning_fields=("reasoning_content", "reasoning"), start_example="vllm serve MODEL --port 8080",
    logprobs='OpenAI chat shape with bytes; a character split over byte tokens gives entries with token "" '
             "and its text in a later chunk; legacy completions' top_logprobs collide on \"\"")
