"""The speed half of the verdict: `evalsuite speed`, a llama-bench-style profile of any
OpenAI-compatible endpoint, measured on the packs' own text (docs/speed.md).

A profile: prompts sized by the server's own token counts (prompts.py, from text.py's
corpora), the measuring loop kept full at each concurrency (measure.py), the speculation
counters before and after each test, and rows -> table / JSON / HTML (rows.py, table.py,
html.py, plots.py); a session replayed turn by turn (replay.py, replay_rows.py); load by arrival
rate with goodput and the client's lag (load.py, load_rows.py). It asks endpoints, so it sits beside the run machinery, through one door
(endpoint.py); sweep.py profiles one server per setting, pack_sweep.py after each run of `evalsuite sweep
--speed`; its analyses (compare.py: two profiles; html.py: the page) read its JSON only.

From Python (other commands call it so: `lossless`, `sweep --speed`):

    from evalsuite.speed import SpeedSettings, profile, read_profile, compare_profiles
    p = profile(SpeedSettings(endpoint="http://127.0.0.1:8080/v1", pp=(512,), tg=(128,), runs=5))
    p.rows[0].name, p.rows[0].figure.mean, p.rows[0].figure.ci95      # "pp512", 1234.5, (1220.1, 1248.9)
    p.to_dict()                                                       # the JSON of `speed --json`
    compare_profiles(read_profile("off.json"), read_profile("on.json")).speedups

`await profile_async(settings)` inside a running event loop.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .rows import Profile
    from .settings import SpeedSettings

_NAMES = {
    "SpeedSettings": "settings", "Profile": "rows", "Row": "rows", "Stat": "rows", "Acceptance": "rows", "Soak": "rows",
    "read_profile": "rows", "write_profile": "rows", "ProfileError": "rows", "compare_profiles": "compare",
    "ProfileComparison": "compare", "Speedup": "compare", "profile_async": "command", "speed_main": "command",
}


def profile(settings: "SpeedSettings", echo: Any = None) -> "Profile":
    """Measure a whole profile (blocking). Raises evalsuite.errors.UsageError for bad settings or an
    endpoint that cannot be profiled."""
    import asyncio

    from .command import profile_async

    return asyncio.run(profile_async(settings, echo))


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        import importlib

        return getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    raise AttributeError(f"module 'evalsuite.speed' has no attribute {name!r}")
