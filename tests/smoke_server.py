"""tests/sampling_stub.py as a server process, for the wheel smoke test (.ci/wheel_smoke.py) and
as `sweep --serve` command: it needs only aiohttp, which the wheel brings.

    python tests/smoke_server.py --port 8123 [--shift 0.3] [--p 0.8]

A question that asks "What is A plus B?" is answered "Thus the answer is A+B" with probability
`p - shift`, else "So the answer is A+B+1", drawn from (the request's seed, the prompt) as
SamplingStub does: greedy requests (one seed) always get the same answer, `--samples` runs get
their spread, and a `--shift` server is a worse candidate. Any other prompt (the svg pack) gets a
small SVG document in a ```svg block. Streamed (SSE, usage last) or not; token logprobs with the
top-K alternatives when asked, as llama-server sends them. Ready when GET /v1/models answers.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from aiohttp import web  # noqa: E402
from fault_server import prompt_key  # noqa: E402
from sampling_stub import _entry, answer_text, draw  # noqa: E402

MODEL = "smoke-model"
QUESTION = re.compile(r"What is (\d+) plus (\d+)\?")
SVG = ("Here it is.\n\n```svg\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"64\" height=\"64\" viewBox=\"0 0 64 64\">"
       "<rect x=\"8\" y=\"8\" width=\"48\" height=\"48\" fill=\"#c33\"/><circle cx=\"32\" cy=\"32\" r=\"12\" fill=\"#fff\"/>"
       "</svg>\n```")


def reply(prompt: str, seed, p: float) -> str:
    asked = QUESTION.findall(prompt)
    if not asked:
        return SVG
    a, b = asked[-1]
    correct, wrong = draw(seed, prompt_key(prompt), max(0.0, p))
    return answer_text(str(int(a) + int(b)), correct, wrong)


def app(p: float) -> web.Application:
    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        users = [m.get("content", "") for m in body.get("messages", []) if m.get("role") == "user"]
        text = reply(users[-1] if users else "", body.get("seed"), p)
        words = [w if i == 0 else " " + w for i, w in enumerate(text.split(" "))]
        k = int(body.get("top_logprobs") or 1)
        logprobs = {"content": [_entry(w, k) for w in words]} if body.get("logprobs") else None
        usage = {"prompt_tokens": 10, "completion_tokens": len(words), "total_tokens": 10 + len(words)}
        if not body.get("stream"):
            choice = {"index": 0, "message": {"role": "assistant", "content": "".join(words)}, "finish_reason": "stop",
                      "logprobs": logprobs}
            return web.json_response({"id": "smoke", "object": "chat.completion", "created": 0, "model": MODEL,
                                      "choices": [choice], "usage": usage})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        base = {"id": "smoke", "object": "chat.completion.chunk", "created": 0, "model": MODEL}

        async def send(chunk: dict) -> None:
            await response.write(b"data: " + json.dumps(dict(base, **chunk)).encode() + b"\n\n")

        for n, word in enumerate(words):
            choice = {"index": 0, "delta": {"content": word}, "finish_reason": None}
            if logprobs:
                choice["logprobs"] = {"content": [logprobs["content"][n]]}
            await send({"choices": [choice]})
        await send({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        await send({"choices": [], "usage": usage})
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    application = web.Application()
    application.router.add_get("/v1/models", models)
    application.router.add_post("/v1/chat/completions", chat)
    return application


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--p", type=float, default=0.8, help="probability of a correct answer")
    ap.add_argument("--shift", type=float, default=0.0, help="taken off --p (a worse candidate)")
    args = ap.parse_args()
    web.run_app(app(args.p - args.shift), host="127.0.0.1", port=args.port, print=None,
                handle_signals=True)


if __name__ == "__main__":
    main()
