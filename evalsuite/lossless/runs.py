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

import gc
import math
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .classify import ItemDiff, diff_item, identical_by_columns, identical_by_digests
from .columnar import diverged_by_columns
from .tokens import (
    COUNT_KEYS,
    DEFAULT_TAU,
    ENGINE_KEYS,
    GREEDY_FIX,
    REPORTING_DECODING_KEYS,
    TAU_BY_PRECISION,
    DiffRefused,
)

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
    speculation: str | None = None           # the run's own draft counters, in words (manifest `speculation`)
    stream: str | None = None                # "streamed" / "unstreamed (--no-stream)" (manifest `client.stream`)

    @property
    def accuracy(self) -> float | None:
        from ..analysis.stats import accuracy
        return accuracy(self.n_correct, self.n, self.n_errors)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "label": self.label, "endpoints": list(self.endpoints), "n": self.n,
                "n_correct": self.n_correct, "n_errors": self.n_errors, "accuracy": self.accuracy,
                "started_at": self.started_at, "fingerprint": self.fingerprint,
                "tokens": self.tokens, "not_top1": self.not_top1, "speculation": self.speculation,
                "stream": self.stream}

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
    drift: Any = None                        # drift.DriftSummary over the common prefixes
    noise_scale: dict[str, Any] | None = None   # noise_scale.rescale's figures (None: flips judged against tau)

    @property
    def counts(self) -> dict[str, int]:
        out = {k: 0 for k in COUNT_KEYS}
        for item in self.items:
            out[item.verdict] += 1
            out["hidden_drift"] += item.hidden_drift
            out["retokenised"] += item.retokenised
            out["unscored"] += item.unscored
        return out

    def summary_line(self) -> str:
        c = self.counts
        flips = [i for i in self.items if i.verdict == "near_tie"]
        tie = f"{c['near_tie']} near-tie flip{'s' if c['near_tie'] != 1 else ''}"
        if flips:
            worst = max(abs(i.margin or 0.0) for i in flips)
            remerged = sum(i.remerge is not None for i in flips)
            tie += f" (max |m| {worst:.2g}, {remerged} re-merged)"
        how = ([f"{c['retokenised']} retokenised"] if c["retokenised"] else []) + \
            ([f"{c['unscored']} with tokens sent without logprobs"] if c["unscored"] else [])
        ident = f"{c['identical']} identical" + (f" ({', '.join(how)})" if how else "")
        parts = [ident, tie, f"{c['suspicious']} suspicious", f"{c['real']} real"]
        if c["not_greedy"]:
            parts.append(f"{c['not_greedy']} not greedy")
        if c["cut_prefix"]:
            parts.append(f"{c['cut_prefix']} cut at max_tokens apart")
        parts.append(f"{c['undetermined']} undetermined")
        if c["hidden_drift"]:
            parts.append(f"{c['hidden_drift']} hidden drift")
        return ", ".join(parts)

    def to_dict(self, finite_items: bool = True) -> dict[str, Any]:
        """The diff JSON's content. `finite_items=False`: the items' dicts without _finite (for
        a writer that applies it itself: lossless/json_write.py)."""
        changed = [i for i in self.items if i.answer_changed]
        return {
            "schema": 1, "tool": "evalsuite diff", "tau": self.tau,
            "counts": self.counts, "summary": self.summary_line(),
            "baseline": self.baseline.to_dict(), "candidate": self.candidate.to_dict(),
            "answer_changes": len(changed),
            "correctness_changes": sum(i.correctness_changed for i in self.items),
            "settings_notes": list(self.settings_notes), "missing": list(self.missing), "rescored": self.rescored,
            "drift": None if self.drift is None else _finite(self.drift.to_dict()),
            "noise_scale": self.noise_scale,
            "items": [_finite(i.to_dict()) for i in self.items] if finite_items else [i.to_dict() for i in self.items],
        }


_KEPT = frozenset((str, int, bool, type(None)))   # values _finite returns as they are, without a call


