"""How far did the distribution move? Token drift between two greedy runs, from the top-K
logprobs both runs stored, over the positions where both had emitted the same tokens so far
(the common prefix, up to the first divergence). llama.cpp's `llama-perplexity
--kl-divergence` is the model: KL divergence (mean, median, p99, max over tokens), RMS Δp of
the emitted token and "same top p"; here it is measured over an endpoint on the user's own
items, from what the server reported, not from full base logits.

Per position t of the common prefix (docs/lossless.md gives the formulas):
- KL: the baseline P and candidate Q restricted to the tokens both top-K lists name, plus one
  bucket for the rest (each side's mass outside those tokens). Lumping tokens together never
  raises a KL divergence, so this is a lower bound of the full-vocabulary KL; it is 0 when the
  two lists agree.
- same top-1: both runs' most likely token is the same.
- Δp: p_base(emitted) - p_cand(emitted), in probability (as llama.cpp's Δp), for the token both
  emitted there.
Per run pair: the same over all positions, divergences (items whose texts part at a token:
any verdict but identical and cut_prefix) per 1,000 tokens walked in common, and the survival curve S(t) "still identical after t tokens"
(Kaplan-Meier: an item identical to its end leaves the curve there, censored).

Vectorised over token columns (numpy), one item at a time from the side file's Arrow tables.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

KL_NOTE = ("KL over the tokens both top-K lists name plus one bucket for the rest of each distribution "
           "(a lower bound of the full-vocabulary KL)")
REST_FLOOR = 1e-10          # a rest bucket that float rounding emptied on one side only
SURVIVAL_POINTS = 60


@dataclass(frozen=True)
class ItemDrift:
    """One item's drift over its common prefix."""
    prefix_tokens: int          # positions where both emitted the same tokens (up to the first divergence)
    tokens: int                 # of which both sides have logprobs and top-K lists
    kl_mean: float | None
    kl_max: float | None
    same_top1: float | None     # share of positions with the same most likely token
    dp_rms: float | None        # RMS of p_base - p_cand of the emitted token
    lp_max: float | None = None  # the largest |lp difference| of a token both top-K lists hold

    def to_dict(self) -> dict[str, Any]:
        return {"prefix_tokens": self.prefix_tokens, "tokens": self.tokens, "kl_mean": self.kl_mean,
                "kl_max": self.kl_max, "same_top1": self.same_top1, "dp_rms": self.dp_rms, "lp_max": self.lp_max}


@dataclass
class DriftAccumulator:
    """The run pair's per-position values, collected item by item (float32: 11,582 items x
    1,000 tokens stay ~100 MB), and each item's survival observation."""
    kl: list[Any] = field(default_factory=list)
    same: list[Any] = field(default_factory=list)
    dp: list[Any] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)        # tokens walked in common, per item
    diverged: list[bool] = field(default_factory=list)   # the walk ended at a divergence

    def add(self, values: "PositionDrift | None", walked: int, diverged: bool) -> None:
        if values is not None and len(values.kl):
            self.kl.append(values.kl)
            self.same.append(values.same)
            self.dp.append(values.dp)
        self.ends.append(walked)
        self.diverged.append(diverged)

    def summary(self) -> "DriftSummary | None":
        """The run pair's figures; the positions are handed over (let go as they are read):
        call once, after the last add()."""
        import numpy as np

        if not self.ends:
            return None

        def pct(a: Any, q: float) -> float | None:
            return float(np.quantile(a, q)) if a.size else None

        def joined(parts: list[Any], dtype: Any) -> Any:
            # one run pair's positions (11,582 x 1,000 tokens: ~90 MB as float64): the parts are
            # let go as soon as they are joined, and each figure's array after its figures
            out = np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)
            parts.clear()
            return out
        kl = joined(self.kl, np.float64)
        n = int(kl.size)
        kl_figures = dict(kl_mean=float(kl.mean()) if n else None, kl_median=pct(kl, 0.5), kl_p99=pct(kl, 0.99),
                          kl_max=float(kl.max()) if n else None)
        del kl
        same = joined(self.same, bool)
        same_top1 = float(same.mean()) if n else None
        del same
        dp = joined(self.dp, np.float64)
        dp_rms = float(np.sqrt((dp ** 2).mean())) if n else None
        dp = np.abs(dp, out=dp)
        dp_figures = dict(dp_mean_abs=float(dp.mean()) if n else None, dp_rms=dp_rms, dp_p99_abs=pct(dp, 0.99))
        del dp
        ends, events = np.asarray(self.ends), np.asarray(self.diverged)
        walked = int(ends.sum())
        return DriftSummary(
            items=len(self.ends), tokens=n, walked_tokens=walked, **kl_figures,
            same_top1=same_top1, **dp_figures,
            divergences=int(events.sum()),
            divergences_per_1000=1000.0 * float(events.sum()) / walked if walked else None,
            survival=tuple(survival_curve(ends, events)))


