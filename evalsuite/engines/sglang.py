"""SGLang: the same sampling field as vLLM and the same risk (defaults from the model's
generation_config.json at temperature 0). Neutral: {"repetition_penalty": 1.0}."""
from __future__ import annotations

from .base import Engine, EngineProfile, Replies

NAME = "sglang"


def detect(replies: Replies) -> EngineProfile | None:
    return EngineProfile(NAME, None, ("owned_by sglang",)) if "sglang" in replies.owned else None


ENGINE = Engine(name=NAME, detect=detect, neutral={"repetition_penalty": 1.0},
                reasoning_fields=("reasoning_content",),
                start_example="python -m sglang.launch_server --model-path MODEL --port 8080")
