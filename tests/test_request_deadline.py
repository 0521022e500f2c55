"""--timeout is one deadline for an item's request: a stream that opens and then stalls is
re-sent unstreamed (llama-cpp-python's empty stream for an over-long prompt), but within the
same deadline, never 3x it."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest
from aiohttp import web

from evalsuite.client import Decoding, Endpoint, Request
from evalsuite.errors import EndpointError


class StallingServer:
    """Answers /v1/models; every completion opens its response (headers sent) and never sends a byte more."""

    def __init__(self):
        self.port = None
        self.completions = 0
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()

    async def _models(self, request):
        return web.json_response({"object": "list", "data": [{"id": "m", "object": "model"}]})

    async def _stall(self, request):
        self.completions += 1
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await asyncio.sleep(60)
        return response

    def start(self):
        def serve():
            asyncio.set_event_loop(self.loop)
            app = web.Application()
            app.router.add_get("/v1/models", self._models)
            app.router.add_post("/v1/chat/completions", self._stall)
            runner = web.AppRunner(app, shutdown_timeout=0.1)
            self.loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", 0)
            self.loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]
            self.ready.set()
            self.loop.run_forever()

        threading.Thread(target=serve, daemon=True).start()
        self.ready.wait(10)
        return self

    def stop(self):
        self.loop.call_soon_threadsafe(self.loop.stop)


def test_a_stalled_stream_is_given_one_deadline_in_all():
    server = StallingServer().start()
    try:
        async def ask():
            endpoint = Endpoint(f"http://127.0.0.1:{server.port}/v1", None, 1.5, "chat", True)
            try:
                t0 = time.monotonic()
                with pytest.raises(EndpointError) as err:
                    await endpoint.complete(Request("x", messages=({"role": "user", "content": "hi"},)), "m",
                                            Decoding(max_tokens=8))
                return time.monotonic() - t0, err.value
            finally:
                await endpoint.close()

        elapsed, error = asyncio.run(ask())
    finally:
        server.stop()
    assert error.kind == "timeout"
    assert elapsed < 1.5 + 1.0, f"{elapsed:.1f} s for a 1.5 s --timeout"
