"""One item of the lossless check: walk the two token streams to the first difference and
classify it by the baseline's own margin there (identical, near tie, suspicious, real, ...)."""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, replace
from typing import Any, Sequence

from .tokens import (
    not_top1_in_columns,
    GREEDY_FIX,
    _earlier_not_greedy,
    _own_rank,
    Alt,
    comparison_level,
    CONTEXT_CHARS,
    CONTEXT_TOKENS,
    covers_text,
    key,
    Lookup,
    lookup,
    MAX_ALIGN_TOKENS,
    not_top1_count,
    NOT_TOP1_EPS,
    rank_of,
    raw_text,
    REMERGE_MIN_TOKENS,
    same_token,
    stream_text,
    Tok,
    tokens_from_table,
    token_bytes,
    tokens_of,
    top_drift,
)

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
    unscored: bool = False                   # identical text; one side's entries skip tokens sent without logprobs
    baseline_not_top1: int = 0               # positions where the baseline's token was not its own top-1
    candidate_not_top1: int = 0
    top: tuple[dict[str, Any], ...] = ()     # the baseline's top-k at the divergence
    prefix: str = ""                         # common text just before the divergence
    baseline_rest: tuple[str, ...] = ()      # the baseline's next tokens (first one differs)
    candidate_rest: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    drift: Any = None                        # drift.ItemDrift over the common prefix (None: no logprobs)
    scale: float | None = None               # the noise scale the margin was judged against (noise_scale.py; None: tau)

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
            "retokenised": self.retokenised, "unscored": self.unscored, "baseline_not_top1": self.baseline_not_top1,
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
            "drift": None if self.drift is None else self.drift.to_dict(),
            "noise_scale": self.scale,
        }


def classify_margin(margin: float, in_top: bool, tau: float) -> str:
    """The verdict for a margin m = lp(baseline token) - lp(candidate token) in the baseline's
    distribution. m < 0 means the baseline did not emit its own top-1: not greedy."""
    if margin < -NOT_TOP1_EPS:
        return "not_greedy"
    if not in_top or margin > 2 * tau:
        return "real"
    return "near_tie" if margin <= tau else "suspicious"




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
    return _remerge_keys([key(t, level) for t in a[start:]], [key(t, level) for t in b[start:]], start, stopped)


def _remerge_keys(ka: list[Any], kb: list[Any], start: int, stopped: tuple[bool, bool]) -> Remerge | None:
    """_remerge over the two streams' comparison keys from `start` on."""
    blocks = [blk for blk in difflib.SequenceMatcher(None, ka, kb, autojunk=False).get_matching_blocks() if blk.size]
    if not blocks:
        return None
    return remerge_at(blocks[-1], len(ka), len(kb), start, stopped)


def remerge_at(last: tuple[int, int, int], len_a: int, len_b: int, start: int,
               stopped: tuple[bool, bool]) -> Remerge | None:
    """_remerge's verdict on the alignment's last matching block (a, b, size) of two key
    streams of these lengths (lossless/columnar.py finds that block on the arrays)."""
    a, b, size = last
    end_a, end_b = a + size == len_a, b + size == len_b
    if not (end_a or end_b) or (stopped[0] and not end_a) or (stopped[1] and not end_b):
        return None
    if size < REMERGE_MIN_TOKENS and not (all(stopped) and end_a and end_b):
        return None
    return Remerge(start + a, start + b, a, b, size)


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
               counts: dict[str, int], tau: float, note: str | None = None,
               records: tuple[dict[str, Any], dict[str, Any]] | None = None,
               drafted: tuple[float | None, float | None] = (None, None)) -> ItemDiff:
    """Byte-identical generated text: identical, however it was tokenised."""
    notes = (note,) if note else ()
    if tb is not None and tc is not None and records is not None:
        skipped = _skipped_side(tb, tc, records, drafted)
        if skipped:
            return ItemDiff(item_id, "identical", "answer and reasoning byte-identical; " + skipped, unscored=True,
                            notes=notes, **counts, **outcome)
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


