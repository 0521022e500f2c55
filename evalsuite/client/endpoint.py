"""The endpoint client: one streamed request per item (SSE over aiohttp), with its timings.

Everything measured here comes from the server or a monotonic clock: token counts from the
server's `usage` (null when it sends none, never estimated), time to first token and to first
answer token from `time.perf_counter()`. Errors come back as `EndpointError` with a kind the
runner decides on (retry or record); they are never turned into answer text.
"""
from __future__ import annotations

import asyncio
import json
import os
import time
from contextlib import aclosing
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..engines import CUT_STREAM_WHY, empty_stream_may_be_overflow, reasoning_of, server_timings_of
from .errors import (
    EndpointError,
    classify_status,
    connection_kind,
    dns_failure,
    root_cause,
    sdk_error_message,
    status_message,
)
from .exchange import Decoding, Request, Response
from .phases import Phases, trace_configs
from ..store import TokenColumns
from .stream import ThinkSplitter, add_chat_tokens, add_legacy_tokens

try:  # about 3x faster than the stdlib on the streamed chunks
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None


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


class NotOpenAICompatible(Exception):
    """GET /models answered something other than an OpenAI model list; the message says what."""


class _StreamFailed(Exception):
    """A transport failure of the streamed path, with whether the response had started."""

    def __init__(self, error: BaseException, opened: bool):
        super().__init__(str(error))
        self.error, self.opened = error, opened


class _Attempt:
    """One send of a request in flight: when a byte last arrived on it, and why it was cut."""

    __slots__ = ("last", "abandoned")

    def __init__(self, now: float):
        self.last = now
        self.abandoned: str | None = None


# how many times a request whose pooled connection turned out closed before any answer is sent
# again at once (each send drops one stale connection; with several streams several may be stale)
STALE_RESENDS = 2


