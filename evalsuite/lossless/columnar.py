"""The common divergent item of a large diff, decided on the side file's Arrow columns.

diff_item walks two streams of Tok tuples; building them is most of a long diff's time (~25 ms
an item of 1,000 tokens). Here the first differing token is found by array comparison (of the
ids where both streams carry one for every token, else of the tokens' bytes as dictionary
codes: the key diff_item compares by, tokens.comparison_level) and Tok tuples are made only for
the few positions the verdict reads (the divergence, the context shown beside it, and the
prefix only where the two top-k lists differ). The verdict is then made by the same code as
diff_item's (classify._divergence_at, and through it classify_margin), so it is byte-for-byte
the same; any shape this path does not handle exactly (missing bytes, logprobs that do not
spell the text, ragged or NaN alternatives, no differing token) returns None and goes down
diff_item. tests/test_diff_columnar.py and tests/test_diff_remerge.py check both paths agree on
planted streams.
"""
from __future__ import annotations

import math
from typing import Any

from .classify import (
    ItemDiff,
    _divergence_at,
    _outcome_fields,
    _remerge_keys,
    _stopped,
    remerge_at,
    _texts_equal,
)
from .drift import _padded, _same_lists
from .tokens import (
    Alt,
    CONTEXT_CHARS,
    CONTEXT_TOKENS,
    MAX_ALIGN_TOKENS,
    earlier_not_greedy_reason,
    raw_text,
    Tok,
    tokens_from_table,
    top_drift,
)

_TOP = ("top_token", "top_bytes", "top_id", "top_logprob")


class _Side:
    """One side's columns, read through its numpy views (store.token_arrays.ItemArrays: a
    row group's arrays, built once), or made from a table."""

    def __init__(self, table: Any, record: dict[str, Any], view: Any = None):
        from ..store.token_arrays import ItemArrays

        self.v = v = view if view is not None else ItemArrays.of(table.combine_chunks())
        self.n = v.n
        self.ok = False
        if not v.bytes_complete():
            return              # tokens compared by text: partial bytes without ids or bytes (diff_item)
        try:
            if v.spelled() != raw_text(record).encode("utf-8"):
                return          # the entries do not spell the text: diff_item says why
        except UnicodeEncodeError:
            return
        if v.ragged():
            return              # ragged alternatives: tokens_from_table reads them row by row
        if v.odd_alternatives():
            return              # not_top1_mask and _own_rank read NaN / +inf alternatives apart
        self.top_lengths = v.top_lengths()
        # every token has an id: compared by id when the other side's have too (comparison_level)
        self.ids = v.ids() if v.ids_complete() else None
        self.ok = True

    @property
    def table(self) -> Any:
        return self.v.table

    def texts(self, start: int, stop: int) -> list[str]:
        return [t or "" for t in self.v.col("token", start, stop).to_pylist()]

    def toks(self, start: int, stop: int) -> list[Any]:
        return tokens_from_table(self.table.slice(start, stop - start))

    def tok(self, i: int) -> Tok:
        """tokens_from_table(...)[i] for one row, read as scalars (the whole-table call costs
        ~0.3 ms of fixed Arrow work); alternatives are not ragged here (checked in __init__)."""
        g = self.v.g
        if g.top_bytes_are_texts:
            return self._tok_from_arrays(i)
        c, i = g.cols, self.v.start + i
        top = tuple(tuple.__new__(Alt, (t or "", None if b is None else tuple(b), d, _logprob(v)))
                    for t, b, d, v in zip(*(c[name][i].as_py() or () for name in _TOP)))
        b = c["bytes"][i].as_py()
        return tuple.__new__(Tok, (c["token"][i].as_py() or "", None if b is None else tuple(b), c["id"][i].as_py(),
                                   _logprob(c["logprob"][i].as_py()), c["part"][i].as_py() or "answer", top))


    def _tok_from_arrays(self, i: int) -> Tok:
        """tok(i) read from the group's numpy arrays and buffers instead of ~20 Arrow scalars,
        where each alternative's bytes are its text's UTF-8 (the same buffers, none null: the
        texts are those bytes decoded). The bytes are there (checked in __init__)."""
        g = self.v.g
        r = self.v.start + i
        lo, hi = int(g.top_off[r]), int(g.top_off[r + 1])
        data, ends = g.top_bytes_data, g.top_bytes_off[lo:hi + 1].tolist()
        top = []
        for start, stop, key, value, no_key, no_value in zip(
                ends, ends[1:], g.top_id[lo:hi].tolist(), g.top_lp[lo:hi].tolist(),
                g.top_id_null[lo:hi].tolist(), g.top_lp_bad[lo:hi].tolist()):
            raw = data[start:stop].tobytes()
            top.append(tuple.__new__(Alt, (str(raw, "utf-8"), tuple(raw), None if no_key else key,
                                           None if no_value else _logprob(value))))
        raw = g.bytes_data[g.bytes_off[r]:g.bytes_off[r + 1]].tobytes()
        # the text and part as Arrow scalars: the candidate's group has no text layout made
        return tuple.__new__(Tok, (g.cols["token"][r].as_py() or "", tuple(raw),
                                   None if g.id_null[r] else int(g.ids[r]),
                                   _logprob(float(g.lp[r])) if g.lp_valid[r] else None,
                                   g.cols["part"][r].as_py() or "answer", tuple(top)))