def _finite(value: Any) -> Any:
    """JSON has no infinities: a -inf logprob (a masked token) is written as null. (Strings,
    ints and None are kept in place, not passed down: most of a large diff's ~400k values.)"""
    if type(value) is dict:
        return {k: v if type(v) in _KEPT else _finite(v) for k, v in value.items()}
    if type(value) is list or type(value) is tuple:
        return [v if type(v) in _KEPT else _finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _side(run: Any, records: Iterable[dict[str, Any]], tokens: int, not_top1: int) -> RunSide:
    from ..speculation import manifest_summary, stream_mode

    records = list(records)
    return RunSide(str(run.path), run.name, tuple(run.manifest.get("endpoints") or ()), len(records),
                   sum(r.get("outcome") == "correct" for r in records), sum(r.get("outcome") == "error" for r in records),
                   started_at=run.manifest.get("started_at"),
                   fingerprint=(run.manifest.get("dataset") or {}).get("fingerprint"),
                   tokens=tokens, not_top1=not_top1, speculation=manifest_summary(run.manifest),
                   stream=stream_mode(run.manifest))


@contextmanager
def cyclic_gc_paused():
    """The cyclic garbage collector off for a whole diff command (loading the runs, the walk,
    the JSON), back as it was after. A diff builds millions of objects that form no cycles (the
    records as parsed, the verdicts, their dicts), and each full collection rescans all that are
    alive: on two 11,582-item runs, ~0.2 s of loading and ~0.6 s of building the JSON's dicts
    were the collector's."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def load_diff_run(path: Any) -> Any:
    """The one place diff reads a run folder: slim records; each item's `logprobs` token list
    comes from `run.with_logprobs(record)`, one item at a time."""
    from ..store import load_run

    return load_run(path)


def check_comparable(base_manifest: dict[str, Any], cand_manifest: dict[str, Any],
                     base_records: dict[str, dict[str, Any]], cand_records: dict[str, dict[str, Any]]) -> list[str]:
    """Notes on what legitimately differs; raises DiffRefused listing what must not."""
    pack_b, pack_c = base_manifest.get("pack"), cand_manifest.get("pack")
    if pack_b != pack_c:   # then items, prompts and templates differ too: that is noise after this
        raise DiffRefused(f"different packs: baseline {pack_b!r} vs candidate {pack_c!r} (a diff compares two runs "
                          f"of the same pack on the same items)")
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


def drafted_during(manifest: dict[str, Any]) -> float | None:
    """Tokens the run's servers drafted during the run, by their own counters (manifest
    `speculation`); None when no server exposed counters."""
    moved = [(r or {}).get("during_run") for r in (manifest.get("speculation") or {}).values() if isinstance(r, dict)]
    moved = [m for m in moved if isinstance(m, dict)]
    if not moved:
        return None
    return sum(float(m.get("drafted") or 0) for m in moved)


def _diff_items(baseline: Any, candidate: Any, b_by_id: dict, c_by_id: dict, common: Sequence[str], tau: float,
                top_k: int | None) -> tuple[list[ItemDiff], dict[str, list[int]], Any]:
    """Each common item's verdict, reading token streams one item at a time (flat memory), and
    each side's [tokens, not-top-1 tokens]."""
    from ..store import TOKEN_FIELD
    from .drift import DriftAccumulator, item_drift, same_numbers, spelled_rows, summarised, table_of
    from .tokens import raw_text

    drafted = drafted_during(baseline.manifest), drafted_during(candidate.manifest)
    drift = DriftAccumulator()
    items: list[ItemDiff] = []
    streamed = {"baseline": [0, 0], "candidate": [0, 0]}
    for i in common:
        b, c = b_by_id[i], c_by_id[i]
        # the same tokens and numbers on both sides by the side files' digests: decided unread
        digests = _digests(baseline, candidate, i)
        item = identical_by_digests(b, c, *digests) if digests is not None else None
        if item is not None:
            n = digests[0][3]
            summary, values, walked, diverged = summarised(b.get(TOKEN_FIELD), same_numbers(n), False)
            item = _with_drift(item, summary)
            drift.add(values, walked, diverged)
            items.append(item)
            for side, count in (("baseline", item.baseline_not_top1), ("candidate", item.candidate_not_top1)):
                streamed[side][0] += b.get(TOKEN_FIELD)
                streamed[side][1] += count
            continue
        # the side file's Arrow tables; an old folder's inline lists keep their float64 logprobs
        if _columnar(baseline, i) and _columnar(candidate, i):
            # numpy views of each side's row group (built once a group, the next group read
            # ahead in a thread); the Arrow tables are slices of the same decoded group
            pair = baseline.tokens.arrays(i), candidate.tokens.arrays(i)
            tables = tuple(None if v is None else v.table for v in pair)
            views = pair if None not in pair else None
            fast = identical_by_columns(b, c, *tables, views=views)
            apart = None if fast is not None else diverged_by_columns(b, c, *tables, tau, top_k, views=views)
            item = fast or apart or diff_item(b, c, tau, top_k, tables=tables, drafted=drafted)
            # diverged_by_columns' token_index is where the ids first differ: the common prefix
            apart_at = None if apart is None else apart.token_index
            sizes = [0 if t is None else t.num_rows for t in tables]
        else:
            b, c = baseline.with_logprobs(b), candidate.with_logprobs(c)
            item = diff_item(b, c, tau, top_k, drafted=drafted)
            sizes = [len(r.get("logprobs") or ()) for r in (b, c)]
            tables = table_of(b.get("logprobs")), table_of(c.get("logprobs"))
            fast = views = apart_at = None
        if item.verdict != "undetermined" or item.token_index is not None:
            # entries that skip tokens (sent without logprobs) line up with the text only up to the skip
            spelled = ((None, None) if fast is not None or apart_at is not None else
                       (spelled_rows(tables[0], raw_text(b)), spelled_rows(tables[1], raw_text(c))))
            summary, values, walked, diverged = item_drift(*tables, item.verdict, item.token_index, fast is not None,
                                                           views=views, apart_at=apart_at, spelled=spelled)
            if summary is not None:
                item = _with_drift(item, summary)
                drift.add(values, walked, diverged)
        items.append(item)
        streamed["baseline"][0] += sizes[0]
        streamed["candidate"][0] += sizes[1]
        streamed["baseline"][1] += item.baseline_not_top1
        streamed["candidate"][1] += item.candidate_not_top1
    return items, streamed, drift.summary()


