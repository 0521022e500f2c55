"""The progress of a run, on stderr.

On a terminal: a live display (rich) redrawn a few times a second — a bar with done/total,
accuracy so far, errors, retries in flight, output tokens/s, an ETA, and the state of each
endpoint (down, and for how long; out of the rotation) when one is down or there are several.
Elsewhere (CI logs): one plain line per interval, and one at once when an endpoint goes down or
comes back. `--quiet`: nothing.

What it shows of the endpoints it reads from the runner's scheduler (`watch`): the display
never decides anything, it only draws.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Any, Protocol

from ..client.endpoint import redact_url
from ..engines import GreedyCheck

TTY_REFRESH_PER_S = 4
PLAIN_INTERVAL_S = 15.0
# An ETA from the first few items is wild (one slow first request, a batch arriving at once):
# none until this many items are done and this many seconds have passed in this process.
ETA_MIN_ITEMS = 5
ETA_MIN_SECONDS = 5.0


class EndpointStates(Protocol):
    """What the display reads from the scheduler (evalsuite.run.scheduler.Scheduler)."""
    endpoints: list[Any]                     # each has .url
    down_since: dict[str, float | None]      # url -> monotonic time it stopped answering
    retired: dict[str, dict[str, Any]]       # url -> taken out of the rotation
    retrying: int                            # items now waiting to be asked again


def clock(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s"


class Progress:
    def __init__(self, total: int, done: int, quiet: bool, stream: Any = None):
        self.total, self.done, self.quiet = total, done, quiet
        self.correct = self.errors = self.graded = 0
        self.tokens = 0
        self.with_usage = 0                  # records whose server sent a completion token count
        self.t0 = time.monotonic()
        self.started_done = done
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.last = 0.0
        self.greedy = GreedyCheck()
        self.states: EndpointStates | None = None
        self.per_endpoint: dict[str, int] = {}
        self._live: Any = None
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()
        self._down_shown: frozenset[str] = frozenset()

    # ------------------------------------------------------------------ fed by the runner

    def watch(self, states: EndpointStates) -> None:
        self.states = states

    def start(self) -> None:
        if self.quiet:
            return
        if self.tty:
            from rich.console import Console
            from rich.live import Live

            console = Console(file=self.stream, force_terminal=True)
            self._live = Live(get_renderable=self.renderable, console=console, refresh_per_second=TTY_REFRESH_PER_S,
                              transient=False, redirect_stdout=False, redirect_stderr=True)
            self._live.start()
        else:
            self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
            self._ticker.start()

    def update(self, record: dict[str, Any], tokens: Any = None) -> None:
        self.done += 1
        if record["outcome"] == "error":
            self.errors += 1
        else:
            self.graded += 1
            self.correct += record["outcome"] == "correct"
        completion = (record.get("usage") or {}).get("completion_tokens")
        if completion is not None:
            self.tokens += completion
            self.with_usage += 1
        endpoint = record.get("endpoint")
        if endpoint:
            self.per_endpoint[endpoint] = self.per_endpoint.get(endpoint, 0) + 1
        self.greedy.add(record, tokens)
        if self.quiet or self.tty:
            return
        now = time.monotonic()
        if now - self.last >= PLAIN_INTERVAL_S or self.done == self.total:
            self.print()

    def endpoints_changed(self) -> None:
        """An endpoint went down: in plain mode say so at once (the ticker looks once a second,
        and would miss a short outage); the live display redraws by itself."""
        if self.quiet or self.tty or self._ticker is None:
            return
        try:
            self._down_shown = frozenset(url for url, _ in self.down())
        except RuntimeError:
            return
        self.print()

    def finish(self) -> None:
        self._stop.set()
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self._ticker is not None:
            self._ticker.join(timeout=1.0)
            self._ticker = None

    # ------------------------------------------------------------------ what is shown

    def accuracy(self) -> str:
        return f"{100 * self.correct / self.graded:.1f}%" if self.graded else "-"

    def tokens_per_s(self) -> str:
        if not self.with_usage:
            return "n/a"   # the server sends no usage: unknown, not zero
        return f"{self.tokens / max(1e-9, time.monotonic() - self.t0):,.0f}"

    def eta(self) -> str:
        elapsed = time.monotonic() - self.t0
        new = self.done - self.started_done
        if self.done >= self.total:
            return "0m00s"
        if new < ETA_MIN_ITEMS or elapsed < ETA_MIN_SECONDS or not self.any_up():
            return "-"
        return clock((self.total - self.done) * elapsed / new)

    def retrying(self) -> int:
        return getattr(self.states, "retrying", 0) if self.states else 0

    def endpoint_states(self) -> list[tuple[str, str]]:
        """(endpoint, state) for each endpoint: "up", "DOWN for 1m05s", "out of rotation for 12s"."""
        if self.states is None:
            return []
        now = time.monotonic()
        rows = []
        for endpoint in list(self.states.endpoints):
            url = endpoint.url
            since = self.states.down_since.get(url)
            if url in (getattr(self.states, "restarting", None) or ()):   # a managed server (evalsuite.serve)
                state = "restarting"
            elif url in self.states.retired:
                state = "out of rotation" + (f" for {clock(now - since)}" if since is not None else "")
            elif since is not None:
                state = f"DOWN for {clock(now - since)}"
            else:
                state = "up"
            rows.append((redact_url(url), state))
        return rows

    def any_up(self) -> bool:
        """Whether some endpoint answers (no ETA while none does: it would only grow)."""
        states = self.endpoint_states()
        return not states or any(state == "up" for _, state in states)

    def down(self) -> list[tuple[str, str]]:
        return [(url, state) for url, state in self.endpoint_states() if state != "up"]

    def line(self) -> str:
        parts = [f"{self.done}/{self.total}", f"acc {self.accuracy()}", f"errors {self.errors}",
                 f"retrying {self.retrying()}", f"out tok/s {self.tokens_per_s()}", f"ETA {self.eta()}"]
        down = self.down()
        if down:
            parts.append("; ".join(f"{url} {state}" for url, state in down))
        return " | ".join(parts)

    def renderable(self) -> Any:
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        try:
            states = self.endpoint_states()
        except RuntimeError:   # the scheduler changed a dict while this thread read it: next frame
            states = []
        grid = Table.grid(padding=(0, 1))
        grid.add_row(
            ProgressBar(total=max(1, self.total), completed=self.done, width=30),
            Text(f"{self.done}/{self.total}", style="bold"),
            Text(f"acc {self.accuracy()}"),
            Text(f"errors {self.errors}", style="red" if self.errors else ""),
            Text(f"retrying {self.retrying()}", style="yellow" if self.retrying() else ""),
            Text(f"out tok/s {self.tokens_per_s()}"),
            Text(f"ETA {self.eta()}"),
        )
        if not (len(states) > 1 or any(state != "up" for _, state in states)):
            return grid
        endpoints = Table.grid(padding=(0, 2))
        for url, state in states:
            done = sum(n for e, n in self.per_endpoint.items() if redact_url(e) == url)
            endpoints.add_row(Text("  " + url), Text(state, style="bold red" if state != "up" else "green"),
                              Text(f"{done} done"))
        return Group(grid, endpoints)

    def print(self) -> None:
        self.last = time.monotonic()
        print(self.line(), file=self.stream, flush=True)

    def _tick(self) -> None:
        """Plain mode: a line per interval even while nothing finishes (an endpoint down), and
        one at once when the set of endpoints down changes."""
        while not self._stop.wait(1.0):
            try:
                down = frozenset(url for url, _ in self.down())
            except RuntimeError:
                continue
            if down != self._down_shown or time.monotonic() - max(self.last, self.t0) >= PLAIN_INTERVAL_S:
                self._down_shown = down
                self.print()