def _skipped_side(tb: Sequence[Tok], tc: Sequence[Tok], records: tuple[dict[str, Any], dict[str, Any]],
                  drafted: tuple[float | None, float | None]) -> str | None:
    """When the texts are equal but one side's entries spell less of it than the other's (a
    llama-server stream sends accepted draft tokens without logprobs, so the client has no entry
    for them), why the token streams do not line up: not a retokenisation."""
    if len(tb) == len(tc):
        return None
    for side, toks, other, record, moved in (("candidate", tc, tb, records[1], drafted[1]),
                                             ("baseline", tb, tc, records[0], drafted[0])):
        if len(toks) < len(other) and not covers_text(toks, record) and covers_text(other, records[1 if side == "baseline" else 0]):
            text = raw_text(record)
            return (f"the {side}'s logprob entries skip some of its tokens ({len(toks)} entries, against the "
                    f"{'baseline' if side == 'candidate' else 'candidate'}'s {len(other)}, spell "
                    f"{len(stream_text(toks))} of its {len(text)} characters): its server sent those tokens without "
                    f"logprobs{_skip_cause(moved)}, so the streams are compared on the text alone")
    return None


def _skip_cause(drafted: float | None) -> str:
    """What the run's own draft counters say about tokens sent without logprobs."""
    if drafted is None:
        return " (its server exposes no draft counters, so whether it drafted is not known)"
    if drafted > 0:
        return (f" (it drafted {drafted:.0f} tokens during the run: llama-server sends accepted draft tokens without "
                "logprobs)")
    return " (its draft counters show no tokens were drafted during the run: speculation did not engage)"


def spelled_count(tokens: Sequence[Tok], record: dict[str, Any]) -> int:
    """How many leading logprob entries spell the start of the record's text: walked by bytes
    (a server that renders a partial UTF-8 token as part of a whole character) and by the
    entries' texts (one that renders it as U+FFFD, as its token text does); the longer wins."""
    return _spelled_walk(tokens, record)[0]


def _spelled_walk(tokens: Sequence[Tok], record: dict[str, Any]) -> tuple[int, bool]:
    """(spelled_count, whether one of the walks spelled the whole text with all the entries)."""
    text = raw_text(record)
    data, at, by_bytes = text.encode("utf-8"), 0, 0
    for t in tokens:
        piece = token_bytes(t)
        if not data.startswith(piece, at):
            break
        at, by_bytes = at + len(piece), by_bytes + 1
    whole = by_bytes == len(tokens) and at == len(data)
    at, by_text = 0, 0
    for t in tokens:
        if not text.startswith(t.text, at) or (t.text == "" and t.bytes):
            break      # an empty text for real bytes spells nothing the text can confirm
        at, by_text = at + len(t.text), by_text + 1
    whole = whole or (by_text == len(tokens) and at == len(text))
    return max(by_bytes, by_text), whole


def _renders_apart(t: Tok) -> bool:
    """A token whose bytes are not whole UTF-8 characters (or that reads U+FFFD): a server may
    render it in the text unlike its entry, without any token being skipped."""
    if "\ufffd" in t.text:
        return True
    if t.bytes is None:
        return False
    try:
        bytes(t.bytes).decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _gap_cause(tokens: Sequence[Tok], record: dict[str, Any], drafted: float | None) -> tuple[int, str]:
    """Where a side's logprob entries stop spelling its text (a character offset in the whole
    generated text) and why, as far as the record and the run's draft counters show."""
    spelled = spelled_count(tokens, record)
    offset = len("".join(t.text for t in tokens[:spelled]))
    near = list(tokens[spelled:spelled + 2])
    text = raw_text(record)
    if record.get("reasoning") and not any(t.part == "reasoning" for t in tokens):
        return offset, "the server sent no logprobs for the reasoning (SGLang does this)"
    if any(_renders_apart(t) for t in near) or "\ufffd" in text[offset:offset + 4]:
        return offset, ("the server rendered partial UTF-8 bytes in its text unlike its token bytes spell them "
                        "(no token is missing there)")
    if len(stream_text(tokens)) < len(text):
        return offset, "the server sent logprobs for fewer tokens than it generated" + _skip_cause(drafted)
    return offset, "the logprob tokens spell more or other text than the response"


