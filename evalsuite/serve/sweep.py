"""`evalsuite sweep PACK --serve "llama-server -m {model} --port {port}" --set model=q4.gguf,iq3_s.gguf`

One managed server at a time (evalsuite.serve), one ordinary run folder per setting, then the
`compare` table and one report of them all. A setting is one value for every placeholder: the
values of several `--set NAME=V1,V2` are crossed (in the order given), or a TOML file lists them:

    [set]                       # crossed, like --set
    model = ["q4.gguf", "iq3_s.gguf"]

    [[setting]]                 # or one table per setting (with an optional label)
    model = "q4.gguf"
    label = "Q4_K_M"

ROOT/sweep.json names the settings and their folders (ROOT/01-q4, ROOT/02-iq3_s, ...); started
again with the same ROOT (--run-dir ROOT or --resume ROOT, or --resume with one of its run
folders, which is what an interrupted run prints), a finished setting is not run again and an
unfinished one is resumed. Every other option is the `evalsuite run` option of the same name,
passed to each run as is.
"""
from __future__ import annotations

import itertools
import json
import re
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import UsageError
from ..store import MANIFEST, read_manifest, write_json_atomic

SWEEP_FILE = "sweep.json"
RESERVED = ("port",)
REFUSED_RUN_OPTIONS = ("--endpoint", "-e", "--serve", "--run-dir", "--resume", "--label")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


@dataclass(frozen=True)
class Setting:
    values: tuple[tuple[str, str], ...]
    label: str
    folder: str

    def to_dict(self) -> dict[str, Any]:
        return {"values": dict(self.values), "label": self.label, "folder": self.folder}


def _check_name(name: str, where: str) -> str:
    if not _NAME.match(name) or name in RESERVED:
        raise UsageError(f"{where}: {name!r} cannot be a placeholder name (letters, digits, _; not {', '.join(RESERVED)})")
    return name


def parse_sets(sets: Sequence[str]) -> dict[str, list[str]]:
    """--set NAME=V1,V2 (repeatable) -> {NAME: [V1, V2]}."""
    axes: dict[str, list[str]] = {}
    for text in sets:
        name, eq, values = text.partition("=")
        name = name.strip()
        if not eq or not values.strip():
            raise UsageError(f"--set {text!r}: write NAME=VALUE1,VALUE2 (e.g. --set model=q4.gguf,iq3_s.gguf)")
        _check_name(name, f"--set {text!r}")
        if name in axes:
            raise UsageError(f"--set {name} is given twice: put all its values in one --set {name}=V1,V2")
        axes[name] = [v.strip() for v in values.split(",") if v.strip()]
    return axes


def read_settings_file(path: Path) -> tuple[dict[str, list[str]], list[dict[str, str]]]:
    """(crossed axes from [set], explicit settings from [[setting]]) of a TOML file."""
    import tomllib

    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise UsageError(f"--settings {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"--settings {path} is not valid TOML: {e}") from None
    unknown = set(data) - {"set", "setting"}
    if unknown:
        raise UsageError(f"--settings {path}: unknown section(s) {sorted(unknown)}; use [set] or [[setting]]")
    axes = {}
    for name, values in (data.get("set") or {}).items():
        _check_name(name, f"--settings {path} [set]")
        values = values if isinstance(values, list) else [values]
        axes[name] = [str(v) for v in values]
    explicit = []
    for n, table in enumerate(data.get("setting") or (), 1):
        if not isinstance(table, dict) or not table:
            raise UsageError(f"--settings {path}: setting {n} is not a table of NAME = VALUE")
        explicit.append({str(k) if k == "label" else _check_name(str(k), f"--settings {path} setting {n}"): str(v)
                         for k, v in table.items()})
    return axes, explicit


def _short(value: str) -> str:
    """A model path reads as its file name without the extension."""
    if "/" in value or value.lower().endswith((".gguf", ".safetensors", ".bin")):
        p = Path(value)
        return p.stem if p.suffix else p.name
    return value


def label_of(values: dict[str, str], names: Sequence[str]) -> str:
    if len(names) == 1:
        return _short(values[names[0]])
    return " ".join(f"{n}={_short(values[n])}" for n in names)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text).strip("_")[:60] or "setting"


