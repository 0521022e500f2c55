"""`evalsuite diff BASELINE CANDIDATE`: was a serving change (speculation, a kernel, a KV dtype)
lossless on these items? Pure functions over two loaded runs; no endpoint is called here.

Per item the two generated token streams are walked side by side until the first token that
differs. There the baseline's own logprobs say how close the call was: the margin
m = lp_base(baseline token) - lp_base(candidate token). A float-reordering flip happens only
where the baseline itself saw a near tie (|m| tiny); a candidate token the baseline thought far
less likely (or did not list at all) is a real divergence. docs/lossless.md explains the method,
the defaults of tau and every server quirk handled here.
"""
from __future__ import annotations

import difflib
import functools
import gc
import math
from dataclasses import dataclass
from typing import Any, Iterable, NamedTuple, Sequence

VERDICTS = ("identical", "near_tie", "suspicious", "real", "not_greedy", "cut_prefix", "undetermined")
COUNT_KEYS = VERDICTS + ("hidden_drift", "retokenised")

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
# A token is "not its own top-1" only when an alternative beats it by more than float rounding.
NOT_TOP1_EPS = 1e-5
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


def _float(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if isinstance(value, (int, float)) and value == -math.inf:
        return -math.inf
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
    from ..store import token_schema, _entries

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


def not_top1_count(entries: Sequence[dict[str, Any]] | None) -> int:
    """Positions of a logprob stream (record["logprobs"]) where the emitted token is not the
    server's own top-1: an alternative beats it by more than NOT_TOP1_EPS nats. At temperature 0
    that means the server did not decode greedily (llama-cpp-python's default repeat_penalty 1.1
    does this). An emitted partial-byte token that reads "" is skipped: llama-cpp-python merges
    every such token into one "" entry, so its rank cannot be read."""
    count = 0
    for e in entries or ():
        if not isinstance(e, dict):
            continue
        lp = _float(e.get("logprob"))
        if lp is None or (e.get("token") in ("", None) and e.get("id") is None and e.get("bytes") is None):
            continue
        best = max((v for v in (_float(t.get("logprob")) for t in (e.get("top") or ()) if isinstance(t, dict))
                    if v is not None), default=None)
        if best is not None and best > lp + NOT_TOP1_EPS:
            count += 1
    return count


def _earlier_not_greedy(tb: Sequence[Tok], tc: Sequence[Tok] | None, j: int) -> str | None:
    """When a run's tokens before the divergence were not its own top-1, its sampler changed
    choices (a repeat penalty): the raw logprobs no longer say how close this choice was."""
    counts = [(side, sum(1 for t in toks[:j] if (_own_rank(t) or 1) > 1))
              for side, toks in (("baseline", tb), ("candidate", tc)) if toks is not None]
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


# ----------------------------------------------------------------------------- one item

@dataclass(frozen=True)
class TokenView:
    text: str
    bytes: list[int] | None
    id: int | None
    logprob_baseline: float | None      # the baseline's logprob for this token at the divergence
    rank_baseline: int | None
    inferred: bool = False              # read from the text: the server sent no logprobs for it


@dataclass(frozen=True)
class Remerge:
    """From these indices on, the two token streams agree to the end (of the shorter one when a
    run was cut at max_tokens)."""
    baseline_index: int
    candidate_index: int
    baseline_tokens_between: int        # tokens after the divergence before they agree again
    candidate_tokens_between: int
    agreed_tokens: int                  # the agreed tail, in tokens


@dataclass(frozen=True)
class ItemDiff:
    id: str
    verdict: str
    reason: str
    token_index: int | None = None
    char_offset: int | None = None
    part: str | None = None
    baseline_token: TokenView | None = None
    candidate_token: TokenView | None = None
    margin: float | None = None              # lp_base(baseline token) - lp_base(candidate token)
    margin_is_bound: bool = False            # candidate outside the top-k: m is at least this
    hidden_drift: bool = False               # the two tokens decode to the same text
    remerge: Remerge | None = None
    context_drift: float | None = None       # |lp| disagreement of the engines at the divergence
    prefix_drift: float | None = None        # the largest such disagreement before it
    answer_changed: bool = False
    correctness_changed: bool = False
    baseline_extracted: str | None = None
    candidate_extracted: str | None = None
    baseline_outcome: str | None = None
    candidate_outcome: str | None = None
    retokenised: bool = False                # identical text, tokenised differently
    baseline_not_top1: int = 0               # positions where the baseline's token was not its own top-1
    candidate_not_top1: int = 0
    top: tuple[dict[str, Any], ...] = ()     # the baseline's top-k at the divergence
    prefix: str = ""                         # common text just before the divergence
    baseline_rest: tuple[str, ...] = ()      # the baseline's next tokens (first one differs)
    candidate_rest: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        def tok(v: TokenView | None) -> dict[str, Any] | None:
            return None if v is None else {"text": v.text, "bytes": v.bytes, "id": v.id,
                                          "logprob_baseline": v.logprob_baseline, "rank_baseline": v.rank_baseline,
                                          "inferred": v.inferred}
        remerged = self.remerge is not None
        return {
            # flat fields first: `evalsuite report --diff` tabulates the scalar ones
            "id": self.id, "class": self.verdict, "reason": self.reason,
            "token_index": self.token_index, "char_offset": self.char_offset, "part": self.part,
            "baseline_text": None if self.baseline_token is None else self.baseline_token.text,
            "candidate_text": None if self.candidate_token is None else self.candidate_token.text,
            "lp_baseline_token": None if self.baseline_token is None else self.baseline_token.logprob_baseline,
            "lp_candidate_token": None if self.candidate_token is None else self.candidate_token.logprob_baseline,
            "margin": self.margin, "margin_is_bound": self.margin_is_bound, "hidden_drift": self.hidden_drift,
            "retokenised": self.retokenised, "baseline_not_top1": self.baseline_not_top1,
            "candidate_not_top1": self.candidate_not_top1,
            "remerged": remerged if self.token_index is not None else None,
            "answer_changed": self.answer_changed, "correctness_changed": self.correctness_changed,
            "baseline_extracted": self.baseline_extracted, "candidate_extracted": self.candidate_extracted,
            "baseline_outcome": self.baseline_outcome, "candidate_outcome": self.candidate_outcome,
            "context_drift": self.context_drift, "prefix_drift": self.prefix_drift,
            "baseline_token": tok(self.baseline_token), "candidate_token": tok(self.candidate_token),
            "remerge": None if self.remerge is None else vars(self.remerge),
            "top": list(self.top), "prefix": self.prefix,
            "baseline_rest": list(self.baseline_rest), "candidate_rest": list(self.candidate_rest),
            "notes": list(self.notes),
        }


def classify_margin(margin: float, in_top: bool, tau: float) -> str:
    """The verdict for a margin m = lp(baseline token) - lp(candidate token) in the baseline's
    distribution. m < 0 means the baseline did not emit its own top-1: not greedy."""
    if margin < -NOT_TOP1_EPS:
        return "not_greedy"
    if not in_top or margin > 2 * tau:
        return "real"
    return "near_tie" if margin <= tau else "suspicious"


GREEDY_FIX = ("the run did not decode greedily at temperature 0 (a sampler setting the server applies by default, "
              "e.g. llama-cpp-python's repeat_penalty 1.1): run it again with evalsuite's neutral settings (sent by "
              "default for engines it recognises) or --extra-body '{\"repeat_penalty\": 1.0}'")


def not_greedy_reason(side: str, token: str, rank: int | None, margin: float | None) -> str:
    m = "" if margin is None else f", m = {margin:.3g}"
    return (f"the {side}'s token {token!r} is not its own top-1 here (rank {rank if rank is not None else '?'}{m}): "
            f"the {side} did not decode greedily, so this divergence says nothing about the serving change. Fix: "
            + GREEDY_FIX)


def _char_offset(tokens: Sequence[Tok], index: int) -> tuple[int, str]:
    """Character offset of token `index` within its part (reasoning or answer)."""
    part = tokens[index].part if index < len(tokens) else (tokens[-1].part if tokens else "answer")
    return sum(len(t.text) for t in tokens[:index] if t.part == part), part


def _remerge(a: Sequence[Tok], b: Sequence[Tok], start: int, level: str, stopped: tuple[bool, bool]) -> Remerge | None:
    """Where the streams agree again, from some point after the divergence to the end: the last
    block the alignment finds must reach the end of a stream, and of each run that stopped by
    itself (not cut at max_tokens); it must be REMERGE_MIN_TOKENS long unless both runs stopped
    by themselves and their tails are equal to the last token."""
    if len(a) - start > MAX_ALIGN_TOKENS or len(b) - start > MAX_ALIGN_TOKENS:
        return None   # the ends are beyond the bounded alignment: nothing is claimed
    ka = [key(t, level) for t in a[start:]]
    kb = [key(t, level) for t in b[start:]]
    blocks = [blk for blk in difflib.SequenceMatcher(None, ka, kb, autojunk=False).get_matching_blocks() if blk.size]
    if not blocks:
        return None
    last = blocks[-1]
    end_a, end_b = last.a + last.size == len(ka), last.b + last.size == len(kb)
    if not (end_a or end_b) or (stopped[0] and not end_a) or (stopped[1] and not end_b):
        return None
    if last.size < REMERGE_MIN_TOKENS and not (all(stopped) and end_a and end_b):
        return None
    return Remerge(start + last.a, start + last.b, last.a, last.b, last.size)


def _view(t: Tok, top: Sequence[Alt], level: str, found: Lookup | None = None, inferred: bool = False) -> TokenView:
    found = found or lookup(top, t, level)
    return TokenView(t.text, list(t.bytes) if t.bytes is not None else None, t.id, found.logprob, found.rank, inferred)


def _top_table(t: Tok) -> tuple[dict[str, Any], ...]:
    rows = sorted(t.top, key=lambda x: -(x.logprob if x.logprob is not None else -math.inf))
    return tuple({"text": x.text, "bytes": list(x.bytes) if x.bytes is not None else None, "id": x.id,
                  "logprob": x.logprob} for x in rows)


def _outcome_fields(b: dict[str, Any], c: dict[str, Any]) -> dict[str, Any]:
    return {"answer_changed": b.get("extracted") != c.get("extracted"),
            "correctness_changed": (b.get("outcome") == "correct") != (c.get("outcome") == "correct"),
            "baseline_extracted": b.get("extracted"), "candidate_extracted": c.get("extracted"),
            "baseline_outcome": b.get("outcome"), "candidate_outcome": c.get("outcome")}


def _texts_equal(b: dict[str, Any], c: dict[str, Any]) -> bool:
    return (b.get("answer") or "") == (c.get("answer") or "") and (b.get("reasoning") or "") == (c.get("reasoning") or "")


def _first_text_difference(b: dict[str, Any], c: dict[str, Any]) -> tuple[int, str]:
    for part in ("reasoning", "answer"):
        x, y = b.get(part) or "", c.get(part) or ""
        if x != y:
            n = 0
            while n < min(len(x), len(y)) and x[n] == y[n]:
                n += 1
            return n, part
    return 0, "answer"


def _stopped(record: dict[str, Any]) -> bool:
    """The run ended by itself (a stop token or sequence), not at the max_tokens cut."""
    return record.get("finish_reason") not in ("length", None)


def _identical(item_id: str, tb: list[Tok] | None, tc: list[Tok] | None, outcome: dict[str, Any],
               counts: dict[str, int], tau: float, note: str | None = None) -> ItemDiff:
    """Byte-identical generated text: identical, however it was tokenised."""
    notes = (note,) if note else ()
    if tb is None or tc is None:
        return ItemDiff(item_id, "identical", "answer and reasoning byte-identical (no logprobs: text compared only)",
                        notes=notes, **counts, **outcome)
    level = comparison_level(tb, tc)
    first = next((j for j, (x, y) in enumerate(zip(tb, tc)) if same_token(x, y, level) is False), None)
    if first is None and len(tb) == len(tc) and any(t.opaque for t in tb) and stream_text(tb) == stream_text(tc):
        # The texts lost the partial UTF-8 bytes too (a streamed llama-cpp-python response): equal
        # texts do not show equal bytes there. A flip between two '' tokens still shows in the logprobs.
        walked = _diff_by_tokens(item_id, tb, tc, {}, {}, tau, outcome, None, counts)
        if walked.hidden_drift:
            return walked
    if first is None and len(tb) == len(tc):
        return ItemDiff(item_id, "identical", "answer and reasoning byte-identical, token for token", notes=notes,
                        **counts, **outcome)
    at = first if first is not None else min(len(tb), len(tc))
    return ItemDiff(item_id, "identical", f"answer and reasoning byte-identical, retokenised: the same text as "
                    f"{len(tb)} vs {len(tc)} tokens, split differently from token {at} on",
                    retokenised=True, notes=notes, **counts, **outcome)


def identical_by_columns(base: dict[str, Any], cand: dict[str, Any], tb: Any, tc: Any) -> ItemDiff | None:
    """The common case of a large diff decided on the side file's Arrow columns, without a
    Python object per token: byte-identical texts, the same token ids and bytes, and bytes that
    spell the text. Returns exactly what diff_item would; None sends the item down diff_item
    (anything unusual: missing ids or bytes, partial-byte tokens, errors, retokenised text)."""
    if tb is None or tc is None or tb.num_rows != tc.num_rows or tb.num_rows == 0:
        return None
    if base.get("outcome") == "error" or cand.get("outcome") == "error" or not _texts_equal(base, cand):
        return None
    ids_b, bytes_b, ids_c, bytes_c = (t.column(name).combine_chunks() for t in (tb, tc) for name in ("id", "bytes"))
    if ids_b.null_count or ids_c.null_count or bytes_b.null_count or bytes_c.null_count:
        return None
    if not (ids_b.equals(ids_c) and bytes_b.equals(bytes_c)):
        return None
    if _spelled(bytes_b) != raw_text(base).encode("utf-8"):
        return None
    from ..engines import not_top1_in_columns

    counts = {"baseline_not_top1": not_top1_in_columns(tb.combine_chunks().to_batches()[0]),
              "candidate_not_top1": not_top1_in_columns(tc.combine_chunks().to_batches()[0])}
    return ItemDiff(str(base.get("id")), "identical", "answer and reasoning byte-identical, token for token",
                    **counts, **_outcome_fields(base, cand))


def _spelled(column: Any) -> bytes:
    """The concatenated values of a binary Arrow array with no nulls, read from its buffers."""
    import numpy as np

    offsets = np.frombuffer(column.buffers()[1], dtype=np.int32)[column.offset:column.offset + len(column) + 1]
    return memoryview(column.buffers()[2])[int(offsets[0]):int(offsets[-1])].tobytes()


def diff_item(base: dict[str, Any], cand: dict[str, Any], tau: float, k: int | None = None,
              tables: tuple[Any, Any] | None = None) -> ItemDiff:
    """The verdict for one item, from its baseline and candidate records (with their `logprobs`
    lists, or their token tables from the side file in `tables`)."""
    item_id = str(base.get("id"))
    outcome = _outcome_fields(base, cand)
    for side, r in (("baseline", base), ("candidate", cand)):
        if r.get("outcome") == "error":
            kind = (r.get("error") or {}).get("kind", "?")
            return ItemDiff(item_id, "undetermined", f"the {side} record is an error ({kind}): nothing to compare", **outcome)
    if tables is not None:
        from ..engines import not_top1_in_columns

        tb, tc = (None if t is None else tokens_from_table(t) for t in tables)
        counts = {f"{role}_not_top1": 0 if t is None else not_top1_in_columns(t.combine_chunks().to_batches()[0])
                  if t.num_rows else 0 for role, t in zip(("baseline", "candidate"), tables)}
    else:
        tb, tc = tokens_of(base), tokens_of(cand)
        counts = {"baseline_not_top1": not_top1_count(base.get("logprobs")),
                  "candidate_not_top1": not_top1_count(cand.get("logprobs"))}
    if _texts_equal(base, cand):
        note = None
        if tb is not None and not covers_text(tb, base):
            note = "the baseline's logprobs do not spell its text, so the verdict rests on the text alone"
        return _identical(item_id, tb, tc, outcome, counts, tau, note)
    if tb and tc and _same_tokens_up_to_rendering(tb, tc, base, cand):
        return ItemDiff(item_id, "identical", "the same tokens, id for id (or byte for byte); the texts differ only "
                        "in how the server rendered incomplete UTF-8 (U+FFFD)",
                        notes=("llama-server renders a partial UTF-8 byte at a max_tokens cut differently with "
                               "speculation on",), **counts, **outcome)
    if tb is None or tc is None:
        offset, part = _first_text_difference(base, cand)
        missing = " and ".join(s for s, t in (("baseline", tb), ("candidate", tc)) if t is None)
        return ItemDiff(item_id, "undetermined", f"texts differ but the {missing} run kept no logprobs "
                        f"(run both with --logprobs K)", char_offset=offset, part=part, **counts, **outcome)
    if not covers_text(tb, base):
        offset, part = _first_text_difference(base, cand)
        return ItemDiff(item_id, "undetermined", "texts differ but " + _uncovered_cause(tb, base),
                        char_offset=offset, part=part, **counts, **outcome)
    if not covers_text(tc, cand):
        return _diff_by_text(item_id, tb, base, cand, tau, outcome, k, counts)
    return _diff_by_tokens(item_id, tb, tc, base, cand, tau, outcome, k, counts)


def _same_tokens_up_to_rendering(tb: Sequence[Tok], tc: Sequence[Tok], base: dict[str, Any], cand: dict[str, Any]) -> bool:
    """Equal token streams (by id, else by bytes) whose texts differ only in U+FFFD: one
    generation, rendered twice (llama-server renders a partial UTF-8 byte at a max_tokens cut
    differently with speculation on). Never on text alone, where "" hides partial bytes; a text
    that one server cut short stays undetermined (its hidden tail is not known)."""
    level = comparison_level(tb, tc)
    if level == "text" or len(tb) != len(tc) or any(key(b, level) != key(c, level) for b, c in zip(tb, tc)):
        return False
    return raw_text(base).replace("\ufffd", "") == raw_text(cand).replace("\ufffd", "")


def _uncovered_cause(tokens: Sequence[Tok], record: dict[str, Any]) -> str:
    """Why the baseline's logprob entries do not spell its text, as far as the record shows."""
    streamed, text = stream_text(tokens), raw_text(record)
    n = 0
    while n < min(len(streamed), len(text)) and streamed[n] == text[n]:
        n += 1
    where = f"they agree for {n} characters, then the text has {text[n:n + 12]!r} where the tokens spell {streamed[n:n + 12]!r}"
    if record.get("reasoning") and not any(t.part == "reasoning" for t in tokens):
        cause = "the server sent no logprobs for the reasoning (SGLang does this)"
    elif len(streamed) < len(text):
        cause = ("the server sent logprobs for fewer tokens than it generated (as llama-server does for accepted "
                 "speculative tokens)")
    else:
        cause = "the logprob tokens spell more or other text than the response"
    rescore = (" `--rescore BASELINE_URL` can re-score the divergence" if record.get("prompt") else
               " (a chat run cannot be re-scored: the rendered chat template is not known client-side)")
    return f"the baseline's logprobs do not spell its text ({where}): {cause}; margin unknown;{rescore}"


def _diff_by_tokens(item_id: str, tb: list[Tok], tc: list[Tok], base: dict[str, Any], cand: dict[str, Any],
                    tau: float, outcome: dict[str, Any], k: int | None, counts: dict[str, int]) -> ItemDiff:
    """The texts differ: walk the token streams to the first token that differs."""
    outcome = {**outcome, **counts}
    stopped = (_stopped(base), _stopped(cand))
    level = comparison_level(tb, tc)
    notes: list[str] = []
    prefix_drift = 0.0
    assumed_opaque = 0
    n = min(len(tb), len(tc))
    for j in range(n):
        b, c = tb[j], tc[j]
        same = same_token(b, c, level)
        drift_here = top_drift(b, c, level)
        if same is False:
            return _divergence(item_id, tb, tc, j, level, tau, outcome, notes, prefix_drift, drift_here, k, stopped)
        if same is None:
            # Two partial-byte tokens that both read "": equal, or a flip we cannot see? When the
            # engines agree on this identical prefix (drift <= tau), a jump in the chosen logprob
            # or in the next position's distribution says the tokens (and so the contexts) differ.
            if max(prefix_drift, drift_here) <= tau:
                jump = _lp_gap(b, c)
                next_drift = top_drift(tb[j + 1], tc[j + 1], level) if j + 1 < n else 0.0
                if jump > tau or next_drift > tau:
                    return _opaque_flip(item_id, tb, tc, j, level, jump, next_drift, outcome, prefix_drift, stopped)
            else:
                assumed_opaque += 1
        prefix_drift = max(prefix_drift, drift_here)
    if assumed_opaque:
        notes.append(f"{assumed_opaque} partial-byte token(s) ('' with no bytes or ids) were assumed equal: the engines "
                     f"already disagreed by {prefix_drift:.3g} nats on identical prefixes, so a flip between them "
                     f"could not be told from that drift")
    if len(tb) == len(tc):
        offset, part = _first_text_difference(base, cand)
        return ItemDiff(item_id, "undetermined", "the texts differ but their logprob tokens read the same (the "
                        "server's token texts lost what differs, e.g. partial UTF-8 bytes); margin unknown",
                        char_offset=offset, part=part, prefix_drift=prefix_drift, notes=tuple(notes), **outcome)
    shorter_stopped = stopped[0] if len(tb) < len(tc) else stopped[1]
    if not shorter_stopped:
        # llama-cpp-python can return a token or two beyond max_tokens, not always the same number
        longer, shorter = ("candidate", "baseline") if len(tc) > len(tb) else ("baseline", "candidate")
        offset, part = _char_offset(tb if len(tb) > len(tc) else tc, n)
        return ItemDiff(item_id, "cut_prefix", f"the {shorter} was cut at max_tokens after {n} tokens and the "
                        f"{longer} went on ({max(len(tb), len(tc))} tokens); the first {n} tokens are the same: nothing "
                        f"diverged where both generated, but the texts differ, so not identical",
                        token_index=n, char_offset=offset, part=part, prefix_drift=prefix_drift, notes=tuple(notes),
                        **outcome)
    offset, part = _char_offset(tb, n)
    if len(tb) == n:
        reason = (f"the baseline stopped after {n} tokens where the candidate went on with {tc[n].text!r}: "
                  "a stop token's logprob is not streamed, so the margin is unknown")
        cand_view = _view(tc[n], (), level)
        return ItemDiff(item_id, "undetermined", reason, token_index=n, char_offset=offset, part=part,
                        candidate_token=cand_view, prefix_drift=prefix_drift, notes=tuple(notes),
                        prefix=_prefix(tb, n), candidate_rest=_rest(tc, n), **outcome)
    reason = (f"the candidate stopped after {n} tokens where the baseline went on with {tb[n].text!r}: "
              "the stop token is not named in the baseline's top-k, so the margin is unknown")
    return ItemDiff(item_id, "undetermined", reason, token_index=n, char_offset=offset, part=part,
                    baseline_token=_view(tb[n], tb[n].top, level, Lookup(tb[n].logprob, rank_of(tb[n].top, tb[n].logprob), True, False)),
                    prefix_drift=prefix_drift, notes=tuple(notes), top=_top_table(tb[n]),
                    prefix=_prefix(tb, n), baseline_rest=_rest(tb, n), **outcome)


def _bound(b: Tok, k: int | None) -> float | None:
    """For a candidate token outside the top-k: m is at least lp(baseline token) minus the k-th
    logprob, but only when the list is whole (merged '' entries leave fewer than k)."""
    listed = sorted((a.logprob for a in b.top if a.logprob is not None), reverse=True)
    if b.logprob is None or not listed or (k is not None and len(listed) < k):
        return None
    return b.logprob - listed[min(len(listed), k or len(listed)) - 1]


def _lp_gap(b: Tok, c: Tok) -> float:
    if b.logprob is None or c.logprob is None:
        return 0.0
    return abs(b.logprob - c.logprob)


def _prefix(tokens: Sequence[Tok], index: int) -> str:
    return "".join(t.text for t in tokens[:index])[-CONTEXT_CHARS:]


def _rest(tokens: Sequence[Tok], index: int) -> tuple[str, ...]:
    return tuple(t.text for t in tokens[index:index + CONTEXT_TOKENS])


def _divergence(item_id: str, tb: list[Tok], tc: list[Tok], j: int, level: str, tau: float, outcome: dict[str, Any],
                notes: list[str], prefix_drift: float, drift_here: float, k: int | None,
                stopped: tuple[bool, bool]) -> ItemDiff:
    b, c = tb[j], tc[j]
    own = Lookup(b.logprob, rank_of(b.top, b.logprob), True, False)
    found = lookup(b.top, c, level)
    offset, part = _char_offset(tb, j)
    hidden = b.text == c.text
    common = dict(token_index=j, char_offset=offset, part=part, hidden_drift=hidden,
                  baseline_token=_view(b, b.top, level, own), candidate_token=_view(c, b.top, level, found),
                  remerge=_remerge(tb, tc, j, level, stopped), context_drift=drift_here, prefix_drift=prefix_drift,
                  top=_top_table(b), prefix=_prefix(tb, j), baseline_rest=_rest(tb, j), candidate_rest=_rest(tc, j),
                  **outcome)
    if hidden:
        notes.append(f"hidden drift: both tokens decode to {b.text!r} but they are different tokens ({level})")
    if drift_here > tau:
        notes.append(f"the engines' logprobs differ by up to {drift_here:.3g} nats at this position, on an identical "
                     f"prefix: more than float noise (tau {tau:g})")
    if b.logprob is None:
        return ItemDiff(item_id, "undetermined", "the baseline has no logprob for its own token here",
                        notes=tuple(notes), **common)
    if found.ambiguous:
        return ItemDiff(item_id, "undetermined",
                        "the candidate token is a partial UTF-8 byte that decodes to '' and the server gave neither "
                        "bytes nor ids: the baseline's '' entry may be another byte token (llama-cpp-python merges "
                        "them in top_logprobs)", notes=tuple(notes), **common)
    if not b.top:
        return ItemDiff(item_id, "undetermined", "the baseline kept no top-k alternatives here (--logprobs 0?)",
                        notes=tuple(notes), **common)
    for side, t in (("baseline", b), ("candidate", c)):
        rank = _own_rank(t)
        if rank is not None and rank > 1:
            margin = (b.logprob - found.logprob) if side == "baseline" and found.logprob is not None else None
            return ItemDiff(item_id, "not_greedy", not_greedy_reason(side, t.text, rank, margin), margin=margin,
                            notes=tuple(notes), **common)
    earlier = _earlier_not_greedy(tb, tc, j)
    if earlier:
        margin = (b.logprob - found.logprob) if found.logprob is not None else None
        return ItemDiff(item_id, "not_greedy", earlier, margin=margin, notes=tuple(notes), **common)
    if not found.in_top:
        bound = _bound(b, k)
        return ItemDiff(item_id, "real", f"the candidate token {c.text!r} is not in the baseline's top-{k or len(b.top)}"
                        + (f" (m >= {bound:.3g})" if bound is not None else ""),
                        margin=bound, margin_is_bound=bound is not None, notes=tuple(notes), **common)
    margin = b.logprob - found.logprob
    verdict = classify_margin(margin, True, tau)
    if verdict == "not_greedy":   # the candidate token outranks the baseline's own (unreadable own rank)
        return ItemDiff(item_id, verdict, not_greedy_reason("baseline", b.text, found.rank, margin), margin=margin,
                        notes=tuple(notes), **common)
    words = {"near_tie": f"m {margin:.2g} <= tau {tau:g}: a near tie in the baseline, float noise can flip it",
             "suspicious": f"tau {tau:g} < m {margin:.2g} <= 2 tau: larger than float noise should give",
             "real": f"m {margin:.3g} > 2 tau ({2 * tau:g}): the baseline clearly preferred its token"}[verdict]
    return ItemDiff(item_id, verdict, words, margin=margin, notes=tuple(notes), **common)


def _opaque_flip(item_id: str, tb: list[Tok], tc: list[Tok], j: int, level: str, jump: float, next_drift: float,
                 outcome: dict[str, Any], prefix_drift: float, stopped: tuple[bool, bool]) -> ItemDiff:
    b, c = tb[j], tc[j]
    offset, part = _char_offset(tb, j)
    evidence = (f"their logprobs differ by {jump:.3g} nats" if jump > next_drift
                else f"the next position's logprobs differ by {next_drift:.3g} nats")
    reason = ("hidden drift between two partial UTF-8 byte tokens: both decode to '' and the server gave neither "
              f"bytes nor ids, but {evidence}, so they are different tokens; the baseline's logprob for the "
              "candidate's byte is not knowable (top_logprobs merges every '' token into one entry)")
    return ItemDiff(item_id, "undetermined", reason, token_index=j, char_offset=offset, part=part, hidden_drift=True,
                    baseline_token=_view(b, b.top, level, Lookup(b.logprob, rank_of(b.top, b.logprob), True, False)),
                    candidate_token=TokenView(c.text, None, None, None, None),
                    remerge=_remerge(tb, tc, j + 1, level, stopped), context_drift=max(jump, next_drift), prefix_drift=prefix_drift,
                    top=_top_table(b), prefix=_prefix(tb, j), baseline_rest=_rest(tb, j), candidate_rest=_rest(tc, j),
                    **outcome)


def _diff_by_text(item_id: str, tb: list[Tok], base: dict[str, Any], cand: dict[str, Any], tau: float,
                  outcome: dict[str, Any], k: int | None, counts: dict[str, int]) -> ItemDiff:
    """The candidate's logprobs miss tokens (llama-server sends none for accepted draft tokens):
    walk the baseline's tokens along the candidate's text and take every number from the baseline."""
    note = ("the candidate's logprobs do not spell its text (the server skipped some tokens): the divergence was "
            "found on the text and every logprob is the baseline's")
    outcome = {**outcome, **counts}
    text = raw_text(cand)
    pos = 0
    for j, t in enumerate(tb):
        if text.startswith(t.text, pos):
            pos += len(t.text)
            continue
        rest = text[pos:]
        offset, part = _char_offset(tb, j)
        fits = sorted((a for a in t.top if a.text and rest.startswith(a.text) and a.logprob is not None),
                      key=lambda a: -len(a.text))
        common = dict(token_index=j, char_offset=offset, part=part, top=_top_table(t), prefix=_prefix(tb, j),
                      baseline_rest=_rest(tb, j), candidate_rest=(rest[:CONTEXT_CHARS],), notes=(note,),
                      baseline_token=_view(t, t.top, "text", Lookup(t.logprob, rank_of(t.top, t.logprob), True, False)),
                      **outcome)
        if not rest:
            return ItemDiff(item_id, "undetermined", "the candidate stopped here; a stop token's logprob is not known",
                            **common)
        rank = _own_rank(t)
        if rank is not None and rank > 1:
            return ItemDiff(item_id, "not_greedy", not_greedy_reason("baseline", t.text, rank, None), **common)
        earlier = _earlier_not_greedy(tb, None, j)
        if earlier:
            return ItemDiff(item_id, "not_greedy", earlier, **common)
        if not fits:
            if any(a.text == "" for a in t.top) or t.logprob is None or not t.top:
                return ItemDiff(item_id, "undetermined", "the candidate's token here is not known (no logprobs) and "
                                "no named alternative of the baseline continues its text", **common)
            bound = _bound(t, k)
            return ItemDiff(item_id, "real", "the candidate's text continues with none of the baseline's top-k tokens",
                            margin=bound, margin_is_bound=bound is not None, **common)
        alt = fits[0]
        margin = (t.logprob - alt.logprob) if t.logprob is not None else None
        cand_view = TokenView(alt.text, list(alt.bytes) if alt.bytes is not None else None, alt.id, alt.logprob,
                              rank_of(t.top, alt.logprob), inferred=True)
        common["candidate_token"] = cand_view
        if margin is None:
            return ItemDiff(item_id, "undetermined", "the baseline has no logprob for its own token here", **common)
        verdict = classify_margin(margin, True, tau)
        reason = (not_greedy_reason("baseline", t.text, rank_of(t.top, alt.logprob), margin) if verdict == "not_greedy"
                  else f"m {margin:.2g} (candidate token inferred from its text)")
        return ItemDiff(item_id, verdict, reason, margin=margin, **common)
    return ItemDiff(item_id, "undetermined", "the baseline stopped where the candidate went on: a stop token's "
                    "logprob is not known", token_index=len(tb), **outcome)


# ----------------------------------------------------------------------------- two runs

@dataclass(frozen=True)
class RunSide:
    path: str
    label: str
    endpoints: tuple[str, ...]
    n: int
    n_correct: int
    n_errors: int
    started_at: str | None = None            # with the fingerprint: which run this was (gate/report check it)
    fingerprint: str | None = None
    tokens: int = 0                          # logprob positions over the compared items
    not_top1: int = 0                        # of which the emitted token was not the server's own top-1

    @property
    def accuracy(self) -> float | None:
        from .stats import accuracy
        return accuracy(self.n_correct, self.n, self.n_errors)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "label": self.label, "endpoints": list(self.endpoints), "n": self.n,
                "n_correct": self.n_correct, "n_errors": self.n_errors, "accuracy": self.accuracy,
                "started_at": self.started_at, "fingerprint": self.fingerprint,
                "tokens": self.tokens, "not_top1": self.not_top1}

    def greedy_warning(self, role: str) -> str | None:
        if not self.not_top1:
            return None
        return (f"{role}: {self.not_top1} of {self.tokens} emitted tokens were not the server's own top-1: "
                + GREEDY_FIX)


