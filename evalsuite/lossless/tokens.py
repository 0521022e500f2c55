"""Token streams of two runs, as the lossless check reads them: the token model (Tok, Alt),
reading a record's logprobs or an Arrow token table, comparing tokens by id, bytes or text,
and counting tokens that were not the server's own top-1."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, NamedTuple, Sequence

# the not-top-1 counting lives with the token streams (the run's greedy check reads it too)
from ..store.tokens import NOT_TOP1_EPS, _float, not_top1_count, not_top1_in_columns, not_top1_mask  # noqa: F401  (re-exported)


VERDICTS = ("identical", "near_tie", "suspicious", "real", "not_greedy", "cut_prefix", "undetermined")
COUNT_KEYS = VERDICTS + ("hidden_drift", "retokenised", "unscored")

# tau (nats) by the precision of the engines compared: float noise grows as precision drops.
TAU_BY_PRECISION = {"fp32": 0.05, "fp16": 0.05, "q8": 0.05, "bf16": 0.15, "fp8-kv": 0.25}
DEFAULT_TAU = 0.05

# extra_body keys that may differ between the runs: they steer speculation, caching, slots or
# what is reported, never which token greedy decoding picks (docs/lossless.md).
ENGINE_KEYS = frozenset({
    "cache_prompt", "id_slot", "n_probs", "post_sampling_probs", "return_tokens", "timings_per_token",
    "speculative", "speculative.n_max", "speculative.n_min", "speculative.p_min",
    "draft_max", "draft_min", "draft_p_min", "num_speculative_tokens", "speculative_config",
    "priority", "request_id", "return_hidden_states",
})
# decoding fields that only change what is reported, not the generated text
REPORTING_DECODING_KEYS = frozenset({"logprobs"})

# Re-merged: from some point after the divergence the two texts agree to the end (docs/lossless.md).
# The agreed tail must be this long unless both runs stopped by themselves and their tails are
# equal to the last token; a shorter common ending ("." or "}") is chance, not a re-merge.
REMERGE_MIN_TOKENS = 8
MAX_ALIGN_TOKENS = 4000      # bound the token alignment (difflib is quadratic at worst)
CONTEXT_TOKENS = 40          # tokens of each continuation kept for the side-by-side view
CONTEXT_CHARS = 300


class DiffRefused(ValueError):
    """The two runs cannot be diffed (other items, prompts or decoding); the message says why."""


# ----------------------------------------------------------------------------- tokens

# Alt and Tok are named tuples, not dataclasses: a long diff builds millions of them, and a
# tuple is built several times faster than a frozen dataclass.
class Alt(NamedTuple):
    """One top-k alternative at a position."""
    text: str
    bytes: tuple[int, ...] | None
    id: int | None
    logprob: float | None


class Tok(NamedTuple):
    """One generated token as the record stores it."""
    text: str
    bytes: tuple[int, ...] | None
    id: int | None
    logprob: float | None
    part: str
    top: tuple[Alt, ...]

    @property
    def opaque(self) -> bool:
        # llama-cpp-python decodes each token alone with errors="ignore": a partial UTF-8 byte
        # comes back as "" with neither bytes nor id, so it cannot be told from another one.
        return self.text == "" and self.bytes is None and self.id is None


def _bytes(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, list) and all(isinstance(b, int) for b in value):
        return tuple(value)
    return None


def tokens_of(record: dict[str, Any]) -> list[Tok] | None:
    """The record's logprobs as tokens; None when the run kept no logprobs."""
    entries = record.get("logprobs")
    if entries is None:
        return None
    out = []
    for n, e in enumerate(entries):
        if not isinstance(e, dict):
            raise ValueError(f"item {record.get('id')}: logprobs[{n}] is not an object")
        top = tuple(Alt(str(t.get("token") or ""), _bytes(t.get("bytes")), t.get("id"), _float(t.get("logprob")))
                    for t in (e.get("top") or []) if isinstance(t, dict))
        out.append(Tok(str(e.get("token") or ""), _bytes(e.get("bytes")), e.get("id"), _float(e.get("logprob")),
                       str(e.get("part") or "answer"), top))
    return out


