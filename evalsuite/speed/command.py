"""`evalsuite speed`: the profile of an endpoint (or of a managed server), written as a table,
JSON and an HTML page. Exit codes: 0 every test measured, 1 some test errored or had failed
requests, 2 bad usage (nothing measured), 3 the server went away (the rows so far are kept,
marked partial), 130 interrupted (the same)."""
from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from .endpoint import UsageError, managed_server
from .profiling import measure_profile
from .rows import Profile, write_profile
from .settings import SpeedSettings, check

EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_DOWN, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class ServerWatch:
    """What a managed server's Supervisor (serve/supervisor.py) expects of the run it serves: the
    URLs being restarted, why it gave up, `mark_up` when one is back. The profile's streams hold
    while a restart goes on."""

    def __init__(self, supervisor, alive: Callable, wait_limit: float):
        self.supervisor = supervisor
        self.restarting: set[str] = set()
        self.stopped_reason: str | None = None
        self._alive, self._limit = alive, wait_limit

    def mark_up(self, url: str) -> None:
        pass

    @property
    def restarts(self) -> int:
        return self.supervisor.restarts

    async def wait_up(self) -> bool:
        """True once the server answers again (the Supervisor restarted it), False when it gave up."""
        deadline = time.monotonic() + self._limit
        while time.monotonic() < deadline:
            if self.stopped_reason:
                return False
            if not self.restarting and await self._alive():
                return True
            await asyncio.sleep(0.2)
        return False


def exit_code(profile: Profile) -> int:
    if profile.status == "partial":
        return EXIT_DOWN
    if profile.status == "interrupted":
        return EXIT_INTERRUPTED
    if any(r.error or r.failed for r in profile.rows) or (profile.soak and profile.soak.failed):
        return EXIT_ERRORS
    if (profile.load and any(p.failed for p in profile.load.points)) or \
            (profile.replay and any(t.error for t in profile.replay.turns)):
        return EXIT_ERRORS
    return EXIT_OK


def default_folder(settings: SpeedSettings) -> Path:
    if settings.server_folder:
        return settings.server_folder
    if settings.json_path:
        return settings.json_path.parent
    return Path("results") / f"speed-{time.strftime('%Y%m%d-%H%M%S')}"


async def profile_async(settings: SpeedSettings, echo: Callable[[str], None] | None = None,
                        checkpoint: Callable[[Profile], None] | None = None) -> Profile:
    """The profile of `settings`: its endpoint, or the managed server `settings.serve` started,
    watched and restarted as in `run`, and stopped at the end. Raises UsageError."""
    check(settings)
    if not settings.serve:
        return await measure_profile(settings, settings.endpoint or "http://127.0.0.1:8080/v1", echo, checkpoint)
    from .endpoint import SpeedEndpoint

    folder = default_folder(settings)
    folder.mkdir(parents=True, exist_ok=True)
    server, supervisor = managed_server(settings.serve, folder, settings.serve_timeout, settings.quiet,
                                        settings.max_restarts, settings.serve_hang_timeout)
    try:
        await server.start()
        probe = SpeedEndpoint(server.url, None, 5.0)
        watch = ServerWatch(supervisor, probe.alive, settings.serve_timeout + 60)
        supervisor.attach(watch)
        try:
            profile = await measure_profile(replace(settings, endpoint=server.url), server.url, echo, checkpoint, watch)
        finally:
            await probe.close()
        return replace(profile, server_restarts=tuple(supervisor.events))
    finally:
        await supervisor.close()
        server.stop()


def speed_main(settings: SpeedSettings, echo: Callable[[str], None] | None = None) -> int:
    """The command: measure, print, write. Returns the exit code."""
    out = echo or (lambda line: print(line))
    progress = None if settings.quiet else (lambda line: print(line, file=sys.stderr, flush=True))

    def checkpoint(profile: Profile) -> None:
        if settings.json_path:
            write_profile(settings.json_path, profile)

    try:
        check(settings)
        if settings.replay is not None:
            from .replay import read_conversations

            read_conversations(settings.replay)   # a bad file is said before any server is asked
        for path, option in ((settings.json_path, "--json"), (settings.html_path, "--html")):
            if path is not None and not Path(path).parent.exists():
                raise UsageError(f"{option} {path}: the folder {Path(path).parent} does not exist")
        profile = asyncio.run(profile_async(settings, progress, checkpoint))
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted: the rows measured so far are in --json (status interrupted)", file=sys.stderr)
        return EXIT_INTERRUPTED
    checkpoint(profile)
    return finish(profile, settings, out)


def finish(profile: Profile, settings: SpeedSettings, out: Callable[[str], None]) -> int:
    from .table import profile_csv, profile_table

    if settings.output == "json":
        out(json.dumps(profile.to_dict(), indent=2))
    elif settings.output == "csv":
        out(profile_csv(profile).rstrip("\n"))
    elif settings.output == "table":
        out(profile_table(profile))
    if settings.html_path:
        from .html import write_page

        size = write_page(settings.html_path, [profile])
        print(f"speed: {settings.html_path} ({size / 1024:.0f} KiB)", file=sys.stderr)
    if settings.json_path and not settings.quiet:
        print(f"speed: {settings.json_path}", file=sys.stderr)
    if profile.status == "partial":
        print("speed: the server went away during the profile; the rows measured before are kept (partial)",
              file=sys.stderr)
    return exit_code(profile)


def speed_cli(*, pp: str | None, tg: str | None, depth: str | None, concurrency: str | None, workload: str | None,
              duration: str | None, extra_body: str | None, compare=None, sets=(), run_dir: Path | None = None,
              rate: str | None = None, slo: str | None = None, echo: Callable[[str], None] | None = None,
              **fields) -> int:
    """The command line's `evalsuite speed`: its options as typed -> SpeedSettings, then the
    compare (--compare A B), the sweep (--serve with --set) or the profile. Returns the exit code."""
    from .settings import parse_duration, parse_ints, parse_rates, parse_slo, parse_workloads

    if compare:
        from .compare import compare_main

        return compare_main(list(compare))
    try:
        extra = json.loads(extra_body) if extra_body else {}
        if not isinstance(extra, dict):
            raise UsageError("--extra-body must be a JSON object")
        tgs = parse_ints(tg, "--tg", 1, (128,))
        settings = SpeedSettings(
            rates=parse_rates(rate), slo=parse_slo(slo), turn_tokens=tgs[0] if tg is not None else None,
            pp=parse_ints(pp, "--pp", 1, (512,)), tg=tgs,
            depth=parse_ints(depth, "--depth", 0, (0,)), concurrency=parse_ints(concurrency, "--concurrency", 1, (1,)),
            workloads=parse_workloads(workload), duration_s=parse_duration(duration), extra_body=extra, **fields)
    except json.JSONDecodeError as e:
        print(f"error: --extra-body is not valid JSON: {e}", file=sys.stderr)
        return EXIT_USAGE
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if sets:
        from .sweep import speed_sweep

        return speed_sweep(settings, sets, run_dir, speed_main, echo=echo)
    return speed_main(settings, echo=echo)