@dataclass(frozen=True)
class DiffResult:
    baseline: RunSide
    candidate: RunSide
    tau: float
    items: tuple[ItemDiff, ...]
    settings_notes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()            # ids recorded in only one run
    rescored: int = 0

    @property
    def counts(self) -> dict[str, int]:
        out = {k: 0 for k in COUNT_KEYS}
        for item in self.items:
            out[item.verdict] += 1
            out["hidden_drift"] += item.hidden_drift
            out["retokenised"] += item.retokenised
        return out

    def summary_line(self) -> str:
        c = self.counts
        flips = [i for i in self.items if i.verdict == "near_tie"]
        tie = f"{c['near_tie']} near-tie flip{'s' if c['near_tie'] != 1 else ''}"
        if flips:
            worst = max(abs(i.margin or 0.0) for i in flips)
            remerged = sum(i.remerge is not None for i in flips)
            tie += f" (max |m| {worst:.2g}, {remerged} re-merged)"
        ident = f"{c['identical']} identical" + (f" ({c['retokenised']} retokenised)" if c["retokenised"] else "")
        parts = [ident, tie, f"{c['suspicious']} suspicious", f"{c['real']} real"]
        if c["not_greedy"]:
            parts.append(f"{c['not_greedy']} not greedy")
        if c["cut_prefix"]:
            parts.append(f"{c['cut_prefix']} cut at max_tokens apart")
        parts.append(f"{c['undetermined']} undetermined")
        if c["hidden_drift"]:
            parts.append(f"{c['hidden_drift']} hidden drift")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        changed = [i for i in self.items if i.answer_changed]
        return {
            "schema": 1, "tool": "evalsuite diff", "tau": self.tau,
            "counts": self.counts, "summary": self.summary_line(),
            "baseline": self.baseline.to_dict(), "candidate": self.candidate.to_dict(),
            "answer_changes": len(changed),
            "correctness_changes": sum(i.correctness_changed for i in self.items),
            "settings_notes": list(self.settings_notes), "missing": list(self.missing), "rescored": self.rescored,
            "items": [_finite(i.to_dict()) for i in self.items],
        }


