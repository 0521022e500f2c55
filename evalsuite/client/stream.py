"""What the chunks of a streamed answer hold, taken apart: reasoning inside a leading
<think>...</think> split from the answer, and token logprobs in the chat or the completions
shape added to the token columns (drafted tokens the server never scored kept as missing)."""
from __future__ import annotations

from typing import Any

from .logprobs import scored_or_none
from ..store import TokenColumns


class ThinkSplitter:
    """Splits streamed content into reasoning (inside a leading <think>…</think>) and answer."""

    def __init__(self) -> None:
        self.buffer = ""
        self.state = "start"  # start -> thinking -> answer

    def feed(self, text: str) -> tuple[str, str]:
        """Returns (reasoning_part, answer_part) of this delta once decidable."""
        if self.state == "answer":
            return "", text
        self.buffer += text
        if self.state == "start":
            stripped = self.buffer.lstrip()
            if not stripped:
                return "", ""
            if stripped.startswith("<think>"):
                self.state = "thinking"
                self.buffer = stripped[len("<think>"):]
            elif "<think>".startswith(stripped):
                return "", ""  # could still become <think>
            else:
                self.state = "answer"
                out, self.buffer = self.buffer, ""
                return "", out
        if self.state == "thinking":
            end = self.buffer.find("</think>")
            if end < 0:
                # keep a tail that could be the start of </think>
                keep = max(0, len(self.buffer) - len("</think>"))
                out, self.buffer = self.buffer[:keep], self.buffer[keep:]
                return out, ""
            reasoning, rest = self.buffer[:end], self.buffer[end + len("</think>"):]
            self.buffer = ""
            self.state = "answer"
            return reasoning, rest
        return "", ""

    def flush(self) -> tuple[str, str]:
        out, self.buffer = self.buffer, ""
        if self.state == "thinking":
            return out, ""
        return "", out


def add_chat_tokens(tokens: TokenColumns, lp: Any, part: str, top_k: int | None) -> int:
    """Chat-API logprobs {content: [{token, bytes, id?, logprob, top_logprobs: [...]}]}. An entry
    with logprob 0.0 and no alternatives although some were asked for was never scored
    (llama-server's drafted tokens): kept with logprob None, never as certainty."""
    content = lp.get("content") if isinstance(lp, dict) else None
    if content:
        kept = scored_or_none(content, top_k)
        tokens.extend(kept, part)
        if kept is not content:
            return sum(1 for a, b in zip(kept, content) if a is not b)
    return 0


def add_legacy_tokens(tokens: TokenColumns, lp: Any, part: str, top_k: int | None) -> int:
    """Completions-API logprobs {tokens, token_logprobs, top_logprobs: [{token: lp}]}; llama-server
    answers /v1/completions in the chat shape."""
    if not isinstance(lp, dict):
        return 0
    if isinstance(lp.get("content"), list):
        return add_chat_tokens(tokens, lp, part, top_k)
    texts = lp.get("tokens") or []
    lps = lp.get("token_logprobs") or []
    tops = lp.get("top_logprobs") or []
    for i, text in enumerate(texts):
        top = tops[i] if i < len(tops) and isinstance(tops[i], dict) else {}
        tokens.add(text, None, None, lps[i] if i < len(lps) else None, part,
                   [{"token": t, "logprob": v} for t, v in top.items()])
    return 0