def tokens_from_table(table: Any) -> list[Tok]:
    """tokens_of for a token_schema() Arrow table from the side file. The columns' types are
    already checked, so whole columns are converted at once and the named tuples are made by
    tuple.__new__ (no Python-level call per token or alternative)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = table.combine_chunks()

    def col(name: str) -> Any:
        column = table.column(name)
        return column.chunk(0) if column.num_chunks else pa.array([], column.type)

    def logprobs(arr: Any) -> list[float | None]:    # NaN and +inf are no logprob; -inf is one
        arr = arr.cast(pa.float64())
        keep = pc.or_(pc.is_finite(arr), pc.equal(arr, float("-inf")))
        return pc.if_else(keep, arr, pa.scalar(None, pa.float64())).to_pylist()

    def byte_tuples(arr: Any) -> list[tuple[int, ...] | None]:
        return [None if b is None else tuple(b) for b in arr.to_pylist()]

    lists = [col(name) for name in ("top_token", "top_bytes", "top_id", "top_logprob")]
    offsets = [pc.fill_null(pc.list_value_length(a), 0).to_pylist() for a in lists]
    if any(o != offsets[0] for o in offsets[1:]):      # ragged alternatives: zip() them row by row
        return tokens_of({"logprobs": _entries_of_table(table)}) or []
    alts = list(map(functools.partial(tuple.__new__, Alt), zip(
        [t or "" for t in lists[0].flatten().to_pylist()], byte_tuples(lists[1].flatten()),
        lists[2].flatten().to_pylist(), logprobs(lists[3].flatten()))))
    tops, at = [], 0
    for n in offsets[0]:
        tops.append(tuple(alts[at:at + n]))
        at += n
    return list(map(functools.partial(tuple.__new__, Tok), zip(
        [t or "" for t in col("token").to_pylist()], byte_tuples(col("bytes")), col("id").to_pylist(),
        logprobs(col("logprob")), [p or "answer" for p in col("part").to_pylist()], tops)))


def _entries_of_table(table: Any) -> list[dict[str, Any]]:
    from ..store.tokens import _entries, token_schema

    return _entries(*(table.column(name).to_pylist() for name in token_schema().names))


def comparison_level(a: Sequence[Tok], b: Sequence[Tok]) -> str:
    """Compare by ids when both streams carry them, else by bytes, else by decoded text."""
    both = list(a) + list(b)
    if both and all(t.id is not None for t in both):
        return "id"
    if both and all(t.bytes is not None for t in both):
        return "bytes"
    return "text"


def key(t: Tok | Alt, level: str) -> Any:
    return t.id if level == "id" else t.bytes if level == "bytes" else t.text


def same_token(a: Tok, b: Tok, level: str) -> bool | None:
    """True/False, or None when both are opaque partial bytes ("" with no bytes or ids)."""
    if level == "text" and a.opaque and b.opaque:
        return None
    return key(a, level) == key(b, level)


def token_bytes(t: Tok | Alt) -> bytes:
    return bytes(t.bytes) if t.bytes is not None else t.text.encode("utf-8")


def stream_text(tokens: Sequence[Tok]) -> str:
    if tokens and all(t.bytes is not None for t in tokens):
        return b"".join(bytes(t.bytes or ()) for t in tokens).decode("utf-8", errors="replace")
    return "".join(t.text for t in tokens)


def raw_text(record: dict[str, Any]) -> str:
    """The generated text as streamed: reasoning (with its think tags) then the answer."""
    reasoning = record.get("reasoning") or ""
    if reasoning and record.get("reasoning_source") == "think-tags":
        reasoning = f"<think>{reasoning}</think>"
    return reasoning + (record.get("answer") or "")


def covers_text(tokens: Sequence[Tok], record: dict[str, Any]) -> bool:
    """Do the logprob entries spell the whole text? Not when a server skips some (llama-server:
    accepted draft tokens; SGLang: reasoning)."""
    streamed, text = stream_text(tokens), raw_text(record)
    if streamed == text:
        return True
    squash = lambda s: "".join(s.split())  # noqa: E731  the think-tag splitter may eat whitespace
    if squash(streamed) == squash(text):
        return True
    return lost_bytes_shape(tokens) and spells_with_partial_bytes(tokens, squash(text), squash)


def lost_bytes_shape(tokens: Sequence[Tok]) -> bool:
    """llama-cpp-python's token texts: no bytes and no ids, each token decoded alone with
    errors="ignore", so the bytes of a character split over tokens are lost from them."""
    return bool(tokens) and all(t.bytes is None and t.id is None for t in tokens)


def spells_with_partial_bytes(tokens: Sequence[Tok], text: str, norm: Any = lambda s: s) -> bool:
    """The tokens spell `text` when, at partial-byte tokens ("" with no bytes or ids) or where
    the next token's text does not follow, zero or more non-ASCII characters may be skipped:
    an unstreamed llama-cpp-python response decodes its text whole, so it holds the characters
    whose UTF-8 bytes were split over tokens (each token decoded alone lost them), and drops
    bytes that form no character. The shortest skip after which the token's text fits is taken."""
    pos, pending = 0, False
    for t in tokens:
        if t.opaque:
            pending = True
            continue
        piece = norm(t.text)
        if text.startswith(piece, pos):
            pos, pending = pos + len(piece), False
            continue
        end = pos
        while end < len(text) and ord(text[end]) >= 0x80:
            end += 1
            if text.startswith(piece, end):
                break
        else:
            return False
        pos, pending = end + len(piece), False
    return all(ord(ch) >= 0x80 for ch in text[pos:]) and (pending or pos == len(text))


