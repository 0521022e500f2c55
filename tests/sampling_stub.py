"""A loopback OpenAI-compatible server that *samples*: each item has a known probability of a
correct answer, and the answer a request gets is a pure function of (request seed, prompt), as a
seeded sampler's is. For the tests of `run --samples N` and the analyses of sampled runs.

    with SamplingStub({prompt_key(text): (gold, p), ...}, shift=0.0, delay=0.0) as stub:
        stub.url, stub.completions, stub.seeds

Correct: "Thus the answer is GOLD"; wrong: "So the answer is GOLD+j", j uniform in 1..wrong_values, so the
first generated token also says which; `shift` lowers every item's probability of a correct
answer by that much (a candidate that is worse by `shift` per item). With `logprobs` asked, each
word is a token entry with top-K alternatives (ids from the word), like llama-server's.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import random
from typing import Mapping

from aiohttp import web
from token_stub import ServedStub

MODEL = "sampling-stub"


def draw(seed, key: str, p: float, wrong_values: int = 1) -> tuple[bool, int]:
    """(correct?, which wrong answer) for this seed and prompt: fixed for a fixed seed."""
    if seed is None:
        rng = random.Random()
    else:
        rng = random.Random(int(hashlib.sha256(f"{seed}|{key}".encode()).hexdigest()[:16], 16))
    return rng.random() < p, rng.randrange(1, wrong_values + 1)


def answer_text(gold: str, correct: bool, wrong: int) -> str:
    if correct:
        return f"Thus the answer is {gold}"
    try:
        value = str(int(gold) + wrong)
    except ValueError:
        value = f"{gold}{wrong}"
    return f"So the answer is {value}"


def _entry(word: str, k: int) -> dict:
    token_id = int(hashlib.sha256(word.encode()).hexdigest()[:4], 16)
    top = [{"token": word, "bytes": list(word.encode()), "id": token_id, "logprob": -0.25}]
    top += [{"token": f" alt{j}", "bytes": list(f" alt{j}".encode()), "id": 70000 + j, "logprob": -2.0 - j}
            for j in range(max(0, k - 1))]
    return {"token": word, "bytes": list(word.encode()), "id": token_id, "logprob": -0.25, "top_logprobs": top[:k]}


class SamplingStub(ServedStub):
    def __init__(self, items: Mapping[str, tuple[str, float]], shift: float = 0.0, delay: float = 0.0,
                 wrong_values: int = 1):
        self.items = dict(items)
        self.wrong_values = wrong_values
        self.shift = shift
        self.delay = delay
        self.completions = 0
        self.seeds: list = []
        self.url = ""

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        from fault_server import prompt_key

        self.completions += 1
        body = await request.json()
        users = [m.get("content", "") for m in body.get("messages", []) if m.get("role") == "user"]
        key = prompt_key(users[-1] if users else "")
        gold, p = self.items.get(key, ("0", 0.0))
        seed = body.get("seed")
        self.seeds.append(seed)
        correct, wrong = draw(seed, key, max(0.0, p - self.shift), self.wrong_values)
        words = answer_text(gold, correct, wrong).split(" ")
        words = [w if i == 0 else " " + w for i, w in enumerate(words)]
        k = int(body.get("top_logprobs") or 1)
        if self.delay:
            await asyncio.sleep(self.delay)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        base = {"id": "stub", "object": "chat.completion.chunk", "created": 0, "model": MODEL}
        for word in words:
            choice = {"index": 0, "delta": {"content": word}, "finish_reason": None}
            if body.get("logprobs"):
                choice["logprobs"] = {"content": [_entry(word, k)]}
            await response.write(b"data: " + json.dumps(dict(base, choices=[choice])).encode() + b"\n\n")
        await response.write(b"data: " + json.dumps(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}])).encode() + b"\n\n")
        usage = {"prompt_tokens": 10, "completion_tokens": len(words), "total_tokens": 10 + len(words)}
        await response.write(b"data: " + json.dumps(dict(base, choices=[], usage=usage)).encode() + b"\n\n")
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

