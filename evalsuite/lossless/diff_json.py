"""The diff JSON (`evalsuite diff --json`) as the gate and the report read it: whether it was
made from the runs they were given, and its drift figures as the page draws them. The one door
from the analyses into the diff's data; it reads the file and the loaded runs only."""
from __future__ import annotations

from typing import Any, Sequence


def engine_setting(key: str) -> bool:
    """Whether an `extra_body` field is a speculation/engine setting, which the diff (and so the
    gate) lets two runs differ in: the point of the comparison, not another decoding."""
    from .tokens import ENGINE_KEYS

    return key in ENGINE_KEYS or key.startswith("speculative")


def drift_view(data: dict[str, Any]) -> dict[str, Any] | None:
    """The diff JSON's `drift` as the report page draws it (None when absent or not well-formed)."""
    from .drift import page_view, summary_from_dict

    return page_view(summary_from_dict(data.get("drift")))


def diff_json_mismatch_any(path: Any, runs: Sequence[Any]) -> str | None:
    """For `report --diff`: None when the diff JSON at `path` was made from the first run and
    one of the others, else why not. A JSON that cannot be read is left to the report to say."""
    import json
    from pathlib import Path

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or len(runs) < 2:
        return None
    reasons = [diff_json_mismatch(data, runs[0], other) for other in runs[1:]]
    return None if any(r is None for r in reasons) else reasons[0]


def diff_json_mismatch(data: dict[str, Any], baseline: Any, candidate: Any) -> str | None:
    """Why a diff JSON was not made from these two loaded runs (None when it was): the JSON names
    each run by dataset fingerprint and start time, which a copy or move of the folders keeps."""
    problems = []
    for role, run in (("baseline", baseline), ("candidate", candidate)):
        side = data.get(role) if isinstance(data.get(role), dict) else {}
        want = {"fingerprint": (run.manifest.get("dataset") or {}).get("fingerprint"),
                "started_at": run.manifest.get("started_at")}
        if "fingerprint" not in side or "started_at" not in side:
            problems.append(f"it does not name its {role} run (made by an older evalsuite)")
            continue
        for field_name, value in want.items():
            if side.get(field_name) != value:
                problems.append(f"its {role} has {field_name} {side.get(field_name)!r}, but {run.path} has {value!r}")
    if not problems:
        return None
    return "the diff JSON was not made from these runs: " + "; ".join(problems) + " (run `evalsuite diff` on them again)"
