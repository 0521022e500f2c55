"""Hugging Face `transformers serve`.

Temperature 0 sets do_sample false, so nothing needs sending. It ignores `logprobs` (lossless
compares its texts only), sends no `data: [DONE]` and no timings, and serves one request at a
time. Not told apart from other servers by its replies yet: it is recorded as "unknown".
"""
from __future__ import annotations

from .base import Engine, EngineProfile, Replies

NAME = "transformers"


def detect(replies: Replies) -> EngineProfile | None:
    return None   # no reply of its own names it


ENGINE = Engine(name=NAME, detect=detect, neutral={}, logprobs="none: logprobs and top_logprobs are ignored",
                start_example="transformers serve MODEL_DIR --port 8080")