def _diff_in_spelled_prefix(item_id: str, tb: list[Tok], tc: list[Tok], base: dict[str, Any], cand: dict[str, Any],
                            tau: float, outcome: dict[str, Any], k: int | None, counts: dict[str, int],
                            drafted: tuple[float | None, float | None]) -> ItemDiff | None:
    """Entries that stop spelling the text only after the first divergence still hold the
    logprobs at it: decide there, by the tokens, and note the later gap. None when the
    divergence is not inside what both sides' entries spell."""
    level = comparison_level(tb, tc)
    j = None
    for n in range(min(len(tb), len(tc))):
        same = same_token(tb[n], tc[n], level)
        if same is None:
            return None          # partial bytes with no ids: the token walk (or the text) decides
        if same is False:
            j = n
            break
    if j is None:
        return None
    notes = []
    for side, toks, record, moved in (("baseline", tb, base, drafted[0]), ("candidate", tc, cand, drafted[1])):
        spelled, whole = (len(toks), True) if covers_text(toks, record) else _spelled_walk(toks, record)
        if spelled > j:
            if not whole:
                offset, cause = _gap_cause(toks, record, moved)
                notes.append(f"the {side}'s logprob entries stop spelling its text at character {offset}, after the "
                             f"divergence at token {j}: {cause}; the verdict rests on the tokens before that point")
            continue
        # the gap is at the divergence itself: trusted only as a rendering of a partial UTF-8 token
        # by a server whose counters show it drafted nothing (a skipped draft would put another token
        # at this index; with no counters that cannot be ruled out)
        if spelled == j and toks[j].logprob is not None and _renders_apart(toks[j]) and moved == 0:
            notes.append(f"the {side}'s token at the divergence is a partial UTF-8 byte its server rendered "
                         f"otherwise in the text (after the divergence for the verdict's purpose)")
            continue
        return None
    item = _diff_by_tokens(item_id, tb, tc, base, cand, tau, outcome, k, counts)
    if item.token_index != j:
        return None
    return replace(item, notes=item.notes + tuple(notes))


def identical_by_columns(base: dict[str, Any], cand: dict[str, Any], tb: Any, tc: Any,
                         views: tuple[Any, Any] | None = None) -> ItemDiff | None:
    """The common case of a large diff decided on the side file's Arrow columns, without a
    Python object per token: byte-identical texts, the same token bytes (and ids, where both
    sides carry them), and bytes that spell the text. Returns exactly what diff_item would;
    None sends the item down diff_item (anything unusual: missing bytes, partial-byte tokens,
    errors, retokenised text).
    `views`: the two tables' numpy arrays (store.token_arrays.ItemArrays), when the caller has
    them already (a row group's, built once)."""
    import numpy as np

    from ..store.token_arrays import ItemArrays

    if tb is None or tc is None or tb.num_rows != tc.num_rows or tb.num_rows == 0:
        return None
    if base.get("outcome") == "error" or cand.get("outcome") == "error" or not _texts_equal(base, cand):
        return None
    vb, vc = views if views is not None else (ItemArrays.of(tb), ItemArrays.of(tc))
    if not (vb.bytes_complete() and vc.bytes_complete()):
        return None
    # compared by id where every token of both has one, else by bytes (comparison_level); the
    # bytes are compared either way (equal ids with other bytes: the per-token path says why)
    by_id = vb.ids_complete() and vc.ids_complete()
    if not ((not by_id or np.array_equal(vb.ids(), vc.ids())) and vb.same_bytes(vc)):
        return None
    if vb.spelled() != raw_text(base).encode("utf-8"):
        return None

    counts = {"baseline_not_top1": vb.not_top1(), "candidate_not_top1": vc.not_top1()}
    return ItemDiff(str(base.get("id")), "identical", "answer and reasoning byte-identical, token for token",
                    **counts, **_outcome_fields(base, cand))


def identical_by_digests(base: dict[str, Any], cand: dict[str, Any], db: list[Any], dc: list[Any]) -> ItemDiff | None:
    """identical_by_columns decided from the side files' per-item digests
    (store.token_files.DIGESTS), without reading the tokens: the same token table on both sides
    (hence the same ids and bytes), ids and bytes complete, the joined bytes spell the text.
    Only where every number is there (position_drift's shortcut then holds); None otherwise."""
    from ..store.token_files import text_digest

    if db[0] != dc[0] or not db[1] or not (db[4] and dc[4]) or not base.get("logprob_tokens"):
        return None
    if base.get("outcome") == "error" or cand.get("outcome") == "error" or not _texts_equal(base, cand):
        return None
    if base.get("logprob_tokens") != cand.get("logprob_tokens"):
        return None
    try:
        if db[1] != text_digest(raw_text(base)):
            return None
    except UnicodeEncodeError:
        return None
    return ItemDiff(str(base.get("id")), "identical", "answer and reasoning byte-identical, token for token",
                    baseline_not_top1=int(db[2]), candidate_not_top1=int(dc[2]), **_outcome_fields(base, cand))


