"""A paced OpenAI-compatible server with programmed speeds: the ground truth of `evalsuite speed`.

    server = PacedServer(prefill_rate=4000, decode_rate=80, latency=0.03).start()
    server.url  -> "http://127.0.0.1:PORT/v1"
    server.expected_decode(prompt_tokens=640, streams=2)  -> the decode t/s it paces one stream at
    server.stop()

Loopback only, aiohttp in a thread of the test process. It serves GET /v1/models, POST
/v1/chat/completions and /v1/completions (streamed or not), POST /tokenize and /detokenize (in
both llama-server's and vLLM's shapes) and GET /metrics (vLLM-style speculation counters).

What it programs, each a figure the profile must find again:
- a round trip of `latency` seconds before anything is answered (GET /v1/models too: that is
  what the client measures and subtracts);
- the role chunk at once after the latency (a TTFR with no token in it), then the prompt's
  uncached tokens at `prefill_rate` tok/s; the first token ends the prefill;
- one token every 1 / rate s, rate = decode_rate / ((1 + prompt_tokens / decode_halving) *
  (1 + stream_slowdown * (streams - 1))), `streams` the completion requests in flight when the
  token is due: slower with a longer prompt and with more streams at once. Tokens are sent on
  absolute deadlines (the next one = the last deadline + 1 / rate), so a late wake-up on a loaded
  machine delays one token, never the rest;
- a prefix cache: a prompt that starts with the tokens of an earlier one (whole blocks of
  `cache_block`) has them served from the cache, reported as usage.prompt_tokens_details.cached_tokens,
  and its prefill time covers only the rest;
- speculation (`spec=(k, mean_length)`): each decode step drafts k tokens and yields
  mean_length tokens on average, so the counters move by drafts = ceil(tokens / mean_length),
  draft tokens = k * drafts and accepted = tokens - drafts (acceptance (mean_length - 1) / k);
- a context of `context` tokens: a request past it gets vLLM's HTTP 400 "maximum context length";
- `slots=N`: at most N completion requests are served at once (llama-server's -np, vLLM's
  max_num_seqs); the others wait in a first-come queue for a free slot, and the wait is the
  queue time of vLLM's histogram;
- vLLM-style histograms at /metrics (sum and count of each request's queue time, prefill time
  and time to first token) and the generated-token counter;
- `slow_every=N`: every N-th completion request (by the server's count) decodes `slow_factor`
  times slower (a planted SLO miss; `served` says which);
- `die_after=N`: the server stops (connections cut, nothing listening) on its N-th completion request;
- `flood=True`: no pacing at all, every token event built before and written in one block (a
  server faster than any client: the client's CPU is then what limits the stream).

`python tests/paced_server.py --port P [--decode-rate R ...]` serves in a process of its own
(prints its port on its first line): for --serve commands, and for measuring the client alone.

The tokenizer: a word or a CJK character or a punctuation mark, each with the white space
before it, is one token; the chat template (ChatML) adds its own tokens, as a real one does.
"""
from __future__ import annotations

import asyncio
import json
import math
import re
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Any

from aiohttp import web

MODEL = "paced"
TOKEN = re.compile(r"\s*[\u3400-\u9fff\uf900-\ufaff]|\s*\w+|\s*[^\w\s]|\s+$")
WORDS = ("the of and to in is that for it as with was on be by this are from at or an which one had "
         "all there their has been more when will who would so what up out if about into than them "
         "can only other new some could time these two may then do first any like now my such make").split()


def tokenize(text: str) -> list[str]:
    return TOKEN.findall(text)


def chatml(messages: list[dict[str, Any]]) -> str:
    body = "".join(f"<|im_start|>{m.get('role', 'user')}\n{m.get('content', '')}<|im_end|>\n" for m in messages)
    return body + "<|im_start|>assistant\n"


@dataclass
class Flight:
    """One completion request while it is in flight (for the in-flight record)."""
    started: float
    ended: float | None = None


