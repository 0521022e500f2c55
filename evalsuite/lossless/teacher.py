"""Teacher-forced drift: score the baseline's generated tokens on the candidate endpoint, so
drift is measured along the whole generation and not only up to the first divergence.

vLLM: the completions API takes a prompt of token ids and returns `prompt_logprobs` (the
distribution before each prompt token, the token itself and the top-K). The baseline item's
prompt is tokenised by the candidate server (`POST /tokenize`, with the chat messages and the
generation prompt for chat runs), its generated token ids (from the baseline's side file) are
appended, and one request per item (`max_tokens` 1) returns the candidate's distribution at
every generated position. KL per position is drift.py's top-K + rest formula, with the
baseline's stored top-K as P and the candidate's listed tokens as Q.

Where the engine gives no prompt logprobs (llama-server, llama-cpp-python), the result says so
and why; `--rescore` re-scores only at divergences. Requests go through the run's client: an
evalsuite.client.endpoint.Endpoint session (the API key from OPENAI_API_KEY or --api-key-env) with the
bounded retry policy of `evalsuite run` and a deadline per request.
"""
from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Any, Sequence

DEFAULT_ITEMS = 20
TIMEOUT_S = 120.0


@dataclass(frozen=True)
class TeacherForced:
    endpoint: str
    items: tuple[dict[str, Any], ...]         # {id, tokens, kl_mean, kl_max, same_top1}
    tokens: int
    kl_mean: float | None
    kl_median: float | None
    kl_p99: float | None
    kl_max: float | None
    same_top1: float | None
    why_not: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"endpoint": self.endpoint, "items": list(self.items), "tokens": self.tokens, "kl_mean": self.kl_mean,
                "kl_median": self.kl_median, "kl_p99": self.kl_p99, "kl_max": self.kl_max,
                "same_top1": self.same_top1, "not_available": self.why_not}

    def line(self) -> str:
        if self.why_not:
            return f"teacher-forced drift: not available ({self.why_not})"
        if not self.tokens:
            return "teacher-forced drift: no position could be scored"
        return (f"teacher-forced drift over {self.tokens} baseline tokens of {len(self.items)} items (scored on "
                f"{self.endpoint}): KL mean {self.kl_mean:.3g}, median {self.kl_median:.3g}, p99 {self.kl_p99:.3g}, "
                f"max {self.kl_max:.3g} nats (top-K + rest bucket); same top-1 {100 * self.same_top1:.2f}%")


def kl_top(p: dict[int, float], q: dict[int, float]) -> float:
    """drift.py's KL over the tokens both lists name plus one rest bucket (logprobs in, nats out)."""
    common = [t for t in p if t in q and math.isfinite(p[t]) and math.isfinite(q[t])]
    pc = [math.exp(p[t]) for t in common]
    qc = [math.exp(q[t]) for t in common]
    kl = sum(a * math.log(a / b) for a, b in zip(pc, qc) if a > 0 and b > 0)
    p_rest = min(max(1.0 - sum(pc), 0.0), 1.0)
    q_rest = max(min(max(1.0 - sum(qc), 0.0), 1.0), 1e-10)
    if p_rest > 0:
        kl += p_rest * math.log(p_rest / q_rest)
    return max(kl, 0.0)


