"""--timeout is one deadline for an item's request: a stream that opens and then stalls is
re-sent unstreamed (llama-cpp-python's empty stream for an over-long prompt), but within the
same deadline, never 3x it."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest
from aiohttp import web

from evalsuite.client.endpoint import Endpoint
from evalsuite.client.exchange import Decoding, Request
from evalsuite.client.errors import EndpointError


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
    # the stream stalls: one deadline ends it and leaves no time for an unstreamed re-send. A
    # second deadline (the re-send given its own) takes at least 2 x timeout in all, so that is
    # the bound: a loaded machine gets a whole timeout of slack (it had 1.0 s)
    timeout = 3.0
    server = StallingServer().start()
    try:
        async def ask():
            endpoint = Endpoint(f"http://127.0.0.1:{server.port}/v1", None, timeout, "chat", True)
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
    assert elapsed < 2 * timeout, f"{elapsed:.1f} s for a {timeout:g} s --timeout"


def _ask(server, coro_of_endpoint, timeout: float = 1.5):
    async def main():
        endpoint = Endpoint(f"http://127.0.0.1:{server.port}/v1", None, timeout, "chat", True)
        try:
            return await coro_of_endpoint(endpoint)
        finally:
            await endpoint.close()
    return asyncio.run(main())


def _request():
    return Request("x", messages=({"role": "user", "content": "hi"},))


def test_a_deadline_that_passed_leaves_no_coroutine_unawaited():
    """Issue 21 #11: the unstreamed re-send's coroutine was made before the time left was checked,
    so a deadline already passed left `coroutine 'Endpoint._stream' was never awaited`."""
    import gc
    import warnings

    server = StallingServer().start()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            async def ask(endpoint):
                with pytest.raises(EndpointError):
                    await endpoint.complete(_request(), "m", Decoding(max_tokens=8))

            _ask(server, ask)
            gc.collect()
    finally:
        server.stop()
    assert not [w for w in caught if "never awaited" in str(w.message)], [str(w.message) for w in caught]


def test_abandoned_attempts_end_as_connection_errors_at_once():
    """The runner's watchdog cuts requests a silent server holds: each ends at once as `connection`
    (the run waits for the endpoint, without spending the item's retries), with the reason."""
    server = StallingServer().start()
    try:
        async def ask(endpoint):
            tasks = [asyncio.create_task(endpoint.complete(_request(), "m", Decoding(max_tokens=8))) for _ in range(3)]
            while endpoint.in_flight < 3:
                await asyncio.sleep(0.01)
            t0 = time.monotonic()
            assert endpoint.abandon_in_flight("it stopped answering") == 3
            results = await asyncio.gather(*tasks, return_exceptions=True)
            return time.monotonic() - t0, results, endpoint.in_flight

        elapsed, results, left = _ask(server, ask, timeout=30)
    finally:
        server.stop()
    # at once: not after the 30 s deadline nor the server's 60 s stall (a bound far below both,
    # not one a loaded machine can miss)
    assert elapsed < 30 / 3 and left == 0
    assert all(isinstance(r, EndpointError) and r.kind == "connection" and "stopped answering" in r.message
               for r in results), results


def test_a_cancelled_run_is_not_taken_for_an_abandoned_attempt():
    server = StallingServer().start()
    try:
        async def ask(endpoint):
            task = asyncio.create_task(endpoint.complete(_request(), "m", Decoding(max_tokens=8)))
            while endpoint.in_flight < 1:
                await asyncio.sleep(0.01)
            task.cancel()   # Ctrl-C
            with pytest.raises(asyncio.CancelledError):
                await task
            return endpoint.in_flight

        assert _ask(server, ask, timeout=30) == 0
    finally:
        server.stop()


def test_a_task_whose_attempt_was_abandoned_sends_again_and_can_be_cut_again():
    """An attempt runs in the task that sends it, and abandon_in_flight() cancels that task: the
    cancellation is taken back, so the same worker sends its next request normally, a second cut
    is a `connection` error again (not taken for a Ctrl-C), and a real cancel still cancels."""
    server = StallingServer().start()
    try:
        seen = []

        async def ask(endpoint):
            async def worker():
                for _ in range(2):
                    try:
                        await endpoint.complete(_request(), "m", Decoding(max_tokens=8))
                    except EndpointError as e:
                        seen.append((e.kind, asyncio.current_task().cancelling()))
                await endpoint.complete(_request(), "m", Decoding(max_tokens=8))   # cancelled below

            task = asyncio.create_task(worker())
            for n in range(2):
                while endpoint.in_flight < 1:
                    await asyncio.sleep(0.01)
                assert endpoint.abandon_in_flight("it stopped answering") == 1
                while len(seen) <= n and not task.done():
                    await asyncio.sleep(0.01)
            while endpoint.in_flight < 1 and not task.done():
                await asyncio.sleep(0.01)
            task.cancel()   # Ctrl-C
            with pytest.raises(asyncio.CancelledError):
                await task
            return task.cancelling(), endpoint.in_flight

        assert _ask(server, ask, timeout=30) == (1, 0)
        assert seen == [("connection", 0), ("connection", 0)]
    finally:
        server.stop()