@dataclass(frozen=True)
class PositionDrift:
    kl: Any        # float32[n]
    same: Any      # bool[n]
    dp: Any        # float32[n]
    # per position, the largest |lp difference| over the tokens both lists hold (None: all 0):
    # the scale of the engines' disagreement on an identical text (noise_scale.py)
    dlp: Any = field(default=None, compare=False)
    # made by the same-numbers shortcut: KL and dp all 0, same all true (summarised then
    # knows the item's figures without four numpy reductions)
    zero: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class DriftSummary:
    items: int
    tokens: int                       # positions measured (both sides with logprobs)
    walked_tokens: int                # positions walked in common, over all items
    kl_mean: float | None
    kl_median: float | None
    kl_p99: float | None
    kl_max: float | None
    same_top1: float | None
    dp_mean_abs: float | None
    dp_rms: float | None
    dp_p99_abs: float | None
    divergences: int
    divergences_per_1000: float | None
    survival: tuple[tuple[int, float], ...] = ()   # (t, share of items still identical after t tokens)

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("items", "tokens", "walked_tokens", "kl_mean", "kl_median", "kl_p99",
                                             "kl_max", "same_top1", "dp_mean_abs", "dp_rms", "dp_p99_abs",
                                             "divergences", "divergences_per_1000")}
        out["survival"] = [[t, s] for t, s in self.survival]
        out["kl_note"] = KL_NOTE
        return out

    def line(self) -> str:
        if not self.tokens:
            return (f"drift: no common-prefix position had logprobs on both sides ({self.items} items); "
                    f"{self.divergences} divergence(s) in {self.walked_tokens} tokens walked in common")
        per = "-" if self.divergences_per_1000 is None else f"{self.divergences_per_1000:.3g}"
        line = (f"drift over {self.tokens} common-prefix tokens of {self.items} items: KL mean {self.kl_mean:.3g}, "
                f"median {self.kl_median:.3g}, p99 {self.kl_p99:.3g}, max {self.kl_max:.3g} nats (top-K + rest bucket); "
                f"same top-1 {100 * self.same_top1:.2f}%; |Δp| mean {100 * self.dp_mean_abs:.3g}%, "
                f"RMS {100 * self.dp_rms:.3g}%; {per} divergences per 1,000 tokens")
        unmeasured = self.walked_tokens - self.tokens
        if unmeasured > self.tokens:   # say plainly what the drift covers (a speculative server's drafted tokens)
            line += (f"\n  the drift covers {self.tokens} of the {self.walked_tokens} tokens walked in common: "
                     f"{unmeasured} came without logprobs on one side (llama-server sends none for accepted draft "
                     "tokens), so it says nothing about those; the divergences and survival cover every token")
        return line

    def survival_line(self) -> str:
        if not self.survival:
            return ""
        marks = [t for t in (100, 250, 500, 1000, 2000, 4000) if t <= self.survival[-1][0]] or [self.survival[-1][0]]
        return "still identical after " + ", ".join(f"{t} tokens {100 * survival_at(self.survival, t):.1f}%"
                                                    for t in marks)