def _walk(baseline: Any, candidate: Any, b_by_id: dict, c_by_id: dict, common: Sequence[str], tau: float,
          top_k: int | None) -> tuple[list[ItemDiff], dict[str, list[int]], Any]:
    """_diff_items with each side's next row group read ahead, a short GIL switch interval and
    the diff's memory pool, all put back after."""
    # The read-ahead threads run Python between their Parquet reads; each Arrow call of the walk
    # releases the GIL and then waits up to the switch interval (5 ms) to get it back.
    switch = sys.getswitchinterval()
    sys.setswitchinterval(min(switch, _SWITCH_S))
    pool = _diff_memory_pool()
    streams = [getattr(run, "tokens", None) for run in (baseline, candidate)]
    try:
        for s, text in zip(streams, (True, False)):
            if s is not None and hasattr(s, "read_ahead"):
                # items are walked in file order: the next row group is read meanwhile (with the
                # baseline's text layout, which a divergent item's character offset reads)
                s.read_ahead(text_layout=text)
        return _diff_items(baseline, candidate, b_by_id, c_by_id, common, tau, top_k)
    finally:
        for s in streams:
            if s is not None and hasattr(s, "close"):
                s.close()
        sys.setswitchinterval(switch)
        if pool is not None:
            import pyarrow as pa

            pa.set_memory_pool(pool)


def _with_drift(item: ItemDiff, summary: Any) -> ItemDiff:
    """dataclasses.replace(item, drift=summary), ~4 us instead of ~17 (replace runs the whole
    __init__ again; ItemDiff has no __post_init__ to run), once for every item of a diff."""
    import copy

    new = copy.copy(item)
    object.__setattr__(new, "drift", summary)
    return new


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
    with cyclic_gc_paused():
        items, streamed, drift = _walk(baseline, candidate, b_by_id, c_by_id, common, tau, top_k)
    sides = (_side(baseline, (b_by_id[i] for i in common), *streamed["baseline"]),
             _side(candidate, (c_by_id[i] for i in common), *streamed["candidate"]))
    notes += [w for w in (sides[0].greedy_warning("baseline"), sides[1].greedy_warning("candidate")) if w]
    return DiffResult(sides[0], sides[1], tau, tuple(items), tuple(notes), missing, drift=drift)


_SWITCH_S = 0.0005     # the GIL's switch interval during a diff (Python's default: 0.005)


def _diff_memory_pool() -> Any:
    """Decode the row groups with jemalloc (else the system allocator), not pyarrow's default
    mimalloc, for the diff; returns the pool to put back, None when nothing changed. Each group's
    ~30 MB of fresh buffers is freed once walked: mimalloc hands those pages back to the OS at
    once and faults them in again for the next group (1-3 s of system time for a diff of 2,000
    divergent items, wall ~1.5x); jemalloc keeps them (docs/performance.md)."""
    import pyarrow as pa

    old = pa.default_memory_pool()
    if old.backend_name != "mimalloc":
        return None
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:     # a pyarrow built without jemalloc
        pool = pa.system_memory_pool()
    pa.set_memory_pool(pool)
    return old


def _digests(baseline: Any, candidate: Any, item_id: str) -> tuple[list[Any], list[Any]] | None:
    pair = []
    for run in (baseline, candidate):
        tokens = getattr(run, "tokens", None)
        entry = tokens.digest(item_id) if tokens is not None and hasattr(tokens, "digest") else None
        if entry is None:
            return None
        pair.append(entry)
    return pair[0], pair[1]


def _columnar(run: Any, item_id: str) -> bool:
    tokens = getattr(run, "tokens", None)
    return tokens is not None and item_id not in tokens.inline


def format_diff(result: DiffResult, verbose_items: int = 20) -> str:
    """The text summary `evalsuite diff` prints."""
    b, c = result.baseline, result.candidate
    acc = lambda s: "-" if s.accuracy is None else f"{100 * s.accuracy:.1f}% ({s.n_correct}/{s.n - s.n_errors})"  # noqa: E731
    def serving(side: RunSide) -> str:
        said = [x for x in (side.speculation, side.stream) if x]
        return f" ({'; '.join(said)})" if said else ""
    lines = [f"baseline  {b.label}: {', '.join(b.endpoints)}{serving(b)}",
             f"candidate {c.label}: {', '.join(c.endpoints)}{serving(c)}",
             f"{len(result.items)} items, tau {result.tau:g} nats"]
    lines += [f"  note: {n}" for n in result.settings_notes]
    if result.missing:
        lines.append(f"  note: {len(result.missing)} item(s) recorded in only one run were skipped")
    lines.append("")
    lines.append(result.summary_line())
    if result.drift is not None:
        lines.append(result.drift.line())
        if result.drift.survival_line():
            lines.append(result.drift.survival_line())
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
