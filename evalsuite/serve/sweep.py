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

from ..client.errors import UsageError
from ..store import MANIFEST, read_manifest, write_json_atomic

SWEEP_FILE = "sweep.json"
RESERVED = ("port",)
REFUSED_RUN_OPTIONS = ("--endpoint", "-e", "--serve", "--run-dir", "--resume", "--label")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


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
    `speed` (`sweep --speed`): a SpeedSettings; after each setting's run, a speed profile of the
    same server command (speed_of_setting), its main figures in one table after the compare."""
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
                speed_codes[s.label] = speed_of_setting(speed, s, command, root, run_args, quiet, f"[{n}/{len(settings)}]")
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
            speed_codes[s.label] = speed_of_setting(speed, s, command, root, run_args, quiet, f"[{n}/{len(settings)}]")
    folders = [root / s.folder for s in settings]
    from ..analysis.compare.tables import compare_main
    from ..analysis.report import report_main

    print(f"\nsweep of {len(settings)} settings in {root}:")
    compare_main(folders, json_path=root / "compare.json")
    report_main(folders, report or root / "report.html", title=f"evalsuite sweep: {pack}, "
                + " vs ".join(s.label for s in settings))
    if speed is not None:
        print("")
        print(speed_table(speed, settings, root, speed_codes))
        if any(c != EXIT_OK for c in speed_codes.values()):
            codes.append(EXIT_ERRORS)
    return EXIT_ERRORS if EXIT_ERRORS in codes else EXIT_OK


# ---------------------------------------------------------------------------- sweep --speed


def speed_settings(*, pp: int, tg: int, depth: str, runs: int, workload: str | None, run_args: Sequence[str]):
    """`sweep --speed`'s profile, as SpeedSettings: its size from the --speed-* options, and the
    run options a profile shares with the runs (--data-dir for the packs' text, --model, --api,
    --timeout). Raises UsageError naming the option."""
    from ..speed.settings import SpeedSettings, check, parse_ints, parse_workloads

    shared = _run_options(run_args, ("--data-dir", "--model", "--api", "--timeout"))
    import os

    data_dir = shared.get("--data-dir") or os.environ.get("EVALSUITE_DATA_DIR")
    try:
        timeout = float(shared.get("--timeout") or 600.0)
    except ValueError:
        raise UsageError(f"--timeout {shared['--timeout']!r} is not a number of seconds") from None
    settings = SpeedSettings(pp=parse_ints(str(pp), "--speed-pp", 1, (128,)), tg=parse_ints(str(tg), "--speed-tg", 1, (32,)),
                             depth=parse_ints(depth, "--speed-depth", 0, (0,)), runs=runs,
                             workloads=parse_workloads(workload), data_dir=Path(data_dir) if data_dir else None,
                             model=shared.get("--model"), api=shared.get("--api") or "chat", timeout=timeout,
                             output="none", quiet=True)
    check(settings)
    return settings


def _run_options(run_args: Sequence[str], names: Sequence[str]) -> dict[str, str]:
    """The values of these options among the run's arguments (`--x V` or `--x=V`)."""
    found: dict[str, str] = {}
    words = list(run_args)
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name in names:
            if eq:
                found[name] = value
            elif i + 1 < len(words):
                found[name] = words[i + 1]
    return found


def speed_path(root: Path, setting: Setting) -> Path:
    return root / f"{setting.folder}.speed.json"


