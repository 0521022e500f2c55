"""The endpoint client: one streamed request per item on the openai SDK, with its timings.

Everything measured here comes from the server or a monotonic clock: token counts from the
server's `usage` (null when it sends none, never estimated), time to first token and to first
answer token from `time.perf_counter()`. Errors come back as `EndpointError` with a kind the
runner decides on (retry or record); they are never turned into answer text.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit, urlunsplit

# Error kinds (docs/records.md). Only these are retried.
RETRYABLE = {"rate_limited", "server_error", "timeout", "connection", "stream_broken"}
CONTEXT_HINTS = ("context length", "context_length", "maximum context", "exceeds", "too long",
                 "n_ctx", "context window", "context size")


@dataclass(frozen=True)
class Decoding:
    """Every setting that changes the output. Recorded once in the manifest."""

    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = 0
    max_tokens: int | None = 1024
    stop: tuple[str, ...] = ()
    reasoning_effort: str | None = None
    logprobs: int | None = None          # top-K alternatives per token; None: no logprobs
    extra_body: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "top_p": self.top_p, "seed": self.seed,
                "max_tokens": self.max_tokens, "stop": list(self.stop),
                "reasoning_effort": self.reasoning_effort, "logprobs": self.logprobs,
                "extra_body": dict(self.extra_body)}


@dataclass(frozen=True)
class Request:
    item_id: str
    messages: tuple[dict[str, str], ...] | None = None   # chat
    prompt: str | None = None                           # completions

    @property
    def sha256(self) -> str:
        payload = json.dumps(list(self.messages), ensure_ascii=False, sort_keys=True) if self.messages is not None else self.prompt
        return hashlib.sha256((payload or "").encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Response:
    answer: str
    reasoning: str | None
    reasoning_source: str | None
    finish_reason: str | None
    usage: dict[str, int | None]
    timing: dict[str, Any]
    server_timings: dict[str, Any] | None
    logprobs: list[dict[str, Any]] | None
    model: str | None
    endpoint: str


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


def redact_url(url: str) -> str:
    """The URL without user:password and without query strings (keys hide there too)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def redact_secret(text: str, secret: str | None) -> str:
    """`text` with `secret` (an API key) replaced by [redacted]."""
    if not secret or len(secret) < 4 or not text:
        return text
    return text.replace(secret, "[redacted]")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class _ThinkSplitter:
    """Splits streamed content into reasoning (inside a leading <think>…</think>) and answer."""

    def __init__(self) -> None:
        self.buffer = ""
        self.state = "start"  # start -> thinking -> answer

    def feed(self, text: str) -> tuple[str, str]:
        """Returns (reasoning_part, answer_part) of this delta once decidable."""
        if self.state == "answer":
            return "", text
        self.buffer += text
        if self.state == "start":
            stripped = self.buffer.lstrip()
            if not stripped:
                return "", ""
            if stripped.startswith("<think>"):
                self.state = "thinking"
                self.buffer = stripped[len("<think>"):]
            elif "<think>".startswith(stripped):
                return "", ""  # could still become <think>
            else:
                self.state = "answer"
                out, self.buffer = self.buffer, ""
                return "", out
        if self.state == "thinking":
            end = self.buffer.find("</think>")
            if end < 0:
                # keep a tail that could be the start of </think>
                keep = max(0, len(self.buffer) - len("</think>"))
                out, self.buffer = self.buffer[:keep], self.buffer[keep:]
                return out, ""
            reasoning, rest = self.buffer[:end], self.buffer[end + len("</think>"):]
            self.buffer = ""
            self.state = "answer"
            return reasoning, rest
        return "", ""

    def flush(self) -> tuple[str, str]:
        out, self.buffer = self.buffer, ""
        if self.state == "thinking":
            return out, ""
        return "", out


def _token_entry(entry: Any, part: str) -> dict[str, Any]:
    get = entry.get if isinstance(entry, dict) else (lambda k, d=None: getattr(entry, k, d))
    top = get("top_logprobs") or []
    return {"token": get("token"), "bytes": get("bytes"), "id": get("id"), "logprob": get("logprob"),
            "part": part,
            "top": [{"token": (t.get("token") if isinstance(t, dict) else getattr(t, "token", None)),
                     "bytes": (t.get("bytes") if isinstance(t, dict) else getattr(t, "bytes", None)),
                     "id": (t.get("id") if isinstance(t, dict) else getattr(t, "id", None)),
                     "logprob": (t.get("logprob") if isinstance(t, dict) else getattr(t, "logprob", None))}
                    for t in top]}


