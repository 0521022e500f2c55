"""Token logprob entries as the records keep them, from every shape the engines send.

A record's entry: {"token", "bytes", "id", "logprob", "part", "top": [{"token", "bytes", "id",
"logprob"}]}, plus "missing": true where the server gave the token but no number for it.

Shapes (real responses in tests/engines/fixtures/):
- chat `logprobs.content` entries (OpenAI, vLLM with `bytes`, llama-server with `id` + `bytes`);
- llama-server's /v1/completions uses that same content shape, not the legacy lists;
- legacy completions `{tokens, token_logprobs, top_logprobs: [{text: logprob}]}` (vLLM, OpenAI):
  one dict per position, where partial UTF-8 tokens all collide on the key "";
- llama-server under speculation: a drafted token comes back with `logprob: 0.0` and no
  alternatives (unstreamed), or its stream chunk carries no logprobs at all. Its probability was
  never computed (the server sets it to 1): recorded as missing, never as certainty;
- vLLM `return_tokens_as_token_ids`: tokens spelled "token_id:N"; the id is read from them, and
  the alternatives' `bytes` (which spell "token_id:N", not the token) are dropped.
"""
from __future__ import annotations

import re
from typing import Any, Callable

TOKEN_ID = re.compile(r"^token_id:(\d+)$")


def _getter(obj: Any) -> Callable[..., Any]:
    return obj.get if isinstance(obj, dict) else (lambda k, d=None: getattr(obj, k, d))


def _alt(t: Any) -> dict[str, Any]:
    get = _getter(t)
    token, tid, raw = get("token"), get("id"), get("bytes")
    m = TOKEN_ID.match(token) if isinstance(token, str) else None
    if m:
        tid, raw = int(m.group(1)) if tid is None else tid, None
    return {"token": token, "bytes": raw, "id": tid, "logprob": get("logprob")}


def unscored(entry: Any, top_k: int | None) -> bool:
    """A chat-shape entry whose number the server never computed: alternatives were asked for
    and none came, and the logprob says 0.0 (llama-server's drafted tokens)."""
    get = _getter(entry)
    return bool(top_k) and get("logprob") == 0.0 and not get("top_logprobs")


def scored_or_none(content: list[Any], top_k: int | None) -> list[Any]:
    """The chat-shape entries as received, with an unscored entry's logprob set to None: the
    cheap form for a client that keeps the wire entries (one comparison per token). Where
    every entry is scored, `content` itself."""
    if not top_k:
        return content
    for e in content:   # unscored()'s test, inline: every entry of the usual chunk is scored
        if isinstance(e, dict) and e.get("logprob") == 0.0 and not e.get("top_logprobs"):
            break
    else:
        return content   # the list itself: nothing copied, nothing to count (stream.py)
    return [dict(e, logprob=None) if isinstance(e, dict) and unscored(e, top_k) else e for e in content]


def content_entry(entry: Any, part: str, top_k: int | None) -> dict[str, Any]:
    """One chat-shape entry. `top_k`: the alternatives asked for (0/None: none asked)."""
    get = _getter(entry)
    top = [_alt(t) for t in (get("top_logprobs") or [])]
    out = {"token": get("token"), "bytes": get("bytes"), "id": get("id"), "logprob": get("logprob"),
           "part": part, "top": top}
    m = TOKEN_ID.match(out["token"]) if isinstance(out["token"], str) else None
    if m and out["id"] is None:
        out["id"] = int(m.group(1))
    if unscored(entry, top_k):
        # alternatives were asked for and none came: the server never computed this token's
        # distribution (llama-server's drafted tokens). 0.0 here is not certainty.
        out["logprob"], out["missing"] = None, True
    return out


def legacy_entries(lp: Any, part: str) -> list[dict[str, Any]]:
    """Legacy completions lists; a position whose dict lost alternatives to key collisions keeps
    what is there."""
    get = _getter(lp)
    tokens = get("tokens") or []
    lps = get("token_logprobs") or []
    tops = get("top_logprobs") or []
    out = []
    for i, tok in enumerate(tokens):
        top = tops[i] if i < len(tops) and isinstance(tops[i], dict) else {}
        m = TOKEN_ID.match(tok) if isinstance(tok, str) else None
        out.append({"token": tok, "bytes": None, "id": int(m.group(1)) if m else None,
                    "logprob": lps[i] if i < len(lps) else None, "part": part,
                    "top": [{"token": t, "bytes": None, "id": None, "logprob": v} for t, v in top.items()]})
    return out


def entries_of(lp: Any, part: str, top_k: int | None) -> list[dict[str, Any]]:
    """Entries from a choice's `logprobs`, whichever shape it has (chat or completions API)."""
    if lp is None:
        return []
    content = _getter(lp)("content")
    if isinstance(content, list):
        return [content_entry(e, part, top_k) for e in content]
    return legacy_entries(lp, part)


def missing_entry(text: str, part: str) -> dict[str, Any]:
    """A streamed chunk that carried text but no logprobs (llama-server's drafted tokens): the
    text is kept, so the entries still spell the answer and can be aligned by bytes."""
    return {"token": text, "bytes": list(text.encode("utf-8")), "id": None, "logprob": None, "part": part,
            "top": [], "missing": True}


def count_missing(entries: list[dict[str, Any]] | None) -> int:
    return sum(1 for e in entries or () if e.get("missing"))
