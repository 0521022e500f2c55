"""Watching a managed server during a run: a server that exits or stops answering is recorded
(manifest `server_restarts`), restarted on its port after a back-off, and the run goes on."""
from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from typing import Any

from ..client.endpoint import now_iso
from .managed import PROBE_TIMEOUT_S, ManagedServer, ServerFailed, probe

WATCH_POLL_S = 0.2
HEALTH_EVERY_S = 2.0


def backoff(restart: int) -> float:
    """Seconds to wait before restart number `restart` (1, 2, ...)."""
    return min(30.0, 0.5 * 2 ** (restart - 1))



class Supervisor:
    """Watches a managed server during a run and restarts it when it dies or hangs."""

    def __init__(self, server: ManagedServer, max_restarts: int = 3, hang_timeout: float = 120.0, quiet: bool = False):
        self.server, self.max_restarts, self.hang_timeout, self.quiet = server, max_restarts, hang_timeout, quiet
        self.events: list[dict[str, Any]] = []
        self.restarts = 0
        self.scheduler = None
        self.task: asyncio.Task | None = None
        self.entry: dict[str, Any] | None = None
        self.session = f"{os.getpid()}-{time.time():.3f}"   # this invocation, beside a resumed run's earlier ones

    def attach(self, scheduler) -> None:
        """From the runner, once its Scheduler exists: watch from now on."""
        self.scheduler = scheduler
        self.task = asyncio.get_running_loop().create_task(self.watch())
        self.task.add_done_callback(self._watch_ended)

    def _watch_ended(self, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:   # a bug here must not pass unseen
            print(f"warning: the managed server is no longer watched ({type(task.exception()).__name__}: "
                  f"{task.exception()}); a crash will not be restarted", file=sys.stderr)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
            self.task = None

    def annotate(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """The manifest with engine.managed and the restarts of this invocation added (a
        resumed run keeps the earlier ones)."""
        engine = dict(manifest.get("engine") or {})
        if self.entry is not None:
            engine["managed"] = self.entry
        manifest = dict(manifest, engine=engine)
        earlier = [e for e in manifest.get("server_restarts") or () if e.get("session") != self.session]
        mine = [dict(e, session=self.session) for e in self.events]
        if earlier or mine:
            manifest["server_restarts"] = earlier + mine
        if mine and manifest.get("speculation"):
            note = "the server restarted during the run: its counters cover only the time since the last restart"
            manifest["speculation"] = {u: dict(v, note=note) for u, v in manifest["speculation"].items()}
        return manifest

    def say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr)

    async def watch(self) -> None:
        server = self.server
        last_ok = last_probe = time.monotonic()
        while True:
            await asyncio.sleep(WATCH_POLL_S)
            code = server.exit_code()
            if code is not None:
                if not await self.restart(f"exited with code {code}" + _signal_name(code), code):
                    return
                last_ok = last_probe = time.monotonic()
                continue
            now = time.monotonic()
            if now - last_probe < HEALTH_EVERY_S:
                continue
            last_probe = now
            why = await asyncio.to_thread(probe, server.base, min(PROBE_TIMEOUT_S, max(1.0, self.hang_timeout)))
            if why is None:
                last_ok = time.monotonic()
            elif time.monotonic() - last_ok > self.hang_timeout:
                server.kill()
                if not await self.restart(f"stopped answering for {time.monotonic() - last_ok:.0f} s ({why}); killed",
                                          server.exit_code()):
                    return
                last_ok = last_probe = time.monotonic()

    async def restart(self, reason: str, code: int | None) -> bool:
        """Record the event and bring the server back; False when it is given up (the run stops)."""
        server, scheduler = self.server, self.scheduler
        event = {"at": now_iso(), "reason": reason, "exit_code": code, "pid": server.proc.pid if server.proc else None,
                 "log_tail": server.log_tail(), "attempts": 0}
        self.events.append(event)
        url = server.url
        scheduler.restarting.add(url)
        self.say(f"\nthe managed server {reason}; last lines of {server.log_path}:\n{event['log_tail']}")
        try:
            while True:
                if self.restarts >= self.max_restarts:
                    event["outcome"] = "given up"
                    scheduler.stopped_reason = scheduler.stopped_reason or (
                        f"the managed server {reason}, and it was restarted {self.restarts} time(s) already "
                        f"(--max-restarts {self.max_restarts}); its log: {server.log_path}")
                    return False
                self.restarts += 1
                event["attempts"] += 1
                wait = backoff(self.restarts)
                self.say(f"restarting it in {wait:g} s (restart {self.restarts} of at most {self.max_restarts})")
                await asyncio.sleep(wait)
                server.stop()   # anything of the old group still alive
                t0 = time.monotonic()
                try:
                    server.launch()
                    await server.wait_ready()
                except ServerFailed as e:
                    event.setdefault("failed_starts", []).append(str(e)[-2000:])
                    self.say(f"the restart failed: {str(e)[-1500:]}")
                    continue
                event.update(outcome="restarted", ready_after_s=round(time.monotonic() - t0, 3), new_pid=server.proc.pid)
                self.say(f"the server is back at {url} (pid {server.proc.pid}, ready in {event['ready_after_s']:.1f} s); "
                         f"the items that were in flight are asked again")
                return True
        finally:
            # mark_up, not down_since alone: it also wakes the items waiting for the endpoint to answer
            # (the watchdog may have marked it down before the exit was seen)
            scheduler.mark_up(url)
            scheduler.restarting.discard(url)


def _signal_name(code: int) -> str:
    if code < 0:
        try:
            return f" ({signal.Signals(-code).name})"
        except ValueError:
            return ""
    return ""
