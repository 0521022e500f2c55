"""A loopback OpenAI-compatible server that streams answers with token logprobs (chat API,
top-K alternatives with text, bytes and ids as llama-server sends them), for the tests of the
token side file. Deterministic per prompt; counts the completion requests it serves.

    with TokenStub(n_tokens=40) as stub:
        stub.url, stub.completions
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time

from aiohttp import web

MODEL = "token-stub"


def token_stream(prompt: str, n_tokens: int, k: int) -> list[dict]:
    """n_tokens chat logprob entries; the text they spell ends with "The answer is N"."""
    seed = int(hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8], 16)
    words = [f" w{(seed + 7 * i) % 97}" for i in range(max(0, n_tokens - 4))]
    words += [" The", " answer", " is", f" {seed % 100}"]
    entries = []
    for i, word in enumerate(words[-n_tokens:]):
        token_id = (seed + 31 * i) % 5000
        lp = -((seed + i) % 17) / 32.0     # exactly representable in float32
        top = [{"token": word, "bytes": list(word.encode()), "id": token_id, "logprob": lp}]
        top += [{"token": f" alt{j}", "bytes": list(f" alt{j}".encode()), "id": 6000 + j, "logprob": lp - 1.0 - j}
                for j in range(k - 1)]
        entries.append({"token": word, "bytes": list(word.encode()), "id": token_id, "logprob": lp, "top_logprobs": top})
    return entries


class ServedStub:
    """An aiohttp app on a loopback port in a thread of its own, as a context manager: a
    subclass gives `_models` and `_chat` (GET /v1/models, POST /v1/chat/completions)."""

    def __enter__(self) -> "ServedStub":
        ready = threading.Event()

        def serve() -> None:
            self.loop = asyncio.new_event_loop()
            app = web.Application()
            app.router.add_get("/v1/models", self._models)
            app.router.add_post("/v1/chat/completions", self._chat)
            self.runner = web.AppRunner(app)
            self.loop.run_until_complete(self.runner.setup())
            site = web.TCPSite(self.runner, "127.0.0.1", 0)
            self.loop.run_until_complete(site.start())
            self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/v1"
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()
        ready.wait(10)
        return self

    @property
    def open_connections(self) -> int:
        """Client connections still open: 0 once every request a killed client sent is counted."""
        return len(self.runner.server.connections) if self.runner.server else 0

    def wait_for_closed_connections(self, limit: float = 60.0) -> None:
        """Until a killed client's connections are closed here: its last requests, sent before the
        kill, reach the server when it gets the CPU (late on a loaded machine)."""
        deadline = time.monotonic() + limit
        while self.open_connections and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not self.open_connections, "the killed client's connections stayed open"

    def __exit__(self, *exc) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


class TokenStub(ServedStub):
    def __init__(self, n_tokens: int = 40):
        self.n_tokens = n_tokens
        self.completions = 0
        self.url = ""

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.completions += 1
        body = await request.json()
        prompt = body["messages"][-1]["content"]
        k = int(body.get("top_logprobs") or 0)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        base = {"id": "stub", "object": "chat.completion.chunk", "created": 0, "model": MODEL}
        for entry in token_stream(prompt, self.n_tokens, max(k, 1)):
            choice = {"index": 0, "delta": {"content": entry["token"]}, "finish_reason": None}
            if body.get("logprobs"):
                choice["logprobs"] = {"content": [dict(entry, top_logprobs=entry["top_logprobs"][:k])]}
            await response.write(b"data: " + json.dumps(dict(base, choices=[choice])).encode() + b"\n\n")
        await response.write(b"data: " + json.dumps(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}])).encode() + b"\n\n")
        usage = {"prompt_tokens": 10, "completion_tokens": self.n_tokens, "total_tokens": 10 + self.n_tokens}
        await response.write(b"data: " + json.dumps(dict(base, choices=[], usage=usage)).encode() + b"\n\n")
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

