"""What a run asks an endpoint and what comes back: the decoding settings (every one that
changes the output), the request of one job, and the response with its usage, timings and
token logprobs. Plain frozen values; the client (endpoint.py) sends and fills them."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from ..store import TokenColumns


@dataclass(frozen=True)
class Decoding:
    """Every setting that changes the output. Recorded once in the manifest."""

    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = 0
    max_tokens: int | None = 1024
    stop: tuple[str, ...] = ()
    reasoning_effort: str | None = None
    logprobs: int | None = None          # top-K alternatives per token; None: no logprobs
    extra_body: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "top_p": self.top_p, "seed": self.seed,
                "max_tokens": self.max_tokens, "stop": list(self.stop),
                "reasoning_effort": self.reasoning_effort, "logprobs": self.logprobs,
                "extra_body": dict(self.extra_body)}


@dataclass(frozen=True)
class Request:
    item_id: str
    messages: tuple[dict[str, str], ...] | None = None   # chat
    prompt: str | list | None = None                    # completions (a list: llama-server's [text, id, ...] form)
    sample: int | None = None                           # the sample index in a sampled run; None: not sampled

    @cached_property   # computed once (written to the instance's __dict__: fine on a frozen dataclass)
    def sha256(self) -> str:
        payload = json.dumps(list(self.messages), ensure_ascii=False, sort_keys=True) if self.messages is not None else self.prompt
        return hashlib.sha256((payload or "").encode("utf-8")).hexdigest()

    def with_sample(self, sample: int | None) -> "Request":
        """This request as sample `sample` of its item: the same prompt, its hash not computed again."""
        out = replace(self, sample=sample)
        if "sha256" in self.__dict__:
            out.__dict__["sha256"] = self.__dict__["sha256"]
        return out


@dataclass(frozen=True)
class Response:
    answer: str
    reasoning: str | None
    reasoning_source: str | None
    finish_reason: str | None
    usage: dict[str, int | None]
    timing: dict[str, Any]
    server_timings: dict[str, Any] | None
    logprobs: TokenColumns | None   # generated tokens with their top-K logprobs, column by column
    model: str | None
    endpoint: str
    # tokens the server sent without a number (llama-server's drafted tokens: logprob 0.0 with no
    # alternatives, or stream chunks with text and no logprobs), when it sent logprobs for others
    logprobs_missing: int = 0
