"""The client against real engine responses replayed byte for byte (tests/engines/fixtures/):
each engine's quirks handled without the engine."""
from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from aiohttp import web

from evalsuite.client.endpoint import Endpoint
from evalsuite.client.exchange import Decoding, Request
from evalsuite.client.errors import EndpointError

FIXTURES = Path(__file__).parent / "fixtures"


class ReplayServer:
    """Serves one recorded response: the .sse file's bytes to a streamed request, the .json
    file to an unstreamed one; /v1/models lists "tiny"."""

    def __init__(self, name: str):
        self.name = name
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.port = None

    async def _models(self, request):
        return web.json_response({"object": "list", "data": [{"id": "tiny", "object": "model"}]})

    async def _complete(self, request):
        body = await request.json()
        if body.get("stream"):
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write((FIXTURES / f"{self.name}.sse").read_bytes())
            await response.write_eof()
            return response
        return web.json_response(json.loads((FIXTURES / f"{self.name}.json").read_text()))

    def __enter__(self):
        def serve():
            asyncio.set_event_loop(self.loop)
            app = web.Application()
            app.router.add_get("/v1/models", self._models)
            app.router.add_post("/v1/chat/completions", self._complete)
            app.router.add_post("/v1/completions", self._complete)
            self.runner = web.AppRunner(app, shutdown_timeout=0.1)
            self.loop.run_until_complete(self.runner.setup())
            site = web.TCPSite(self.runner, "127.0.0.1", 0)
            self.loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]
            self.ready.set()
            self.loop.run_forever()

        threading.Thread(target=serve, daemon=True).start()
        self.ready.wait(10)
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.loop.stop)

    def ask(self, stream: bool, api: str = "chat", logprobs: int | None = 3):
        async def go():
            endpoint = Endpoint(f"http://127.0.0.1:{self.port}/v1", None, 30.0, api, stream)
            try:
                request = (Request("x", messages=({"role": "user", "content": "hi"},)) if api == "chat"
                           else Request("x", prompt="The answer is"))
                return await endpoint.complete(request, "tiny", Decoding(max_tokens=48, logprobs=logprobs))
            finally:
                await endpoint.close()
        return asyncio.run(go())


def entries(response) -> list[dict]:
    return response.logprobs.entries() if response.logprobs is not None else []


def spelled(es) -> str:
    return b"".join(bytes(e["bytes"]) for e in es if e.get("bytes")).decode("utf-8", "replace")


def test_llama_cpp_python_cut_stream_names_the_flag():
    with ReplayServer("llama_cpp_python-interrupted-stream") as server:
        with pytest.raises(EndpointError) as err:
            server.ask(stream=True)
    assert err.value.kind == "stream_broken"
    assert "--interrupt_requests false" in err.value.message and "--concurrency 1" in err.value.message


def test_llama_server_drafted_tokens_are_missing_numbers_not_certainty():
    with ReplayServer("llama_server-draft-chat-logprobs") as server:
        response = server.ask(stream=False)
    es = entries(response)
    raw = json.loads((FIXTURES / "llama_server-draft-chat-logprobs.json").read_text())["choices"][0]["logprobs"]["content"]
    drafted = [i for i, e in enumerate(raw) if e["logprob"] == 0.0 and not e["top_logprobs"]]
    assert drafted and len(es) == len(raw)
    assert all(es[i]["logprob"] is None for i in drafted)
    assert not any(e["logprob"] == 0.0 and not e["top"] for e in es)
    assert [e["id"] for e in es] == [e["id"] for e in raw]     # ids kept: the diff aligns by them


def test_llama_server_completions_logprobs_in_the_chat_shape_are_read():
    with ReplayServer("llama_server-completions-logprobs") as server:
        response = server.ask(stream=False, api="completions")
    es = entries(response)
    assert es and all(e["id"] is not None and e["top"] for e in es)


def test_vllm_partial_utf8_stream_keeps_text_and_bytes_aligned():
    with ReplayServer("vllm-chat-stream-partial-utf8") as server:
        response = server.ask(stream=True)
    es = entries(response)
    assert any(e["token"] == "" for e in es)
    assert spelled(es) == response.answer
    assert response.usage["completion_tokens"] == len(es)


def test_vllm_several_tokens_per_chunk_under_speculation():
    with ReplayServer("vllm-ngram-chat-stream-partial-utf8") as server:
        response = server.ask(stream=True)
    es = entries(response)
    assert response.usage["completion_tokens"] == len(es) and spelled(es) == response.answer


def test_transformers_serve_stream_without_done_and_without_logprobs():
    with ReplayServer("transformers-chat-stream") as server:
        response = server.ask(stream=True)
    assert response.finish_reason == "length" and response.usage["completion_tokens"] == 48
    assert entries(response) == []
