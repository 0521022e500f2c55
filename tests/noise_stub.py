"""A loopback chat server with planted noise, for the noise-floor tests: greedy token streams
(ids, bytes, top-K as llama-server sends them) with a near tie at every 6th position, which it
flips at random with `flip_rate` (as a GPU engine's batch-dependent reductions would), and with
`real_rate` a real divergence at token 1 (a token its reference distribution gave -4 nats), and
with `jitter` every logprob scaled by (1 + jitter * u), u uniform in [-1, 1] (other kernels: the
same tokens, the numbers moved by float noise at jitter 1e-6, by a real drift at 1e-2).
Streamed and unstreamed.

    with NoiseStub(flip_rate=0.05, seed=1) as stub:
        stub.url
"""
from __future__ import annotations

import hashlib
import json
import random

from aiohttp import web
from token_stub import TokenStub

MODEL = "noise-stub"


def _entry(word: str, token_id: int, lp: float, alts: list[tuple[str, int, float]]) -> dict:
    top = [{"token": word, "bytes": list(word.encode()), "id": token_id, "logprob": lp}]
    top += [{"token": w, "bytes": list(w.encode()), "id": i, "logprob": v} for w, i, v in alts]
    top.sort(key=lambda t: -t["logprob"])
    return {"token": word, "bytes": list(word.encode()), "id": token_id, "logprob": lp, "top_logprobs": top}


class NoiseStub(TokenStub):
    def __init__(self, n_tokens: int = 24, flip_rate: float = 0.0, real_rate: float = 0.0, seed: int = 0,
                 jitter: float = 0.0):
        super().__init__(n_tokens)
        self.flip_rate, self.real_rate, self.jitter = flip_rate, real_rate, jitter
        self.rng = random.Random(seed)

    def stream(self, prompt: str, k: int) -> list[dict]:
        seed = int(hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8], 16)
        entries = []
        real = self.rng.random() < self.real_rate
        for i in range(self.n_tokens):
            word, wid = f" w{(seed + 7 * i) % 97}", 100 + (seed + 31 * i) % 5000
            alt, aid = f" v{(seed + 3 * i) % 89}", 6000 + (seed + 13 * i) % 3000
            far = (" zz", 9001, -5.0)
            if i == 1 and real:
                # the reference gives " REAL" -4 nats; this server's own distribution prefers it
                entries.append(_entry(" REAL", 9100, -0.1, [(word, wid, -3.0), far]))
            elif i % 6 == 3:          # a near tie (m = 1e-4 nats): float noise may flip it
                if self.rng.random() < self.flip_rate:
                    entries.append(_entry(alt, aid, -0.6931, [(word, wid, -0.6932), far]))
                else:
                    entries.append(_entry(word, wid, -0.6931, [(alt, aid, -0.6932), far]))
            else:
                entries.append(_entry(word, wid, -0.05, [(alt, aid, -3.5), far, (" REAL", 9100, -4.0)]))
        if self.jitter:
            entries = [self._jittered(e) for e in entries]
        return [dict(e, top_logprobs=e["top_logprobs"][:k]) for e in entries]

    def _jittered(self, entry: dict) -> dict:
        moved = {t["id"]: t["logprob"] * (1 + self.jitter * self.rng.uniform(-1, 1)) for t in entry["top_logprobs"]}
        top = [dict(t, logprob=moved[t["id"]]) for t in entry["top_logprobs"]]
        return dict(entry, logprob=moved.get(entry["id"], entry["logprob"]), top_logprobs=top)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.completions += 1
        body = await request.json()
        prompt = body["messages"][-1]["content"]
        k = int(body.get("top_logprobs") or 0)
        entries = self.stream(prompt, max(k, 1))
        base = {"id": "noise", "created": 0, "model": MODEL}
        usage = {"prompt_tokens": 10, "completion_tokens": self.n_tokens, "total_tokens": 10 + self.n_tokens}
        if not body.get("stream"):
            text = "".join(e["token"] for e in entries)
            choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
            if body.get("logprobs"):
                choice["logprobs"] = {"content": entries}
            return web.json_response(dict(base, object="chat.completion", choices=[choice], usage=usage))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        base["object"] = "chat.completion.chunk"
        for entry in entries:
            choice = {"index": 0, "delta": {"content": entry["token"]}, "finish_reason": None}
            if body.get("logprobs"):
                choice["logprobs"] = {"content": [entry]}
            await response.write(b"data: " + json.dumps(dict(base, choices=[choice])).encode() + b"\n\n")
        done = {"index": 0, "delta": {}, "finish_reason": "length"}
        await response.write(b"data: " + json.dumps(dict(base, choices=[done])).encode() + b"\n\n")
        await response.write(b"data: " + json.dumps(dict(base, choices=[], usage=usage)).encode() + b"\n\n")
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response
