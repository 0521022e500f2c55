"""The managed server's process group: signal it, see whether any of it is alive, and have the
kernel SIGTERM the server when evalsuite itself dies."""
from __future__ import annotations

import os
import signal
import sys


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _parent_death_hook():
    """A function for the child to run before exec: SIGTERM to it when the thread that started it
    (the event loop's) ends, as when evalsuite is SIGKILLed (Linux only; None elsewhere). Resolved
    here, in the parent: the child between fork and exec must not import anything."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except Exception:
        return None

    def hook() -> None:
        prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG

    return hook
