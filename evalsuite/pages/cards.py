"""A divergence as a reader sees it: the data of one card, built from an item of the diff
JSON (`ItemDiff.to_dict()`), so the diff page and the report draw divergences the same way.
Older or hand-written JSON may lack any field: every one is optional."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from .page import clip, number, token_text

ORDER = {"real": 0, "suspicious": 1, "not_greedy": 2, "undetermined": 3, "near_tie": 4, "cut_prefix": 5, "identical": 6}
MAX_PREFIX_CHARS = 1_500       # the shared text before a divergence: its end is what matters
MAX_OTHER_CHARS = 300

# fields a card draws itself; any other scalar field goes under "other fields"
_DRAWN = {"id", "class", "category", "reason", "token_index", "char_offset", "part", "baseline_text", "candidate_text",
          "lp_baseline_token", "lp_candidate_token", "margin", "margin_is_bound", "hidden_drift", "remerged",
          "answer_changed", "correctness_changed", "baseline_extracted", "candidate_extracted", "baseline_token",
          "candidate_token", "remerge", "top", "prefix", "baseline_rest", "candidate_rest", "notes"}


def verdict_of(item: Mapping[str, Any]) -> str:
    return str(item.get("class", item.get("category")) or "undetermined")


def is_divergence(item: Mapping[str, Any]) -> bool:
    return verdict_of(item) != "identical" or bool(item.get("hidden_drift"))


def sort_divergences(items: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Worst first (real, suspicious, ...), run order within a class."""
    return sorted(items, key=lambda i: ORDER.get(verdict_of(i), len(ORDER)))


def divergence_card(item: Mapping[str, Any]) -> dict[str, Any]:
    verdict = verdict_of(item)
    facts = []
    if item.get("token_index") is not None:
        where = f"token {item['token_index']}"
        if item.get("part") or item.get("char_offset") is not None:
            where += f", {item.get('part') or 'text'} character {number(item.get('char_offset'))}"
        facts.append(where)
    if isinstance(item.get("margin"), (int, float)):
        facts.append(f"m {'≥' if item.get('margin_is_bound') else '='} {number(item['margin'])} nats")
    remerge = item.get("remerge")
    if isinstance(remerge, Mapping):
        facts.append(f"re-merged after {remerge.get('baseline_tokens_between')} baseline / "
                     f"{remerge.get('candidate_tokens_between')} candidate tokens (at baseline token "
                     f"{remerge.get('baseline_index')}; the {remerge.get('agreed_tokens')} tokens from there agree)")
    elif item.get("token_index") is not None and verdict != "cut_prefix":
        facts.append("does not re-merge")
    if item.get("answer_changed"):
        facts.append(f"answer {_answer(item.get('baseline_extracted'))} → {_answer(item.get('candidate_extracted'))}"
                     + (" (correctness changed)" if item.get("correctness_changed") else ""))
    for role in ("baseline", "candidate"):
        if item.get(f"{role}_outcome") and item.get("correctness_changed"):
            facts.append(f"{role} {item[f'{role}_outcome']}")
    return {
        "id": str(item.get("id", "?")),
        "anchor": "item-" + "".join(c if c.isalnum() else "-" for c in str(item.get("id", ""))),
        "verdict": verdict if verdict in ORDER else "undetermined",
        "badge": verdict.replace("_", "-"),
        "hidden_drift": bool(item.get("hidden_drift")),
        "facts": facts,
        "reason": item.get("reason") or "",
        "tokens": _token_rows(item),
        "sides": _sides(item),
        "top": _top_rows(item),
        "other": [(k, clip(v, MAX_OTHER_CHARS) if isinstance(v, str) else v) for k, v in item.items()
                  if k not in _DRAWN and v is not None and not isinstance(v, (dict, list))
                  and not k.endswith("_outcome")],
        "notes": [str(n) for n in item.get("notes") or []],
    }


def _answer(value: Any) -> str:
    return "none" if value is None else repr(str(value))


def _ident(tok: Mapping[str, Any]) -> str:
    # text, not a number: a token id is a name, not a quantity (no thousands separators)
    if tok.get("id") is not None:
        return str(tok["id"])
    return " ".join(str(b) for b in tok["bytes"]) if tok.get("bytes") is not None else ""


def _token_rows(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for role in ("baseline", "candidate"):
        tok = item.get(f"{role}_token")
        if isinstance(tok, Mapping):
            rows.append({"role": role + (" (inferred from text)" if tok.get("inferred") else ""),
                         "text": token_text(tok.get("text")), "ident": _ident(tok),
                         "logprob": number(tok.get("logprob_baseline")), "rank": tok.get("rank_baseline")})
        elif item.get(f"{role}_text") is not None:
            rows.append({"role": role, "text": token_text(item[f"{role}_text"]), "ident": "",
                         "logprob": number(item.get(f"lp_{role}_token")), "rank": None})
    return rows


def _top_rows(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    tokens = {role: item.get(f"{role}_token") for role in ("baseline", "candidate")}
    rows = []
    for alt in item.get("top") or []:
        if not isinstance(alt, Mapping):
            continue
        marks = [role for role, tok in tokens.items() if isinstance(tok, Mapping) and _same(alt, tok)]
        rows.append({"text": token_text(alt.get("text")), "ident": _ident(alt),
                     "logprob": number(alt.get("logprob")), "marks": " + ".join(marks)})
    return rows


def _same(alt: Mapping[str, Any], tok: Mapping[str, Any]) -> bool:
    for key in ("id", "bytes"):
        if alt.get(key) is not None and tok.get(key) is not None:
            return alt[key] == tok[key]
    return alt.get("text") == tok.get("text")


def _sides(item: Mapping[str, Any]) -> list[list[tuple[str, str]]]:
    """Each side as (css class, visible text) pieces: the shared prefix in grey, the first
    differing token outlined, the ones before the re-merge shaded."""
    b_rest, c_rest = item.get("baseline_rest") or [], item.get("candidate_rest") or []
    if not (b_rest or c_rest):
        return []
    prefix = str(item.get("prefix") or "")
    if len(prefix) > MAX_PREFIX_CHARS:
        prefix = "…" + prefix[-MAX_PREFIX_CHARS:]
    remerge = item.get("remerge") if isinstance(item.get("remerge"), Mapping) else None
    sides = []
    for rest, key in ((b_rest, "baseline_tokens_between"), (c_rest, "candidate_tokens_between")):
        differing = remerge.get(key, len(rest)) if remerge else len(rest)
        pieces = [("prefix", _text(prefix))] if prefix else []
        for n, text in enumerate(rest):
            cls = "first" if n == 0 else "differ" if n < differing else ""
            pieces.append((cls, _text(text) if n else token_text(text)))
        sides.append(pieces)
    return sides


def _text(text: Any) -> str:
    """Running text: newlines kept as line breaks, other control characters spelled out
    (the page's `visible()` does that when the template prints it)."""
    return "" if text is None else str(text)