def survival_at(curve: Sequence[tuple[int, float]], t: int) -> float:
    value = 1.0
    for at, s in curve:
        if at > t:
            break
        value = s
    return value


def survival_curve(ends: Any, events: Any, points: int = SURVIVAL_POINTS) -> list[tuple[int, float]]:
    """Kaplan-Meier S(t): the share of items still identical after t tokens. An item that
    diverged at token j is an event at j (it was identical for j tokens); one identical to its
    end is censored at its length. Returned at the event times (thinned to about `points`)."""
    import numpy as np

    ends, events = np.asarray(ends, dtype=np.int64), np.asarray(events, dtype=bool)
    if not ends.size:
        return []
    times = np.unique(ends[events])
    if not times.size:
        return [(0, 1.0), (int(ends.max()), 1.0)]
    order = np.sort(ends)
    at_risk = ends.size - np.searchsorted(order, times, side="left")          # still walking at t
    deaths = np.bincount(np.searchsorted(times, ends[events]), minlength=times.size)
    s = np.cumprod(1.0 - deaths / at_risk)
    curve = [(0, 1.0)] + [(int(t), float(v)) for t, v in zip(times, s)]
    if len(curve) > points:
        keep = np.unique(np.linspace(0, len(curve) - 1, points).round().astype(int))
        curve = [curve[i] for i in keep]
    last = int(ends.max())
    if curve[-1][0] < last:
        curve.append((last, curve[-1][1]))
    return curve


# ----------------------------------------------------------------------------- columns

def _padded(values: Any, lengths: Any, width: int, fill: Any, dtype: Any) -> Any:
    """A ragged list column (flat values + lengths) as an [n, width] array."""
    import numpy as np

    n = len(lengths)
    out = np.full((n, width), fill, dtype=dtype)
    total = int(lengths.sum())
    if total:
        rows = np.repeat(np.arange(n), lengths)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        cols = np.arange(total) - np.repeat(starts, lengths)
        out[rows, cols] = values[:total]
    return out


def _by_id(tables: Sequence[Any]) -> bool:
    import pyarrow.compute as pc

    return all(t.column("id").null_count == 0 and pc.list_flatten(t.column("top_id")).null_count == 0 for t in tables)


