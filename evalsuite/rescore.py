"""`--rescore`: ask the baseline endpoint for the logprobs the records lack at a divergence.

Some divergences cannot be classified from the records alone: the baseline stopped there, a
server sent no logprobs for some tokens (llama-server: accepted draft tokens; SGLang: the
reasoning), or the tokens are partial UTF-8 bytes that llama-cpp-python names "". Rescoring
sends the prompt plus the common prefix to the baseline endpoint as a completions call with
max_tokens 1 and top logprobs, and reads both tokens' logprobs there. When every token id is
known (llama-server), the prefix goes as token ids (`prompt: [text, id, id, ...]`), so partial
UTF-8 bytes do not matter and tokens are matched by id; a token outside the top-20 is asked for
again with the top-1000 (llama-server answers with up to the whole vocabulary), which turns a
real divergence's bound margin into an exact one.

Limits (docs/lossless.md): exact only for completions-API runs, where the prompt text is in the
record and the server re-tokenises prompt + prefix the same way it generated it (true for a
prefix that ends on a token boundary the tokenizer keeps; not guaranteed). For chat runs the
rendered chat template is not known client-side and the OpenAI chat API cannot continue an
assistant message, so those stay undetermined with that reason. A prefix holding "" tokens
(bytes the server dropped) cannot be rebuilt either. This is the one analysis that calls a
server; `evalsuite diff` does so only when asked.
"""
from __future__ import annotations

import dataclasses
import json
import urllib.error
import urllib.request
from typing import Any

from .analysis.diff import DiffResult, ItemDiff, Tok, TokenView, classify_margin, tokens_of

RESCORE_TOP = 20
TIMEOUT_S = 60.0


@dataclasses.dataclass(frozen=True)
class Rescore:
    logprob_baseline_token: float | None
    logprob_candidate_token: float | None
    why_not: str | None = None


DEEP_TOP = 1000   # llama-server returns up to the whole vocabulary when asked; vLLM caps at --max-logprobs


def alternatives_of(data: dict[str, Any]) -> list[tuple[str, int | None, float]]:
    """The first generated position's top logprobs as (text, id, logprob), from either shape:
    legacy completions (`top_logprobs: [{token: logprob}]`, vLLM, OpenAI) or llama-server's
    (`content: [{token, id, logprob, top_logprobs: [{token, id, logprob}]}]`, in /v1/completions too)."""
    lp = (data.get("choices") or [{}])[0].get("logprobs") or {}
    content = lp.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        return [(str(a.get("token") or ""), a.get("id") if isinstance(a.get("id"), int) else None, float(a["logprob"]))
                for a in content[0].get("top_logprobs") or []
                if isinstance(a, dict) and isinstance(a.get("logprob"), (int, float))]
    tops = lp.get("top_logprobs") or [{}]
    top = tops[0] if tops and isinstance(tops[0], dict) else {}
    return [(str(k), None, float(v)) for k, v in top.items() if isinstance(v, (int, float))]


