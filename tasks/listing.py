"""`evalsuite tasks`: the packs and presets (and packs other packages add), their item counts and
where `run` would take their data from."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional


def tasks_main(data_dir: Optional[Path] = None, echo: Callable[[str], None] = print) -> int:
    """List the packs and presets, their item counts and where their data comes from."""
    import sys

    from . import get_pack, pack_names

    rows = []
    from .presets import PRESETS

    packs = [(name, get_pack(name)) for name in pack_names()] + [(name, make()) for name, make in PRESETS.items()]
    for name, pack in packs:
        rows.append((name, "" if pack.count is None else str(pack.count), pack.description, pack.source,
                     data_origin(pack.data_paths, data_dir, pack.bundled)))
    from .plugins import PluginError, plugin_packs

    broken = []
    for name, plugin in plugin_packs(set(pack_names()) | set(PRESETS)).items():   # other packages' packs
        try:
            pack = plugin.load()
        except PluginError as e:
            broken.append(str(e))
            continue
        rows.append((name, "" if pack.count is None else str(pack.count), pack.description,
                     f"{pack.source} -- from {plugin.source}", data_origin(pack.data_paths, data_dir, pack.bundled)))
    width = max(len(r[0]) for r in rows)
    echo(f"{'pack'.ljust(width)}  {'items':>6}  description / data")
    for name, count, desc, source, origin in rows:
        echo(f"{name.ljust(width)}  {count:>6}  {desc}")
        echo(f"{''.ljust(width)}  {'':>6}  data: {source}")
        if origin:
            echo(f"{''.ljust(width)}  {'':>6}  from: {origin}")
    for message in broken:
        print(f"skipped: {message}", file=sys.stderr)
    echo("your own questions: evalsuite run FILE.jsonl|.json|.csv|.parquet|.toml, or hf:OWNER/NAME (docs/own-data.md)")
    return 0


def data_origin(data_paths: Optional[tuple], data_dir: Optional[Path], bundled: tuple = ()) -> Optional[str]:
    """Where `run` would take a pack's data from, with this data folder (None: the pack does not say)."""
    if data_paths is None:
        return None
    if not data_paths:
        return "built in (no data files)"
    if data_dir is None and bundled and set(data_paths) <= set(bundled):
        return f"the package's copy of the official file ({', '.join(bundled)}; offline)"
    if data_dir is None:
        return "the hub / the pack's URLs (no --data-dir or EVALSUITE_DATA_DIR; offline, pass one)"
    missing = [p for p in data_paths if not (data_dir / p).exists()]
    if missing:
        return f"the local folder {data_dir}, which lacks {', '.join(missing)}: `run` would stop there"
    return f"the local folder {data_dir} ({', '.join(data_paths)})"