GREEDY_FIX = ("the run did not decode greedily at temperature 0 (a sampler setting the server applies by default, "
              "e.g. llama-cpp-python's repeat_penalty 1.1): run it again with evalsuite's neutral settings (sent by "
              "default for engines it recognises) or --extra-body '{\"repeat_penalty\": 1.0}'")


def _earlier_not_greedy(tb: Sequence[Tok], tc: Sequence[Tok] | None, j: int) -> str | None:
    """When a run's tokens before the divergence were not its own top-1, its sampler changed
    choices (a repeat penalty): the raw logprobs no longer say how close this choice was."""
    counts = [(side, sum(1 for t in toks[:j] if (_own_rank(t) or 1) > 1))
              for side, toks in (("baseline", tb), ("candidate", tc)) if toks is not None]
    return earlier_not_greedy_reason(counts)


def earlier_not_greedy_reason(counts: Sequence[tuple[str, int]]) -> str | None:
    """_earlier_not_greedy's words for (side, positions before the divergence not its own top-1)."""
    bad = [f"the {side} at {n} earlier position(s)" for side, n in counts if n]
    if not bad:
        return None
    return ("tokens were not the run's own top-1 before this point (" + ", ".join(bad) + "): its sampler changed "
            "choices, so the logprobs do not say how close this one was. Fix: " + GREEDY_FIX)


def _own_rank(t: Tok) -> int | None:
    """The emitted token's rank in its own top-k (1 = greedy), None when it cannot be read."""
    if t.logprob is None or not t.top or t.opaque:
        return None
    return 1 + sum(1 for a in t.top if a.logprob is not None and a.logprob > t.logprob + NOT_TOP1_EPS)


def top_drift(a: Tok, b: Tok, level: str) -> float:
    """Largest |lp difference| over the alternatives both positions list (opaque "" excluded):
    two engines given the same prefix should agree here up to float noise."""
    if a.top == b.top:          # the same list (the common case of a shared prefix): no drift
        return 0.0

    def table(t: Tok) -> dict[Any, float]:
        return {key(x, level): x.logprob for x in t.top
                if x.logprob is not None and not (level == "text" and x.text == "")}
    ta, tb = table(a), table(b)
    common = [abs(ta[k] - tb[k]) for k in ta.keys() & tb.keys() if math.isfinite(ta[k]) and math.isfinite(tb[k])]
    # A token listed on one side only is below the other side's lowest listed logprob: that
    # gap is a lower bound of its difference (it catches distributions with nothing in common).
    for mine, other in ((ta, tb), (tb, ta)):
        finite = [v for v in other.values() if math.isfinite(v)]
        if finite:
            floor = min(finite)
            common += [mine[k] - floor for k in mine.keys() - other.keys() if math.isfinite(mine[k]) and mine[k] > floor]
    return max(common, default=0.0)


@dataclass(frozen=True)
class Lookup:
    logprob: float | None
    rank: int | None          # 1 = the baseline's most likely token
    in_top: bool
    ambiguous: bool           # matched by "" text: could be another partial-byte token


def lookup(top: Sequence[Alt], tok: Tok, level: str) -> Lookup:
    """The baseline's logprob and rank for `tok` at a position. A partial-byte token that reads ""
    matches a "" entry only ambiguously (every such token shares that key); with no "" entry
    in the top-k it is certainly not there."""
    for alt in top:
        if alt.logprob is not None and key(alt, level) == key(tok, level):
            return Lookup(alt.logprob, rank_of(top, alt.logprob), True, level == "text" and tok.text == "")
    return Lookup(None, None, False, False)


def rank_of(top: Sequence[Alt], logprob: float | None) -> int | None:
    # by value, not position: llama-cpp-python appends the chosen token after the top-k
    if logprob is None:
        return None
    return 1 + sum(1 for alt in top if alt.logprob is not None and alt.logprob > logprob)