class PacedServer:
    def __init__(self, prefill_rate: float = 4000.0, decode_rate: float = 80.0, decode_halving: float | None = None,
                 stream_slowdown: float = 0.0, latency: float = 0.0, context: int = 8192, prefix_cache: bool = True,
                 cache_block: int = 16, spec: tuple[int, float] | None = None, usage: bool = True,
                 with_tokenize: bool = True, timings: bool = False, role_chunk: bool = True, die_after: int | None = None,
                 decode_jitter: float = 0.0, flood: bool = False, port: int = 0, model: str = MODEL,
                 jitter_seed: int = 0, slots: int | None = None, slow_every: int | None = None,
                 slow_factor: float = 4.0):
        self.prefill_rate, self.decode_rate, self.decode_halving = prefill_rate, decode_rate, decode_halving
        self.stream_slowdown, self.latency, self.context = stream_slowdown, latency, context
        self.prefix_cache, self.cache_block, self.spec, self.usage = prefix_cache, cache_block, spec, usage
        self.with_tokenize, self.timings, self.role_chunk, self.die_after = with_tokenize, timings, role_chunk, die_after
        self.decode_jitter = decode_jitter   # each request's decode rate times 1 ± this (by its prompt's hash)
        self.jitter_seed = jitter_seed       # two servers with other seeds jitter the same prompt apart
        self.model, self.flood, self.slots = model, flood, slots
        self.slow_every, self.slow_factor = slow_every, slow_factor
        self._slots: asyncio.Semaphore | None = None
        self.histograms = {"queue": [0.0, 0], "prefill": [0.0, 0], "ttft": [0.0, 0]}
        self.generated = 0
        self.served: list[dict[str, Any]] = []   # per answered request: prompt, cached, queue_s, prefill_s
        self._blobs: dict[bool, list[bytes]] = {}
        self.port = port
        self.vocab: dict[int, str] = {}
        self.cached_prompts: list[list[int]] = []
        self.counters = {"drafts": 0, "draft_tokens": 0, "accepted": 0}
        self.completions = 0
        self.jitters: list[float] = []      # each answered request's decode-interval factor (decode_jitter)
        self.tokenize_calls = 0
        self.flights: list[Flight] = []
        self.active = 0
        self.dead = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ programmed figures

    def decode_rate_for(self, prompt_tokens: int, streams: int) -> float:
        rate = self.decode_rate / (1 + self.stream_slowdown * max(0, streams - 1))
        if self.decode_halving:
            rate /= 1 + prompt_tokens / self.decode_halving
        return rate

    expected_decode = decode_rate_for

    def in_flight_mean(self, start: float, end: float) -> float:
        """Time-weighted completion requests in flight between two time.perf_counter() instants."""
        total = 0.0
        for f in self.flights:
            a, b = max(start, f.started), min(end, f.ended if f.ended is not None else end)
            total += max(0.0, b - a)
        return total / (end - start)

    # ------------------------------------------------------------------ lifecycle

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/v1"

    def start(self) -> "PacedServer":
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._start_site())
            except BaseException as e:
                failure.append(e)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())
            pending = asyncio.all_tasks(loop)   # handlers still waiting (a dead server's): cancelled, not left
            for task in pending:
                task.cancel()

            async def drained() -> None:
                await asyncio.gather(*pending, return_exceptions=True)

            loop.run_until_complete(drained())
            loop.close()

        self._thread = threading.Thread(target=serve, name="paced-server", daemon=True)
        self._thread.start()
        if not ready.wait(10) or failure:
            raise RuntimeError(f"paced server did not start: {failure[0] if failure else 'timeout'}")
        return self

    async def _start_site(self) -> None:
        if self.slots:
            self._slots = asyncio.Semaphore(self.slots)
        app = web.Application()
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._complete)
        app.router.add_post("/v1/completions", self._complete)
        if self.with_tokenize:
            app.router.add_post("/tokenize", self._tokenize)
            app.router.add_post("/detokenize", self._detokenize)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/health", self._health)      # vLLM's and llama-server's (GuideLLM asks it first)
        app.router.add_get("/served", self._served)      # the ground truth, for a server in a process of its own
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, reuse_address=True)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(15)
        self._loop = self._thread = None

    def __enter__(self) -> "PacedServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _die(self) -> None:
        """Stop listening and cut every connection, as a killed server does."""
        self.dead = True
        for site in self._runner.sites:
            site._server.close()
        server = self._runner.server
        for proto in list(getattr(server, "connections", ()) or ()):
            transport = getattr(proto, "transport", None)
            if transport is not None:
                transport.abort()

    # ------------------------------------------------------------------ tokens

    def ids(self, text: str) -> list[int]:
        out = []
        for piece in tokenize(text):
            i = zlib.crc32(piece.encode("utf-8")) % 1_000_000
            self.vocab[i] = piece
            out.append(i)
        return out

    def cached(self, ids: list[int]) -> int:
        if not self.prefix_cache:
            return 0
        best = 0
        for old in self.cached_prompts:
            n = 0
            for a, b in zip(old, ids):
                if a != b:
                    break
                n += 1
            best = max(best, n)
        best = (best // self.cache_block) * self.cache_block
        return min(best, len(ids) - 1)

    def remember(self, ids: list[int]) -> None:
        if self.prefix_cache:
            self.cached_prompts.append(ids)
            del self.cached_prompts[:-64]

    # ------------------------------------------------------------------ handlers

    async def _models(self, request: web.Request) -> web.Response:
        await asyncio.sleep(self.latency)
        return web.json_response({"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "paced",
                                                              "max_model_len": self.context}]})

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _served(self, request: web.Request) -> web.Response:
        return web.json_response({"served": self.served})

    async def _tokenize(self, request: web.Request) -> web.Response:
        self.tokenize_calls += 1
        body = await request.json()
        if body.get("messages"):
            text = chatml(body["messages"])
        else:
            text = body.get("content", body.get("prompt", ""))
        ids = self.ids(str(text))
        return web.json_response({"tokens": ids, "count": len(ids), "max_model_len": self.context})

    async def _detokenize(self, request: web.Request) -> web.Response:
        body = await request.json()
        text = "".join(self.vocab.get(int(i), "") for i in body.get("tokens") or ())
        return web.json_response({"content": text, "prompt": text})

    async def _metrics(self, request: web.Request) -> web.Response:
        labels = f'{{engine="0",model_name="{self.model}"}}'
        lines = [f"vllm:num_requests_running{labels} {self.active}", f"vllm:generation_tokens_total{labels} {self.generated}.0"]
        for part, name in (("queue", "request_queue_time_seconds"), ("prefill", "request_prefill_time_seconds"),
                           ("ttft", "time_to_first_token_seconds")):
            total, count = self.histograms[part]
            lines += [f"vllm:{name}_sum{labels} {total}", f"vllm:{name}_count{labels} {count}.0"]
        if self.spec is None:
            return web.Response(text="\n".join(lines) + "\n")
        c = self.counters
        lines += ["# HELP vllm:spec_decode_num_drafts_total drafts", "# TYPE vllm:spec_decode_num_drafts_total counter",
                 f'vllm:spec_decode_num_drafts_total{{engine="0",model_name="{self.model}"}} {c["drafts"]}.0',
                 f'vllm:spec_decode_num_draft_tokens_total{{engine="0",model_name="{self.model}"}} {c["draft_tokens"]}.0',
                 f'vllm:spec_decode_num_accepted_tokens_total{{engine="0",model_name="{self.model}"}} {c["accepted"]}.0']
        return web.Response(text="\n".join(lines) + "\n")

    async def _complete(self, request: web.Request) -> web.StreamResponse:
        # the server's own work (parsing, tokenizing, matching the cache) is inside the programmed
        # round trip and prefill, not on top of them: on a loaded machine it is milliseconds
        arrived = asyncio.get_running_loop().time()
        body = await request.json()
        self.completions += 1
        slow = bool(self.slow_every and self.completions % self.slow_every == 0)   # by arrival
        if self.die_after is not None and self.completions >= self.die_after:
            self._die()
            await asyncio.sleep(3600)
        chat = request.path.endswith("/chat/completions")
        text = chatml(body.get("messages") or []) if chat else str(body.get("prompt", ""))
        ids = self.ids(text)
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
        await asyncio.sleep(max(0.0, self.latency - (asyncio.get_running_loop().time() - arrived)))
        if len(ids) + max_tokens > self.context:
            return web.json_response({"error": {"message": f"This model's maximum context length is {self.context} tokens. "
                                                f"However, you requested {len(ids) + max_tokens} tokens "
                                                f"({len(ids)} in the messages, {max_tokens} in the completion).",
                                                "type": "BadRequestError", "code": 400}}, status=400)
        queued = asyncio.get_running_loop().time()
        if self._slots is not None:
            await self._slots.acquire()
        flight = Flight(time.perf_counter())
        self.flights.append(flight)
        self.active += 1
        try:
            received = asyncio.get_running_loop().time()
            return await self._answer(request, body, chat, ids, max_tokens, received - queued, slow, received)
        finally:
            self.active -= 1
            flight.ended = time.perf_counter()
            if self._slots is not None:
                self._slots.release()

    async def _answer(self, request, body, chat, ids, max_tokens, queue_s: float = 0.0,
                      slow: bool = False, received: float | None = None) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        cached = self.cached(ids)
        self.remember(ids)
        stream = bool(body.get("stream"))
        base = {"id": "cmpl-paced", "created": 1700000000, "model": self.model,
                "object": "chat.completion.chunk" if chat else "text_completion"}
        response = None
        if stream:
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)

        async def send(event: dict) -> None:
            await response.write(b"data: " + json.dumps(event).encode() + b"\n\n")

        t0 = loop.time() if received is None else received
        if stream and chat and self.role_chunk:
            await send(dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]))
        prefill = (len(ids) - cached) / self.prefill_rate
        deadline = t0 + prefill
        jitter = 1.0
        if self.decode_jitter:
            jitter = 1 + self.decode_jitter * ((zlib.crc32(bytes(str(ids[:64]), "ascii"), self.jitter_seed) % 2001) / 1000.0 - 1)
        if slow:
            jitter *= self.slow_factor
        self.jitters.append(jitter)
        pieces = []
        if self.flood and stream:
            if chat not in self._blobs:   # one event per word, built once: the server's own work must not pace it
                events = []
                for word in WORDS:
                    choice = {"index": 0, "delta": {"content": " " + word}, "finish_reason": None} if chat else \
                        {"index": 0, "text": " " + word, "finish_reason": None}
                    events.append(b"data: " + json.dumps(dict(base, choices=[choice])).encode() + b"\n\n")
                self._blobs[chat] = events
            events = self._blobs[chat]
            await response.write(b"".join(events[n % len(events)] for n in range(max_tokens)))
            pieces = [""] * max_tokens
        for n in range(0 if self.flood and stream else max_tokens):
            await asyncio.sleep(max(0.0, deadline - loop.time()))
            if n == 0:
                self.histograms["queue"][0] += queue_s
                self.histograms["prefill"][0] += prefill
                self.histograms["ttft"][0] += queue_s + loop.time() - t0   # from arrival: the round trip is the network's
                for part in self.histograms:
                    self.histograms[part][1] += 1
            piece = " " + WORDS[(n * 7 + len(ids)) % len(WORDS)]
            pieces.append(piece)
            if stream:
                delta = {"content": piece} if chat else None
                choice = {"index": 0, "delta": delta, "finish_reason": None} if chat else {"index": 0, "text": piece,
                                                                                          "finish_reason": None}
                await send(dict(base, choices=[choice]))
            deadline += jitter / self.decode_rate_for(len(ids), self.active)
        prompt_ms = 1000 * prefill
        predicted_ms = 1000 * (loop.time() - t0 - prefill)
        tokens = len(pieces)
        self.generated += tokens
        self.served.append({"prompt": len(ids), "cached": cached, "queue_s": queue_s, "prefill_s": prefill,
                            "tokens": tokens, "slow": slow})
        usage = {"prompt_tokens": len(ids), "completion_tokens": tokens, "total_tokens": len(ids) + tokens,
                 "prompt_tokens_details": {"cached_tokens": cached}}
        extra: dict[str, Any] = {}
        if self.spec is not None:
            k, mean_length = self.spec
            drafts = math.ceil(tokens / mean_length)
            self.counters["drafts"] += drafts
            self.counters["draft_tokens"] += k * drafts
            self.counters["accepted"] += tokens - drafts
        if self.timings:
            extra["timings"] = {"prompt_n": len(ids) - cached, "prompt_ms": prompt_ms, "predicted_n": tokens,
                                "predicted_ms": predicted_ms, "cache_n": cached}
            if self.spec is not None:
                extra["timings"].update(draft_n=k * drafts, draft_n_accepted=tokens - drafts)
        if not stream:
            message = {"role": "assistant", "content": "".join(pieces)}
            choice = {"index": 0, "message": message, "finish_reason": "length"} if chat else \
                {"index": 0, "text": "".join(pieces), "finish_reason": "length"}
            out = dict(base, object="chat.completion" if chat else "text_completion", choices=[choice], **extra)
            if self.usage:
                out["usage"] = usage
            return web.json_response(out)
        final = {"index": 0, "delta": {}, "finish_reason": "length"} if chat else {"index": 0, "text": "",
                                                                                 "finish_reason": "length"}
        await send(dict(base, choices=[final], **extra))
        if self.usage and (body.get("stream_options") or {}).get("include_usage"):
            await send(dict(base, choices=[], usage=usage))
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