def make_settings(axes: dict[str, list[str]], explicit: Sequence[dict[str, str]]) -> list[Setting]:
    rows: list[dict[str, str]] = []
    if axes:
        names = list(axes)
        for combo in itertools.product(*(axes[n] for n in names)):
            rows.append(dict(zip(names, combo)))
    rows += [dict(r) for r in explicit]
    if not rows:
        raise UsageError("a sweep needs settings: --set NAME=V1,V2 (repeatable) or --settings FILE.toml")
    names = [n for n in dict.fromkeys(k for r in rows for k in r) if n != "label"]
    out, labels = [], set()
    for n, row in enumerate(rows, 1):
        missing = [k for k in names if k not in row]
        if missing:
            raise UsageError(f"setting {n} ({row}) has no value for {', '.join(missing)}")
        values = tuple((k, row[k]) for k in names)
        label = row.get("label") or label_of(dict(values), names)
        if label in labels:
            raise UsageError(f"two settings have the label {label!r}: give each [[setting]] its own label")
        labels.add(label)
        out.append(Setting(values, label, f"{n:02d}-{_slug(label)}"))
    return out


def sweep_root(run_dir: Path | None, resume: Path | None, pack: str) -> Path:
    if resume is not None:
        path = Path(resume)
        if (path / MANIFEST).exists() and (path.parent / SWEEP_FILE).exists():
            return path.parent   # one of its run folders, as an interrupted run prints it
        return path
    return run_dir or Path("results") / f"sweep-{pack}-{time.strftime('%Y%m%d-%H%M%S')}"


def check_placeholders(serve: str, settings: Sequence[Setting]) -> None:
    from .command import _PLACEHOLDER

    used = set(_PLACEHOLDER.findall(serve)) - set(RESERVED)
    given = {k for k, _ in settings[0].values}
    if used - given:
        raise UsageError(f"the --serve command uses {', '.join('{' + n + '}' for n in sorted(used - given))} but no "
                         f"--set gives it")
    if given - used:
        raise UsageError(f"--set {', '.join(sorted(given - used))}: the --serve command has no "
                         f"{', '.join('{' + n + '}' for n in sorted(given - used))} placeholder to put it in")


def prepare_root(root: Path, pack: str, serve: str, settings: Sequence[Setting], resume: bool,
                 run_args: Sequence[str] = ()) -> None:
    # the run options too: a finished setting is not run again, so the others must be run alike
    plan = {"pack": pack, "serve": serve, "settings": [s.to_dict() for s in settings],
            "run_args": [a for a in run_args if a not in ("--quiet", "-q")]}
    path = root / SWEEP_FILE
    if path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        if {k: old.get(k) for k in plan} != plan:
            differ = [k for k in plan if old.get(k) != plan[k]]
            raise UsageError(f"{root} holds another sweep ({path}: pack {old.get('pack')!r}, serve {old.get('serve')!r}, "
                             f"{len(old.get('settings') or ())} settings, run options {old.get('run_args')}; this "
                             f"command differs in {', '.join(differ)}); give another --run-dir, or the same --serve, "
                             f"settings and run options to continue it")
        return
    if resume:
        raise UsageError(f"cannot resume {root}: it has no {SWEEP_FILE} (not a sweep folder)")
    root.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, dict(plan, created_at=time.strftime("%Y-%m-%dT%H:%M:%S%z")))


def status_of(folder: Path) -> str | None:
    try:
        return read_manifest(folder).get("status")
    except Exception:
        return None


