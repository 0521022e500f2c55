"""tests/fault_server.py as a real server process, for the managed-server tests (evalsuite --serve).

    python tests/managed_server.py --port 8123 --answers answers.json --requests requests.log
        [--delay 0.02] [--hang-after N] [--never-ready] [--exit-at-start CODE]

Answers every prompt key in answers.json (key -> text) healthily, appends one line
"PID KEY" to --requests when a completion request arrives (flushed, so a killed process has
written everything it received), and prints "ready" when it listens.
  --hang-after N    after N completions every request (and /v1/models) hangs: a server that
                    stops answering without dying
  --never-ready     /v1/models answers 503 for ever
  --exit-at-start C prints a complaint and exits with code C at once
  --once FILE       starts only if FILE does not exist (and makes it): a server that cannot be
                    restarted
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from aiohttp import web  # noqa: E402
from fault_server import FaultServer, prompt_key  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--answers", type=Path)
    ap.add_argument("--requests", type=Path)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--hang-after", type=int)
    ap.add_argument("--never-ready", action="store_true")
    ap.add_argument("--exit-at-start", type=int)
    ap.add_argument("--model", default="managed-model")
    ap.add_argument("--once", type=Path)
    args = ap.parse_args()
    if args.once is not None:
        if args.once.exists():
            print("managed_server: the GPU is gone (a planted failure on restart)", flush=True)
            sys.exit(1)
        args.once.write_text("started")
    if args.exit_at_start is not None:
        print("managed_server: cannot load the model file (a planted failure)", flush=True)
        sys.exit(args.exit_at_start)
    answers = json.loads(args.answers.read_text()) if args.answers else {}
    log = open(args.requests, "a", buffering=1) if args.requests else None
    pid = os.getpid()
    hang = threading.Event()

    class Server(FaultServer):
        async def _models(self, request):
            if args.never_ready:
                return web.json_response({"error": {"message": "loading"}}, status=503)
            if hang.is_set():
                await asyncio.sleep(3600)
            return await super()._models(request)

        async def _complete(self, request):
            if hang.is_set():
                await asyncio.sleep(3600)
            body = await request.json()
            users = [m.get("content", "") for m in body.get("messages", []) if m.get("role") == "user"]
            key = prompt_key(users[-1] if users else body.get("prompt", ""))
            if log:
                log.write(f"{pid} {key}\n")
            if args.hang_after is not None and self.completions + 1 >= args.hang_after:
                hang.set()
            return await super()._complete(request)

    Server(answers=answers, port=args.port, delay=args.delay, model=args.model).start()
    print(f"ready on {args.port} (pid {pid})", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
