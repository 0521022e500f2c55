"""The speed room's one door to the rest of the machinery: the endpoint client's session and
errors (evalsuite/client.py, errors.py), what engines report (engines/: reasoning fields,
per-response timings, detection), the speculation counters (speculation.py) and managed servers
(serve/). Every other module of the room imports these pieces from here, so a move of the
client or the run machinery touches this file only.

`SpeedEndpoint.stream` is the measuring request: one streamed completion, every chunk stamped
on a monotonic clock as it arrives, nothing else done with it (no logprobs, no grading, no
record): the time to the first chunk (TTFR), to the first content or reasoning token (TTFT), to
the last one, and when each content chunk came; usage and the server's own timings as sent.
"""
from __future__ import annotations

import asyncio
import time
from array import array
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..client.endpoint import Endpoint, api_key_from_env, loads_json, now_iso, redact_url
from ..client.phases import Phases
from ..engines import reasoning_of, server_timings_of
from ..engines.base import root
from ..client.errors import EndpointError, UsageError, classify_status, connection_kind, root_cause, status_message
from ..speculation import ACCEPTED_SUFFIX, DRAFTED_SUFFIX, MAX_METRICS_BYTES, counters_from_timings, parse_prometheus

__all__ = ["SpeedEndpoint", "Sample", "Counters", "EndpointError", "UsageError", "api_key_from_env", "now_iso",
           "redact_url", "counters_from_timings", "managed_server", "engine_name", "sweep_commands"]

DRAFTS_SUFFIX = "spec_decode_num_drafts_total"     # vLLM: drafting steps
# the engine's own count of generated tokens (vLLM, SGLang; llama-server with --metrics)
GENERATED_SUFFIXES = ("generation_tokens_total", "tokens_predicted_total")
# the server's histograms of where a request's first-token wait went (vLLM's names; SGLang's are
# read by the same suffixes): (sum, count) of each, before and after a test
HISTOGRAMS = {"queue": "request_queue_time_seconds", "prefill": "request_prefill_time_seconds",
              "ttft": "time_to_first_token_seconds"}
SGLANG_HISTOGRAMS = {"queue": "queue_time_seconds"}
MAX_TOKENIZE_BYTES = 16 << 20


@dataclass(frozen=True)
class Sample:
    """One measured request. Times are seconds from `started` (time.perf_counter())."""
    started: float
    total: float
    ttfr: float | None = None          # the first chunk, whatever it holds (a role chunk carries no token)
    ttft: float | None = None          # the first content or reasoning token
    last: float | None = None          # the last content or reasoning token
    chunks: int = 0                    # chunks that carried content or reasoning
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    timings: Mapping[str, Any] | None = None     # the server's own (llama-server's `timings`)
    token_times: array = field(default_factory=lambda: array("d"))   # each content chunk's arrival
    token_chars: array = field(default_factory=lambda: array("l"))   # and the characters it carried
    error: EndpointError | None = None
    cached_source: str | None = None   # "usage" (prompt_tokens_details) or "timings" (llama-server's cache_n)
    phases: Mapping[str, Any] | None = None   # connect_s, written_s, first_byte_s (client/phases.py)
    cut: bool = False                  # stopped at the caller's deadline (`cut_at`): no usage, its chunks so far

    def processed_tokens(self) -> int | None:
        """The prompt tokens the server processed (not served from its cache), both counts from
        one source: usage's prompt_tokens less its cached_tokens, or llama-server's timings
        (prompt_n) where only they say what was cached."""
        if self.cached_source == "timings" and isinstance(self.timings, Mapping):
            n = _int(self.timings.get("prompt_n"))
            if n is not None:
                return n
        if self.prompt_tokens is None:
            return None
        return self.prompt_tokens - (self.cached_tokens or 0)

    def chunk_tokens(self) -> list[float]:
        """The tokens each content chunk carried: one each when there are as many chunks as
        tokens (usage); otherwise (several tokens in a chunk: drafted tokens, held-back partial
        UTF-8) the usage count shared out by the characters of each chunk."""
        n = self.completion_tokens
        if n is None or not self.token_times:
            return []
        if len(self.token_times) >= n:
            return [n / len(self.token_times)] * len(self.token_times)
        chars = sum(self.token_chars) or len(self.token_chars)
        return [n * (c or 0) / chars if sum(self.token_chars) else n / len(self.token_chars) for c in self.token_chars]

    @property
    def ended(self) -> float:
        return self.started + self.total

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Counters:
    """The engine's counters at one moment (/metrics): speculation, generated tokens, and the
    (sum, count) of the histograms of the first-token wait."""
    drafted: float | None
    accepted: float | None
    drafts: float | None               # drafting steps, where the engine counts them (vLLM)
    generated: float | None = None     # tokens generated, the engine's own count
    histograms: Mapping[str, tuple[float, float]] = field(default_factory=dict)   # "queue" -> (sum s, count)