def _logprob(value: float | None) -> float | None:
    """tokens_from_table's reading of a stored logprob: NaN and +inf are none, -inf is one."""
    if value is None or math.isnan(value) or value == math.inf:
        return None
    return value


def _tops_equal(b: _Side, c: _Side, stop: int) -> bool:
    """Are the top-k lists of positions [0, stop) the same on both sides, value for value (a
    strict test: False only sends the prefix to the Tok comparison)?"""
    import numpy as np

    if stop == 0:
        return True
    if b.v.g.top_bytes_are_texts and c.v.g.top_bytes_are_texts and (
            b.v.same_numbers(c.v, stop) or (b.ids is None or c.ids is None) and _same_lists((b.v, c.v), stop)):
        # the same lengths, ids (or the same ones missing, where tokens come without ids),
        # logprobs and bytes, none null or NaN (drift's shortcuts ask the same of this prefix),
        # and each side's bytes are its texts' UTF-8: the same texts
        return True
    if not np.array_equal(b.top_lengths[:stop], c.top_lengths[:stop]):
        return False
    for name in _TOP:
        if not b.v.flat(name, stop).equals(c.v.flat(name, stop)):   # nulls at the same places count as equal, NaN never does
            return False
    return True


def _byte_codes(*arrays: Any) -> list[Any]:
    """Binary Arrow arrays with no null, as int64 codes of one dictionary: equal codes where the
    bytes are equal (the bytes level's keys, tokens.key), one array of codes per array given.
    (Arrow's dictionary_encode: ~50 us for two items of 1,000 tokens, where hashing the bytes in
    numpy and proving the hashes exact took ~250.)"""
    import numpy as np
    import pyarrow as pa

    joined = pa.concat_arrays([a.cast(pa.binary()) if a.type != pa.binary() else a for a in arrays])
    codes = joined.dictionary_encode().indices.to_numpy(zero_copy_only=False).astype(np.int64)
    cut = np.cumsum([0] + [len(a) for a in arrays])
    return [codes[cut[i]:cut[i + 1]] for i in range(len(arrays))]


def _keys_plain(s: _Side, stop: int, level: str) -> bool:
    """Rows [0, stop) have every logprob, every alternative's logprob and key at `level` (an id,
    or bytes), and no ragged or null list: what _prefix_drift reads on the arrays. (At the id
    level this is numbers_plain, which asks for the alternatives' bytes too.)"""
    v = s.v
    if level == "id":
        return v.numbers_plain(stop)
    g = v.g
    return not (g.list_nulls or v._rows_hold(g.lp_odd, stop) or v._rows_hold(g.ragged, stop)
                or v._flat_hold(g.top_lp_bad, stop) or v._flat_hold(g.top_bytes_null, stop))


def _prefix_drift(b: _Side, c: _Side, stop: int, level: str = "id") -> float | None:
    """max(top_drift(x, y, level)) over the positions [0, stop) of the two sides (0.0 for none),
    on the arrays, where every alternative there has a key at `level` (an id, or bytes) and a
    finite logprob; None otherwise (the Tok walk decides). Per position, over top_drift's tables
    (a key listed twice: its last entry): the largest |lp difference| over the keys both list,
    and for a key one side lists alone, how far it lies above the other side's lowest logprob."""
    import numpy as np

    if not (_keys_plain(b, stop, level) and _keys_plain(c, stop, level)):
        return None
    if level == "id":
        flat_keys = [s.v.g.top_id[slice(*s.v._flat(stop))] for s in (b, c)]
    else:
        flat_keys = _byte_codes(b.v.flat("top_bytes", stop), c.v.flat("top_bytes", stop))
    sides = []
    for s, keys in zip((b, c), flat_keys):
        lo, hi = s.v._flat(stop)
        lp = s.v.g.top_lp[lo:hi].astype(np.float64)
        if not np.isfinite(lp).all():
            return None          # -inf alternatives: top_drift leaves them out of some comparisons
        lengths = s.top_lengths[:stop]
        width = int(lengths.max()) if stop else 0
        listed = np.arange(width) < lengths[:, None]
        ids = _padded(keys, lengths, width, 0, np.int64)
        # a key listed twice in a row: top_drift's table keeps the last of them
        later = (ids[:, :, None] == ids[:, None, :]) & listed[:, None, :] & np.triu(np.ones((width, width), bool), 1)
        sides.append((ids, _padded(lp, lengths, width, np.nan, np.float64), listed & ~later.any(axis=2)))
    if not stop:
        return 0.0
    (ia, va, la), (ib, vb, lb) = sides
    both = (ia[:, :, None] == ib[:, None, :]) & la[:, :, None] & lb[:, None, :]
    with np.errstate(invalid="ignore"):
        gaps = [np.where(both, np.abs(va[:, :, None] - vb[:, None, :]), -np.inf).reshape(stop, -1)]
        for mine, listed, alone, other, other_listed in ((va, la, ~both.any(2), vb, lb), (vb, lb, ~both.any(1), va, la)):
            floor = np.where(other_listed, other, np.inf).min(axis=1, initial=np.inf)[:, None]
            gaps.append(np.where(listed & alone & (mine > floor), mine - floor, -np.inf))
    return max(0.0, float(max(g.max(initial=-np.inf) for g in gaps)))