def speed_of_setting(speed: Any, setting: Setting, command: str, root: Path, run_args: Sequence[str], quiet: bool,
                     where: str) -> int:
    """One speed profile of the setting's server command (started again: the run stopped it),
    to ROOT/NN-label.speed.json, its server log in ROOT/NN-label.speed/; a profile finished
    before is not measured again. Its exit code (0 measured cleanly); a profile that fails
    never stops the sweep: its row says why."""
    from dataclasses import replace

    from ..speed.command import speed_main
    from ..speed.rows import ProfileError, read_profile

    path = speed_path(root, setting)
    if path.exists():
        try:
            if read_profile(path).status == "finished":
                if not quiet:
                    print(f"{where} {setting.label}: speed profile finished before, not measured again ({path})",
                          file=sys.stderr)
                return EXIT_OK
        except ProfileError:
            pass
    if not quiet:
        print(f"{where} {setting.label}: speed profile -> {path}", file=sys.stderr)
    try:
        return speed_main(replace(speed, serve=command, label=setting.label, json_path=path,
                                  server_folder=root / f"{setting.folder}.speed"), echo=lambda line: None)
    except Exception as e:   # a profile is an extra of the sweep: its failure marks its row, the sweep goes on
        print(f"sweep: the speed profile of {setting.label} failed: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_ERRORS


def speed_table(speed: Any, settings: Sequence[Setting], root: Path, codes: dict[str, int]) -> str:
    """The sweep's table with speed: per setting its accuracy (and Δ against the first) and decode
    t/s from the run's records, beside its profile's tg t/s, pp t/s, TTFT and acceptance. Also
    written to ROOT/speed.json."""
    from ..analysis.compare.comparison import compare_runs, fmt_num, fmt_pct, load_runs
    from ..analysis.text_table import render_table
    from ..speed.rows import ProfileError, read_profile
    from ..speed.table import headline

    cmp = compare_runs(load_runs([root / s.folder for s in settings]))
    rows, data = [], []
    for i, (s, stats) in enumerate(zip(settings, cmp.runs)):
        path = speed_path(root, s)
        try:
            figures = headline(read_profile(path))
        except ProfileError as e:
            figures = {"test": None, "tg": None, "tg_ci95": None, "pp": None, "ttft_ms": None, "acceptance": None,
                       "failed": f"no profile ({e})"}
        if codes.get(s.label, EXIT_OK) not in (EXIT_OK, EXIT_ERRORS) and not figures["failed"]:
            figures["failed"] = f"exit {codes[s.label]}"
        pair = cmp.pairs[i - 1] if i else None
        delta = "(first)" if pair is None else ("n/a" if pair.delta_pp is None else f"{pair.delta_pp:+.1f} pp")
        acc = figures["acceptance"]
        tg = fmt_num(figures["tg"], 2)
        if figures["tg_ci95"]:
            tg += f" [{figures['tg_ci95'][0]:.2f}, {figures['tg_ci95'][1]:.2f}]"
        rows.append([s.label, fmt_pct(stats.accuracy), delta, fmt_num(stats.tokens.decode_median), tg,
                     fmt_num(figures["pp"], 1), fmt_num(figures["ttft_ms"], 1),
                     f"{acc:.2f}" if isinstance(acc, float) else (acc or "n/a"),
                     f"speed profile failed: {figures['failed'].split('; ')[0][:120]}" if figures["failed"] else ""])
        data.append({"label": s.label, "folder": s.folder, "profile": path.name, "accuracy": stats.accuracy,
                     "delta_pp": None if pair is None else pair.delta_pp, "decode_median": stats.tokens.decode_median,
                     **figures})
    write_json_atomic(root / "speed.json", {"profile": speed.to_dict(), "settings": data})
    size = f"pp {','.join(map(str, speed.pp))}, tg {','.join(map(str, speed.tg))}, depth " \
           f"{','.join(map(str, speed.depth))}, {speed.runs} runs"
    head = (f"Speed profile per setting (evalsuite speed, {size}; each setting's server command started again "
            f"after its run; tg t/s: mean [95% CI] at the first depth; decode t/s (runs): the run's median per "
            f"request)")
    return head + "\n" + render_table(["setting", "accuracy", "Δ vs first", "decode t/s (runs)", "tg t/s", "pp t/s",
                                        "TTFT (ms)", "acceptance", "notes"], rows)

