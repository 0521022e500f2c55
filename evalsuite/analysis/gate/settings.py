"""The gate's settings: command-line values over [tool.evalsuite.gate] in the nearest
pyproject.toml over defaults, every one checked; GateInputError for what the gate cannot judge."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

CONFIG_KEYS = ("max_drop", "alpha", "min_items", "max_real", "max_errors", "max_undetermined", "equivalence_margin")


class GateInputError(ValueError):
    """Input the gate cannot judge: exit 2 with this message (and, for --json and --junit, the
    figures behind it: an underpowered gate's power, a settings mismatch's differences)."""

    def __init__(self, message: str, details: Mapping[str, Any] | None = None):
        super().__init__(message)
        self.details = dict(details or {})


@dataclass(frozen=True)
class GateSettings:
    max_drop: float                 # percentage points
    alpha: float = 0.05
    min_items: int = 1
    max_real: int | None = None     # None: no divergence check
    diff: Path | None = None
    config_file: Path | None = None  # where pyproject values came from, if anywhere
    max_errors: float | None = None  # errored candidate items allowed; None: no more than the baseline's
    max_errors_percent: bool = False  # max_errors is a percentage of the items
    allow_underpowered: bool = False
    max_undetermined: int | None = None  # with --diff: undetermined items allowed (default 0)
    equivalence_margin: float | None = None  # points: pass only when the paired CI lies inside ±margin
    diff_only: bool = False         # no run folders: only the diff JSON's counts are gated
    check_drop: bool = True         # False: --equivalence-margin without --max-drop (no drop check)
    use_judge: bool = False          # outcomes follow the judge where it decided (evalsuite/judge.py)
    allow_settings_mismatch: bool = False   # gate runs whose answers depend on other settings anyway (noted)



# ---------------------------------------------------------------------------- settings


def find_gate_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest pyproject.toml from `start` upward with a [tool.evalsuite.gate] table."""
    import tomllib

    for folder in [start, *start.parents]:
        path = folder / "pyproject.toml"
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise GateInputError(f"{path} cannot be read ({e})") from None
        table = data.get("tool", {}).get("evalsuite", {}).get("gate")
        if table is not None:
            if not isinstance(table, dict):
                raise GateInputError(f"{path}: [tool.evalsuite.gate] must be a table")
            return path, table
    return None


