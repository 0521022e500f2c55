"""What a run asks: the pack's items (loaded, limited, spread over subsets), the jobs (an item,
or an item and its sample index), and the request each job sends."""
from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any, Sequence

from ..client.exchange import Decoding, Request
from ..errors import UsageError
from .settings import RunSettings
from ..store import SAMPLE_SEP


def find_pack(settings: RunSettings):
    from ..tasks import BadDataError, UnknownPackError, open_pack

    try:
        return open_pack(settings.pack, settings.file_options)
    except (UnknownPackError, BadDataError) as e:
        raise UsageError(str(e)) from None


def load_items(settings: RunSettings, pack=None):
    from ..tasks import BadDataError, LoadOptions

    pack = pack or find_pack(settings)
    opts = LoadOptions(data_dir=settings.data_dir, subsets=settings.subsets, skip_bad_rows=settings.skip_bad_rows,
                       fewshot=settings.fewshot, per_subset=settings.per_subset, seed=settings.seed)
    try:
        items = pack.load(opts)
    except BadDataError as e:
        raise UsageError(str(e)) from None
    if opts.skipped:   # --skip-bad-rows: said, and kept in the manifest (manifest.make_manifest)
        settings = replace(settings, skipped_rows=tuple(opts.skipped))
        print(skipped_rows_line(opts.skipped), file=sys.stderr)
    if settings.limit is not None:
        whole = items
        items = limit_items(whole, settings.limit, seed=settings.seed)
        if not settings.quiet and len(items) < len(whole):
            note = limit_note(whole, items, settings.limit, settings.seed)
            if note:
                print(note, file=sys.stderr)
    if settings.decoding.max_tokens is None:  # the pack's default, recorded in the manifest like any setting
        settings = replace(settings, decoding=replace(settings.decoding, max_tokens=pack.max_tokens))
    if not items:
        raise UsageError(f"{settings.pack}: no items to run (check --subset / --limit)")
    ids = [i.id for i in items]
    if len(set(ids)) != len(ids):
        raise UsageError(f"{settings.pack}: item ids are not unique")
    if settings.samples > 1 and any(SAMPLE_SEP in i for i in ids):
        bad = next(i for i in ids if SAMPLE_SEP in i)
        raise UsageError(f"{settings.pack}: item id {bad!r} holds the character U+001F, which --samples keys use")
    return pack, items, settings


def skipped_rows_line(skipped: Sequence[tuple[str, str]], shown: int = 5) -> str:
    """The rows --skip-bad-rows left out, the first few by where they are and why."""
    head = "; ".join(f"{where}: {why}" for where, why in skipped[:shown])
    more = f"; and {len(skipped) - shown} more" if len(skipped) > shown else ""
    return (f"skipped {len(skipped)} bad row{'s' if len(skipped) != 1 else ''} (--skip-bad-rows; kept in the "
            f"manifest's skipped_rows): {head}{more}")


def limit_items(items: list, limit: int, seed: int = 0) -> list:
    """At most `limit` items. Of a set with one subset, the first `limit` (a pack in its file's
    order). Of several subsets (an exam pack, a preset, --per-subset), a sample spread evenly over
    them, seeded: each subset gets limit // n_subsets items and limit % n_subsets of them, chosen by
    the seed, one more; a subset with fewer items than its share leaves the rest to the others;
    inside a subset the items are a seeded sample, not its first ones. Kept in the set's order.
    Without this, `--limit 30` on an exam pack was 30 items of its first subject (issue 42)."""
    import random

    by_subset: dict[str, list[int]] = {}
    for n, item in enumerate(items):
        by_subset.setdefault(item.subset, []).append(n)
    if limit >= len(items) or len(by_subset) <= 1:
        return items[:limit]
    rng = random.Random(f"evalsuite --limit, seed {seed}")   # a string seed: the same on every machine
    groups = list(by_subset.values())
    shares, left = [0] * len(groups), limit
    while left > 0:
        room = [g for g in range(len(groups)) if shares[g] < len(groups[g])]
        each, extra = divmod(left, len(room))
        lucky = set(rng.sample(room, extra))
        for g in room:
            taken = min(each + (g in lucky), len(groups[g]) - shares[g])
            shares[g] += taken
            left -= taken
    chosen = [n for group, share in zip(groups, shares) for n in rng.sample(group, share)]
    return [items[n] for n in sorted(chosen)]


def limit_note(whole: list, items: list, limit: int, seed: int) -> str | None:
    """What --limit took of a set with several subsets (said before the run; `show` lists them)."""
    subsets = {i.subset for i in whole}
    if len(subsets) <= 1:
        return None
    covered = {i.subset for i in items}
    return (f"--limit {limit}: {len(items)} of {len(whole):,} items, a sample seeded by --seed {seed} spread over "
            f"{len(covered)} of the {len(subsets)} subsets")


def jobs_of(items, samples: int) -> list[tuple[Any, int | None]]:
    """What the workers ask: (item, sample index), N per item in a sampled run, (item, None)
    otherwise (records without a `sample` field, exactly as before sampling existed)."""
    if samples <= 1:
        return [(item, None) for item in items]
    return [(item, j) for item in items for j in range(samples)]


def sample_decoding(decoding: Decoding, sample: int | None) -> Decoding:
    """Sample j goes out with seed = the run's request seed + j: the N answers differ, and a
    rerun asks exactly the same N requests (docs/sampling.md)."""
    if sample is None or decoding.seed is None:
        return decoding
    return replace(decoding, seed=decoding.seed + sample)


def build_request(pack, item, api: str) -> Request:
    from ..tasks.pack import prompt_text

    messages = tuple(pack.prompt(item))
    if api == "chat":
        if pack.system:
            messages = ({"role": "system", "content": pack.system},) + messages
        return Request(item_id=item.id, messages=messages)
    return Request(item_id=item.id, prompt=prompt_text(messages))