def _keys(tables: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """The emitted and top-K token keys of each table, in one key space: ids when every token
    and alternative of both has one, else bytes (the text where bytes are missing), dictionary
    encoded together."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = [(t.column("id"), pc.list_flatten(t.column("top_id"))) for t in tables]
    if all(a.null_count == 0 and b.null_count == 0 for a, b in ids):
        return ([a.to_numpy().astype(np.int64) for a, _ in ids], [b.to_numpy().astype(np.int64) for _, b in ids])

    def spelled(raw: Any, text: Any) -> Any:
        return pc.if_else(pc.is_null(raw), pc.cast(pc.fill_null(text, ""), pa.binary()), raw)
    parts = []
    for t in tables:
        parts.append(spelled(t.column("bytes"), t.column("token")))
        parts.append(spelled(pc.list_flatten(t.column("top_bytes")), pc.list_flatten(t.column("top_token"))))
    sizes = [len(p) for p in parts]
    joined = pa.chunked_array([c for p in parts for c in (p.chunks if hasattr(p, "chunks") else [p])], pa.binary())
    codes = joined.combine_chunks().dictionary_encode().indices.to_numpy().astype(np.int64)
    cut = np.cumsum([0] + sizes)
    out = [codes[cut[i]:cut[i + 1]] for i in range(len(parts))]
    return [out[0], out[2]], [out[1], out[3]]


def _same_lists(views: tuple[Any, Any], prefix: int) -> bool:
    """The Arrow shortcut below (logprob, top_id, top_logprob and top_bytes equal, top_id with
    no null list) read from the arrays, where some alternative has no id (same_numbers asks for
    every id): every number there (no null, NaN or +inf), the bytes of every alternative, the
    same ids value for value and null for null, the same numbers and bytes. A strict test:
    False sends the prefix to the Arrow shortcut, which may still find the lists equal."""
    for v in views:
        g = v.g
        if (g.list_nulls or v._rows_hold(g.lp_odd, prefix) or v._rows_hold(g.ragged, prefix)
                or v._flat_hold(g.top_lp_bad, prefix) or v._flat_hold(g.top_lp_odd, prefix)
                or v._flat_hold(g.top_bytes_null, prefix)):
            return False
    if not views[0].numbers_equal(views[1], prefix):      # the same list lengths first
        return False
    (la, ha), (lb, hb) = views[0]._flat(prefix), views[1]._flat(prefix)
    return bool((views[0].g.top_id_null[la:ha] == views[1].g.top_id_null[lb:hb]).all())


def position_drift(tb: Any, tc: Any, prefix: int, views: tuple[Any, Any] | None = None) -> PositionDrift | None:
    """The drift at each of the first `prefix` positions of two token_schema() Arrow tables
    (positions where the emitted tokens agree), at those where both have a logprob and a top-K.
    `views`: the tables' numpy arrays (store.token_arrays), which answer the common case of
    the same numbers on both sides without Arrow calls."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if tb is None or tc is None or prefix <= 0:
        return None
    if views is not None and (views[0].same_numbers(views[1], prefix) or _same_lists(views, prefix)):
        n = views[0].measured(prefix)      # the shortcut below, read from the arrays
        return PositionDrift(np.zeros(n, np.float32), np.ones(n, bool), np.zeros(n, np.float32), zero=True)
    tb, tc = tb.slice(0, prefix).combine_chunks(), tc.slice(0, prefix).combine_chunks()
    if all(tb.column(name).equals(tc.column(name)) for name in ("logprob", "top_id", "top_logprob", "top_bytes")) \
            and tb.column("top_id").null_count == 0:
        # the same numbers on both sides (the common case of a lossless change): no drift, and
        # nothing to compute but how many positions had numbers
        n = int(pc.sum(pc.and_(pc.greater(pc.fill_null(pc.list_value_length(tb.column("top_logprob")), 0), 0),
                               pc.is_finite(pc.fill_null(tb.column("logprob").cast(pa.float64()), np.nan)))).as_py() or 0)
        return PositionDrift(np.zeros(n, np.float32), np.ones(n, bool), np.zeros(n, np.float32), zero=True)
    (kb, kc), (tkb, tkc) = _keys((tb, tc))
    by_id = _by_id((tb, tc))

    def floats(col: Any) -> Any:
        return pc.fill_null(col.cast(pa.float64()), np.nan).to_numpy(zero_copy_only=False)

    def lengths(t: Any) -> Any:
        return pc.fill_null(pc.list_value_length(t.column("top_logprob")), 0).to_numpy(zero_copy_only=False)
    nb, nc = lengths(tb), lengths(tc)
    width = int(max(nb.max(initial=0), nc.max(initial=0)))
    if width == 0:
        return None
    vb = floats(pc.list_flatten(tb.column("top_logprob")))
    vc = floats(pc.list_flatten(tc.column("top_logprob")))
    lpb, lpc = floats(tb.column("logprob")), floats(tc.column("logprob"))
    keep = (nb > 0) & (nc > 0) & np.isfinite(lpb) & np.isfinite(lpc)
    if not keep.any():
        return PositionDrift(np.zeros(0, np.float32), np.zeros(0, bool), np.zeros(0, np.float32))
    key_b = _padded(tkb, nb, width, -1, np.int64)[keep]
    key_c = _padded(tkc, nc, width, -2, np.int64)[keep]
    with np.errstate(over="ignore", invalid="ignore"):
        pb = np.exp(np.nan_to_num(_padded(vb, nb, width, -np.inf, np.float64)[keep], nan=-np.inf))
        pc_ = np.exp(np.nan_to_num(_padded(vc, nc, width, -np.inf, np.float64)[keep], nan=-np.inf))
    # for each baseline slot: does the candidate list that token, and with what probability
    # (K is small: one [n, K] comparison per candidate slot beats an [n, K, K] cube)
    listed = np.zeros(key_b.shape, bool)
    q = np.zeros(key_b.shape)
    for slot in range(width):
        hit = key_b == key_c[:, slot:slot + 1]
        listed |= hit
        np.maximum(q, np.where(hit, pc_[:, slot:slot + 1], 0.0), out=q)
    listed &= pb > 0
    if not by_id and width > 1:
        # a key listed twice on the baseline side (llama-cpp-python's merged '' entries) counts once
        for slot in range(1, width):
            listed[:, slot] &= ~(key_b[:, :slot] == key_b[:, slot:slot + 1]).any(axis=1)
    p_common = np.where(listed, pb, 0.0)
    q_common = np.where(listed, q, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(listed & (q_common > 0), p_common * np.log(p_common / q_common), 0.0)
    p_rest = np.clip(1.0 - p_common.sum(axis=1), 0.0, 1.0)
    q_rest = np.maximum(np.clip(1.0 - q_common.sum(axis=1), 0.0, 1.0), REST_FLOOR)
    with np.errstate(divide="ignore", invalid="ignore"):
        rest = np.where(p_rest > 0, p_rest * np.log(p_rest / q_rest), 0.0)
    kl = np.maximum(terms.sum(axis=1) + rest, 0.0)
    top_b = key_b[np.arange(len(key_b)), np.argmax(np.where(key_b >= 0, pb, -1.0), axis=1)]
    top_c = key_c[np.arange(len(key_c)), np.argmax(np.where(key_c >= 0, pc_, -1.0), axis=1)]
    dp = np.exp(lpb[keep]) - np.exp(lpc[keep])
    with np.errstate(divide="ignore", invalid="ignore"):
        dlp = np.where(listed & (q_common > 0), np.abs(np.log(p_common) - np.log(q_common)), 0.0).max(axis=1)
    return PositionDrift(kl.astype(np.float32), top_b == top_c, dp.astype(np.float32), dlp.astype(np.float32))


def common_prefix(tb: Any, tc: Any, views: tuple[Any, Any] | None = None) -> int:
    """How many leading tokens the two tables have in common (by id, else bytes, else text)."""
    import numpy as np

    if tb is None or tc is None:
        return 0
    n = min(tb.num_rows, tc.num_rows)
    if n == 0:
        return 0
    if views is not None and views[0].ids_complete(n) and views[1].ids_complete(n):
        differ = np.flatnonzero(views[0].ids(n) != views[1].ids(n))
        return int(differ[0]) if differ.size else n
    ib, ic = tb.column("id").slice(0, n), tc.column("id").slice(0, n)
    if ib.null_count == 0 and ic.null_count == 0:
        kb, kc = ib.to_numpy(), ic.to_numpy()
    else:
        (kb, kc), _ = _keys((tb.slice(0, n).combine_chunks(), tc.slice(0, n).combine_chunks()))
    differ = np.flatnonzero(kb[:n] != kc[:n])
    return int(differ[0]) if differ.size else n


def same_numbers(measured: int) -> PositionDrift:
    """The values of a prefix whose numbers are the same on both sides (position_drift's
    shortcut), at `measured` positions with a top-K and a finite logprob."""
    import numpy as np

    return PositionDrift(np.zeros(measured, np.float32), np.ones(measured, bool), np.zeros(measured, np.float32), zero=True)


def spelled_rows(table: Any, text: str) -> int | None:
    """How many leading rows of a token_schema() table spell the start of `text` (by bytes, else
    by token text; the longer walk wins, as classify.spelled_count); None when every row is
    needed and the rows spell the whole text (no entry skipped). A streamed llama-server run
    under speculation sends the draft tokens it accepted without logprobs, so its entries skip
    them: past the first skip, row j is no longer the text's token j."""
    if table is None:
        return None
    data = text.encode("utf-8")
    raw = table.column("bytes")
    if raw.null_count == 0 and table.num_rows:
        if b"".join(raw.to_pylist()) == data:
            return None
    by_bytes = at = 0
    for piece, token in zip(raw.to_pylist(), table.column("token").to_pylist()):
        piece = piece if piece is not None else (token or "").encode("utf-8")
        if not data.startswith(piece, at):
            break
        at, by_bytes = at + len(piece), by_bytes + 1
    if by_bytes == table.num_rows and at == len(data):
        return None
    by_text = at = 0
    for token in table.column("token").to_pylist():
        token = token or ""
        if not text.startswith(token, at):
            break
        at, by_text = at + len(token), by_text + 1
    if by_text == table.num_rows and at == len(text):
        return None
    return max(by_bytes, by_text)


def item_drift(tb: Any, tc: Any, verdict: str, token_index: int | None,
               same_tokens: bool = False, views: tuple[Any, Any] | None = None,
               apart_at: int | None = None,
               spelled: tuple[int | None, int | None] = (None, None)) -> tuple[ItemDrift | None, PositionDrift | None, int, bool]:
    """One item's drift: (its summary, the per-position values, tokens walked in common, whether
    the walk ended at a divergence). The walk ends at the verdict's divergence when there is one
    (its token index, in the baseline's tokens), else where the two token streams part (an
    identical text tokenised apart) or at the shorter end. `same_tokens`: the caller already
    knows the two streams are the same tokens (identical_by_columns). `views`: the tables' numpy
    arrays (store.token_arrays), when the caller has them. `apart_at`: the first position where
    the two streams' ids differ, when the caller has found it (common_prefix's answer).

    `spelled`: per side, how many leading entries spell its text when not all do (spelled_rows;
    None: all do). Entries a server skipped (tokens streamed without logprobs) are unscored
    positions, not a divergence: the drift is measured only where both sides' entries still
    line up with the text, and the walk of an item whose texts agree is the baseline's whole
    text."""
    if tb is None or tc is None:
        return None, None, 0, False
    if apart_at is not None:
        prefix = apart_at
    else:
        prefix = tb.num_rows if same_tokens and tb.num_rows == tc.num_rows else common_prefix(tb, tc, views)
    walked = prefix
    # entries that line up index by index on both sides (the same count, failing to spell
    # their texts at the same place: a rendering, not a skip) are compared as they are
    skipped = spelled != (None, None) and not (spelled[0] == spelled[1] and tb.num_rows == tc.num_rows)
    if skipped:
        prefix = min([prefix] + [n for n in spelled if n is not None])
        walked = tb.num_rows if spelled[0] is None else spelled[0]
    diverged = verdict not in ("identical", "cut_prefix") and token_index is not None
    if diverged:
        prefix, walked = min(prefix, token_index), token_index
    return summarised(walked, position_drift(tb, tc, prefix, views), diverged)


def summarised(prefix: int, values: PositionDrift | None, diverged: bool
               ) -> tuple[ItemDrift, PositionDrift | None, int, bool]:
    """item_drift's answer from the positions' values."""
    import numpy as np

    if values is None:
        return ItemDrift(prefix, 0, None, None, None, None), None, prefix, diverged
    n = len(values.kl)
    if not n:
        return ItemDrift(prefix, 0, None, None, None, None), values, prefix, diverged
    if values.zero:             # what the reductions below give for all-0 KL and dp, all-true same
        return ItemDrift(prefix, n, 0.0, 0.0, 1.0, 0.0, 0.0), values, prefix, diverged
    kl = values.kl.astype(np.float64)
    return (ItemDrift(prefix, n, float(kl.mean()), float(kl.max()), float(values.same.mean()),
                      float(math.sqrt(float((values.dp.astype(np.float64) ** 2).mean()))),
                      0.0 if values.dlp is None else float(values.dlp.max())),
            values, prefix, diverged)


def table_of(entries: Sequence[dict[str, Any]] | None) -> Any:
    """A record's inline `logprobs` list as a token_schema() Arrow table (old run folders)."""
    import pyarrow as pa

    from ..store import TokenColumns

    if entries is None:
        return None
    return pa.Table.from_batches([TokenColumns.from_entries(entries).to_arrow()])


def survival_svg(curve: Sequence[Sequence[float]], width: int = 520, height: int = 200) -> str:
    """The survival curve as a small inline SVG (no scripts, nothing fetched): a step line of
    the share of items still identical after t tokens."""
    if not curve:
        return ""
    left, bottom, top, right = 44, 28, 10, 12
    t_max = max(float(curve[-1][0]), 1.0)
    s_min = min(min(float(s) for _, s in curve), 0.9)
    s_min = math.floor(s_min * 10) / 10

    def x(t: float) -> float:
        return left + (width - left - right) * t / t_max

    def y(s: float) -> float:
        return top + (height - top - bottom) * (1.0 - (s - s_min) / (1.0 - s_min or 1.0))
    points, last = [], None
    for t, s in curve:
        if last is not None:
            points.append(f"{x(t):.1f},{y(last):.1f}")
        points.append(f"{x(t):.1f},{y(s):.1f}")
        last = s
    ticks = "".join(f'<text x="{left - 4}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="10">{100 * v:.0f}%</text>'
                    for v in (s_min, (1 + s_min) / 2, 1.0))
    return (f'<svg width="{width}" height="{height}" role="img" '
            f'aria-label="share of items still identical after t tokens">'
            f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" fill="none" '
            f'stroke="#ccc"/>{ticks}'
            f'<text x="{left}" y="{height - 8}" font-size="10">0</text>'
            f'<text x="{width - right}" y="{height - 8}" font-size="10" text-anchor="end">{t_max:.0f} tokens</text>'
            f'<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{" ".join(points)}"/></svg>')


def summary_from_dict(data: Any) -> DriftSummary | None:
    """A diff JSON's `drift` back as a DriftSummary (for `report --diff`); None when absent or
    not well-formed (the JSON is a file a person may have edited)."""
    if not isinstance(data, dict):
        return None

    def num(key: str) -> float | None:
        v = data.get(key)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None
    try:
        curve = tuple((int(t), float(v)) for t, v in (data.get("survival") or [])[:10_000]
                      if isinstance(t, (int, float)) and isinstance(v, (int, float)))
        ints = {k: int(data.get(k) or 0) for k in ("items", "tokens", "walked_tokens", "divergences")}
    except (TypeError, ValueError):
        return None
    return DriftSummary(kl_mean=num("kl_mean"), kl_median=num("kl_median"), kl_p99=num("kl_p99"), kl_max=num("kl_max"),
                        same_top1=num("same_top1"), dp_mean_abs=num("dp_mean_abs"), dp_rms=num("dp_rms"),
                        dp_p99_abs=num("dp_p99_abs"), divergences_per_1000=num("divergences_per_1000"),
                        survival=curve, **ints)


def page_view(summary: DriftSummary | None) -> dict[str, Any] | None:
    """What the diff page and the report draw: the line, the survival line, the KL note and the
    survival plot (inline SVG, built here from numbers only)."""
    if summary is None:
        return None
    from markupsafe import Markup

    ok = summary.tokens and None not in (summary.kl_mean, summary.kl_median, summary.kl_p99, summary.kl_max,
                                         summary.same_top1, summary.dp_mean_abs, summary.dp_rms)
    line = summary.line() if ok or not summary.tokens else "drift: figures missing from the diff JSON"
    return {"line": line, "survival": summary.survival_line(), "note": KL_NOTE,
            "svg": Markup(survival_svg(summary.survival))}