def token_keys(b: _Side, c: _Side) -> tuple[str, Any, Any]:
    """(the comparison level, each side's token keys at it): the ids where both sides have one
    for every token, else the bytes' dictionary codes (tokens.comparison_level's choice; the
    bytes are there, _Side checks)."""
    if b.ids is not None and c.ids is not None:
        return "id", b.ids, c.ids
    kb, kc = _byte_codes(b.v.col("bytes"), c.v.col("bytes"))
    return "bytes", kb, kc


def diverged_by_columns(base: dict[str, Any], cand: dict[str, Any], tb: Any, tc: Any, tau: float,
                        k: int | None, views: tuple[Any, Any] | None = None) -> ItemDiff | None:
    """diff_item's verdict for two texts that differ where both sides' entries carry bytes that
    spell their texts and the tokens (by id where both carry ids, else by bytes) differ within
    the shorter stream; None otherwise. `views`: the two tables' numpy arrays when the caller
    has them (store.token_arrays)."""
    import numpy as np

    if tb is None or tc is None or tb.num_rows == 0 or tc.num_rows == 0:
        return None
    if base.get("outcome") == "error" or cand.get("outcome") == "error" or _texts_equal(base, cand):
        return None
    b, c = (_Side(tb, base, views[0]), _Side(tc, cand, views[1])) if views is not None else (_Side(tb, base), _Side(tc, cand))
    if not (b.ok and c.ok):
        return None
    level, keys_b, keys_c = token_keys(b, c)
    n = min(b.n, c.n)
    apart = np.flatnonzero(keys_b[:n] != keys_c[:n])
    if not apart.size:
        return None             # the same tokens to the shorter end: cut_prefix and the like
    j = int(apart[0])
    item_id = str(base.get("id"))
    counts = {"baseline_not_top1": b.v.not_top1(), "candidate_not_top1": c.v.not_top1()}
    outcome = {**_outcome_fields(base, cand), **counts}

    stop = min(j + CONTEXT_TOKENS, b.n), min(j + CONTEXT_TOKENS, c.n)
    # 0.0: top_drift of two equal lists
    prefix_drift = 0.0 if _tops_equal(b, c, j) else _prefix_drift(b, c, j, level)
    if prefix_drift is not None:
        tok_b, tok_c = b.tok(j), c.tok(j)
    else:
        prefix_b, prefix_c = b.toks(0, j + 1), c.toks(0, j + 1)
        prefix_drift = 0.0
        for x, y in zip(prefix_b[:j], prefix_c[:j]):
            prefix_drift = max(prefix_drift, top_drift(x, y, level))
        tok_b, tok_c = prefix_b[j], prefix_c[j]
    drift_here = top_drift(tok_b, tok_c, level)

    # _char_offset: characters of the earlier tokens of the divergent token's part
    part = tok_b.part           # a null or "" part reads "answer" (tokens_from_table)
    lengths, offset = b.v.text_before(j, part)
    # _prefix: the last CONTEXT_CHARS characters of the earlier text, joined from as few tokens as cover them
    first = j
    if j:
        covered = np.cumsum(lengths[::-1])
        reach = int(np.searchsorted(covered, CONTEXT_CHARS))
        first = max(0, j - 1 - reach)
    prefix = "".join(b.texts(first, j))[-CONTEXT_CHARS:]

    stopped = (_stopped(base), _stopped(cand))
    remerge = None
    if b.n - j <= MAX_ALIGN_TOKENS and c.n - j <= MAX_ALIGN_TOKENS:
        # the last matching block must end at one stream's end: its last key is in the other stream
        ka, kb = keys_b[j:], keys_c[j:]
        if (kb == ka[-1]).any() or (ka == kb[-1]).any():
            last = last_matching_block(ka, kb)
            if last is None:         # too many equal keys for the arrays: difflib itself
                remerge = _remerge_keys(ka.tolist(), kb.tolist(), j, stopped)
            elif last[2]:
                remerge = remerge_at(last, len(ka), len(kb), j, stopped)

    earlier = lambda: earlier_not_greedy_reason(  # noqa: E731
        [("baseline", b.v.not_top1(j)), ("candidate", c.v.not_top1(j))])
    return _divergence_at(item_id, tok_b, tok_c, j, level, tau, outcome, [], prefix_drift, drift_here, k,
                          (offset, part), remerge, (prefix, tuple(b.texts(j, stop[0])), tuple(c.texts(j, stop[1]))),
                          earlier)


