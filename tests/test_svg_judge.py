"""The optional judge, against a tiny local aiohttp stub that returns a canned JSON score."""
from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Iterator

import pytest
from aiohttp import web

from test_svg_grader import PELICAN
from test_svg_render import svg_run

from evalsuite.svg.judge import JUDGE_FILE, RUBRIC, parse_judge_reply, read_judge


@pytest.mark.parametrize("reply, expected", [
    ('{"score": 7, "reason": "a fine pelican"}', (7, "a fine pelican")),
    ('Sure!\n```json\n{"score": 10, "reason": "perfect"}\n```', (10, "perfect")),
    ('<think>{"score": 1}</think>{"score": 3, "reason": "meh"}', (3, "meh")),
    ('{"score": 11, "reason": "x"}', (None, "score out of range or not an integer: 11")),
    ('{"score": 6.5}', (None, "score out of range or not an integer: 6.5")),
    ("Score: 4 because it is a blob", (4, "Score: 4 because it is a blob")),
    ("no idea", (None, "no score in the judge's reply")),
])
def test_parse_judge_reply(reply, expected):
    assert parse_judge_reply(reply) == expected


@pytest.fixture()
def stub_judge() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An OpenAI-compatible stub on loopback: lists one model, scores everything 7."""
    requests: list[dict[str, Any]] = []

    async def models(_request):
        return web.json_response({"object": "list", "data": [{"id": "judge-1", "object": "model"}]})

    async def chat(request):
        body = await request.json()
        requests.append(body)
        content = json.dumps({"score": 7, "reason": "a recognisable pelican"})
        return web.json_response({
            "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })

    loop = asyncio.new_event_loop()
    app = web.Application()
    app.add_routes([web.get("/v1/models", models), web.post("/v1/chat/completions", chat)])
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}", requests
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def test_judge_run_writes_scores_beside_the_records(tmp_path, stub_judge):
    from evalsuite.svg.judge import judge_run

    url, requests = stub_judge
    run = svg_run(tmp_path / "run", {"svg/pelican-bicycle": f"```svg\n{PELICAN}\n```", "svg/teapot": "no"})
    records_before = (run / "records.jsonl").read_bytes()
    results = judge_run(run, url)
    assert [(r.id, r.score) for r in results] == [("svg/pelican-bicycle", 7), ("svg/teapot", None)]
    assert len(requests) == 1  # only the valid SVG is judged
    sent = requests[0]
    assert sent["model"] == "judge-1" and sent["temperature"] == 0
    assert sent["messages"][0]["content"] == RUBRIC
    assert PELICAN in sent["messages"][1]["content"] and "pelican riding a bicycle" in sent["messages"][1]["content"]
    judged = read_judge(run)
    assert judged["svg/pelican-bicycle"]["score"] == 7 and judged["svg/pelican-bicycle"]["judge_model"] == "judge-1"
    assert judged["svg/teapot"]["reason"] == "no valid SVG to judge"
    assert (run / JUDGE_FILE).read_text().count("\n") == 2
    assert (run / "records.jsonl").read_bytes() == records_before  # answers untouched


def test_judge_through_the_cli_and_into_the_gallery(tmp_path, stub_judge, run_cli):
    url, _ = stub_judge
    run = svg_run(tmp_path / "run", {"svg/pelican-bicycle": PELICAN})
    done = run_cli("svg-render", run, "--size", "32", "--judge-endpoint", url + "/v1", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "judge: 1/1 scored, mean 7.00" in done.stdout
    from evalsuite.analysis.gallery import write_gallery

    page = write_gallery([run], tmp_path / "g.html", render=False).read_text()
    assert "judge: <b>7/10</b> a recognisable pelican" in page
