"""The streamed client takes an SSE body block by block (Endpoint._sse hands out the events each
block completed, parsed in one go): however the body is cut into blocks, the response is the
same; an error event or a data line that is not JSON after good events in the same block still
fails the request as a broken stream (the good events were counted: no unstreamed retry)."""
from __future__ import annotations

import asyncio
import json

import pytest

from evalsuite.client.endpoint import Endpoint
from evalsuite.client.errors import EndpointError
from evalsuite.client.exchange import Decoding, Request


def event(content=None, finish=None, usage=None, lp=None):
    choice = {"index": 0, "delta": {} if content is None else {"content": content}, "finish_reason": finish}
    if lp is not None:
        choice["logprobs"] = {"content": lp}
    body = {"id": "x", "model": "stub", "choices": [] if usage else [choice]}
    if usage:
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def entry(text, tid, value):
    top = [{"token": text, "bytes": list(text.encode()), "id": tid, "logprob": value},
           {"token": " z", "bytes": [32, 122], "id": 9, "logprob": value - 2}]
    return dict(top[0], top_logprobs=top)


GOOD = (event("The", lp=[entry("The", 1, -0.1)]) + event(" answer is", lp=[entry(" answer is", 2, -0.2)])
        + b": a comment\n\n" + event(" 42", lp=[entry(" 42", 3, -0.3)]) + event(finish="stop")
        + event(usage={"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}) + b"data: [DONE]\n\n")


def complete(body: bytes, cut: int | None = None, logprobs: int | None = None):
    blocks = [body] if cut is None else [body[i:i + cut] for i in range(0, len(body), cut)]

    class Content:
        async def iter_any(self):
            for block in blocks:
                await asyncio.sleep(0)
                yield block

        def at_eof(self) -> bool:
            return True

    class Reply:
        status = 200
        content = Content()

        def release(self) -> None:
            pass

        def close(self) -> None:
            pass

    class Session:
        async def post(self, url, data=None, **kwargs):   # trace_request_ctx: client/phases.py
            return Reply()

    async def main():
        endpoint = Endpoint("http://stub/v1", None, 60)
        endpoint._session = Session()
        return await endpoint.complete(Request("t/1", ({"role": "user", "content": "q"},)), "stub",
                                       Decoding(max_tokens=16, logprobs=logprobs))
    return asyncio.run(main())


@pytest.mark.parametrize("cut", [None, 1, 7, 64])
def test_the_same_response_however_the_body_is_cut(cut):
    whole = complete(GOOD, logprobs=2)
    got = complete(GOOD, cut, logprobs=2)
    assert got.answer == whole.answer == "The answer is 42" and got.finish_reason == "stop"
    assert got.usage == whole.usage == {"prompt_tokens": 5, "completion_tokens": 3, "reasoning_tokens": None}
    assert got.logprobs.entries() == whole.logprobs.entries() and len(got.logprobs) == 3
    assert got.timing["ttft_s"] is not None and got.timing["ttfa_s"] is not None
    assert 0 <= got.timing["ttft_s"] <= got.timing["ttfa_s"] <= got.timing["total_s"]


def test_an_error_event_after_good_events_in_one_block_breaks_the_stream():
    body = event("The") + b"event: error\ndata: {\"error\": {\"message\": \"out of memory\"}}\n\n" + event(" 42")
    with pytest.raises(EndpointError) as e:
        complete(body)
    assert e.value.kind == "stream_broken" and "out of memory" in e.value.message


def test_a_data_line_that_is_not_json_after_good_events_breaks_the_stream():
    with pytest.raises(EndpointError) as e:
        complete(event("The") + b"data: {not json\n\n" + event(" 42"))
    assert e.value.kind == "stream_broken" and "broken response stream" in e.value.message


def test_what_follows_done_in_the_same_block_is_not_read():
    got = complete(event("The") + event(" 42", finish="stop") + b"data: [DONE]\n\ndata: {not json\n\n")
    assert got.answer == "The 42" and got.finish_reason == "stop"