def _finite(value: Any) -> Any:
    """JSON has no infinities: a -inf logprob (a masked token) is written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _side(run: Any, records: Iterable[dict[str, Any]], tokens: int, not_top1: int) -> RunSide:
    records = list(records)
    return RunSide(str(run.path), run.name, tuple(run.manifest.get("endpoints") or ()), len(records),
                   sum(r.get("outcome") == "correct" for r in records), sum(r.get("outcome") == "error" for r in records),
                   started_at=run.manifest.get("started_at"),
                   fingerprint=(run.manifest.get("dataset") or {}).get("fingerprint"),
                   tokens=tokens, not_top1=not_top1)


def load_diff_run(path: Any) -> Any:
    """The one place diff reads a run folder: slim records; each item's `logprobs` token list
    comes from `run.with_logprobs(record)`, one item at a time."""
    from ..store import load_run

    return load_run(path)


def diff_json_mismatch_any(path: Any, runs: Sequence[Any]) -> str | None:
    """For `report --diff`: None when the diff JSON at `path` was made from the first run and
    one of the others, else why not. A JSON that cannot be read is left to the report to say."""
    import json
    from pathlib import Path

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or len(runs) < 2:
        return None
    reasons = [diff_json_mismatch(data, runs[0], other) for other in runs[1:]]
    return None if any(r is None for r in reasons) else reasons[0]


def diff_json_mismatch(data: dict[str, Any], baseline: Any, candidate: Any) -> str | None:
    """Why a diff JSON was not made from these two loaded runs (None when it was): the JSON names
    each run by dataset fingerprint and start time, which a copy or move of the folders keeps."""
    problems = []
    for role, run in (("baseline", baseline), ("candidate", candidate)):
        side = data.get(role) if isinstance(data.get(role), dict) else {}
        want = {"fingerprint": (run.manifest.get("dataset") or {}).get("fingerprint"),
                "started_at": run.manifest.get("started_at")}
        if "fingerprint" not in side or "started_at" not in side:
            problems.append(f"it does not name its {role} run (made by an older evalsuite)")
            continue
        for field_name, value in want.items():
            if side.get(field_name) != value:
                problems.append(f"its {role} has {field_name} {side.get(field_name)!r}, but {run.path} has {value!r}")
    if not problems:
        return None
    return "the diff JSON was not made from these runs: " + "; ".join(problems) + " (run `evalsuite diff` on them again)"


def check_comparable(base_manifest: dict[str, Any], cand_manifest: dict[str, Any],
                     base_records: dict[str, dict[str, Any]], cand_records: dict[str, dict[str, Any]]) -> list[str]:
    """Notes on what legitimately differs; raises DiffRefused listing what must not."""
    problems, notes = [], []
    fp_b = (base_manifest.get("dataset") or {}).get("fingerprint")
    fp_c = (cand_manifest.get("dataset") or {}).get("fingerprint")
    if not fp_b or fp_b != fp_c:
        problems.append(f"different items: dataset fingerprint {str(fp_b)[:12]} vs {str(fp_c)[:12]}")
    for field_name in ("template_hash", "api"):
        if base_manifest.get(field_name) != cand_manifest.get(field_name):
            problems.append(f"{field_name}: {base_manifest.get(field_name)!r} vs {cand_manifest.get(field_name)!r}")
    dec_b, dec_c = base_manifest.get("decoding") or {}, cand_manifest.get("decoding") or {}
    for k in sorted(set(dec_b) | set(dec_c)):
        if k == "extra_body":
            continue
        if dec_b.get(k) != dec_c.get(k):
            (notes if k in REPORTING_DECODING_KEYS else problems).append(f"decoding.{k}: {dec_b.get(k)!r} vs {dec_c.get(k)!r}")
    eb_b, eb_c = dec_b.get("extra_body") or {}, dec_c.get("extra_body") or {}
    # settings evalsuite sent to make one engine's temperature 0 greedy (docs/lossless.md)
    neutral_b = ((base_manifest.get("engine") or {}).get("neutral_sent") or {})
    neutral_c = ((cand_manifest.get("engine") or {}).get("neutral_sent") or {})
    for k in sorted(set(eb_b) | set(eb_c)):
        if eb_b.get(k) != eb_c.get(k):
            line = f"extra_body.{k}: {eb_b.get(k)!r} vs {eb_c.get(k)!r}"
            neutral_only = all(k not in eb or (k in sent and eb[k] == sent[k])
                               for eb, sent in ((eb_b, neutral_b), (eb_c, neutral_c)))
            if neutral_only:
                notes.append(line + " (sent by evalsuite to make an engine's temperature 0 greedy: allowed)")
            elif k in ENGINE_KEYS:
                notes.append(line + " (speculation/engine setting: allowed)")
            else:
                problems.append(line + " (changes decoding; allowed keys: " + ", ".join(sorted(ENGINE_KEYS)) + ")")
    bad_prompts = [i for i in base_records if i in cand_records
                   and base_records[i].get("prompt_sha256") != cand_records[i].get("prompt_sha256")]
    if bad_prompts:
        problems.append(f"{len(bad_prompts)} item(s) were sent different prompts (prompt_sha256), e.g. "
                        + ", ".join(bad_prompts[:5]))
    if base_manifest.get("model") != cand_manifest.get("model"):
        notes.append(f"model id: {base_manifest.get('model')!r} vs {cand_manifest.get('model')!r}")
    if not (dec_b.get("logprobs") or 0) > 0:
        notes.append("the baseline kept no top-k logprobs (--logprobs K): divergences cannot be classified")
    for side, m in (("baseline", base_manifest), ("candidate", cand_manifest)):
        missing = m.get("logprobs_missing") or {}
        if missing.get("items"):
            notes.append(f"the {side}'s logprobs are partly missing: {missing['tokens']} token(s) on {missing['items']} "
                         "item(s) came without a number (speculative tokens); margins come from the baseline, "
                         "and a missing number is never read as certainty")
    if problems:
        raise DiffRefused("the runs are not comparable:\n  " + "\n  ".join(problems))
    return notes


def _diff_items(baseline: Any, candidate: Any, b_by_id: dict, c_by_id: dict, common: Sequence[str], tau: float,
                top_k: int | None) -> tuple[list[ItemDiff], dict[str, list[int]]]:
    """Each common item's verdict, reading token streams one item at a time (flat memory), and
    each side's [tokens, not-top-1 tokens]."""
    items: list[ItemDiff] = []
    streamed = {"baseline": [0, 0], "candidate": [0, 0]}
    for i in common:
        b, c = b_by_id[i], c_by_id[i]
        # the side file's Arrow tables; an old folder's inline lists keep their float64 logprobs
        if _columnar(baseline, i) and _columnar(candidate, i):
            tables = baseline.tokens.table(i), candidate.tokens.table(i)
            item = identical_by_columns(b, c, *tables) or diff_item(b, c, tau, top_k, tables=tables)
            sizes = [0 if t is None else t.num_rows for t in tables]
        else:
            b, c = baseline.with_logprobs(b), candidate.with_logprobs(c)
            item = diff_item(b, c, tau, top_k)
            sizes = [len(r.get("logprobs") or ()) for r in (b, c)]
        items.append(item)
        streamed["baseline"][0] += sizes[0]
        streamed["candidate"][0] += sizes[1]
        streamed["baseline"][1] += item.baseline_not_top1
        streamed["candidate"][1] += item.candidate_not_top1
    return items, streamed