def sweep_main(pack: str, serve: str, sets: Sequence[str], settings_file: Path | None, run_args: Sequence[str],
               run_command: Callable[[list[str]], int], run_dir: Path | None = None, resume: Path | None = None,
               report: Path | None = None, quiet: bool = False, speed: Any = None) -> int:
    """The `evalsuite sweep` command: 0 all finished cleanly, 1 some items ended in errors, 2 bad
    usage, 3 / 130 a run stopped or was interrupted (started again, the sweep goes on from there).
    `run_command(args)`: `evalsuite run ARGS` in this process, its exit code (from the CLI).
    `speed` (`sweep --speed`): a function making the speed.pack_sweep.SweepSpeed (it checks the
    --speed-* options: a UsageError, exit 2); after each setting's run, `speed.profile` measures the
    same server command, and `speed.table` puts the profiles' main figures beside the runs'
    accuracy in one table after the compare."""
    from .command import fill_placeholders

    try:
        if resume and run_dir:
            raise UsageError("give either --run-dir or --resume, not both")
        for word in run_args:
            if word.split("=", 1)[0] in REFUSED_RUN_OPTIONS:
                raise UsageError(f"{word.split('=', 1)[0]} is the sweep's own: --serve/--run-dir/--resume of the sweep "
                                 f"itself; each run's --label is its setting")
        axes = parse_sets(sets)
        explicit: list[dict[str, str]] = []
        if settings_file is not None:
            file_axes, explicit = read_settings_file(settings_file)
            for name in set(file_axes) & set(axes):
                raise UsageError(f"{name} is given by --set and by --settings {settings_file}: give it once")
            axes.update(file_axes)
        settings = make_settings(axes, explicit)
        speed = speed() if speed is not None else None   # before any run: bad --speed-* options are exit 2
        check_placeholders(serve, settings)
        root = sweep_root(run_dir, resume, pack)
        prepare_root(root, pack, serve, settings, resume is not None, run_args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    codes = []
    speed_codes: dict[str, int] = {}
    for n, s in enumerate(settings, 1):
        folder = root / s.folder
        status = status_of(folder)
        values = dict(s.values, port="{port}")
        command = shlex.join(fill_placeholders(w, values) for w in shlex.split(serve))
        if status == "finished":
            if not quiet:
                print(f"[{n}/{len(settings)}] {s.label}: finished before, not run again ({folder})", file=sys.stderr)
            codes.append(EXIT_OK)
            if speed is not None:
                speed_codes[s.label] = speed.profile(s, command, root, f"[{n}/{len(settings)}]")
                if speed_codes[s.label] == EXIT_INTERRUPTED:
                    return EXIT_INTERRUPTED
            continue
        if not quiet:
            print(f"[{n}/{len(settings)}] {s.label}: {'resuming' if status else 'running'} -> {folder}", file=sys.stderr)
        # through the `evalsuite run` command itself: every run option, as typed
        code = run_command([pack, *run_args, "--serve", command, "--label", s.label]
                           + (["--resume", str(folder)] if status is not None else ["--run-dir", str(folder)]))
        codes.append(code)
        if code not in (EXIT_OK, EXIT_ERRORS):
            print(f"sweep: the run of {s.label} ended with exit {code}; {n - 1} setting(s) before it are finished. "
                  f"To go on: the same command with --resume {root}", file=sys.stderr)
            return code
        if speed is not None:   # after the run has stopped its server: the profile starts the same command again
            speed_codes[s.label] = speed.profile(s, command, root, f"[{n}/{len(settings)}]")
        if speed_codes.get(s.label) == EXIT_INTERRUPTED:   # Ctrl-C in a profile stops the sweep, as in a run
            print(f"sweep: interrupted in the speed profile of {s.label}; to go on: the same command with --resume "
                  f"{root}", file=sys.stderr)
            return EXIT_INTERRUPTED
    folders = [root / s.folder for s in settings]
    from ..analysis.compare.tables import compare_main
    from ..analysis.report import report_main

    print(f"\nsweep of {len(settings)} settings in {root}:")
    compare_main(folders, json_path=root / "compare.json")
    report_main(folders, report or root / "report.html", title=f"evalsuite sweep: {pack}, "
                + " vs ".join(s.label for s in settings))
    if speed is not None:
        print("")
        print(speed.table(settings, root, speed_codes))
        if any(c != EXIT_OK for c in speed_codes.values()):
            codes.append(EXIT_ERRORS)
    return EXIT_ERRORS if EXIT_ERRORS in codes else EXIT_OK
