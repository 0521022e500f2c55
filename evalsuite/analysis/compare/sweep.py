"""`compare --sweep KEY`: the runs ordered by one setting read from their manifests (numbers by
value, text in natural order), each against the first, with the other settings that differ."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ...store import Run
from .comparison import CompareError, Comparison, compare_runs
from ..paired import Paired
from ..run_stats import RunStats

# ---------------------------------------------------------------------------- sweeps


_MISSING = object()


def lookup(manifest: Mapping[str, Any], key: str) -> Any:
    """A setting by dotted key: tried in the manifest itself, then in `decoding`, then in
    `decoding.extra_body` (so `thinking_budget`, `max_tokens` and `label` all work)."""
    for root in (manifest, manifest.get("decoding") or {}, (manifest.get("decoding") or {}).get("extra_body") or {}):
        node: Any = root
        for part in key.split("."):
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            else:
                node = _MISSING
                break
        if node is not _MISSING:
            return node
    return _MISSING


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, Mapping):
        flat: dict[str, Any] = {}
        for k, v in data.items():
            flat.update(_flatten(v, f"{prefix}{k}."))
        return flat
    return {prefix.rstrip("."): json.dumps(data, sort_keys=True, default=str)}


def sweep_order_key(value: Any) -> tuple:
    """Numbers by value; text in natural order ("IQ2" < "IQ3_S" < "Q4_K_M", "d2" < "d10")."""
    if isinstance(value, bool):
        return (1, [(0, int(value), "")])
    if isinstance(value, (int, float)):
        return (0, float(value))
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    return (1, [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text) if p])


@dataclass(frozen=True)
class SweepRow:
    value: Any
    run: RunStats
    paired_vs_first: Paired | None


@dataclass(frozen=True)
class Sweep:
    key: str
    rows: tuple[SweepRow, ...]
    also_differ: tuple[str, ...]        # other settings that are not the same in every run


def sweep(runs: Sequence[Run], key: str, alpha: float = 0.05) -> tuple[Sweep, Comparison]:
    values = [lookup(r.manifest, key) for r in runs]
    lacking = [r.name for r, v in zip(runs, values) if v is _MISSING]
    if lacking:
        raise CompareError(f"sweep key {key!r} is not in the manifest (nor in decoding / decoding.extra_body) "
                           f"of: {', '.join(lacking)}")
    mixed_types = {isinstance(v, (int, float)) and not isinstance(v, bool) for v in values}
    order = sorted(range(len(runs)),
                   key=(lambda i: sweep_order_key(str(values[i]))) if len(mixed_types) > 1 else (lambda i: sweep_order_key(values[i])))
    ordered = [runs[i] for i in order]
    cmp = compare_runs(ordered, alpha=alpha)
    settings = [_flatten({"decoding": r.manifest.get("decoding") or {}, "model": r.manifest.get("model"),
                          "label": r.manifest.get("label")}) for r in ordered]
    swept = {key, f"decoding.{key}", f"decoding.extra_body.{key}"}
    names = sorted({k for s in settings for k in s})
    also = tuple(k for k in names if k not in swept and k != "label" and len({s.get(k) for s in settings}) > 1)
    rows = tuple(SweepRow(values[i], stats, cmp.pairs[n - 1] if n else None)
                 for n, (i, stats) in enumerate(zip(order, cmp.runs)))
    return Sweep(key=key, rows=rows, also_differ=also), cmp
