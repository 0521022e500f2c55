"""A server that closes each connection after a stream while announcing keep-alive (llama-server
does: `Keep-Alive: timeout=5, max=100`, then the socket closed). The client's pool hands the
closed connection to the next request, whose write fails before any answer. That request never
reached the server: it must be sent again at once, streamed, so its token timings are kept. It
used to be answered unstreamed (the empty-stream fallback), which left every second record of a
run against llama-server without a time to first token, and cost a second each."""
from __future__ import annotations

import asyncio

from fault_server import FaultServer

from evalsuite.client.endpoint import Endpoint
from evalsuite.client.exchange import Decoding, Request


async def _ask_in_turn(url: str, n: int) -> list:
    endpoint = Endpoint(url, None, timeout=30)
    try:
        return [await endpoint.complete(Request(item_id=str(i), messages=({"role": "user", "content": f"Q{i}"},)),
                                        "fault-model", Decoding(max_tokens=16)) for i in range(n)]
    finally:
        await endpoint.close()


def test_a_closed_keep_alive_connection_is_sent_again_streamed_not_unstreamed():
    with FaultServer(close_after_stream=True, default_answer="The answer is 42.") as server:
        responses = asyncio.run(_ask_in_turn(server.url, 8))
        asked = server.completions
    assert [r.answer for r in responses] == ["The answer is 42."] * 8
    # every answer streamed: a first-token time each (an unstreamed answer has none)
    assert all(r.timing.get("ttft_s") is not None for r in responses), [r.timing for r in responses]
    assert asked == 8   # the sends that failed never reached the server; none was asked twice


def test_the_same_server_keeping_its_connections_needs_no_resend():
    with FaultServer(default_answer="The answer is 42.") as server:
        responses = asyncio.run(_ask_in_turn(server.url, 4))
        assert server.completions == 4
    assert all(r.timing.get("ttft_s") is not None for r in responses)