def diff_runs(baseline: Any, candidate: Any, tau: float = DEFAULT_TAU) -> DiffResult:
    """Diff two loaded runs (evalsuite.store.Run). Raises DiffRefused when they are not comparable."""
    if not (tau > 0 and math.isfinite(tau)):
        raise DiffRefused(f"tau must be a positive number of nats, not {tau!r}")
    b_by_id, c_by_id = baseline.by_id, candidate.by_id
    notes = check_comparable(baseline.manifest, candidate.manifest, b_by_id, c_by_id)
    order = list(baseline.manifest.get("item_ids") or b_by_id)
    listed = set(order)
    order += [i for i in b_by_id if i not in listed]
    common = [i for i in order if i in b_by_id and i in c_by_id]
    missing = tuple(sorted((set(b_by_id) ^ set(c_by_id))))
    if not common:
        raise DiffRefused("the runs share no recorded item")
    k = (baseline.manifest.get("decoding") or {}).get("logprobs")
    top_k = k if isinstance(k, int) and k > 0 else None
    # Millions of short-lived token tuples, no reference cycles: the cyclic collector would only
    # rescan the growing heap again and again (it took ~40 % of a long diff's time).
    collecting = gc.isenabled()
    gc.disable()
    try:
        items, streamed = _diff_items(baseline, candidate, b_by_id, c_by_id, common, tau, top_k)
    finally:
        if collecting:
            gc.enable()
    sides = (_side(baseline, (b_by_id[i] for i in common), *streamed["baseline"]),
             _side(candidate, (c_by_id[i] for i in common), *streamed["candidate"]))
    notes += [w for w in (sides[0].greedy_warning("baseline"), sides[1].greedy_warning("candidate")) if w]
    return DiffResult(sides[0], sides[1], tau, tuple(items), tuple(notes), missing)