def _spelled(column: Any) -> bytes:
    """The concatenated values of a binary Arrow array with no nulls, read from its buffers."""
    import numpy as np

    offsets = np.frombuffer(column.buffers()[1], dtype=np.int32)[column.offset:column.offset + len(column) + 1]
    return memoryview(column.buffers()[2])[int(offsets[0]):int(offsets[-1])].tobytes()


def diff_item(base: dict[str, Any], cand: dict[str, Any], tau: float, k: int | None = None,
              tables: tuple[Any, Any] | None = None,
              drafted: tuple[float | None, float | None] = (None, None)) -> ItemDiff:
    """The verdict for one item, from its baseline and candidate records (with their `logprobs`
    lists, or their token tables from the side file in `tables`). `drafted`: the tokens each
    run's server drafted during the run, by its own counters (None: not known)."""
    item_id = str(base.get("id"))
    outcome = _outcome_fields(base, cand)
    for side, r in (("baseline", base), ("candidate", cand)):
        if r.get("outcome") == "error":
            kind = (r.get("error") or {}).get("kind", "?")
            return ItemDiff(item_id, "undetermined", f"the {side} record is an error ({kind}): nothing to compare", **outcome)
    if tables is not None:
    
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
        return _identical(item_id, tb, tc, outcome, counts, tau, note, (base, cand), drafted)
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
    covered = covers_text(tb, base), covers_text(tc, cand)
    if not all(covered):
        early = _diff_in_spelled_prefix(item_id, tb, tc, base, cand, tau, outcome, k, counts, drafted)
        if early is not None:
            return early
    if not covered[0]:
        offset, part = _first_text_difference(base, cand)
        return ItemDiff(item_id, "undetermined", "texts differ but " + _uncovered_cause(tb, base, drafted[0]),
                        char_offset=offset, part=part, **counts, **outcome)
    if not covered[1]:
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


def _uncovered_cause(tokens: Sequence[Tok], record: dict[str, Any], drafted: float | None = None) -> str:
    """Why the baseline's logprob entries do not spell its text, as far as the record and the
    run's draft counters show."""
    streamed, text = stream_text(tokens), raw_text(record)
    n = 0
    while n < min(len(streamed), len(text)) and streamed[n] == text[n]:
        n += 1
    where = f"they agree for {n} characters, then the text has {text[n:n + 12]!r} where the tokens spell {streamed[n:n + 12]!r}"
    cause = _gap_cause(tokens, record, drafted)[1]
    rescore = (" `diff --rescore-url BASELINE_URL` (lossless: --rescore) can re-score the divergence" if record.get("prompt") else
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
    return _divergence_at(item_id, tb[j], tc[j], j, level, tau, outcome, notes, prefix_drift, drift_here, k,
                          _char_offset(tb, j), _remerge(tb, tc, j, level, stopped),
                          (_prefix(tb, j), _rest(tb, j), _rest(tc, j)), lambda: _earlier_not_greedy(tb, tc, j))


def _divergence_at(item_id: str, b: Tok, c: Tok, j: int, level: str, tau: float, outcome: dict[str, Any],
                   notes: list[str], prefix_drift: float, drift_here: float, k: int | None,
                   offset_part: tuple[int, str], remerge: Remerge | None, context: tuple[str, tuple[str, ...], tuple[str, ...]],
                   earlier_not_greedy: Any) -> ItemDiff:
    """_divergence from its pieces: the two tokens at the divergence and what the streams say
    around it (the columnar path of columnar.py computes these without a Tok per position)."""
    own = Lookup(b.logprob, rank_of(b.top, b.logprob), True, False)
    found = lookup(b.top, c, level)
    offset, part = offset_part
    hidden = b.text == c.text
    common = dict(token_index=j, char_offset=offset, part=part, hidden_drift=hidden,
                  baseline_token=_view(b, b.top, level, own), candidate_token=_view(c, b.top, level, found),
                  remerge=remerge, context_drift=drift_here, prefix_drift=prefix_drift,
                  top=_top_table(b), prefix=context[0], baseline_rest=context[1], candidate_rest=context[2],
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
    earlier = earlier_not_greedy()
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