def _config_values(path: Path, table: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("-", "_")
        if key not in CONFIG_KEYS:
            raise GateInputError(f"{path}: unknown key {raw_key!r} in [tool.evalsuite.gate] "
                                 f"(known: {', '.join(CONFIG_KEYS)})")
        if key == "max_errors" and isinstance(value, str):
            values[key] = value   # "5" or "2%": checked with the command-line value
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise GateInputError(f"{path}: [tool.evalsuite.gate] {raw_key} must be a number, got {value!r}")
        values[key] = value
    return values


def resolve_settings(
    *, max_drop: float | None, alpha: float | None, min_items: int | None, max_real: int | None,
    diff: str | Path | None, config_start: Path | None = None, max_errors: str | float | None = None,
    allow_underpowered: bool = False, max_undetermined: int | None = None,
    equivalence_margin: float | None = None, diff_only: bool = False,
) -> GateSettings:
    """Command-line values over pyproject values over defaults; every value checked.
    `diff_only`: no run folders were given, only --diff: --max-drop is then not needed."""
    found = find_gate_config(Path(config_start) if config_start else Path.cwd())
    config_file, config = (found[0], _config_values(*found)) if found else (None, {})
    if max_real is not None and diff is None:
        raise GateInputError("--max-real needs --diff DIFF_JSON (the `evalsuite diff --json` output)")
    if max_undetermined is not None and diff is None:
        raise GateInputError("--max-undetermined needs --diff DIFF_JSON (the `evalsuite diff --json` output)")
    if diff_only and diff is None:
        raise GateInputError("give both --baseline RUN and --candidate RUN (or --diff DIFF_JSON for a "
                             "divergence-only gate)")
    if diff_only and equivalence_margin is not None:
        raise GateInputError("--equivalence-margin needs --baseline RUN and --candidate RUN (a diff JSON holds no "
                             "per-item outcomes)")
    pick = lambda name, given: given if given is not None else config.get(name)  # noqa: E731
    max_drop = pick("max_drop", max_drop)
    alpha = pick("alpha", alpha)
    min_items = pick("min_items", min_items)
    max_real = pick("max_real", max_real)
    max_undetermined = pick("max_undetermined", max_undetermined)
    equivalence_margin = pick("equivalence_margin", equivalence_margin)
    errors_limit, errors_percent = parse_max_errors(pick("max_errors", max_errors))
    if equivalence_margin is not None and (not math.isfinite(equivalence_margin) or equivalence_margin <= 0):
        raise GateInputError(f"--equivalence-margin must be > 0 percentage points, got {equivalence_margin}")
    check_drop = True
    if max_drop is None and (diff_only or equivalence_margin is not None):
        max_drop, check_drop = 0.0, False   # unused: the equivalence test (or the diff alone) decides
    if max_drop is None:
        raise GateInputError("no --max-drop given and none in [tool.evalsuite.gate] of a pyproject.toml")
    if not math.isfinite(max_drop) or max_drop < 0:
        raise GateInputError(f"--max-drop must be >= 0 percentage points, got {max_drop}")
    alpha = 0.05 if alpha is None else alpha
    if not 0 < alpha <= 1:
        raise GateInputError(f"--alpha must be in (0, 1], got {alpha}")
    if equivalence_margin is not None and not diff_only and alpha >= 0.5:
        raise GateInputError(f"--equivalence-margin needs --alpha below 0.5 (each one-sided test at α; got {alpha:g})")
    min_items = 1 if min_items is None else min_items
    if int(min_items) != min_items or min_items < 1:
        raise GateInputError(f"--min-items must be a whole number >= 1, got {min_items}")
    if max_real is not None and (int(max_real) != max_real or max_real < 0):
        raise GateInputError(f"--max-real must be a whole number >= 0, got {max_real}")
    if max_undetermined is not None and (int(max_undetermined) != max_undetermined or max_undetermined < 0):
        raise GateInputError(f"--max-undetermined must be a whole number >= 0, got {max_undetermined}")
    if diff is not None and max_real is None:
        max_real = 0   # a diff given without a limit: any real divergence fails
    if diff is not None and max_undetermined is None:
        max_undetermined = 0   # an undetermined item may hide a real divergence: a lossless gate allows none
    # a max_real in pyproject without --diff is simply unused: the diff check is opt-in per run
    return GateSettings(max_drop=float(max_drop), alpha=float(alpha), min_items=int(min_items),
                        max_real=None if diff is None else int(max_real), diff=Path(diff) if diff else None,
                        config_file=config_file, max_errors=errors_limit, max_errors_percent=errors_percent,
                        allow_underpowered=allow_underpowered,
                        max_undetermined=None if diff is None else int(max_undetermined),
                        equivalence_margin=None if equivalence_margin is None else float(equivalence_margin),
                        diff_only=diff_only, check_drop=check_drop)


def parse_max_errors(value: str | float | None) -> tuple[float | None, bool]:
    """--max-errors N (items) or P% (of the items): (limit, is_percent); (None, False) unset."""
    if value is None:
        return None, False
    text = str(value).strip()
    percent = text.endswith("%")
    try:
        number = float(text[:-1] if percent else text)
    except ValueError:
        raise GateInputError(f"--max-errors must be a count of items or a percentage like 2%, got {value!r}") from None
    if not math.isfinite(number) or number < 0 or (percent and number > 100) or (not percent and number != int(number)):
        raise GateInputError(f"--max-errors must be a whole number of items >= 0 or a percentage in [0, 100], "
                             f"got {value!r}")
    return number, percent


# ---------------------------------------------------------------------------- the runs' own settings


@dataclass(frozen=True)
class SettingsDifferences:
    """How two runs' manifests differ in what they were made with (docs/gate.md, "Runs made
    with other settings"). `refused`: differences that make an accuracy comparison meaningless
    (other items, another prompt, other decoding): the gate exits 2 on them unless
    --allow-settings-mismatch. `shown`: the point of a comparison (the endpoint, the model,
    the engine, the server's command and speculation flags) or what changes no answer (the
    seed of a greedy run, logprobs, streaming, concurrency): said, never refused."""

    refused: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.refused or self.shown)

    def to_dict(self) -> dict[str, Any]:
        return {"refused": list(self.refused), "shown": list(self.shown)}

    def words(self) -> str:
        """One sentence for a line or a note ("" when nothing differs)."""
        parts = []
        if self.refused:
            parts.append("settings that change the answers differ: " + "; ".join(self.refused))
        if self.shown:
            parts.append("compared across: " + "; ".join(self.shown))
        return ". ".join(parts)