def main(argv: list[str] | None = None) -> None:
    import argparse

    p = argparse.ArgumentParser(description="the paced fake server in a process of its own")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--prefill-rate", type=float, default=4000.0)
    p.add_argument("--decode-rate", type=float, default=80.0)
    p.add_argument("--latency", type=float, default=0.0)
    p.add_argument("--context", type=int, default=8192)
    p.add_argument("--die-after", type=int, default=None)
    p.add_argument("--spec", default=None, help="K,MEAN_LENGTH")
    p.add_argument("--flood", action="store_true")
    p.add_argument("--timings", action="store_true")
    p.add_argument("--slots", type=int, default=None)
    p.add_argument("--slow-every", type=int, default=None)
    p.add_argument("--decode-halving", type=float, default=None,
                   help="decode slows as decode_rate / (1 + prompt / this)")
    a = p.parse_args(argv)
    spec = tuple(float(x) for x in a.spec.split(",")) if a.spec else None
    server = PacedServer(prefill_rate=a.prefill_rate, decode_rate=a.decode_rate, latency=a.latency, context=a.context,
                         die_after=a.die_after, spec=(int(spec[0]), spec[1]) if spec else None, flood=a.flood, timings=a.timings,
                         port=a.port, slots=a.slots, decode_halving=a.decode_halving,
                         slow_every=a.slow_every).start()
    print(server.port, flush=True)
    try:
        while server._thread is not None and server._thread.is_alive() and not server.dead:
            time.sleep(0.1)
    except KeyboardInterrupt:
        pass
    if server.dead:
        import os

        os._exit(1)   # died as programmed: the process ends, as a crashed server does
    server.stop()


if __name__ == "__main__":
    main()