class Endpoint:
    """One OpenAI-compatible base URL. Streamed requests (the hot path, one per item) speak SSE
    over aiohttp directly; the openai SDK does the rest (model listing, unstreamed requests)
    and is imported only when first needed. docs/performance.md says why."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float, api: str = "chat", stream: bool = True):
        self.base_url = base_url.rstrip("/")
        self.url = redact_url(self.base_url)
        self.api = api
        self.timeout = timeout
        self.stream = stream
        self._secret = api_key  # only to scrub it from error messages (some servers echo it)
        self._api_key = api_key or "sk-no-key-needed"
        self._sdk = None
        self._session = None
        # What the runner's watchdog reads (docs/reliability.md, "A server that stops answering"):
        # attempts open now, and when a byte last arrived on any of them (or one was sent).
        self.in_flight = 0
        self.last_activity = time.monotonic()
        self._attempts: dict[asyncio.Task, _Attempt] = {}
        self._old_sessions: list[Any] = []

    @property
    def sdk(self):
        if self._sdk is None:
            from openai import AsyncOpenAI  # lazy: keeps `evalsuite --help` and the hot path free of it

            self._sdk = AsyncOpenAI(base_url=self.base_url, api_key=self._api_key, max_retries=0,
                                    timeout=self.timeout, http_client=_http_client(self.timeout))
        return self._sdk

    def session(self):
        if self._session is None:
            import aiohttp

            # no total timeout here: complete() bounds every attempt with --timeout
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.timeout),
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
                trace_configs=trace_configs(),   # the steps before the first byte (phases.py): once per request
                headers={"Authorization": f"Bearer {self._api_key}", "Content-Type": "application/json",
                         "Accept": "text/event-stream"})
        return self._session

    async def list_models(self) -> list[str]:
        """The model ids GET /models lists. Raises EndpointError: `connection` or `timeout` when
        nothing answers, `bad_request` with status 401 when the key is refused, and
        NotOpenAICompatible (with what came back) for any other answer."""
        import aiohttp

        try:
            async with self.session().get(self.base_url + "/models") as reply:
                text = (await reply.content.read(64 * 1024)).decode("utf-8", errors="replace")
                described = self.scrub(f"HTTP {reply.status} ({reply.headers.get('content-type', 'no content type')}): "
                                       f"{' '.join(text[:300].split())!r}")
                if reply.status == 401:
                    raise EndpointError("bad_request", f"HTTP 401: {status_message(401, text)}", 401)
                if reply.status >= 400:
                    raise NotOpenAICompatible(described)
        except (aiohttp.ClientError, OSError) as e:
            raise self._transport_error(e, False) from None
        try:
            data = json.loads(text)["data"]
            return [m["id"] for m in data]
        except (ValueError, KeyError, TypeError, IndexError):
            raise NotOpenAICompatible(described) from None

    async def close(self) -> None:
        for old in self._old_sessions:
            await old.close()
        if self._session is not None:
            await self._session.close()
        if self._sdk is not None:
            await self._sdk.close()

    async def complete(self, request: Request, model: str, decoding: Decoding) -> Response:
        """One attempt, bounded by the per-request timeout. Raises EndpointError."""
        progress = {"opened": False, "events": 0}
        # one deadline for the item's request, however many times it is re-sent below
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout

        def left() -> float:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise asyncio.TimeoutError
            return remaining

        try:
            try:
                for resend in range(STALE_RESENDS + 1):
                    try:
                        return await self._attempt(lambda: self._stream(request, model, decoding, progress=progress),
                                                   left())
                    except EndpointError as e:
                        # A pooled keep-alive connection the server had already closed: llama-server
                        # announces keep-alive, then closes the connection after each stream, and the
                        # next request written on it fails before any answer ("Cannot write to closing
                        # transport"). That request never reached the server: it is sent again at once,
                        # streamed, on another connection (the closed one is dropped), not answered
                        # unstreamed (which would lose its token timings) nor counted as an attempt.
                        if e.kind != "stream_broken" or progress["opened"] or progress["events"] or resend == STALE_RESENDS:
                            raise
            except (EndpointError, asyncio.TimeoutError) as e:
                dropped = isinstance(e, EndpointError) and e.kind == "stream_broken"
                stalled = isinstance(e, asyncio.TimeoutError) and progress["opened"]
                if not empty_stream_may_be_overflow(progress["events"], dropped, stalled):
                    raise
                # an engine's context overflow (engines/llama_cpp_python.py): unstreamed, it says why
                try:
                    return await self._attempt(lambda: self._stream(request, model, decoding, streamed=False), left())
                except EndpointError as again:
                    if again.kind != "stream_broken":
                        raise
                    # the pooled keep-alive connection it went out on was the broken one: once more, fresh
                    return await self._attempt(lambda: self._stream(request, model, decoding, streamed=False), left())
        except asyncio.TimeoutError:
            raise EndpointError("timeout", f"no complete response within {self.timeout:g} s") from None
        except EndpointError as e:
            # error messages end up in records: a server (or proxy) that echoes the key must not put it there
            e.message = redact_secret(e.message, self._secret)
            e.args = (e.message,)
            raise

    async def _attempt(self, make, timeout: float) -> Response:
        """One send of a request, within `timeout`, that abandon_in_flight() can cut short. The
        coroutine is made only once the time left is known: a deadline already passed must not
        leave a coroutine that is never awaited. It runs in the calling task itself (a task of
        its own per request cost a task, a loop turn and a wake-up each): abandon_in_flight()
        cancels the calling task, and the cancellation is taken back here and said as the
        connection error it is, unless the task is being cancelled for another reason too."""
        current = asyncio.current_task()
        state = self._attempts[current] = _Attempt(time.monotonic())
        self.in_flight += 1
        self.last_activity = time.monotonic()
        taken_back = False
        try:
            # asyncio.timeout rather than wait_for: no second future and callbacks per request;
            # on expiry the request is cancelled and TimeoutError raised, as wait_for does
            async with asyncio.timeout(timeout):
                response = await make()
            self.last_activity = time.monotonic()
            return response
        except EndpointError as e:
            if e.status is not None:   # the server answered, if only with an error
                self.last_activity = time.monotonic()
            raise
        except asyncio.CancelledError:
            if state.abandoned is None:
                raise   # the run itself is being cancelled (Ctrl-C, SIGTERM)
            taken_back = True
            if current.uncancel() > 0:
                raise   # abandoned, and the run is being cancelled as well
            raise EndpointError("connection", state.abandoned) from None
        finally:
            if state.abandoned is not None and not taken_back:
                current.uncancel()   # cut, but the request ended by itself: the cancel is not the run's
            self._attempts.pop(current, None)
            self.in_flight -= 1

    def abandon_in_flight(self, reason: str) -> int:
        """Cut every attempt in flight (their connections are closed) so that each raises
        EndpointError("connection", reason): the server stopped answering them. Pooled keep-alive
        connections are dropped too, so nothing is sent again on one that leads to the old server.
        Returns how many were cut."""
        cut = 0
        for task, state in list(self._attempts.items()):
            if not task.done() and state.abandoned is None:
                state.abandoned = reason
                task.cancel()   # the task that sends it (see _attempt)
                cut += 1
        if self._session is not None:
            self._old_sessions.append(self._session)   # closed by close(): its cut attempts are still unwinding
            self._session = None
        return cut

    def longest_silence(self, now: float) -> float:
        """Seconds since the quietest attempt in flight last received a byte (0 with none)."""
        return max((now - a.last for a in self._attempts.values()), default=0.0)

    async def probe(self, timeout: float) -> None:
        """GET /models on a new connection (not one from the pool, which may lead to a server that
        no longer answers), within `timeout`. Raises EndpointError or asyncio.TimeoutError."""
        import aiohttp

        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True),
                                             headers={"Authorization": f"Bearer {self._api_key}"}) as session:
                async with asyncio.timeout(timeout):
                    async with session.get(self.base_url + "/models") as reply:
                        await reply.content.read(64 * 1024)
                        if reply.status >= 500:
                            raise EndpointError("server_error", f"GET /models answered HTTP {reply.status}", reply.status)
        except TimeoutError:   # (an OSError too, so first)
            raise EndpointError("timeout", f"no answer within {timeout:g} s") from None
        except (aiohttp.ClientError, OSError) as e:
            raise self._transport_error(e, False) from None

    def scrub(self, text: str) -> str:
        """`text` with this endpoint's API key replaced (for messages shown or written)."""
        return redact_secret(text, self._secret)

    def _params(self, request: Request, model: str, decoding: Decoding) -> dict[str, Any]:
        params: dict[str, Any] = {"model": model, "temperature": decoding.temperature, "top_p": decoding.top_p,
                                  "stream": True, "stream_options": {"include_usage": True}}
        if decoding.seed is not None:
            params["seed"] = decoding.seed
        if decoding.max_tokens is not None:
            params["max_tokens"] = decoding.max_tokens
        if decoding.stop:
            params["stop"] = list(decoding.stop)
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
        return params

    async def _stream(self, request: Request, model: str, decoding: Decoding, streamed: bool | None = None,
                      progress: dict[str, Any] | None = None) -> Response:
        started_at = now_iso()
        t0 = time.perf_counter()
        params = self._params(request, model, decoding)
        extra_body = dict(decoding.extra_body)
        chat = self.api == "chat"

        answer: list[str] = []
        reasoning: list[str] = []
        reasoning_source = None
        finish_reason = None
        usage = None
        server_timings = None
        tokens: TokenColumns | None = TokenColumns() if decoding.logprobs is not None else None
        response_model = None
        ttft = ttfa = first_chunk = None
        events = 0
        phases = Phases(t0)
        splitter = ThinkSplitter()
        unscored = 0   # entries without a number, and chunks of text that came with no logprobs

        def absorb(field_reasoning: str | None, content: str | None, lp: Any, finish: str | None) -> None:
            nonlocal reasoning_source, ttft, ttfa, finish_reason, unscored
            # the clock is read while a first-token time is still to take (a long answer's later
            # events need none: ~1,000 reads an answer less)
            now = time.perf_counter() if ttfa is None or ttft is None else 0.0
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
            if tokens is not None and lp is not None:
                part = "reasoning" if (field_reasoning and not content) or splitter.state == "thinking" else "answer"
                unscored += (add_chat_tokens if chat else add_legacy_tokens)(tokens, lp, part, decoding.logprobs)
            elif tokens is not None and (content or field_reasoning):
                unscored += 1
            if finish:
                finish_reason = finish

        def take(chunk: Any) -> None:
            nonlocal response_model, usage, server_timings
            if not isinstance(chunk, dict):
                raise TypeError(f"stream event is not a JSON object: {str(chunk)[:200]}")
            response_model = response_model or chunk.get("model")
            if chunk.get("usage") is not None:
                usage = chunk["usage"]
            timings = server_timings_of(chunk)
            if timings:
                server_timings = timings
            for choice in chunk.get("choices") or ():
                if chat:
                    delta = choice.get("delta") or choice.get("message")
                    absorb(reasoning_of(delta),
                           delta.get("content") if delta is not None else None, choice.get("logprobs"), choice.get("finish_reason"))
                else:
                    absorb(None, choice.get("text"), choice.get("logprobs"), choice.get("finish_reason"))

        if self.stream if streamed is None else streamed:
            body = {**params, **extra_body}   # extra_body merged into the JSON as the SDK does
            try:
                # the events of each block received, parsed in one go (one step of the generator a
                # block, not one an event: a short answer arrives whole in one block)
                async with aclosing(self._sse("/chat/completions" if chat else "/completions", body, progress,
                                              phases)) as blocks:
                    async for chunks in blocks:
                        if not events and chunks:
                            first_chunk = time.perf_counter() - t0
                        events += len(chunks)
                        if progress is not None:
                            progress["events"] = events
                        for chunk in chunks:
                            take(chunk)
            except _StreamFailed as failed:
                raise self._transport_error(failed.error, failed.opened) from None
            except (json.JSONDecodeError, ValueError, TypeError, AttributeError) as e:
                raise EndpointError("stream_broken", f"broken response stream: {type(e).__name__}: {e}") from None
        else:
            # One JSON response through the SDK: usage is there even where a server's stream
            # lacks it, but there is no time to first token.
            import openai

            del params["stream"], params["stream_options"]
            if extra_body:
                params["extra_body"] = extra_body
            create = self.sdk.chat.completions.create if chat else self.sdk.completions.create
            try:
                result = await create(**params)
                take(_as_dict(result))
            except openai.APIStatusError as e:
                raise classify_status(e.status_code, sdk_error_message(e), e.response.headers.get("retry-after")) from None
            except openai.APIConnectionError as e:  # APITimeoutError included
                raise self._transport_error(e, False) from None
            except (openai.APIError, json.JSONDecodeError, ValueError, TypeError, AttributeError) as e:
                raise EndpointError("stream_broken", f"broken response: {type(e).__name__}: {e}") from None
            ttft = ttfa = None
        total = time.perf_counter() - t0
        think, ans = splitter.flush()
        if think:
            reasoning_source = reasoning_source or "think-tags"
            reasoning.append(think)
        if ans:
            answer.append(ans)
        if finish_reason is None:
            if events and progress is not None and progress.get("done"):
                # a clean end on the wire, but no finish: the server cut the answer
                raise EndpointError("stream_broken", "the stream ended with [DONE] but without a finish_reason: "
                                    f"the server cut it ({CUT_STREAM_WHY})")
            raise EndpointError("stream_broken", "the stream ended without a finish_reason"
                                + ("" if events else " (HTTP 200 with no events at all)"))
        answer_text = "".join(answer)
        reasoning_text = "".join(reasoning) if reasoning else None
        if not answer_text.strip() and not (reasoning_text or "").strip() and finish_reason != "length":
            raise EndpointError("empty_response", f"HTTP 200 with empty content (finish_reason={finish_reason})")
        return Response(
            answer=answer_text, reasoning=reasoning_text, reasoning_source=reasoning_source,
            finish_reason=finish_reason, usage=usage_dict(usage),
            timing={"started_at": started_at, "ttft_s": ttft, "ttfa_s": ttfa, "total_s": total,
                    **_first_token_steps(phases, first_chunk, ttft)},
            server_timings=server_timings, logprobs=tokens, model=response_model, endpoint=self.url,
            # only "partly": a server that sent no logprobs at all is told apart by its empty tokens
            logprobs_missing=unscored if tokens is not None and len(tokens) else 0,
        )

    async def _sse(self, path: str, body: dict[str, Any], progress: dict[str, Any] | None,
                   phases: Phases | None = None):
        """The JSON objects of a server-sent event stream, up to `data: [DONE]` or the end, as
        one list per block received (the events that block completed; none are held back for a
        later block). HTTP errors raise EndpointError (classified); transport failures
        _StreamFailed; an `error` event or object in the stream EndpointError("stream_broken"),
        and a data line that is not JSON ValueError, each once the events before it in its
        block have been handed out."""
        import aiohttp

        opened = False
        try:
            response = await self.session().post(self.base_url + path, data=_dumps(body), trace_request_ctx=phases)
        except (aiohttp.ClientError, OSError) as e:
            raise _StreamFailed(e, False) from None
        try:
            if response.status >= 400:
                text = (await response.content.read(64 * 1024)).decode("utf-8", errors="replace")
                raise classify_status(response.status, status_message(response.status, text),
                                      response.headers.get("retry-after"))
            opened = True
            if progress is not None:
                progress["opened"] = True
            buffer = b""
            data: list[bytes] = []
            event = None
            attempt = self._attempts.get(asyncio.current_task()) or _Attempt(0.0)
            self.last_activity = attempt.last = time.monotonic()
            async for block in response.content.iter_any():
                self.last_activity = attempt.last = time.monotonic()
                buffer += block
                lines = buffer.split(b"\n")
                buffer = lines.pop()
                chunks: list[Any] = []
                failed: BaseException | None = None
                done = False
                for line in lines:
                    line = line.rstrip(b"\r")
                    if line:
                        if line.startswith(b"data:"):
                            data.append(line[5:].lstrip(b" ") if line[5:6] == b" " else line[5:])
                        elif line.startswith(b"event:"):
                            event = line[6:].strip()
                        continue  # comments (":") and other fields are ignored
                    if not data:
                        event = None
                        continue
                    payload = b"\n".join(data)
                    data = []
                    if payload.startswith(b"[DONE]"):
                        done = True
                        break
                    try:
                        chunk = loads_json(payload)
                    except ValueError as e:
                        failed = e
                        break
                    if event == b"error" or (isinstance(chunk, dict) and chunk.get("error")):
                        err = chunk.get("error") if isinstance(chunk, dict) else chunk
                        message = err.get("message") if isinstance(err, dict) else err
                        failed = EndpointError("stream_broken", f"broken response stream: APIError: {message or chunk}")
                        break
                    event = None
                    chunks.append(chunk)
                if chunks:
                    yield chunks
                if failed is not None:
                    raise failed
                if done:
                    if progress is not None:
                        progress["done"] = True
                    await _drain(response)
                    return
            if data:  # a last event without its blank line
                payload = b"\n".join(data)
                if not payload.startswith(b"[DONE]"):
                    yield [loads_json(payload)]
        except (aiohttp.ClientError, OSError) as e:
            response.close()
            raise _StreamFailed(e, opened) from None
        except BaseException:
            response.close()  # the connection is dropped, not reused
            raise
        finally:
            response.release()

    def _transport_error(self, e: BaseException, opened: bool) -> EndpointError:
        kind = connection_kind(e, opened)
        if kind == "timeout":
            return EndpointError("timeout", f"request timed out after {self.timeout:g} s")
        if kind == "connection":
            dns = dns_failure(e)
            if dns is not None:
                host = urlsplit(self.base_url).hostname
                return EndpointError("connection", f"cannot reach {self.url}: DNS lookup of the host {host!r} failed "
                                                   f"({dns})")
            return EndpointError("connection", f"cannot reach {self.url}: {root_cause(e)}")
        # the server took the connection, then dropped it: it is up, so this item uses up
        # its retries like a 5xx instead of waiting for a "down" server (--max-downtime)
        return EndpointError("stream_broken", f"connection {'cut mid-stream' if opened else 'reset before any answer'}: "
                                              f"{root_cause(e)}")