def _legacy_logprobs(lp: Any, part: str) -> list[dict[str, Any]]:
    """Completions-API logprobs {tokens, token_logprobs, top_logprobs: [{token: lp}]}."""
    get = lp.get if isinstance(lp, dict) else (lambda k, d=None: getattr(lp, k, d))
    tokens = get("tokens") or []
    lps = get("token_logprobs") or []
    tops = get("top_logprobs") or []
    out = []
    for i, tok in enumerate(tokens):
        top = tops[i] if i < len(tops) and tops[i] else {}
        out.append({"token": tok, "bytes": None, "id": None, "logprob": lps[i] if i < len(lps) else None,
                    "part": part, "top": [{"token": t, "bytes": None, "id": None, "logprob": v} for t, v in top.items()]})
    return out


def _extra(obj: Any, key: str) -> Any:
    value = getattr(obj, key, None)
    if value is None:
        extra = getattr(obj, "model_extra", None) or {}
        value = extra.get(key)
    return value


def _as_dict(value: Any) -> Any:
    if value is None or isinstance(value, (dict, list, str, int, float, bool)):
        return value
    if hasattr(value, "model_dump"):
        return value.model_dump()
    return value


class Endpoint:
    """One OpenAI-compatible base URL, its SDK client, and the streaming request."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float, api: str = "chat", stream: bool = True):
        from openai import AsyncOpenAI  # lazy: keeps `evalsuite --help` instant

        self.base_url = base_url.rstrip("/")
        self.url = redact_url(self.base_url)
        self.api = api
        self.timeout = timeout
        self.stream = stream
        self._secret = api_key  # only to scrub it from error messages (some servers echo it)
        self.sdk = AsyncOpenAI(base_url=self.base_url, api_key=api_key or "sk-no-key-needed",
                               max_retries=0, timeout=timeout, http_client=_http_client(timeout))

    async def list_models(self) -> list[str]:
        page = await self.sdk.models.list()
        return [m.id for m in page.data]

    async def describe_models_reply(self) -> str:
        """What GET /models really answered (status, content type, start of the body), for the
        message that says an endpoint is not OpenAI-compatible."""
        import openai

        try:
            raw = await asyncio.wait_for(self.sdk.with_raw_response.models.list(), timeout=min(30.0, self.timeout))
            reply = raw.http_response
        except openai.APIStatusError as e:
            reply = e.response
        except Exception as e:
            return self.scrub(f"{type(e).__name__}: {e}")[:300]
        body = " ".join(reply.text[:300].split())
        kind = reply.headers.get("content-type", "no content type")
        return self.scrub(f"HTTP {reply.status_code} ({kind}): {body!r}")

    async def close(self) -> None:
        await self.sdk.close()

    async def complete(self, request: Request, model: str, decoding: Decoding) -> Response:
        """One attempt, bounded by the per-request timeout. Raises EndpointError."""
        progress = {"opened": False, "events": 0}
        try:
            try:
                return await asyncio.wait_for(self._stream(request, model, decoding, progress=progress), timeout=self.timeout)
            except (EndpointError, asyncio.TimeoutError) as e:
                dropped = isinstance(e, EndpointError) and e.kind == "stream_broken"
                stalled = isinstance(e, asyncio.TimeoutError) and progress["opened"]
                if progress["events"] or not (dropped or stalled):
                    raise
                # llama-cpp-python answers a prompt longer than its context with HTTP 200 and an
                # event stream that stays empty (it ends, hangs until the timeout, or the
                # connection is reset before any event); the same
                # request unstreamed says why (a 400 naming the context length), so the item is
                # recorded as what it is, not as a torn stream or a timeout.
                try:
                    return await asyncio.wait_for(self._stream(request, model, decoding, streamed=False), timeout=self.timeout)
                except EndpointError as again:
                    if again.kind != "stream_broken":
                        raise
                    # the pooled keep-alive connection it went out on was the broken one: once more, fresh
                    return await asyncio.wait_for(self._stream(request, model, decoding, streamed=False), timeout=self.timeout)
        except asyncio.TimeoutError:
            raise EndpointError("timeout", f"no complete response within {self.timeout:g} s") from None
        except EndpointError as e:
            # error messages end up in records: a server (or proxy) that echoes the key must not put it there
            e.message = redact_secret(e.message, self._secret)
            e.args = (e.message,)
            raise

    def scrub(self, text: str) -> str:
        """`text` with this endpoint's API key replaced (for messages shown or written)."""
        return redact_secret(text, self._secret)

    async def _stream(self, request: Request, model: str, decoding: Decoding, streamed: bool | None = None,
                      progress: dict[str, Any] | None = None) -> Response:
        import openai

        started_at = now_iso()
        t0 = time.perf_counter()
        params: dict[str, Any] = {"model": model, "temperature": decoding.temperature, "top_p": decoding.top_p,
                                  "stream": True, "stream_options": {"include_usage": True}}
        if decoding.seed is not None:
            params["seed"] = decoding.seed
        if decoding.max_tokens is not None:
            params["max_tokens"] = decoding.max_tokens
        if decoding.stop:
            params["stop"] = list(decoding.stop)
        extra_body = dict(decoding.extra_body)
        if decoding.reasoning_effort and self.api == "chat":
            params["reasoning_effort"] = decoding.reasoning_effort
        if self.api == "chat":
            params["messages"] = list(request.messages or ())
            if decoding.logprobs is not None:
                params["logprobs"] = True
                params["top_logprobs"] = decoding.logprobs
        else:
            params["prompt"] = request.prompt or ""
            if decoding.logprobs is not None:
                params["logprobs"] = decoding.logprobs
        if extra_body:
            params["extra_body"] = extra_body

        answer: list[str] = []
        reasoning: list[str] = []
        reasoning_source = None
        finish_reason = None
        usage = None
        server_timings = None
        logprobs: list[dict[str, Any]] | None = [] if decoding.logprobs is not None else None
        response_model = None
        ttft = ttfa = None
        events = 0
        opened = False  # response headers received: a connection error after this is a torn stream, not a down server
        splitter = _ThinkSplitter()
        def absorb(field_reasoning: str | None, content: str | None, lp: Any, finish: str | None) -> None:
            nonlocal reasoning_source, ttft, ttfa, finish_reason
            now = time.perf_counter()
            if field_reasoning:
                reasoning_source = "field"
                reasoning.append(field_reasoning)
                ttft = ttft if ttft is not None else now - t0
            if content:
                ttft = ttft if ttft is not None else now - t0
                think, ans = splitter.feed(content)
                if think:
                    reasoning_source = reasoning_source or "think-tags"
                    reasoning.append(think)
                if ans:
                    answer.append(ans)
                    if ttfa is None and ans.strip():
                        ttfa = now - t0
            if logprobs is not None and lp is not None:
                part = "reasoning" if (field_reasoning and not content) or splitter.state == "thinking" else "answer"
                if self.api == "chat":
                    for entry in ((lp.get("content") if isinstance(lp, dict) else getattr(lp, "content", None)) or []):
                        logprobs.append(_token_entry(entry, part))
                else:
                    logprobs.extend(_legacy_logprobs(lp, part))
            if finish:
                finish_reason = finish

        try:
            create = self.sdk.chat.completions.create if self.api == "chat" else self.sdk.completions.create
            if not (self.stream if streamed is None else streamed):
                # One JSON response: usage is there even where a server's stream lacks it,
                # but there is no time to first token.
                del params["stream"], params["stream_options"]
                result = await create(**params)
                opened = True
                response_model = getattr(result, "model", None)
                usage = getattr(result, "usage", None)
                server_timings = _as_dict(_extra(result, "timings"))
                for choice in result.choices or []:
                    if self.api == "chat":
                        message = choice.message
                        absorb(_extra(message, "reasoning_content") or _extra(message, "reasoning"),
                               message.content, choice.logprobs, choice.finish_reason)
                    else:
                        absorb(None, choice.text, choice.logprobs, choice.finish_reason)
                ttft = ttfa = None
            else:
                # Chunks as plain dicts: the SDK's documented `post` (same SSE stream, error
                # mapping and connection handling as `create`) without create's per-request
                # params transform and per-chunk pydantic models: ~1 ms CPU less per request
                # (docs/performance.md). The JSON sent is the same, extra_body merged as create does.
                from openai import AsyncStream

                body = {k: v for k, v in params.items() if k != "extra_body"}
                body.update(params.get("extra_body") or {})
                stream = await self.sdk.post("/chat/completions" if self.api == "chat" else "/completions", body=body,
                                             cast_to=object, stream=True, stream_cls=AsyncStream[object])
                opened = True
                if progress is not None:
                    progress["opened"] = True
                try:
                    async for chunk in stream:
                        events += 1
                        if progress is not None:
                            progress["events"] = events
                        if not isinstance(chunk, dict):
                            raise TypeError(f"stream event is not a JSON object: {str(chunk)[:200]}")
                        response_model = response_model or chunk.get("model")
                        if chunk.get("usage") is not None:
                            usage = chunk["usage"]
                        timings = chunk.get("timings")
                        if timings:
                            server_timings = timings
                        for choice in chunk.get("choices") or ():
                            if self.api == "chat":
                                delta = choice.get("delta")
                                absorb(delta.get("reasoning_content") or delta.get("reasoning") if delta is not None else None,
                                       delta.get("content") if delta is not None else None, choice.get("logprobs"), choice.get("finish_reason"))
                            else:
                                absorb(None, choice.get("text"), choice.get("logprobs"), choice.get("finish_reason"))
                finally:
                    await _close_quietly(stream)
        except openai.APIStatusError as e:
            raise classify_status(e.status_code, _error_message(e), e.response.headers.get("retry-after")) from None
        except openai.APIConnectionError as e:  # APITimeoutError included
            kind = _connection_kind(e, opened)
            if kind == "timeout":
                raise EndpointError("timeout", f"request timed out after {self.timeout:g} s") from None
            if kind == "connection":
                raise EndpointError("connection", f"cannot reach {self.url}: {_root(e)}") from None
            # the server took the connection, then dropped it: it is up, so this item uses up
            # its retries like a 5xx instead of waiting for a "down" server (--max-downtime)
            raise EndpointError("stream_broken", f"connection {'cut mid-stream' if opened else 'reset before any answer'}: "
                                                 f"{_root(e)}") from None
        except (openai.APIError, json.JSONDecodeError, ValueError, TypeError, AttributeError) as e:
            raise EndpointError("stream_broken", f"broken response stream: {type(e).__name__}: {e}") from None
        except Exception as e:  # httpx2 read errors mid-stream (torn connection) and the like
            raise EndpointError("stream_broken", f"broken response stream: {type(e).__name__}: {e}") from None
        total = time.perf_counter() - t0
        think, ans = splitter.flush()
        if think:
            reasoning_source = reasoning_source or "think-tags"
            reasoning.append(think)
        if ans:
            answer.append(ans)
        if finish_reason is None:
            raise EndpointError("stream_broken", "the stream ended without a finish_reason"
                                + ("" if events else " (HTTP 200 with no events at all)"))
        answer_text = "".join(answer)
        reasoning_text = "".join(reasoning) if reasoning else None
        if not answer_text.strip() and not (reasoning_text or "").strip() and finish_reason != "length":
            raise EndpointError("empty_response", f"HTTP 200 with empty content (finish_reason={finish_reason})")
        return Response(
            answer=answer_text, reasoning=reasoning_text, reasoning_source=reasoning_source,
            finish_reason=finish_reason, usage=usage_dict(usage),
            timing={"started_at": started_at, "ttft_s": ttft, "ttfa_s": ttfa, "total_s": total},
            server_timings=server_timings, logprobs=logprobs, model=response_model, endpoint=self.url,
        )