def _short(value: Any, limit: int = 60) -> str:
    import json

    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _engines(manifest: Mapping[str, Any]) -> Any:
    engine = manifest.get("engine") or {}
    found = [(e.get("engine"), e.get("version")) for e in engine.get("endpoints") or () if isinstance(e, Mapping)]
    return [f"{name} {version}" if version else str(name) for name, version in found] or None


def _model_files(manifest: Mapping[str, Any]) -> Any:
    managed = (manifest.get("engine") or {}).get("managed") or {}
    models = [m.get("sha256") or m.get("name") or m.get("path") for m in managed.get("models") or ()
              if isinstance(m, Mapping)]
    return models or None


def settings_differences(a: Mapping[str, Any], b: Mapping[str, Any], name_a: str = "baseline",
                         name_b: str = "candidate") -> SettingsDifferences:
    """What differs between the manifests of two runs of the same pack (the pack itself and
    the dataset fingerprint are checked before this, with their own words)."""
    from ...lossless.diff_json import engine_setting

    refused: list[str] = []
    shown: list[str] = []

    def differ(out: list[str], what: str, x: Any, y: Any) -> None:
        if x != y:
            out.append(f"{what}: {name_a} {_short(x)} vs {name_b} {_short(y)}")

    differ(refused, "pack version", a.get("pack_version"), b.get("pack_version"))
    if sorted(a.get("item_ids") or ()) != sorted(b.get("item_ids") or ()):
        refused.append(f"item set: {name_a} {len(a.get('item_ids') or ())} items vs {name_b} "
                       f"{len(b.get('item_ids') or ())} (not the same ids)")
    differ(refused, "prompt template", a.get("template_hash"), b.get("template_hash"))
    la, lb = a.get("load") or {}, b.get("load") or {}
    differ(refused, "few-shot examples", la.get("fewshot"), lb.get("fewshot"))
    differ(refused, "api (prompt format)", a.get("api"), b.get("api"))
    da, db = a.get("decoding") or {}, b.get("decoding") or {}
    greedy = not (da.get("temperature") or 0) and not (db.get("temperature") or 0)
    for key in sorted((set(da) | set(db)) - {"extra_body"}):
        if key == "logprobs":
            differ(shown, "logprobs (reported, not generated)", da.get(key), db.get(key))
        elif key == "seed":
            differ(shown, "request seed" + (" (greedy: no effect)" if greedy else " (other samples)"),
                   da.get(key), db.get(key))
        else:
            differ(refused, f"decoding.{key}", da.get(key), db.get(key))
    ea, eb = da.get("extra_body") or {}, db.get("extra_body") or {}
    # what evalsuite sent to make an engine's temperature 0 greedy differs with the engine (docs/lossless.md)
    neutral = [((m.get("engine") or {}).get("neutral_sent") or {}) for m in (a, b)]
    for key in sorted(set(ea) | set(eb)):
        if ea.get(key) == eb.get(key):
            continue
        neutral_only = all(key not in eb_ or (key in sent and eb_[key] == sent[key])
                           for eb_, sent in ((ea, neutral[0]), (eb, neutral[1])))
        if neutral_only:
            differ(shown, f"extra_body.{key} (sent by evalsuite to make the engine greedy)", ea.get(key), eb.get(key))
        elif engine_setting(key):
            differ(shown, f"extra_body.{key} (speculation/engine setting)", ea.get(key), eb.get(key))
        else:
            differ(refused, f"extra_body.{key}", ea.get(key), eb.get(key))
    differ(shown, "samples per item", a.get("samples") or 1, b.get("samples") or 1)
    differ(shown, "model", a.get("model"), b.get("model"))
    differ(shown, "model file", _model_files(a), _model_files(b))
    differ(shown, "engine", _engines(a), _engines(b))
    ma, mb = (a.get("engine") or {}).get("managed") or {}, (b.get("engine") or {}).get("managed") or {}
    differ(shown, "server command", ma.get("command"), mb.get("command"))
    differ(shown, "endpoints", a.get("endpoints"), b.get("endpoints"))
    ca, cb = a.get("client") or {}, b.get("client") or {}
    if ca.get("stream") is not None and cb.get("stream") is not None:
        differ(shown, "streaming", ca.get("stream"), cb.get("stream"))
    differ(shown, "concurrency", ca.get("concurrency"), cb.get("concurrency"))
    differ(shown, "evalsuite version (graders)", a.get("suite_version"), b.get("suite_version"))
    return SettingsDifferences(tuple(refused), tuple(shown))