def top_of(data: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for text, _, logprob in alternatives_of(data):
        out.setdefault(text, logprob)
    return out


def completions_alternatives(endpoint: str, model: str | None, prompt: str | list[Any], extra_body: dict[str, Any],
                             k: int = RESCORE_TOP) -> list[tuple[str, int | None, float]]:
    """The top-k logprobs of the next token after `prompt` (text, or llama-server's mixed
    [text, id, id, ...] form that continues with exact token ids)."""
    body = {"prompt": prompt, "max_tokens": 1, "temperature": 0.0, "logprobs": k, **extra_body}
    if model:
        body["model"] = model
    request = urllib.request.Request(endpoint.rstrip("/") + "/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
        return alternatives_of(json.load(response))


def completions_top(endpoint: str, model: str | None, prompt: str, extra_body: dict[str, Any],
                    k: int = RESCORE_TOP) -> dict[str, float]:
    """The top-k logprobs of the next token after `prompt`, by text."""
    out: dict[str, float] = {}
    for text, _, logprob in completions_alternatives(endpoint, model, prompt, extra_body, k):
        out.setdefault(text, logprob)
    return out


def _find(alts: list[tuple[str, int | None, float]], view: TokenView, by_id: bool) -> float | None:
    for text, tid, logprob in alts:
        if (tid == view.id) if by_id else (text == view.text):
            return logprob
    return None


def rescore_item(item: ItemDiff, base: dict[str, Any], cand: dict[str, Any], manifest: dict[str, Any],
                 endpoint: str) -> Rescore:
    if manifest.get("api") != "completions":
        return Rescore(None, None, "chat run: the rendered chat template is not known client-side and the chat API "
                                   "cannot continue an assistant message, so it cannot be re-scored")
    if item.token_index is None or item.baseline_token is None or item.candidate_token is None:
        return Rescore(None, None, "no token-level divergence to re-score")
    tokens: list[Tok] = tokens_of(base) or []
    prefix = tokens[:item.token_index]
    bt, ct = item.baseline_token, item.candidate_token
    # With every id known (llama-server), continue the prompt with the exact token ids: partial
    # UTF-8 bytes and re-tokenisation stop mattering, and the tokens are matched by id.
    by_id = bt.id is not None and ct.id is not None and all(t.id is not None for t in prefix)
    if by_id:
        prompt: str | list[Any] = [base.get("prompt") or "", *(t.id for t in prefix)]
    else:
        if any(t.text == "" for t in prefix) or bt.text == "" or ct.text == "":
            return Rescore(None, None, "the prefix or a token holds partial UTF-8 bytes the server reported as '': "
                                       "the exact text cannot be rebuilt")
        prompt = (base.get("prompt") or "") + "".join(t.text for t in prefix)
    extra = dict((manifest.get("decoding") or {}).get("extra_body") or {})
    try:
        alts = completions_alternatives(endpoint, manifest.get("model"), prompt, extra)
    except (OSError, urllib.error.URLError, ValueError, json.JSONDecodeError) as e:
        return Rescore(None, None, f"rescoring at {endpoint} failed: {e}")
    b, c = _find(alts, bt, by_id), _find(alts, ct, by_id)
    depth = RESCORE_TOP
    if (b is None or c is None) and len(alts) >= RESCORE_TOP:
        # a token outside the top-20: servers that give more (llama-server: the whole vocabulary)
        # give its exact logprob; one that refuses (vLLM past --max-logprobs) leaves the bound
        try:
            deep = completions_alternatives(endpoint, manifest.get("model"), prompt, extra, k=DEEP_TOP)
            b, c, depth = _find(deep, bt, by_id) if b is None else b, _find(deep, ct, by_id) if c is None else c, len(deep)
        except (OSError, urllib.error.URLError, ValueError, json.JSONDecodeError):
            pass
    if b is None or c is None:
        return Rescore(b, c, f"not both tokens are in the re-scored top-{depth}")
    return Rescore(b, c)


def rescore_result(result: DiffResult, baseline: Any, candidate: Any, endpoint: str) -> DiffResult:
    """Re-score every undetermined divergence; the others keep the recorded baseline margins."""
    b_by_id, c_by_id = baseline.by_id, candidate.by_id
    items, done = [], 0
    for item in result.items:
        # undetermined items, and real divergences whose margin is only a bound (the candidate's
        # token was outside the baseline's recorded top-k)
        wanted = item.verdict == "undetermined" or item.margin_is_bound
        if not wanted or item.token_index is None:
            items.append(item)
            continue
        r = rescore_item(item, b_by_id[item.id], c_by_id[item.id], baseline.manifest, endpoint)
        if r.why_not is not None:
            items.append(dataclasses.replace(item, notes=item.notes + (f"--rescore: {r.why_not}",)))
            continue
        done += 1
        margin = r.logprob_baseline_token - r.logprob_candidate_token
        verdict = classify_margin(margin, True, result.tau)
        bt = dataclasses.replace(item.baseline_token, logprob_baseline=r.logprob_baseline_token)
        ct = dataclasses.replace(item.candidate_token or TokenView("", None, None, None, None),
                                 logprob_baseline=r.logprob_candidate_token)
        items.append(dataclasses.replace(item, verdict=verdict, margin=margin, margin_is_bound=False, baseline_token=bt,
                                         candidate_token=ct,
                                         reason=f"re-scored on {endpoint}: |m| {abs(margin):.2g} ({item.reason})"))
    return dataclasses.replace(result, items=tuple(items), rescored=done)