async def _close_quietly(stream: Any) -> None:
    """Close a stream without waiting on the server: the SDK drains what is left of the body
    on close, which never ends when a server leaves a broken stream open (llama-cpp-python
    does after an error inside its generator), and a timed-out request must not hang there."""
    try:
        await asyncio.wait_for(stream.close(), timeout=1.0)
    except Exception:  # timed out or failed: the connection is dropped, not reused
        pass


def _http_client(timeout: float):
    """The SDK's aiohttp transport where it has one: about 1 CPU-ms less per request than its
    default httpx pool (docs/performance.md). None: the SDK's default."""
    try:
        from openai import DefaultAioHttpClient

        return DefaultAioHttpClient(timeout=timeout)
    except (ImportError, RuntimeError):  # older SDK, or aiohttp missing
        return None


def _chain(e: BaseException):
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


def _root(e: BaseException) -> BaseException:
    return list(_chain(e))[-1]


def _connection_kind(e: BaseException, opened: bool) -> str:
    """timeout, connection (nothing listens: the server is down) or dropped (it took the
    connection, then closed it). The SDK's aiohttp transport reports a refused connection as
    a timeout, so the exception's cause chain decides, not its class."""
    chain = list(_chain(e))[1:]
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
    import openai

    return "timeout" if isinstance(e, openai.APITimeoutError) else "connection"


def usage_dict(usage: Any) -> dict[str, int | None]:
    if usage is None:
        return {"prompt_tokens": None, "completion_tokens": None, "reasoning_tokens": None}
    if isinstance(usage, dict):  # streamed chunks arrive as dicts
        details = usage.get("completion_tokens_details")
        reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
        if reasoning is None:
            reasoning = usage.get("reasoning_tokens")
        return {"prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"),
                "reasoning_tokens": reasoning}
    details = getattr(usage, "completion_tokens_details", None)
    reasoning = getattr(details, "reasoning_tokens", None) if details is not None else None
    if reasoning is None:
        reasoning = _extra(usage, "reasoning_tokens")
    return {"prompt_tokens": getattr(usage, "prompt_tokens", None),
            "completion_tokens": getattr(usage, "completion_tokens", None),
            "reasoning_tokens": reasoning}


def _error_message(e: Any) -> str:
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


def api_key_from_env(env_name: str | None = None) -> str | None:
    return os.environ.get(env_name or "OPENAI_API_KEY")
