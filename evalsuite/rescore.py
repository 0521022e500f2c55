"""`--rescore`: ask the baseline endpoint for the logprobs the records lack at a divergence.

Some divergences cannot be classified from the records alone: the baseline stopped there, a
server sent no logprobs for some tokens (llama-server: accepted draft tokens; SGLang: the
reasoning), or the tokens are partial UTF-8 bytes that llama-cpp-python names "". Rescoring
sends the prompt plus the common prefix to the baseline endpoint as a completions call with
max_tokens 1 and top logprobs, and reads both tokens' logprobs there.

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


def completions_top(endpoint: str, model: str | None, prompt: str, extra_body: dict[str, Any]) -> dict[str, float]:
    """The top logprobs of the next token after `prompt` (legacy completions format)."""
    body = {"prompt": prompt, "max_tokens": 1, "temperature": 0.0, "logprobs": RESCORE_TOP, **extra_body}
    if model:
        body["model"] = model
    request = urllib.request.Request(endpoint.rstrip("/") + "/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
        data = json.load(response)
    lp = (data.get("choices") or [{}])[0].get("logprobs") or {}
    tops = lp.get("top_logprobs") or [{}]
    top = tops[0] if tops and isinstance(tops[0], dict) else {}
    return {str(k): float(v) for k, v in top.items() if isinstance(v, (int, float))}


def rescore_item(item: ItemDiff, base: dict[str, Any], cand: dict[str, Any], manifest: dict[str, Any],
                 endpoint: str) -> Rescore:
    if manifest.get("api") != "completions":
        return Rescore(None, None, "chat run: the rendered chat template is not known client-side and the chat API "
                                   "cannot continue an assistant message, so it cannot be re-scored")
    if item.token_index is None or item.baseline_token is None or item.candidate_token is None:
        return Rescore(None, None, "no token-level divergence to re-score")
    tokens: list[Tok] = tokens_of(base) or []
    prefix = tokens[:item.token_index]
    if any(t.text == "" for t in prefix) or item.baseline_token.text == "" or item.candidate_token.text == "":
        return Rescore(None, None, "the prefix or a token holds partial UTF-8 bytes the server reported as '': "
                                   "the exact text cannot be rebuilt")
    prompt = (base.get("prompt") or "") + "".join(t.text for t in prefix)
    extra = dict((manifest.get("decoding") or {}).get("extra_body") or {})
    try:
        top = completions_top(endpoint, manifest.get("model"), prompt, extra)
    except (OSError, urllib.error.URLError, ValueError, json.JSONDecodeError) as e:
        return Rescore(None, None, f"rescoring at {endpoint} failed: {e}")
    b, c = top.get(item.baseline_token.text), top.get(item.candidate_token.text)
    if b is None or c is None:
        return Rescore(b, c, f"not both tokens are in the re-scored top-{RESCORE_TOP}")
    return Rescore(b, c)


def rescore_result(result: DiffResult, baseline: Any, candidate: Any, endpoint: str) -> DiffResult:
    """Re-score every undetermined divergence; the others keep the recorded baseline margins."""
    b_by_id, c_by_id = baseline.by_id, candidate.by_id
    items, done = [], 0
    for item in result.items:
        if item.verdict != "undetermined" or item.token_index is None:
            items.append(item)
            continue
        r = rescore_item(item, baseline.with_logprobs(b_by_id[item.id]), candidate.with_logprobs(c_by_id[item.id]),
                         baseline.manifest, endpoint)
        if r.why_not is not None:
            items.append(dataclasses.replace(item, notes=item.notes + (f"--rescore: {r.why_not}",)))
            continue
        done += 1
        margin = r.logprob_baseline_token - r.logprob_candidate_token
        verdict = classify_margin(margin, True, result.tau)
        bt = dataclasses.replace(item.baseline_token, logprob_baseline=r.logprob_baseline_token)
        ct = dataclasses.replace(item.candidate_token or TokenView("", None, None, None, None),
                                 logprob_baseline=r.logprob_candidate_token)
        items.append(dataclasses.replace(item, verdict=verdict, margin=margin, baseline_token=bt, candidate_token=ct,
                                         reason=f"re-scored on {endpoint}: |m| {abs(margin):.2g} ({item.reason})"))
    return dataclasses.replace(result, items=tuple(items), rescored=done)
