"""Packs from other packages, through the entry-point group `evalsuite.packs`.

A package adds a pack by declaring, in its pyproject.toml,

    [project.entry-points."evalsuite.packs"]
    mypack = "mypackage.evalpack:PACK"

where the object named is a `Pack` (evalsuite.tasks.Pack) or a function returning one. Nothing
is imported until a plugin pack is asked for (`evalsuite tasks`, `evalsuite run mypack`): a plugin
that fails to import is named with its error and skipped, and breaks neither the other packs nor
`evalsuite --help`. A plugin cannot take a built-in pack's name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

GROUP = "evalsuite.packs"


@dataclass(frozen=True)
class PluginPack:
    name: str
    value: str          # "module:attribute"
    package: str        # the distribution that declared it ("?" when unknown)
    entry_point: Any

    @property
    def source(self) -> str:
        return f"package {self.package} (entry point {self.name} = {self.value})"

    def load(self):
        """The pack, or PluginError naming the plugin and what went wrong."""
        from .pack import Pack

        try:
            obj = self.entry_point.load()
            pack = obj if isinstance(obj, Pack) else obj()
        except Exception as e:
            raise PluginError(f"pack plugin {self.name!r} from {self.package} ({self.value}) failed to load: "
                              f"{type(e).__name__}: {e}") from None
        if not isinstance(pack, Pack):
            raise PluginError(f"pack plugin {self.name!r} from {self.package} ({self.value}) gave a "
                              f"{type(pack).__name__}, not an evalsuite.tasks.Pack")
        return pack


class PluginError(Exception):
    pass


def plugin_packs(builtin: set[str] | frozenset[str] = frozenset()) -> dict[str, PluginPack]:
    """The plugin packs installed, by name (not imported). Names taken by a built-in are left out."""
    from importlib.metadata import entry_points

    found: dict[str, PluginPack] = {}
    for ep in entry_points(group=GROUP):
        if ep.name in builtin or ep.name in found:
            continue
        dist = getattr(ep, "dist", None)
        package = f"{dist.metadata['Name']} {dist.version}" if dist is not None else "?"
        found[ep.name] = PluginPack(ep.name, ep.value, package, ep)
    return found
