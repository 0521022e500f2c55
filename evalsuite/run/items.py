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
        items = limit_items(items, settings.limit, stratified=is_stratified(settings))
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


def is_stratified(settings: RunSettings) -> bool:
    """A preset (its items spread over subsets by design) or a pack asked with --per-subset."""
    from ..tasks.presets import PRESETS

    return settings.pack in PRESETS or settings.per_subset is not None


def limit_items(items: list, limit: int, stratified: bool = False) -> list:
    """The first `limit` items; of a stratified set, `limit` spread over its subsets instead:
    one item of each subset in turn (subsets in the order they first appear, items in file
    order), so each subset gets limit // n_subsets and the first subsets one more. Kept in the
    set's order. Without this, `agieval-zh1200 --limit 30` was 30 items of its first subset."""
    if not stratified or limit >= len(items):
        return items[:limit]
    by_subset: dict[str, list[int]] = {}
    for n, item in enumerate(items):
        by_subset.setdefault(item.subset, []).append(n)
    queues = list(by_subset.values())
    chosen: list[int] = []
    depth = 0
    while len(chosen) < limit:
        for queue in queues:
            if depth < len(queue) and len(chosen) < limit:
                chosen.append(queue[depth])
        depth += 1
    return [items[n] for n in sorted(chosen)]


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
