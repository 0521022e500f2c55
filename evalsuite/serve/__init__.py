"""Managed servers: evalsuite starts the server it evaluates, watches it, restarts it and stops it.

    evalsuite run gsm8k --serve "llama-server -m model.gguf --port {port}"

The command is split like a shell would (shlex; leading NAME=value words set environment
variables; no shell runs it), `{port}` is filled with a free loopback port (or the port named by
`--port N` is used), and `{name}` placeholders are filled from a sweep's values (evalsuite.serve.sweep).
The server runs in its own session and process group, its stdout/stderr appended to
RUN_DIR/server.log, its PID in RUN_DIR/server.pid. It is ready when GET /v1/models lists models
(and /health, where the server has one, does not say 503 "loading"). It is stopped — SIGTERM to
the whole group, SIGKILL after `stop_timeout` — at the end of the run, on Ctrl-C/SIGTERM and on
any error; on Linux the server also gets SIGTERM if the evalsuite process itself dies (SIGKILL).

While the run goes on, `Supervisor` polls the process (every 0.2 s) and its health (every 2 s).
A server that exits, or stops answering for `hang_timeout` seconds, is recorded (time, exit
code, last log lines: manifest `server_restarts`), killed, restarted on the same port after a
back-off (0.5 s, 1 s, 2 s ... at most 30 s), waited for until healthy, and the run goes on. The
runner's workers hold their requests while it is being restarted (Scheduler.restarting), so an
item that was in flight is sent again once, to the restarted server; nothing recorded is touched.
After `max_restarts` restarts in one invocation the run stops (exit 3, resumable), as when an
endpoint is down past --max-downtime.

Nothing here knows an engine: llama-server, vLLM, SGLang and `transformers serve` are command
lines. Engine detection stays in evalsuite.engines.

The rooms: command.py (the command line as typed), managed.py (one server: launch, readiness,
stop, log), process_group.py (signals to its group), fingerprint.py (what is served),
supervisor.py (watching and restarting it during a run), embedded.py (the llama-server that
`run --model FILE.gguf` starts); here, the entries the runner and the lossless command call.
"""
from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Awaitable, Callable

from ..errors import UsageError
from .managed import LOG_NAME, ManagedServer
from .supervisor import Supervisor


async def serve_and_run(settings, run_async: Callable[[Any], Awaitable[int]]) -> int:
    """Start settings.serve, run with its URL as the endpoint under a Supervisor, stop it whatever happens."""
    from ..run.manifest import resume_command
    from ..store import RECORDS

    if settings.endpoints:
        raise UsageError("give either --endpoint or --serve, not both: --serve starts the server and asks it")
    # cheap refusals before a server is started (a model load may take minutes)
    from ..tasks import UnknownPackError, get_pack

    try:
        get_pack(settings.pack)
    except UnknownPackError as e:
        raise UsageError(str(e)) from None
    records = settings.run_dir / RECORDS
    if not settings.resume and records.exists() and records.stat().st_size > 0:
        raise UsageError(f"{settings.run_dir} already holds records. To continue that run:\n  "
                         f"{resume_command(settings.argv, settings.run_dir)}\nor choose another --run-dir.")
    secret = os.environ.get(settings.api_key_env or "OPENAI_API_KEY")
    server = ManagedServer(settings.serve, settings.run_dir, ready_timeout=settings.serve_timeout, secret=secret,
                           quiet=settings.quiet)
    supervisor = Supervisor(server, max_restarts=settings.max_restarts, hang_timeout=settings.serve_hang_timeout,
                            quiet=settings.quiet)
    try:
        await server.start()
        supervisor.entry = await server.entry()
        return await run_async(replace(settings, endpoints=(server.url,), managed=supervisor))
    finally:
        await supervisor.close()
        server.stop()
        if not settings.quiet and server.proc is not None:
            print(f"server stopped (pid {server.proc.pid}, exit {server.proc.returncode})", file=sys.stderr)


def run_with_server(command: str | None, folder: Path, fn: Callable[[str | None], Any], *, ready_timeout: float = 600.0,
                    quiet: bool = False, log_name: str = LOG_NAME) -> Any:
    """fn(url of the server `command` starts), the server stopped afterwards; fn(None) without a
    command. For steps outside a run (lossless --rescore on a managed baseline)."""
    if command is None:
        return fn(None)
    server = ManagedServer(command, folder, ready_timeout=ready_timeout, quiet=quiet, log_name=log_name)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(server.start())
        return fn(server.url)
    finally:
        server.stop()
        loop.close()
