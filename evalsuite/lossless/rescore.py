"""`--rescore`: ask the baseline endpoint for the logprobs the records lack at a divergence.

Some divergences cannot be classified from the records alone: the baseline stopped there, a
server sent no logprobs for some tokens (llama-server: accepted draft tokens; SGLang: the
reasoning), or the tokens are partial UTF-8 bytes that llama-cpp-python names "". Rescoring
sends the prompt plus the common prefix to the baseline endpoint as a completions call with
max_tokens 1 and top logprobs, and reads both tokens' logprobs there. When every token id is
known (llama-server), the prefix goes as token ids (`prompt: [text, id, id, ...]`, llama-server's
mixed form), so partial UTF-8 bytes and re-tokenisation do not matter and tokens are matched by
id; a token outside the top-20 is asked for again with the top-1000 (llama-server answers with
up to the whole vocabulary), which turns a real divergence's bound margin into an exact one.

Limits (docs/lossless.md): exact for completions-API runs, where the prompt text is in the
record and the server re-tokenises prompt + prefix the same way it generated it (true for a
prefix that ends on a token boundary the tokenizer keeps; not guaranteed). For chat runs the
rendered chat template is not known client-side and the OpenAI chat API cannot continue an
assistant message: on llama-server the server renders the messages itself (POST /apply-template,
the rendering its chat endpoint uses) and the prefix follows as token ids; elsewhere those stay
undetermined with that reason. A prefix holding "" tokens
(bytes the server dropped) cannot be rebuilt either. This is the one analysis that calls a
server; `evalsuite diff` does so only when asked.

Requests go through the same client as `evalsuite run` (evalsuite.client.endpoint.Endpoint: the API key
from OPENAI_API_KEY or --api-key-env, bounded retries of 429/5xx/timeouts with backoff).
"""
from __future__ import annotations

import asyncio
import dataclasses
import os
from typing import Any

from .classify import ItemDiff, TokenView, classify_margin
from .runs import DiffResult
from .tokens import Tok, tokens_of

RESCORE_TOP = 20
DEEP_TOP = 1000   # llama-server gives up to the whole vocabulary; vLLM refuses past --max-logprobs
TIMEOUT_S = 60.0
Alternative = tuple[str, "int | None", float]   # (text, id, logprob) of one next-token candidate


@dataclasses.dataclass(frozen=True)
class Rescore:
    logprob_baseline_token: float | None
    logprob_candidate_token: float | None
    why_not: str | None = None


class Rescorer:
    """Next-token logprobs from the baseline endpoint, through the run's client and retry policy."""

    def __init__(self, endpoint: str, api_key: str | None = None, timeout: float = TIMEOUT_S, retry: Any = None):
        from ..client.endpoint import Endpoint
        from ..client.errors import RetryPolicy

        self.endpoint = Endpoint(endpoint, api_key, timeout, api="completions", stream=False)
        self.retry = retry or RetryPolicy(max_retries=3, max_total=120.0)
        self.loop = asyncio.new_event_loop()
        self._rendered: dict[str, str | None] = {}   # messages -> the server's rendering of them

    def top(self, model: str | None, prompt: str | list[Any], extra_body: dict[str, Any],
            k: int = RESCORE_TOP) -> list[Alternative]:
        return self.loop.run_until_complete(self._top(model, prompt, extra_body, k))

    async def _top(self, model: str | None, prompt: str | list[Any], extra_body: dict[str, Any],
                   k: int) -> list[Alternative]:
        from ..client.exchange import Decoding, Request
        from ..client.errors import EndpointError

        decoding = Decoding(temperature=0.0, top_p=1.0, seed=0, max_tokens=1, logprobs=k, extra_body=extra_body)
        request = Request(item_id="rescore", prompt=prompt)
        for attempt in range(self.retry.max_retries + 1):
            try:
                response = await self.endpoint.complete(request, model or "", decoding)
                break
            except EndpointError as e:
                if not e.retryable or attempt == self.retry.max_retries:
                    raise
                await asyncio.sleep(self.retry.delay(attempt, e))
        entries = response.logprobs.entries() if response.logprobs is not None and len(response.logprobs) else []
        if not entries:
            raise ValueError("the server sent no logprobs")
        return [(str(a.get("token") or ""), a.get("id") if isinstance(a.get("id"), int) else None, float(a["logprob"]))
                for a in entries[0].get("top") or () if isinstance(a.get("logprob"), (int, float))]

    def rendered(self, messages: Any) -> str | None:
        """The prompt text the server's chat endpoint makes of these messages (llama-server's
        POST /apply-template), or None where the server has no such endpoint."""
        import json
        import urllib.request

        from ..engines.base import root

        if not isinstance(messages, list) or not messages:
            return None
        key = json.dumps(messages, sort_keys=True)
        if key not in self._rendered:
            request = urllib.request.Request(root(self.endpoint.base_url) + "/apply-template",
                                             data=json.dumps({"messages": messages}).encode(),
                                             headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=TIMEOUT_S) as reply:
                    prompt = json.loads(reply.read(4 << 20)).get("prompt")
            except Exception:   # no such endpoint (another engine), or not JSON: not re-scorable
                prompt = None
            self._rendered[key] = prompt if isinstance(prompt, str) else None
        return self._rendered[key]

    def close(self) -> None:
        try:
            self.loop.run_until_complete(self.endpoint.close())
        finally:
            self.loop.close()