def _columnar(run: Any, item_id: str) -> bool:
    tokens = getattr(run, "tokens", None)
    return tokens is not None and item_id not in tokens.inline


def format_diff(result: DiffResult, verbose_items: int = 20) -> str:
    """The text summary `evalsuite diff` prints."""
    b, c = result.baseline, result.candidate
    acc = lambda s: "-" if s.accuracy is None else f"{100 * s.accuracy:.1f}% ({s.n_correct}/{s.n - s.n_errors})"  # noqa: E731
    lines = [f"baseline  {b.label}: {', '.join(b.endpoints)}", f"candidate {c.label}: {', '.join(c.endpoints)}",
             f"{len(result.items)} items, tau {result.tau:g} nats"]
    lines += [f"  note: {n}" for n in result.settings_notes]
    if result.missing:
        lines.append(f"  note: {len(result.missing)} item(s) recorded in only one run were skipped")
    lines.append("")
    lines.append(result.summary_line())
    changed = [i for i in result.items if i.answer_changed]
    lines.append(f"answer changed on {len(changed)} item(s), correctness on {sum(i.correctness_changed for i in result.items)}; "
                 f"accuracy baseline {acc(b)}, candidate {acc(c)}")
    shown = [i for i in result.items if i.verdict != "identical"]
    if shown:
        lines.append("")
    for i in shown[:verbose_items]:
        at = []                      # where it diverged: token, the two tokens, the margin
        if i.token_index is not None:
            at.append(f"token {i.token_index} ({i.part} char {i.char_offset})")
        if i.baseline_token is not None or i.candidate_token is not None:
            bt = i.baseline_token.text if i.baseline_token else None
            ct = i.candidate_token.text if i.candidate_token else None
            at.append(f"{bt!r} -> {ct!r}")
        if i.margin is not None:
            at.append(f"m{'>=' if i.margin_is_bound else '='}{i.margin:.3g}")
        facts = [" ".join(at)] if at else []
        if i.remerge is not None:
            facts.append(f"re-merged at baseline token {i.remerge.baseline_index} (after {i.remerge.baseline_tokens_between}"
                         f"/{i.remerge.candidate_tokens_between} tokens; {i.remerge.agreed_tokens} agree to the end)")
        elif i.token_index is not None and i.verdict != "cut_prefix":
            facts.append("no re-merge")
        if i.answer_changed:
            show = lambda v: "none" if v is None else repr(v)  # noqa: E731
            facts.append(f"answer {show(i.baseline_extracted)} -> {show(i.candidate_extracted)}")
        lines.append(f"  {i.verdict:<12} {i.id}" + (": " + ", ".join(facts) if facts else ""))
        lines.append(f"               {i.reason}")
    if len(shown) > verbose_items:
        lines.append(f"  ... {len(shown) - verbose_items} more (see --json / --html)")
    return "\n".join(lines)