class SpeedEndpoint:
    """One OpenAI-compatible base URL, asked by the profile."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float, api: str = "chat"):
        self.base_url = base_url.rstrip("/")
        self.url = redact_url(self.base_url)
        self.root = root(self.base_url)
        self.api = api
        self.timeout = timeout
        self._client = Endpoint(self.base_url, api_key, timeout, api)
        self.tokenize_path: str | None = None

    def session(self):
        return self._client.session()

    async def close(self) -> None:
        await self._client.close()

    async def models(self) -> list[str]:
        return await self._client.list_models()

    async def alive(self, timeout: float = 5.0) -> bool:
        try:
            await self._client.probe(timeout)
            return True
        except (EndpointError, asyncio.TimeoutError):
            return False

    async def round_trip(self, tries: int = 5) -> float:
        """The median time of GET /models on the pooled connection: what a request costs before
        the server does any work, subtracted from each TTFT (as llama-benchy does)."""
        times = []
        for _ in range(tries):
            t0 = time.perf_counter()
            async with self.session().get(self.base_url + "/models") as reply:
                await reply.read()
            times.append(time.perf_counter() - t0)
        times.sort()
        return times[len(times) // 2]

    async def _post_json(self, path: str, body: Mapping[str, Any]) -> Any:
        """The JSON reply of a POST at the server root, or None. Sent twice at most: llama-server
        closes a keep-alive connection after a streamed response, and the pool may hand it out."""
        import aiohttp

        for attempt in (1, 2):
            try:
                async with asyncio.timeout(min(self.timeout, 60.0)):
                    async with self.session().post(self.root + path, json=dict(body)) as reply:
                        if reply.status >= 400 or (reply.content_length or 0) > MAX_TOKENIZE_BYTES:
                            return None
                        data = await _read_bounded(reply, MAX_TOKENIZE_BYTES)
                return None if data is None else loads_json(data)
            except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError):
                if attempt == 2:
                    return None
            except (aiohttp.ClientError, OSError, asyncio.TimeoutError, ValueError):
                return None
        return None

    async def tokenize(self, text: str, model: str) -> list[int] | None:
        """The server's own token ids of `text` (no special tokens), from POST /tokenize: one
        body that llama-server (`content`) and vLLM (`prompt`, `model`) both read; None where the
        server has no such endpoint."""
        reply = await self._post_json("/tokenize", {"content": text, "prompt": text, "model": model,
                                                    "add_special": False, "add_special_tokens": False})
        tokens = reply.get("tokens") if isinstance(reply, dict) else None
        if not isinstance(tokens, list):
            return None
        # llama-server with pieces gives [{id, piece}]; plain ids otherwise
        return [int(t["id"]) if isinstance(t, dict) else int(t) for t in tokens]

    async def detokenize(self, ids: list[int], model: str) -> str | None:
        reply = await self._post_json("/detokenize", {"tokens": ids, "model": model})
        if not isinstance(reply, dict):
            return None
        text = reply.get("content", reply.get("prompt"))
        return text if isinstance(text, str) else None

    async def counters(self) -> Counters | None:
        """The speculation counters at /metrics now; None when the server exposes none."""
        import aiohttp

        metrics_url = self.root + "/metrics"
        try:
            async with asyncio.timeout(5.0):
                async with self.session().get(metrics_url) as reply:
                    if reply.status >= 400:
                        return None
                    body = await _read_bounded(reply, MAX_METRICS_BYTES)
        except (aiohttp.ClientError, OSError, asyncio.TimeoutError):
            return None
        if body is None:
            return None
        metrics = parse_prometheus(body.decode("utf-8", "replace"))

        def total(suffix: str) -> float | None:
            values = [v for k, v in metrics.items() if k.split("{")[0].endswith(suffix)]
            return sum(values) if values else None

        drafted, accepted = total(DRAFTED_SUFFIX), total(ACCEPTED_SUFFIX)
        generated = next((g for g in (total(x) for x in GENERATED_SUFFIXES) if g is not None), None)
        histograms = {}
        for part, name in (*HISTOGRAMS.items(), *SGLANG_HISTOGRAMS.items()):
            sums, counts = total(name + "_sum"), total(name + "_count")
            if sums is not None and counts is not None and part not in histograms:
                histograms[part] = (sums, counts)
        if drafted is None and accepted is None and generated is None and not histograms:
            return None
        return Counters(drafted, accepted, total(DRAFTS_SUFFIX), generated, histograms)

    def body(self, model: str, text: str, max_tokens: int, ignore_eos: bool, extra: Mapping[str, Any]) -> dict:
        return self.body_messages(model, [{"role": "user", "content": text}], max_tokens, ignore_eos, extra)

    def body_messages(self, model: str, messages: list[dict[str, Any]], max_tokens: int, ignore_eos: bool,
                      extra: Mapping[str, Any]) -> dict:
        """A streamed request of `messages` (chat), or of their texts joined (completions)."""
        body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "temperature": 0.0, "stream": True,
                                "stream_options": {"include_usage": True}}
        if ignore_eos:
            body["ignore_eos"] = True      # llama-server and vLLM: exactly max_tokens tokens
        if self.api == "chat":
            body["messages"] = messages
        else:
            body["prompt"] = "\n\n".join(str(m.get("content") or "") for m in messages)
        body.update(extra)
        return body

    async def stream(self, body: Mapping[str, Any], cut_at: float | None = None) -> Sample:
        """One streamed request, measured. Never raises for the endpoint's failures: they come
        back as the Sample's error (kind and message as the run's client names them). A send
        that fails before any answer (a pooled keep-alive connection the server had closed) is
        sent once more on a fresh one: nothing was measured yet. `cut_at` (a perf_counter
        instant): the request is stopped there and comes back `cut`, with the chunks it had."""
        sample = await self._stream(body, cut_at)
        if sample.error is not None and sample.ttfr is None and sample.error.kind == "stream_broken" \
                and "cannot reach" in sample.error.message:
            sample = await self._stream(body, cut_at)
        return sample

    async def _stream(self, body: Mapping[str, Any], cut_at: float | None = None) -> Sample:
        import aiohttp

        chat = self.api == "chat"
        path = "/chat/completions" if chat else "/completions"
        started = time.perf_counter()
        phases = Phases(started)
        limit = self.timeout if cut_at is None else max(0.0, min(self.timeout, cut_at - started))
        cut = False
        clock = time.perf_counter
        ttfr = ttft = last = None
        chunks = 0
        usage: Any = None
        timings = None
        finished = done = False
        times = array("d")
        sizes = array("l")
        opened = False
        try:
            async with asyncio.timeout(limit):
                async with self.session().post(self.base_url + path, data=_dumps(body),
                                               trace_request_ctx=phases) as response:
                    if response.status >= 400:
                        text = (await response.content.read(64 * 1024)).decode("utf-8", errors="replace")
                        raise classify_status(response.status, status_message(response.status, text),
                                              response.headers.get("retry-after"))
                    opened = True
                    buffer = b""
                    async for block in response.content.iter_any():
                        now = clock() - started
                        if ttfr is None:
                            ttfr = now
                        buffer += block
                        *lines, buffer = buffer.split(b"\n")
                        for line in lines:
                            if not line.startswith(b"data:"):
                                continue
                            payload = line[5:].strip()
                            if not payload:
                                continue
                            if payload == b"[DONE]":
                                done = True
                                break
                            event = loads_json(payload)
                            if not isinstance(event, dict):
                                continue
                            if event.get("error"):
                                err = event["error"]
                                raise EndpointError("stream_broken", "the stream sent an error: "
                                                    f"{err.get('message') if isinstance(err, dict) else err}")
                            if event.get("usage"):
                                usage = event["usage"]
                            t = server_timings_of(event)
                            if t:
                                timings = t
                            for choice in event.get("choices") or ():
                                if chat:
                                    delta = choice.get("delta") or choice.get("message") or {}
                                    text = delta.get("content") or reasoning_of(delta)
                                else:
                                    text = choice.get("text")
                                if text:
                                    if ttft is None:
                                        ttft = now
                                    last = now
                                    chunks += 1
                                    times.append(now)
                                    sizes.append(len(text))
                                if choice.get("finish_reason"):
                                    finished = True
                        if done:
                            await _drain(response)
                            break
            error = None
            if not chunks:
                error = EndpointError("empty_response", "the stream carried no token")
            elif not (finished or done):
                error = EndpointError("stream_broken", "the stream ended without a finish_reason")
        except EndpointError as e:
            error = e
        except asyncio.TimeoutError:
            if cut_at is not None and limit < self.timeout:
                cut, error = True, None        # the caller's deadline, not the server's failure
            else:
                error = EndpointError("timeout", f"no complete response within {self.timeout:g} s")
        except (aiohttp.ClientError, OSError) as e:
            kind = connection_kind(e, opened)
            error = EndpointError("connection" if kind == "connection" else "stream_broken" if kind == "dropped"
                                  else kind, f"{'connection cut mid-stream' if opened else 'cannot reach'} "
                                  f"{self.url}: {root_cause(e)}")
        except (ValueError, TypeError) as e:
            error = EndpointError("stream_broken", f"broken response stream: {type(e).__name__}: {e}")
        total = clock() - started
        prompt = completion = cached = cached_source = None
        if isinstance(usage, dict):
            prompt, completion = _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
            details = usage.get("prompt_tokens_details")
            if isinstance(details, dict):
                cached = _int(details.get("cached_tokens"))
                cached_source = "usage" if cached is not None else None
        if cached is None and isinstance(timings, dict) and timings.get("cache_n") is not None:
            cached = _int(timings.get("cache_n"))      # llama-server: the prompt tokens its cache served
            cached_source = "timings"
        return Sample(started=started, total=total, ttfr=ttfr, ttft=ttft, last=last, chunks=chunks,
                      prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached, timings=timings,
                      token_times=times, token_chars=sizes, error=error, cached_source=cached_source,
                      phases=phases.as_timing() or None, cut=cut)


def _int(x: Any) -> int | None:
    try:
        return None if x is None else int(x)
    except (TypeError, ValueError):
        return None


async def _read_bounded(reply, limit: int) -> bytes | None:
    """The whole body (content.read(n) returns what has arrived so far, not n bytes), or None past `limit`."""
    parts, size = [], 0
    async for block in reply.content.iter_any():
        size += len(block)
        if size > limit:
            return None
        parts.append(block)
    return b"".join(parts)


async def _drain(response) -> None:
    from ..client.endpoint import _drain as drain

    await drain(response)


def _dumps(body: Mapping[str, Any]) -> bytes:
    from ..client.endpoint import _dumps as dumps

    return dumps(dict(body))


def engine_name(url: str, api_key: str | None) -> str | None:
    """"llama.cpp b1-0c1e570", "vllm 0.32.0": what engines/ detection finds (a few GETs); None: unknown."""
    from ..engines import detect_engine

    try:
        profile = detect_engine(url, api_key, timeout=3.0)
    except Exception:
        return None
    return None if profile.engine == "unknown" else (profile.engine + (f" {profile.version}" if profile.version else ""))


def sweep_commands(serve: str, sets: list[str]) -> list[tuple[str, str, str]]:
    """(label, folder name, server command) per setting of `--set NAME=V1,V2` (crossed), as
    `evalsuite sweep` makes them (sweep.py), `{port}` left for the managed server to fill."""
    import shlex

    from ..serve.command import fill_placeholders
    from ..serve.sweep import check_placeholders, make_settings, parse_sets

    settings = make_settings(parse_sets(sets), [])
    check_placeholders(serve, settings)
    out = []
    for s in settings:
        values = dict(s.values, port="{port}")
        out.append((s.label, s.folder, shlex.join(fill_placeholders(w, values) for w in shlex.split(serve))))
    return out


def managed_server(command: str, folder, ready_timeout: float, quiet: bool, max_restarts: int, hang_timeout: float):
    """(ManagedServer, Supervisor) for `--serve`: the same server handling as `run`."""
    from ..serve.managed import ManagedServer
    from ..serve.supervisor import Supervisor

    server = ManagedServer(command, folder, ready_timeout=ready_timeout, quiet=quiet, log_name="server.log")
    return server, Supervisor(server, max_restarts=max_restarts, hang_timeout=hang_timeout, quiet=quiet)
