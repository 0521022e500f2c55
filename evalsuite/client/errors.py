"""What went wrong with a request, and whether to try again.

Every failure of an endpoint call becomes an `EndpointError` with a kind (docs/records.md):
HTTP statuses through classify_status, transport failures by their exception's cause chain
(connection_kind). Only the RETRYABLE kinds are retried, under a bounded RetryPolicy; the rest
are recorded as errors, never turned into answer text.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..errors import UsageError  # noqa: F401  (its home is evalsuite/errors.py: below the analyses too)

# Error kinds (docs/records.md). Only these are retried.
RETRYABLE = {"rate_limited", "server_error", "timeout", "connection", "stream_broken"}
CONTEXT_HINTS = ("context length", "context_length", "maximum context", "exceeds", "too long",
                 "n_ctx", "context window", "context size")


class EndpointError(Exception):
    def __init__(self, kind: str, message: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message[:2000], "status": self.status}


def status_message(status: int, text: str) -> str:
    """The server's error message, as the SDK reads it from an error body."""
    text = text.strip()
    try:
        body = json.loads(text)
    except ValueError:
        return text or f"Error code: {status}"
    data = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])
    if isinstance(data, str) and data:
        return data
    return f"Error code: {status} - {body}"


def cause_chain(e: BaseException):
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


def root_cause(e: BaseException) -> BaseException:
    return list(cause_chain(e))[-1]


def dns_failure(e: BaseException) -> BaseException | None:
    """The host-name lookup error in the cause chain, if that is what failed (the SDK can report
    it as a timeout: the chain decides, not the class)."""
    import socket

    for c in cause_chain(e):
        if isinstance(c, socket.gaierror) or type(c).__name__ == "ClientConnectorDNSError":
            return c
    return None


def connection_kind(e: BaseException, opened: bool) -> str:
    """timeout, connection (nothing listens: the server is down) or dropped (it took the
    connection, then closed it). The SDK's aiohttp transport reports a refused connection as
    a timeout, so the exception's cause chain decides, not its class."""
    chain = list(cause_chain(e))
    if not opened and dns_failure(e) is not None:   # the name does not resolve: nothing to reach
        return "connection"
    if any(isinstance(c, TimeoutError) for c in chain):  # a real timeout (aiohttp's included)
        return "timeout"
    try:
        from aiohttp import ClientConnectionError, ClientConnectorError
    except ImportError:
        ClientConnectionError = ClientConnectorError = ConnectionRefusedError
    refused = any(isinstance(c, (ConnectionRefusedError, ClientConnectorError)) or type(c).__name__ == "ConnectError"
                  for c in chain)
    if refused and not opened:
        return "connection"
    if any(isinstance(c, (ConnectionError, ClientConnectionError)) for c in chain) or opened:
        return "dropped"
    return "timeout" if type(e).__name__ == "APITimeoutError" else "connection"


def sdk_error_message(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    return str(getattr(e, "message", e))


def classify_status(status: int, message: str, retry_after: str | None = None) -> EndpointError:
    if status == 429:
        return EndpointError("rate_limited", f"HTTP 429: {message}", status, parse_retry_after(retry_after))
    if status >= 500 or status == 408:
        return EndpointError("server_error", f"HTTP {status}: {message}", status, parse_retry_after(retry_after))
    lowered = message.lower()
    if status in (400, 413, 422) and any(h in lowered for h in CONTEXT_HINTS) and ("context" in lowered or "token" in lowered):
        return EndpointError("context_length", f"HTTP {status}: {message}", status)
    return EndpointError("bad_request", f"HTTP {status}: {message}", status)


def parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime
        try:
            return max(0.0, (parsedate_to_datetime(value) - datetime.now(timezone.utc)).total_seconds())
        except (TypeError, ValueError):
            return None


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5            # attempts after the first
    base_delay: float = 1.0         # first backoff, doubled each time, with full jitter
    max_delay: float = 60.0         # one wait is never longer (Retry-After included)
    max_total: float = 600.0        # give up on an item after this much retrying

    def delay(self, attempt: int, error: EndpointError) -> float:
        if error.retry_after is not None:
            return min(self.max_delay, error.retry_after)
        return random.uniform(0, min(self.max_delay, self.base_delay * 2 ** attempt))