def rescore_item(item: ItemDiff, base: dict[str, Any], cand: dict[str, Any], manifest: dict[str, Any],
                 rescorer: Rescorer) -> Rescore:
    tokens: list[Tok] = tokens_of(base) or []
    prefix = tokens[:item.token_index or 0]
    bt, ct = item.baseline_token, item.candidate_token
    # With every id known (llama-server), continue the prompt with the exact token ids: partial
    # UTF-8 bytes and re-tokenisation stop mattering, and the tokens are matched by id.
    by_id = (bt is not None and ct is not None and bt.id is not None and ct.id is not None
             and all(t.id is not None for t in prefix))
    text = base.get("prompt") or ""
    if manifest.get("api") != "completions":
        # a chat run: the server's own rendering of the messages (llama-server's /apply-template,
        # the code its chat endpoint runs), continued by the generated token ids
        text = rescorer.rendered(base.get("messages")) if by_id else None
        if text is None:
            return Rescore(None, None, "chat run: the rendered chat template is not known client-side (the server "
                                       "has no /apply-template, or the tokens have no ids) and the chat API cannot "
                                       "continue an assistant message, so it cannot be re-scored")
    if item.token_index is None or bt is None or ct is None:
        return Rescore(None, None, "no token-level divergence to re-score")
    if by_id:
        prompt: str | list[Any] = [text, *(t.id for t in prefix)]
    else:
        if any(t.text == "" for t in prefix) or bt.text == "" or ct.text == "":
            return Rescore(None, None, "the prefix or a token holds partial UTF-8 bytes the server reported as '': "
                                       "the exact text cannot be rebuilt")
        prompt = (base.get("prompt") or "") + "".join(t.text for t in prefix)
    extra = dict((manifest.get("decoding") or {}).get("extra_body") or {})
    from ..client.errors import EndpointError

    try:
        alts = rescorer.top(manifest.get("model"), prompt, extra)
    except (EndpointError, ValueError) as e:
        return Rescore(None, None, f"rescoring at {rescorer.endpoint.url} failed: {e}")
    b, c = _find(alts, bt, by_id), _find(alts, ct, by_id)
    depth = RESCORE_TOP
    if (b is None or c is None) and len(alts) >= RESCORE_TOP:
        # a token outside the top-20: servers that give more (llama-server: the whole vocabulary)
        # give its exact logprob; one that refuses (vLLM past --max-logprobs) leaves the bound
        try:
            deep = rescorer.top(manifest.get("model"), prompt, extra, k=DEEP_TOP)
            b = b if b is not None else _find(deep, bt, by_id)
            c = c if c is not None else _find(deep, ct, by_id)
            depth = len(deep)
        except (EndpointError, ValueError):
            pass
    if b is None or c is None:
        return Rescore(b, c, f"not both tokens are in the re-scored top-{depth}")
    return Rescore(b, c)


def _find(alts: list[Alternative], view: TokenView, by_id: bool) -> float | None:
    for text, tid, logprob in alts:
        if (tid == view.id) if by_id else (text == view.text):
            return logprob
    return None


def _wanted(item: ItemDiff) -> bool:
    """Undetermined divergences, and real ones whose margin is only a bound (the candidate's
    token was outside the baseline's recorded top-k)."""
    return item.token_index is not None and (item.verdict == "undetermined" or item.margin_is_bound)


def rescore_result(result: DiffResult, baseline: Any, candidate: Any, endpoint: str,
                   api_key_env: str | None = None) -> DiffResult:
    """Re-score every undetermined divergence; the others keep the recorded baseline margins."""
    todo = [i for i in result.items if _wanted(i)]
    rescorer = Rescorer(endpoint, os.environ.get(api_key_env or "OPENAI_API_KEY")) if todo else None
    try:
        return _rescore_all(result, baseline, candidate, rescorer)
    finally:
        if rescorer is not None:
            rescorer.close()


def _rescore_all(result: DiffResult, baseline: Any, candidate: Any, rescorer: Rescorer | None) -> DiffResult:
    b_by_id, c_by_id = baseline.by_id, candidate.by_id
    items, done = [], 0
    for item in result.items:
        if not _wanted(item) or rescorer is None:
            items.append(item)
            continue
        r = rescore_item(item, baseline.with_logprobs(b_by_id[item.id]), candidate.with_logprobs(c_by_id[item.id]),
                         baseline.manifest, rescorer)
        if r.why_not is not None:
            items.append(dataclasses.replace(item, notes=item.notes + (f"--rescore: {r.why_not}",)))
            continue
        done += 1
        margin = r.logprob_baseline_token - r.logprob_candidate_token
        verdict = classify_margin(margin, True, result.tau)
        bt = dataclasses.replace(item.baseline_token, logprob_baseline=r.logprob_baseline_token)
        ct = dataclasses.replace(item.candidate_token or TokenView("", None, None, None, None),
                                 logprob_baseline=r.logprob_candidate_token)
        items.append(dataclasses.replace(item, verdict=verdict, margin=margin, margin_is_bound=False,
                                         baseline_token=bt, candidate_token=ct,
                                         reason=f"re-scored on {rescorer.endpoint.url}: m {margin:.2g} ({item.reason})"))
    return dataclasses.replace(result, items=tuple(items), rescored=done)
