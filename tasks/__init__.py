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
    known = ", ".join(pack_names() + sorted(presets.PRESETS))
    raise UnknownPackError(f"unknown pack {name!r}; known packs and presets: {known}")


__all__ = ["BadDataError", "Item", "LoadOptions", "Pack", "PACK_MODULES", "get_pack", "pack_names",
           "UnknownPackError"]
