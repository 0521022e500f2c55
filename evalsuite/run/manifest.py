"""The run folder's manifest and resuming: what a run was made with, whether a resume may
continue it (same items, prompts and decoding), and the command that resumes it.

`settings` here is the runner's RunSettings (evalsuite.run.settings), passed in: this module sits
below the runner and does not import it.
"""
from __future__ import annotations

from typing import Any

from .. import __version__
from ..client.endpoint import now_iso, redact_url
from ..errors import UsageError
from .resume import resume_command
from ..store import MANIFEST, MANIFEST_SCHEMA, RECORDS, read_manifest, read_records, record_key


SKIPPED_KEPT = 20   # skipped rows the manifest names (the count is of all of them)


def make_manifest(settings: Any, pack, items, served_models: dict[str, list[str]], model: str) -> dict[str, Any]:
    from ..tasks.pack import dataset_fingerprint

    manifest = {
        "schema": MANIFEST_SCHEMA,
        "suite_version": __version__,
        "pack": settings.pack,
        "pack_version": pack.version,
        "template_hash": pack.template_hash(settings.fewshot),
        "load": {"subsets": list(settings.subsets), "fewshot": settings.fewshot, "per_subset": settings.per_subset,
                 "seed": settings.seed, "limit": settings.limit,
                 "data_dir": str(settings.data_dir) if settings.data_dir else None},
        "dataset": {"fingerprint": dataset_fingerprint(items), "n_items": len(items), "source": pack.source},
        "item_ids": [i.id for i in items],
        "api": settings.api,
        "endpoints": [redact_url(u) for u in settings.endpoints],
        "model": model,
        "served_models": served_models,
        "decoding": settings.decoding.to_dict(),
        "client": {"concurrency": settings.concurrency, "timeout": settings.timeout,
                   "max_retries": settings.retry.max_retries, "max_downtime": settings.max_downtime,
                   "stream": getattr(settings, "stream", None)},   # logprob shapes differ streamed / unstreamed
        "label": settings.label,
        "started_at": now_iso(),
        "ended_at": None,
        "status": "running",
        "argv": list(settings.argv),
        # answers per item (`run --samples N`); absent: 1, as in every run before it (docs/sampling.md)
        **({"samples": settings.samples} if getattr(settings, "samples", 1) > 1 else {}),
    }
    skipped = getattr(settings, "skipped_rows", ())
    if skipped:   # --skip-bad-rows: how many rows were left out, and the first of them (absent: none)
        manifest["skipped_rows"] = {"count": len(skipped),
                                    "first": [{"where": w, "why": y} for w, y in skipped[:SKIPPED_KEPT]]}
    # subset -> category of the subsets run, so `show` reads them from the folder (absent: none)
    used = {i.subset for i in items}
    categories = {s: c for s, c in sorted((getattr(pack, "categories", None) or {}).items()) if s in used}
    if categories:
        manifest["categories"] = categories
    if pack.spec:
        # a user's file or hub dataset (tasks/file.py): named by the file, not by the path given, so
        # two machines agree; the spec (fields, kind, template, sha256 / hub fingerprint) rebuilds it
        manifest["pack"] = pack.name
        manifest["pack_spec"] = dict(pack.spec)
        manifest["dataset"].update({k: pack.spec[k] for k in ("sha256", "hub_fingerprint") if pack.spec.get(k)})
    return manifest


def manifest_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What makes a resume unsafe: other items, another prompt, other decoding."""
    diffs = []
    if old.get("pack") != new.get("pack"):
        diffs.append(f"pack: {old.get('pack')} -> {new.get('pack')}")
    if old.get("dataset", {}).get("fingerprint") != new["dataset"]["fingerprint"]:
        diffs.append(f"dataset fingerprint: {old.get('dataset', {}).get('fingerprint', '?')[:12]} ({old.get('dataset', {}).get('n_items')} items)"
                     f" -> {new['dataset']['fingerprint'][:12]} ({new['dataset']['n_items']} items): the items or their data changed")
    if old.get("template_hash") != new["template_hash"]:
        diffs.append(f"prompt template: {old.get('template_hash')} -> {new['template_hash']}")
    if old.get("api") != new["api"]:
        diffs.append(f"api: {old.get('api')} -> {new['api']}")
    old_dec, new_dec = old.get("decoding", {}), new["decoding"]
    for key in sorted(set(old_dec) | set(new_dec)):
        if old_dec.get(key) != new_dec.get(key):
            diffs.append(f"decoding.{key}: {old_dec.get(key)!r} -> {new_dec.get(key)!r}")
    if (old.get("samples") or 1) != (new.get("samples") or 1):
        diffs.append(f"samples: {old.get('samples') or 1} -> {new.get('samples') or 1}")
    if old.get("model") != new.get("model"):
        diffs.append(f"model: {old.get('model')} -> {new.get('model')}")
    return diffs


def prepare_run_dir(settings: Any, manifest: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict]]:
    """Returns (the manifest to write, the records already there)."""
    run_dir = settings.run_dir
    records_path = run_dir / RECORDS
    if settings.resume:
        if not (run_dir / MANIFEST).exists():
            raise UsageError(f"cannot resume {run_dir}: it has no {MANIFEST} (not a run folder)")
        old = read_manifest(run_dir)
        diffs = manifest_differences(old, manifest)
        if diffs:
            raise UsageError(f"cannot resume {run_dir}: it was made with other settings:\n  " + "\n  ".join(diffs))
        done = {record_key(r): r for r in read_records(records_path)}
        merged = dict(old)
        merged.update({"status": "running", "ended_at": None, "endpoints": manifest["endpoints"],
                       "served_models": manifest["served_models"], "client": manifest["client"]})
        if "categories" in manifest:   # a folder made before the manifest kept them
            merged.setdefault("categories", manifest["categories"])
        merged.setdefault("resumed_at", [])
        merged["resumed_at"] = list(merged["resumed_at"]) + [now_iso()]
        return merged, done
    if records_path.exists() and records_path.stat().st_size > 0:
        raise UsageError(f"{run_dir} already holds records. To continue that run:\n  "
                         f"{resume_command(settings.argv, run_dir)}\nor choose another --run-dir.")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        probe = run_dir / ".write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as e:
        raise UsageError(f"cannot write to the run folder {run_dir}: {e.strerror or e}") from None
    return manifest, {}
