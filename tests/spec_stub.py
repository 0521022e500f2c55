"""A loopback chat server that streams as llama-server does under speculative decoding: the
token it sampled itself comes with its logprobs, the draft tokens it accepted come in a chunk of
text with no logprobs at all (their numbers were never computed). The same tokens as
tests/token_stub.py's stream for the same prompt, so a TokenStub is its speculation-off
baseline; `diverge` plants a divergence: for those prompts the candidate emits the baseline's
first alternative (" alt0") at that token and its own words after it.

    with SpecStub(n_tokens=40, draft=3, diverge={prompt_key(text): 12}) as stub:
        stub.url
"""
from __future__ import annotations

import json

from aiohttp import web
from token_stub import MODEL, TokenStub, token_stream


def candidate_stream(prompt: str, n_tokens: int, k: int, at: int | None) -> list[dict]:
    """The baseline's entries, or from token `at` on: " alt0" (the baseline's second choice
    there), then words of its own."""
    entries = token_stream(prompt, n_tokens, k)
    if at is None or at >= len(entries):
        return entries
    out = entries[:at]
    for i in range(at, len(entries)):
        word, token_id = (" alt0", 6000) if i == at else (f" own{i}", 7000 + i)
        top = [{"token": word, "bytes": list(word.encode()), "id": token_id, "logprob": -0.25}]
        top += [{"token": f" alt{j + 1}", "bytes": list(f" alt{j + 1}".encode()), "id": 6001 + j, "logprob": -2.0 - j}
                for j in range(k - 1)]
        out.append({"token": word, "bytes": list(word.encode()), "id": token_id, "logprob": -0.25, "top_logprobs": top})
    return out


class SpecStub(TokenStub):
    def __init__(self, n_tokens: int = 40, draft: int = 3, diverge: dict[str, int] | None = None):
        super().__init__(n_tokens)
        self.draft = draft              # after each scored token, this many accepted draft tokens
        self.diverge = dict(diverge or {})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        from fault_server import prompt_key

        self.completions += 1
        body = await request.json()
        prompt = body["messages"][-1]["content"]
        k = int(body.get("top_logprobs") or 0)
        entries = candidate_stream(prompt, self.n_tokens, max(k, 1), self.diverge.get(prompt_key(prompt)))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        base = {"id": "spec", "object": "chat.completion.chunk", "created": 0, "model": MODEL}

        async def send(choice: dict) -> None:
            await response.write(b"data: " + json.dumps(dict(base, choices=[choice])).encode() + b"\n\n")

        i = 0
        while i < len(entries):
            entry = entries[i]      # sampled by the target model: scored
            choice = {"index": 0, "delta": {"content": entry["token"]}, "finish_reason": None}
            if body.get("logprobs"):
                choice["logprobs"] = {"content": [dict(entry, top_logprobs=entry["top_logprobs"][:k])]}
            await send(choice)
            drafted = entries[i + 1:i + 1 + self.draft]   # accepted drafts: text only
            if drafted:
                await send({"index": 0, "delta": {"content": "".join(e["token"] for e in drafted)},
                            "finish_reason": None})
            i += 1 + len(drafted)
        await send({"index": 0, "delta": {}, "finish_reason": "stop"})
        usage = {"prompt_tokens": 10, "completion_tokens": self.n_tokens, "total_tokens": 10 + self.n_tokens}
        await response.write(b"data: " + json.dumps(dict(base, choices=[], usage=usage)).encode() + b"\n\n")
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response
