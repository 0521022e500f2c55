"""The progress of a run on stderr."""
from __future__ import annotations

import sys
import time
from typing import Any

from .engines import GreedyCheck


class Progress:
    def __init__(self, total: int, done: int, quiet: bool):
        self.total, self.done, self.quiet = total, done, quiet
        self.correct = self.errors = self.graded = 0
        self.tokens = 0
        self.t0 = time.monotonic()
        self.started_done = done
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.greedy = GreedyCheck()

    def update(self, record: dict[str, Any], tokens: Any = None) -> None:
        self.done += 1
        if record["outcome"] == "error":
            self.errors += 1
        else:
            self.graded += 1
            self.correct += record["outcome"] == "correct"
        self.tokens += (record.get("usage") or {}).get("completion_tokens") or 0
        self.greedy.add(record, tokens)
        now = time.monotonic()
        interval = 0.2 if self.tty else 15.0
        if not self.quiet and (now - self.last >= interval or self.done == self.total):
            self.last = now
            self.print()

    def line(self) -> str:
        elapsed = max(1e-9, time.monotonic() - self.t0)
        new = self.done - self.started_done
        rate = new / elapsed
        eta = (self.total - self.done) / rate if rate > 0 else float("nan")
        acc = f"{100 * self.correct / self.graded:5.1f}%" if self.graded else "  -  "
        eta_s = "-" if eta != eta else f"{int(eta // 60)}m{int(eta % 60):02d}s"
        return (f"{self.done}/{self.total} | acc {acc} | errors {self.errors} | "
                f"{self.tokens / elapsed:,.0f} out tok/s | ETA {eta_s}")

    def print(self) -> None:
        if self.tty:
            print("\r" + self.line().ljust(78), end="", file=sys.stderr, flush=True)
        else:
            print(self.line(), file=sys.stderr, flush=True)

    def finish(self) -> None:
        if self.tty and not self.quiet:
            print(file=sys.stderr)