def _first_token_steps(phases: Phases, first_chunk: float | None, ttft: float | None) -> dict[str, Any]:
    """The record's optional timing fields before the first token (docs/records.md): connect_s,
    written_s, first_byte_s, first_chunk_s; none of them for an unstreamed answer."""
    if ttft is None:
        return {}
    out = phases.as_timing()
    if first_chunk is not None:
        out["first_chunk_s"] = first_chunk
    return out


async def _drain(response: Any) -> None:
    """Read what follows [DONE] (the end of the chunked body) so the connection can be reused,
    without waiting on a server that leaves the stream open: then it is dropped instead."""
    if response.content.at_eof():
        return   # the whole body is in (the usual case): no read, no timer to arm and cancel
    try:
        async with asyncio.timeout(1.0):   # wait_for would wrap the read in a task of its own
            await response.read()
    except Exception:
        response.close()


def _dumps(body: dict[str, Any]) -> bytes:
    if _orjson is not None:
        try:
            return _orjson.dumps(body)
        except TypeError:
            pass
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def loads_json(raw: bytes) -> Any:
    if _orjson is not None:
        try:
            return _orjson.loads(raw)
        except _orjson.JSONDecodeError:
            pass  # NaN / Infinity: the stdlib reads them
    return json.loads(raw)


def _http_client(timeout: float):
    """The SDK's aiohttp transport where it has one: about 1 CPU-ms less per request than its
    default httpx pool (docs/performance.md). None: the SDK's default."""
    try:
        from openai import DefaultAioHttpClient

        return DefaultAioHttpClient(timeout=timeout)
    except (ImportError, RuntimeError):  # older SDK, or aiohttp missing
        return None


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


def api_key_from_env(env_name: str | None = None) -> str | None:
    return os.environ.get(env_name or "OPENAI_API_KEY")
