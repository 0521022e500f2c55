"""The one error every room of the core may raise for bad usage or input: `UsageError` (exit 2,
its message one line naming the option and the value). It imports nothing, so it sits below the
client, the run, the analyses and the speed profile alike (docs/house.md)."""
from __future__ import annotations


class UsageError(Exception):
    """Bad usage or input, found before any request is sent: exit code 2."""
