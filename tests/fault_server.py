"""A fault-injecting OpenAI-compatible server for the reliability tests (loopback only).

    server = FaultServer(answers={prompt_key(text): "The answer is 18", ...},
                         rates={"503": 0.05, "429": 0.02, "torn": 0.02, "stall": 0.01}, seed=7).start()
    server.url          -> "http://127.0.0.1:PORT/v1"
    server.injected     -> Counter of faults injected, by kind
    server.completions  -> completion requests received (every attempt)
    server.stop()

It serves GET /v1/models and POST /v1/chat/completions and /v1/completions, streamed (SSE,
with a final usage chunk) or not. A healthy answer is `answers[prompt_key(last user message)]`,
so a test that maps each item's prompt to "The answer is <gold>" gets a run that scores 100%.

Which fault a request gets is a pure function of (seed, prompt key, how many times this prompt
was asked before): the same run against the same server injects the same faults whatever the
order the concurrent requests arrive in. `script[key]` overrides the rates for one prompt:
attempt n gets `script[key][min(n, len - 1)]` (so a one-element script repeats for ever, and
("503", "ok") fails once then answers).

Faults (names used in rates, script and `injected`):
  500 502 503   HTTP error with an OpenAI-style JSON error body
  429           HTTP 429 with `Retry-After: <retry_after>`
  429-bare      HTTP 429 without Retry-After
  torn          200, a few SSE chunks, then the TCP connection is cut (no terminating chunk)
  malformed     200 whose SSE data line (or JSON body) is not valid JSON
  stall         nothing is sent for `stall_seconds` (longer than the client's --timeout)
  context       HTTP 400 "maximum context length" (never to be retried)
  bad-request   HTTP 400 with another message (never to be retried)
  empty         200, finish_reason "stop", empty content
  reasoning-only 200, only `reasoning_content`, finish_reason "length" (cut off while thinking)
  echo-key      HTTP 401 whose message repeats the Authorization header (as some proxies do)
  ok            a healthy answer (only meaningful in a script)

Two ways of stopping without a word (what a client cannot see as a closed connection):
  sigterm()     as llama-server does on SIGTERM: the listening socket is closed (new connections are
                refused) while the requests in flight stay open and are never answered
  freeze()      a server that accepts connections but never answers anything (GET /models included),
                in flight or new; thaw() answers new requests again (the frozen ones stay silent)

`mode="html"` turns it into a plain web server answering every path with an HTML page: an
endpoint that is not OpenAI-compatible.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import random
import threading
import time
from collections import Counter
from typing import Mapping, Sequence

from aiohttp import web

FAULTS = ("500", "502", "503", "429", "429-bare", "torn", "malformed", "stall", "context", "bad-request",
          "empty", "reasoning-only", "echo-key")
MODEL = "fault-model"
HTML_PAGE = "<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body><h1>Welcome to nginx!</h1></body></html>"


def prompt_key(text: str) -> str:
    """The key a prompt is known by: sha256 of the last user message (chat) or the prompt (completions)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class FaultServer:
    def __init__(self, answers: Mapping[str, str] | None = None, rates: Mapping[str, float] | None = None,
                 seed: int = 0, script: Mapping[str, Sequence[str]] | None = None, port: int = 0,
                 stall_seconds: float = 30.0, retry_after: str = "1", delay: float = 0.0,
                 mode: str = "openai", model: str = MODEL, default_answer: str = "I do not know.",
                 close_after_stream: bool = False):
        unknown = [f for f in list(rates or {}) + [f for s in (script or {}).values() for f in s]
                   if f not in FAULTS and f != "ok"]
        if unknown:
            raise ValueError(f"unknown fault(s) {unknown}; known: {FAULTS}")
        self.answers = dict(answers or {})
        self.rates = dict(rates or {})      # may be replaced between runs (e.g. {} = healthy)
        self.script = dict(script or {})
        self.seed = seed
        self.port = port
        self.stall_seconds = stall_seconds
        self.retry_after = retry_after
        self.delay = delay                   # seconds before each healthy answer (to slow a run down)
        self.mode = mode
        self.model = model
        self.default_answer = default_answer
        # close each connection after a whole stream, keep-alive announced all the same (llama-server does)
        self.close_after_stream = close_after_stream
        # what happened; written by the server thread only
        self.injected: Counter[str] = Counter()
        self.asked: Counter[str] = Counter()  # prompt key -> completion requests received
        self.completions = 0
        self.model_listings = 0
        self.requests = 0                     # every HTTP request, any path
        self.authorizations: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._stalls: set[asyncio.Task] = set()
        self.frozen = False                   # requests hang instead of being answered (sigterm/freeze)
        self.caught: Counter[str] = Counter()  # requests left silent: "models", "new", "in flight"

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "FaultServer":
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._start_site())
            except BaseException as e:  # e.g. the port is taken
                failure.append(e)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=serve, name=f"fault-server-{self.port}", daemon=True)
        self._thread.start()
        if not ready.wait(10) or failure:
            raise RuntimeError(f"fault server did not start: {failure[0] if failure else 'timeout'}")
        return self

    async def _start_site(self) -> None:
        app = web.Application()
        if self.mode == "html":
            app.router.add_route("*", "/{tail:.*}", self._html)
        else:
            app.router.add_get("/v1/models", self._models)
            app.router.add_post("/v1/chat/completions", self._complete)
            app.router.add_post("/v1/completions", self._complete)
        # shutdown_timeout: do not wait for stalled handlers when stopping
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, reuse_address=True)
        await site.start()
        self.port = self._runner.addresses[0][1]

    @property
    def open_connections(self) -> int:
        """Client connections still open: 0 once every request a killed client sent is counted."""
        return len(self._runner.server.connections) if self._runner and self._runner.server else 0

    def stop(self) -> None:
        """Stop serving; in-flight requests are cut. The same port can be served again afterwards."""
        if self._loop is None or self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(15)
        self._loop = self._thread = None

    def sigterm(self) -> None:
        """Stop listening (new connections refused); the requests in flight are never answered."""
        self.frozen = True

        def close_listener() -> None:
            for site in self._runner.sites:
                site._server.close()   # the asyncio Server: stops accepting, keeps open connections

        self._loop.call_soon_threadsafe(close_listener)

    def freeze(self) -> None:
        """Keep accepting connections but answer nothing, in flight or new."""
        self.frozen = True

    def thaw(self) -> None:
        self.frozen = False

    async def _hang_if_frozen(self, what: str) -> None:
        # a request caught by a freeze stays silent for good, as on a server that stopped
        if self.frozen:
            self.caught[what] += 1
            await asyncio.sleep(3600)

    def __enter__(self) -> "FaultServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ choosing a fault

    def choose(self, key: str, attempt: int) -> str:
        if key in self.script:
            steps = self.script[key]
            return steps[min(attempt, len(steps) - 1)]
        u = random.Random(f"{self.seed}:{key}:{attempt}").random()
        edge = 0.0
        for fault, rate in sorted(self.rates.items()):
            edge += rate
            if u < edge:
                return fault
        return "ok"

    # ------------------------------------------------------------------ handlers

    async def _html(self, request: web.Request) -> web.Response:
        self.requests += 1
        return web.Response(text=HTML_PAGE, content_type="text/html")

    async def _models(self, request: web.Request) -> web.Response:
        self.requests += 1
        await self._hang_if_frozen("models")
        self.model_listings += 1
        return web.json_response({"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "fault-server"}]})

    async def _complete(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        await self._hang_if_frozen("new")
        self.completions += 1
        self.authorizations.add(request.headers.get("Authorization", ""))
        body = await request.json()
        chat = request.path.endswith("/chat/completions")
        if chat:
            users = [m.get("content", "") for m in body.get("messages", []) if m.get("role") == "user"]
            text = users[-1] if users else ""
        else:
            text = body.get("prompt", "")
        key = prompt_key(text)
        attempt = self.asked[key]
        self.asked[key] += 1
        fault = self.choose(key, attempt)
        if fault != "ok":
            self.injected[fault] += 1
        stream = bool(body.get("stream"))
        answer = self.answers.get(key, self.default_answer)

        if fault in ("500", "502", "503"):
            return _error(int(fault), f"injected {fault}: upstream worker failed", "server_error")
        if fault == "429":
            return _error(429, "injected 429: too many requests", "rate_limit_error", {"Retry-After": self.retry_after})
        if fault == "429-bare":
            return _error(429, "injected 429: too many requests", "rate_limit_error")
        if fault == "context":
            return _error(400, "This model's maximum context length is 2048 tokens. However, you requested "
                               "4242 tokens (4000 in the messages, 242 in the completion).", "invalid_request_error")
        if fault == "bad-request":
            return _error(400, "injected 400: 'temperature' must be a number", "invalid_request_error")
        if fault == "echo-key":
            return _error(401, f"Incorrect API key provided: {request.headers.get('Authorization', '')}", "invalid_request_error")
        if fault == "stall":
            await asyncio.sleep(self.stall_seconds)
        elif self.delay:
            await asyncio.sleep(self.delay)
        await self._hang_if_frozen("in flight")

        content, reasoning, finish = answer, None, "stop"
        if fault == "empty":
            content = ""
        elif fault == "reasoning-only":
            content, reasoning, finish = "", "Let me think about this step by step. First", "length"
        usage = {"prompt_tokens": len(text.split()), "completion_tokens": len(content.split()) + len((reasoning or "").split()),
                 "total_tokens": len(text.split()) + len(content.split())}
        if not stream:
            if fault == "malformed":
                return web.Response(text='{"id": "x", "choices": [{"message": {"content": "The ans', content_type="application/json")
            return web.json_response(_full(chat, self.model, content, reasoning, finish, usage))
        return await self._stream(request, chat, content, reasoning, finish, usage, fault)

    async def _stream(self, request: web.Request, chat: bool, content: str, reasoning: str | None, finish: str,
                      usage: dict, fault: str) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)

        async def send(payload: dict | str) -> None:
            data = payload if isinstance(payload, str) else json.dumps(payload)
            await response.write(f"data: {data}\n\n".encode())

        pieces = _pieces(content)
        if reasoning:
            await send(_chunk(chat, self.model, reasoning_delta=reasoning))
        for n, piece in enumerate(pieces):
            if fault == "torn" and n == len(pieces) // 2:
                # cut the TCP connection mid-stream, as a crashing server or a proxy would
                request.transport.abort()
                return response
            if fault == "malformed" and n == len(pieces) // 2:
                await send('{"choices": [{"index": 0, "delta": {"content": "The ans')
                await send("[DONE]")
                await response.write_eof()
                return response
            await send(_chunk(chat, self.model, content_delta=piece))
        if fault == "torn":  # (an empty answer has no middle)
            request.transport.abort()
            return response
        await send(_chunk(chat, self.model, finish=finish))
        await send({"id": "fault-1", "object": "chat.completion.chunk" if chat else "text_completion",
                    "created": int(time.time()), "model": self.model, "choices": [], "usage": usage})
        await send("[DONE]")
        await response.write_eof()
        if self.close_after_stream:
            request.transport.close()
        return response


def _pieces(text: str) -> list[str]:
    """The answer in a few stream chunks (word by word, whitespace kept)."""
    if not text:
        return [""]
    words = text.split(" ")
    return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]


def _chunk(chat: bool, model: str, content_delta: str | None = None, reasoning_delta: str | None = None,
           finish: str | None = None) -> dict:
    if chat:
        delta: dict = {}
        if content_delta is not None:
            delta["content"] = content_delta
        if reasoning_delta is not None:
            delta["reasoning_content"] = reasoning_delta
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        kind = "chat.completion.chunk"
    else:
        choice = {"index": 0, "text": content_delta or "", "finish_reason": finish}
        kind = "text_completion"
    return {"id": "fault-1", "object": kind, "created": int(time.time()), "model": model, "choices": [choice]}


def _full(chat: bool, model: str, content: str, reasoning: str | None, finish: str, usage: dict) -> dict:
    if chat:
        message = {"role": "assistant", "content": content}
        if reasoning:
            message["reasoning_content"] = reasoning
        choice = {"index": 0, "message": message, "finish_reason": finish}
    else:
        choice = {"index": 0, "text": content, "finish_reason": finish}
    return {"id": "fault-1", "object": "chat.completion" if chat else "text_completion", "created": int(time.time()),
            "model": model, "choices": [choice], "usage": usage}


def _error(status: int, message: str, kind: str, headers: dict | None = None) -> web.Response:
    return web.json_response({"error": {"message": message, "type": kind, "code": status}}, status=status, headers=headers)
