"""SGLang: the same sampling field as vLLM and the same risk (defaults from the model's
generation_config.json at temperature 0). Neutral: {"repetition_penalty": 1.0}."""
from __future__ import annotations

from typing import Any, Callable

from .base import Engine, EngineProfile, Replies

NAME = "sglang"


def detect(replies: Replies) -> EngineProfile | None:
    return EngineProfile(NAME, None, ("owned_by sglang",)) if "sglang" in replies.owned else None


SETTING = "enable_deterministic_inference"


def determinism(get: Callable[[str], Any]) -> dict[str, Any]:
    """SGLang's deterministic inference mode (`--enable-deterministic-inference`: batch-invariant
    kernels), from GET /get_server_info, which returns the server arguments (flat, or under
    `server_args` in some versions)."""
    info = get("/get_server_info")
    args = info.get("server_args") if isinstance(info, dict) and isinstance(info.get("server_args"), dict) else info
    if isinstance(args, dict) and isinstance(args.get(SETTING), bool):
        return {"setting": SETTING, "value": args[SETTING], "source": f"GET /get_server_info {SETTING}"}
    why = "it did not answer" if info is None else f"its reply has no boolean {SETTING}"
    return {"setting": SETTING, "value": None, "source": f"not reported by the server (GET /get_server_info: {why})"}


ENGINE = Engine(name=NAME, detect=detect, neutral={"repetition_penalty": 1.0},
                reasoning_fields=("reasoning_content",), determinism=determinism,
                start_example="python -m sglang.launch_server --model-path MODEL --port 8080")
