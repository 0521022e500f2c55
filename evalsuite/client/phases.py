"""When each step of a request happened before its first token: the connection ready (opened,
or taken from the pool), the request written, the response's head read. aiohttp's TraceConfig
calls these hooks once per request (never per streamed chunk: its chunk hook fires in
`read()` only, which a stream does not call), each a clock read and an attribute store; the
streamed first chunk and first token are stamped where the client already reads them.

    phases = Phases(time.perf_counter())
    session.post(url, data=body, trace_request_ctx=phases)    # a session made with trace_configs()
    phases.as_timing()   # {"connect_s": .., "written_s": .., "first_byte_s": ..}: seconds from the start

Where the request never got that far (refused, failed) the stamp is absent, never zero.
"""
from __future__ import annotations

import time
from typing import Any

PHASE_KEYS = ("connect_s", "written_s", "first_byte_s")


class Phases:
    """The stamps of one request, in seconds from `t0` (a time.perf_counter() instant)."""

    __slots__ = ("t0", "connect_s", "written_s", "first_byte_s", "reused")

    def __init__(self, t0: float):
        self.t0 = t0
        self.connect_s: float | None = None      # the connection ready: made now, or taken from the pool
        self.written_s: float | None = None      # the request's body handed to the transport
        self.first_byte_s: float | None = None   # the response's status line and headers read
        self.reused: bool | None = None          # True: a pooled keep-alive connection

    def as_timing(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: round(getattr(self, k), 6) for k in PHASE_KEYS if getattr(self, k) is not None}
        if self.reused is not None:
            out["reused_connection"] = self.reused
        return out


def _stamp(name: str, reused: bool | None = None):
    async def hook(session, context, params) -> None:
        phases = context.trace_request_ctx
        if isinstance(phases, Phases):
            setattr(phases, name, time.perf_counter() - phases.t0)
            if reused is not None:
                phases.reused = reused
    return hook


def trace_configs() -> list:
    """The TraceConfig list for aiohttp.ClientSession(trace_configs=...)."""
    import aiohttp

    config = aiohttp.TraceConfig()
    config.on_connection_create_end.append(_stamp("connect_s", False))
    config.on_connection_reuseconn.append(_stamp("connect_s", True))
    config.on_request_chunk_sent.append(_stamp("written_s"))
    config.on_request_end.append(_stamp("first_byte_s"))
    config.freeze()
    return [config]