FAIL_ON = {"real": ("real",), "suspicious": ("real", "suspicious"), "near-tie": ("real", "suspicious", "near_tie")}


def exit_code(result: DiffResult, fail_on: str | None) -> int:
    if fail_on is None:
        return 0
    if fail_on not in FAIL_ON:
        raise DiffRefused(f"--fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    counts = result.counts
    return 1 if sum(counts[k] for k in FAIL_ON[fail_on]) else 0


def tau_for(tau: float | None, precision: str | None) -> float:
    if tau is not None:
        return tau
    if precision is None:
        return DEFAULT_TAU
    if precision not in TAU_BY_PRECISION:
        raise DiffRefused(f"--precision must be one of {', '.join(TAU_BY_PRECISION)}, not {precision!r}")
    return TAU_BY_PRECISION[precision]


def diff_main(baseline: Any, candidate: Any, *, tau: float | None = None, precision: str | None = None,
              json_path: Any = None, html_path: Any = None, fail_on: str | None = None,
              rescore_endpoint: str | None = None, echo=print, api_key_env: str | None = None) -> int:
    """`evalsuite diff`: returns the exit code (0 ok, 1 --fail-on tripped, 2 refused)."""
    import json
    import sys
    from pathlib import Path

    from ..store import RunFolderError
    from .outputs import OutputError, check_writable

    try:
        for flag, path in (("--json", json_path), ("--html", html_path)):
            if path:
                check_writable(path, flag)
        runs = [load_diff_run(p) for p in (baseline, candidate)]
        result = diff_runs(runs[0], runs[1], tau_for(tau, precision))
        if rescore_endpoint:
            from ..rescore import rescore_result
            result = rescore_result(result, runs[0], runs[1], rescore_endpoint, api_key_env)
        code = exit_code(result, fail_on)
    except (RunFolderError, DiffRefused, OutputError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    echo(format_diff(result))
    if json_path:
        Path(json_path).write_text(json.dumps(result.to_dict(), ensure_ascii=False, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    if html_path:
        from .diff_html import render_html
        Path(html_path).write_text(render_html(result), encoding="utf-8")
    return code
