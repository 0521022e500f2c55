"""A server command that logs which process was asked which prompt, in front of a real server:

    python tests/logging_proxy.py --port 8123 --requests requests.log -- llama-server -m M.gguf --port INNER_PORT

starts the command (its INNER_PORT filled with a free one) in this process's group and
forwards every request to it (streams included, chunk by chunk). Each completion request is
logged as "PID KEY" (this proxy's PID, tests/fault_server.prompt_key of the last user message)
when it arrives, flushed at once, so a SIGKILL to the group loses nothing of what was asked.
When the inner server exits, the proxy exits with its code. The managed-server tests kill the
whole group, as the OOM killer kills a server.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp  # noqa: E402
from aiohttp import web  # noqa: E402
from fault_server import prompt_key  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--requests", type=Path, required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    inner_port = free_port()
    command = [w.replace("INNER_PORT", str(inner_port)) for w in args.command if w != "--"]
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    inner = f"http://127.0.0.1:{inner_port}"
    log = open(args.requests, "a", buffering=1)
    pid = os.getpid()
    session: aiohttp.ClientSession | None = None

    async def forward(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if request.method == "POST" and request.path.endswith("completions"):
            try:
                data = json.loads(body)
                users = [m.get("content", "") for m in data.get("messages") or () if m.get("role") == "user"]
                log.write(f"{pid} {prompt_key(users[-1] if users else data.get('prompt', ''))}\n")
            except (ValueError, AttributeError):
                pass
        try:
            async with session.request(request.method, inner + request.path_qs, data=body,
                                       headers={"Content-Type": request.headers.get("Content-Type", "application/json")}
                                       ) as reply:
                response = web.StreamResponse(status=reply.status, headers={
                    "Content-Type": reply.headers.get("Content-Type", "application/json")})
                await response.prepare(request)
                async for chunk in reply.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
                return response
        except aiohttp.ClientError as e:
            return web.json_response({"error": {"message": f"proxy: {e}"}}, status=502)

    async def watch_child() -> None:
        while child.poll() is None:
            await asyncio.sleep(0.1)
        os._exit(child.returncode if child.returncode >= 0 else 128 - child.returncode)

    async def serve() -> None:
        nonlocal session
        # one connection per request: llama-server closes a keep-alive connection after 100 requests,
        # and a request sent on it just then would fail here and be asked again by the client
        session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None),
                                        connector=aiohttp.TCPConnector(force_close=True))
        app = web.Application(client_max_size=64 << 20)
        app.router.add_route("*", "/{tail:.*}", forward)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", args.port, reuse_address=True).start()
        await watch_child()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