MAX_KEY_PAIRS = 500_000      # equal-key pairs last_matching_block holds (a few MB); beyond: difflib
MAX_CHAIN_BLOCKS = 64        # blocks of the rightmost chain it follows; beyond: difflib


def last_matching_block(ka: Any, kb: Any) -> tuple[int, int, int] | None:
    """The last block of difflib.SequenceMatcher(None, ka, kb, autojunk=False)
    .get_matching_blocks() (its sentinel left out) as (a, b, size), found on two integer arrays;
    (0, 0, 0) when nothing matches; None when the keys are too repetitive for this to be cheap
    (then ask difflib).

    difflib takes the longest match of the whole (the longest; of those the first in a, then in
    b), then recurses on each side; the last block is the end of the chain of longest matches
    taken each time in what lies right of (after, in both streams) the one before. Each such
    match is a maximal run of equal keys along one diagonal (b - a constant) clipped at the
    box's lower corner, so the chain is followed over those runs, all made at once from the
    sorted key pairs. (No two blocks of the chain touch: a run ends where its diagonal stops
    matching, so difflib's merging of adjacent blocks never applies.)
    tests/test_diff_remerge.py holds it to difflib on random streams of few keys."""
    import numpy as np

    ka, kb = np.asarray(ka, dtype=np.int64), np.asarray(kb, dtype=np.int64)
    la = len(ka)
    order = np.argsort(kb, kind="stable")
    sorted_b = kb[order]
    lo, hi = np.searchsorted(sorted_b, ka, "left"), np.searchsorted(sorted_b, ka, "right")
    counts = hi - lo
    total = int(counts.sum())
    if total == 0:
        return 0, 0, 0
    # The common suffix S, when the other equal pairs are too few to make a run as long: then
    # S is the longest match of all, difflib's first pick, nothing lies right of it, and no
    # block to its left touches it (S is maximal): the last block. (A re-merge's usual shape.)
    n = min(la, len(kb))
    apart = ka[la - n:][::-1] != kb[len(kb) - n:][::-1]
    tail = int(apart.argmax()) if apart.any() else n
    if tail and total - tail < tail:
        return la - tail, len(kb) - tail, tail
    if total > MAX_KEY_PAIRS:
        return None
    # every (i, j) with ka[i] == kb[j]
    ai = np.repeat(np.arange(la, dtype=np.int64), counts)
    first = np.cumsum(counts) - counts
    bj = order[np.arange(total, dtype=np.int64) + np.repeat(lo - first, counts)]
    diag = bj - ai
    by_diagonal = np.argsort((diag + la) * (la + 1) + ai, kind="stable")
    diag, ai = diag[by_diagonal], ai[by_diagonal]
    # maximal runs: a new one where the diagonal changes or the next a is not the one after
    starts = np.ones(total, dtype=bool)
    starts[1:] = (diag[1:] != diag[:-1]) | (ai[1:] != ai[:-1] + 1)
    at = np.flatnonzero(starts)
    run_diag, run_first = diag[at], ai[at]
    run_last = ai[np.append(at[1:] - 1, total - 1)]
    last = (0, 0, 0)
    a0 = b0 = 0
    for _ in range(MAX_CHAIN_BLOCKS):
        begin = np.maximum(np.maximum(run_first, a0), b0 - run_diag)     # clipped at the box's corner
        size = run_last - begin + 1
        best = int(size.max()) if size.size else 0
        if best <= 0:
            return last
        tied = np.flatnonzero(size == best)
        # first in a (the same size: the earliest end in a), then in b
        pick = tied[np.lexsort((run_diag[tied], begin[tied]))[0]]
        a = int(begin[pick])
        b = a + int(run_diag[pick])
        last = (a, b, best)
        a0, b0 = a + best, b + best
        keep = (run_last >= a0) & (run_last + run_diag >= b0)
        run_diag, run_first, run_last = run_diag[keep], run_first[keep], run_last[keep]
    return None
