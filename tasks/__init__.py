"""Task packs. Each pack is one module in this folder ending with `PACK = Pack(...)`.

The names below are the whole list: importing this package imports no pack, so
`evalsuite tasks` and `evalsuite --help` stay instant.
"""
from __future__ import annotations

import importlib

from .pack import BadDataError, Item, LoadOptions, Pack

# pack name -> module in this folder
PACK_MODULES: dict[str, str] = {
    "gsm8k": "gsm8k",
    "math500": "math500",
    "agieval": "agieval",
    "ceval": "ceval",
    "cmmlu": "cmmlu",
    "svg": "svg",
}


class UnknownPackError(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; say it plainly
        return str(self.args[0])


def pack_names() -> list[str]:
    return list(PACK_MODULES)


def get_pack(name: str) -> Pack:
    """The pack called `name`, or a preset (see tasks/presets.py) that names one."""
    if name in PACK_MODULES:
        module = importlib.import_module(f"{__name__}.{PACK_MODULES[name]}")
        return module.PACK
    presets = importlib.import_module(f"{__name__}.presets")
    if name in presets.PRESETS:
        return presets.PRESETS[name]()
    from .plugins import PluginError, plugin_packs

    plugins = plugin_packs(set(PACK_MODULES) | set(presets.PRESETS))
    if name in plugins:
        try:
            return plugins[name].load()
        except PluginError as e:
            raise UnknownPackError(str(e)) from None
    known = ", ".join(pack_names() + sorted(presets.PRESETS) + sorted(plugins))
    raise UnknownPackError(f"unknown pack {name!r}; known packs and presets: {known} "
                           f"(or a file: questions.jsonl / .json / .csv / .parquet / .toml, or hf:OWNER/NAME)")


def open_pack(name: str, file_options=None) -> Pack:
    """`evalsuite run NAME`'s pack: a file or hub dataset (tasks/file.py), else get_pack(name)."""
    from .file import is_file_pack, open_file_pack

    if name not in PACK_MODULES and is_file_pack(name):
        return open_file_pack(name, file_options)
    return get_pack(name)


def pack_for_manifest(manifest) -> Pack:
    """The pack a run was made with, from its manifest alone: a file pack from the spec it kept."""
    spec = manifest.get("pack_spec")
    if spec:
        from .file import pack_from_spec

        return pack_from_spec(spec)
    return get_pack(manifest["pack"])


__all__ = ["BadDataError", "Item", "LoadOptions", "Pack", "PACK_MODULES", "get_pack", "pack_names",
           "UnknownPackError", "open_pack", "pack_for_manifest"]