class _Client:
    def __init__(self, endpoint: str, api_key: str | None):
        from ..client.endpoint import Endpoint
        from ..client.errors import RetryPolicy

        self.endpoint = Endpoint(endpoint, api_key, TIMEOUT_S, api="completions", stream=False)
        self.retry = RetryPolicy(max_retries=3, max_total=120.0)

    async def post(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        import aiohttp

        from ..client.errors import EndpointError, classify_status

        for attempt in range(self.retry.max_retries + 1):
            try:
                async with self.endpoint.session().post(url, json=body,
                                                        timeout=aiohttp.ClientTimeout(total=TIMEOUT_S)) as reply:
                    text = await reply.text()
                    if reply.status >= 400:
                        raise classify_status(reply.status, self.endpoint.scrub(text[:300]),
                                              reply.headers.get("retry-after"))
                    import json
                    return json.loads(text)
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as e:
                error = EndpointError("connection", f"{type(e).__name__}: {e}")
            except EndpointError as e:
                error = e
            if not error.retryable or attempt == self.retry.max_retries:
                raise error
            await asyncio.sleep(self.retry.delay(attempt, error))
        raise AssertionError("unreachable")


def _id(token_id: Any, text: Any) -> int | None:
    """A token's id: the stored one, else read from vLLM's "token_id:N" spelling
    (`return_tokens_as_token_ids`)."""
    if token_id is not None:
        return int(token_id)
    from ..client.logprobs import TOKEN_ID

    m = TOKEN_ID.match(text) if isinstance(text, str) else None
    return int(m.group(1)) if m else None


def _root(endpoint: str) -> str:
    base = endpoint.rstrip("/")
    return base[:-3] if base.endswith("/v1") else base


async def _score_item(client: _Client, endpoint: str, model: str, api: str, record: dict[str, Any],
                      table: Any, k: int) -> dict[str, Any] | None:
    import numpy as np

    gen = [_id(i, t) for i, t in zip(table.column("id").to_pylist(), table.column("token").to_pylist())]
    if not gen or any(t is None for t in gen):
        return None
    body = ({"model": model, "prompt": record.get("prompt") or ""} if api == "completions" else
            {"model": model, "messages": record.get("messages") or [], "add_generation_prompt": True})
    prompt_ids = (await client.post(_root(endpoint) + "/tokenize", body)).get("tokens")
    if not isinstance(prompt_ids, list):
        raise ValueError("/tokenize returned no tokens")
    reply = await client.post(endpoint.rstrip("/") + "/completions", {
        "model": model, "prompt": list(prompt_ids) + list(gen), "max_tokens": 1, "temperature": 0,
        "prompt_logprobs": k})
    scored = ((reply.get("choices") or [{}])[0]).get("prompt_logprobs")
    if not isinstance(scored, list) or len(scored) != len(prompt_ids) + len(gen):
        raise LookupError("the server returned no prompt logprobs for the whole sequence")
    top_ids = [[_id(i, t) for i, t in zip(ids or (), texts or ())]
               for ids, texts in zip(table.column("top_id").to_pylist(), table.column("top_token").to_pylist())]
    top_lps = table.column("top_logprob").to_pylist()
    kls, same = [], []
    for t in range(len(gen)):
        at = scored[len(prompt_ids) + t]
        if not isinstance(at, dict) or not top_ids[t]:
            continue
        q = {int(tid): float(v["logprob"]) for tid, v in at.items()
             if isinstance(v, dict) and isinstance(v.get("logprob"), (int, float))}
        p = {int(tid): float(lp) for tid, lp in zip(top_ids[t], top_lps[t]) if tid is not None and lp is not None}
        if not p or not q:
            continue
        kls.append(kl_top(p, q))
        same.append(max(p, key=p.get) == max(q, key=q.get))
    if not kls:
        return {"id": record.get("id"), "tokens": 0, "kl_mean": None, "kl_max": None, "same_top1": None, "_kl": []}
    return {"id": record.get("id"), "tokens": len(kls), "kl_mean": float(np.mean(kls)), "kl_max": float(max(kls)),
            "same_top1": float(np.mean(same)), "_kl": kls}


def teacher_forced(baseline: Any, endpoint: str, item_ids: Sequence[str], *, model: str | None = None,
                   api_key_env: str | None = None, k: int | None = None) -> TeacherForced:
    """Teacher-forced drift of the candidate at `endpoint` along the baseline's generations of
    `item_ids` (a sample: one request per item)."""
    import os

    import numpy as np

    from ..client.errors import EndpointError

    manifest = baseline.manifest
    k = k or (manifest.get("decoding") or {}).get("logprobs") or 5
    api = manifest.get("api") or "chat"
    client = _Client(endpoint, os.environ.get(api_key_env or "OPENAI_API_KEY"))
    loop = asyncio.new_event_loop()
    items, why_not, no_ids = [], None, 0
    try:
        served = loop.run_until_complete(client.endpoint.list_models())
        model = model or (served[0] if served else manifest.get("model") or "")
        for i in item_ids:
            record = baseline.by_id.get(i)
            table = baseline.tokens.table(i) if record is not None else None
            if record is None or table is None or record.get("outcome") == "error":
                continue
            try:
                scored = loop.run_until_complete(_score_item(client, endpoint, model, api, record, table, k))
            except EndpointError as e:
                why_not = (f"{client.endpoint.url} refused a prompt-logprobs request ({e}): only vLLM (prompt_logprobs) "
                           "scores a given sequence; llama-server returns no prompt logprobs, so there only the "
                           "divergence points can be re-scored (diff --rescore-url, lossless --rescore)")
                break
            except (LookupError, ValueError) as e:
                why_not = (f"{client.endpoint.url}: {e}; llama-server and llama-cpp-python return no prompt logprobs, "
                           "so there only the divergence points can be re-scored (diff --rescore-url, lossless --rescore)")
                break
            if scored is not None:
                items.append(scored)
            else:
                no_ids += 1
    except Exception as e:    # the endpoint is down: the diff itself stands, this part says why not
        why_not = why_not or f"{client.endpoint.url} could not be asked ({type(e).__name__}: {e})"
    finally:
        try:
            loop.run_until_complete(client.endpoint.close())
        finally:
            loop.close()
    if not items and no_ids and not why_not:
        why_not = (f"the baseline's records of {no_ids} item(s) hold no token ids, so its exact tokens cannot be sent "
                   "back (vLLM gives ids with --extra-body '{\"return_tokens_as_token_ids\": true}')")
    kl = np.array([v for it in items for v in it["_kl"]], dtype=np.float64)
    same = [it["same_top1"] * it["tokens"] for it in items if it["tokens"]]
    n = int(kl.size)
    kept = tuple({key: v for key, v in it.items() if key != "_kl"} for it in items)
    if why_not and not items:
        return TeacherForced(client.endpoint.url, (), 0, None, None, None, None, None, why_not)
    return TeacherForced(client.endpoint.url, kept, n, float(kl.mean()) if n else None,
                         float(np.quantile(kl, 0.5)) if n else None, float(np.quantile(kl, 0.99)) if n else None,
                         float(kl.max()) if n else None, float(sum(same) / n) if n else None, why_not)
