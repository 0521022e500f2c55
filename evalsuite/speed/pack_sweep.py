"""`evalsuite sweep PACK --serve … --speed`: after each setting's pack run, one speed profile of the
same server command, and the sweep's table of every setting's accuracy beside its profile's main
figures (tg t/s at the first depth, pp t/s, TTFT, acceptance): which quant or speculation setting
is fastest at equal accuracy (docs/speed.md, "Speed beside accuracy")."""
from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from .endpoint import UsageError
from .settings import SpeedSettings


SAME_PROFILE = ("pp", "tg", "depth", "runs", "workloads", "serve", "api")   # what a profile kept again must share


@dataclass(frozen=True)
class SweepSpeed:
    """`evalsuite sweep PACK --serve … --speed`: after each setting's pack run, one speed profile
    of the same server command (started again: the run stopped it), then one table of every
    setting's accuracy beside its profile's main figures. serve/sweep.py calls `profile` and
    `table`; it imports nothing of this room (the CLI hands it this object)."""

    settings: SpeedSettings
    quiet: bool = False

    @classmethod
    def from_options(cls, *, pp: int, tg: int, depth: str, runs: int, workload: str | None,
                     run_args: Sequence[str], quiet: bool = False) -> "SweepSpeed":
        """The profile's size from the --speed-* options, and the run options a profile shares
        with the runs (--data-dir for the packs' text, --model, --api, --timeout). Raises
        UsageError naming the option."""
        import os

        from .settings import check, parse_ints, parse_workloads

        shared = run_options(run_args, ("--data-dir", "--model", "--api", "--timeout"))
        data_dir = shared.get("--data-dir") or os.environ.get("EVALSUITE_DATA_DIR")
        try:
            timeout = float(shared.get("--timeout") or 600.0)
        except ValueError:
            raise UsageError(f"--timeout {shared['--timeout']!r} is not a number of seconds") from None
        settings = SpeedSettings(pp=parse_ints(str(pp), "--speed-pp", 1, (128,)),
                                 tg=parse_ints(str(tg), "--speed-tg", 1, (32,)),
                                 depth=parse_ints(depth, "--speed-depth", 0, (0,)), runs=runs,
                                 workloads=parse_workloads(workload), data_dir=Path(data_dir) if data_dir else None,
                                 model=shared.get("--model"), api=shared.get("--api") or "chat", timeout=timeout,
                                 output="none", quiet=True)
        check(settings)
        return cls(settings, quiet)

    def path(self, root: Path, setting) -> Path:
        return root / f"{setting.folder}.speed.json"

    def profile(self, setting, command: str, root: Path, where: str) -> int:
        """One profile of the setting's server command to ROOT/NN-label.speed.json (its server log
        in ROOT/NN-label.speed/); one finished before is not measured again. Its exit code (0:
        measured cleanly). A profile that fails never stops the sweep: its row says why."""
        from .command import speed_main
        from .rows import ProfileError, read_profile

        path = self.path(root, setting)
        asked = replace(self.settings, serve=command).to_dict()
        if path.exists():
            try:
                old = read_profile(path)
                # finished, and measured as now asked (a sweep continued with other --speed-* sizes measures again)
                if old.status == "finished" and all(old.settings.get(k) == asked[k] for k in SAME_PROFILE):
                    if not self.quiet:
                        print(f"{where} {setting.label}: speed profile finished before, not measured again ({path})",
                              file=sys.stderr)
                    return 0
            except ProfileError:
                pass
        if not self.quiet:
            print(f"{where} {setting.label}: speed profile -> {path}", file=sys.stderr)
        try:
            return speed_main(replace(self.settings, serve=command, label=setting.label, json_path=path,
                                      server_folder=root / f"{setting.folder}.speed"), echo=lambda line: None)
        except Exception as e:   # an extra of the sweep: its failure marks its row, the sweep goes on
            print(f"sweep: the speed profile of {setting.label} failed: {type(e).__name__}: {e}", file=sys.stderr)
            return 1

    def table(self, settings: Sequence, root: Path, codes: dict[str, int]) -> str:
        """Per setting: its run's accuracy (Δ against the first) and decode t/s from its records,
        beside its profile's tg t/s, pp t/s, TTFT and acceptance. Also ROOT/speed.json."""
        from ..analysis.compare.comparison import compare_runs, fmt_num, fmt_pct, load_runs
        from ..analysis.text_table import render_table
        from ..store import write_json_atomic
        from .rows import ProfileError, read_profile
        from .table import headline

        cmp = compare_runs(load_runs([root / s.folder for s in settings]))
        rows, data = [], []
        for i, (s, stats) in enumerate(zip(settings, cmp.runs)):
            path = self.path(root, s)
            try:
                figures = headline(read_profile(path))
            except ProfileError as e:
                figures = {"test": None, "tg": None, "tg_ci95": None, "pp": None, "ttft_ms": None,
                           "acceptance": None, "failed": f"no profile ({e})"}
            if codes.get(s.label, 0) not in (0, 1) and not figures["failed"]:
                figures["failed"] = f"exit {codes[s.label]}"
            pair = cmp.pairs[i - 1] if i else None
            delta = "(first)" if pair is None else ("n/a" if pair.delta_pp is None else f"{pair.delta_pp:+.1f} pp")
            acc, tg = figures["acceptance"], fmt_num(figures["tg"], 2)
            if figures["tg_ci95"]:
                tg += f" [{figures['tg_ci95'][0]:.2f}, {figures['tg_ci95'][1]:.2f}]"
            failed = figures["failed"]
            rows.append([s.label, fmt_pct(stats.accuracy), delta, fmt_num(stats.tokens.decode_median), tg,
                         fmt_num(figures["pp"], 1), fmt_num(figures["ttft_ms"], 1),
                         f"{acc:.2f}" if isinstance(acc, float) else (acc or "n/a"),
                         f"speed profile failed: {failed.split('; ')[0][:120]}" if failed else ""])
            data.append({"label": s.label, "folder": s.folder, "profile": path.name, "accuracy": stats.accuracy,
                         "delta_pp": None if pair is None else pair.delta_pp,
                         "decode_median": stats.tokens.decode_median, **figures})
        p = self.settings
        write_json_atomic(root / "speed.json", {"profile": p.to_dict(), "settings": data})
        size = (f"pp {','.join(map(str, p.pp))}, tg {','.join(map(str, p.tg))}, depth {','.join(map(str, p.depth))}, "
                f"{p.runs} runs")
        head = (f"Speed profile per setting (evalsuite speed, {size}; each setting's server command started again "
                f"after its run; tg t/s: mean [95% CI] at the first depth; decode t/s (runs): the run's median per "
                f"request)")
        return head + "\n" + render_table(["setting", "accuracy", "Δ vs first", "decode t/s (runs)", "tg t/s",
                                           "pp t/s", "TTFT (ms)", "acceptance", "notes"], rows)


def run_options(run_args: Sequence[str], names: Sequence[str]) -> dict[str, str]:
    """The values of these options among a run's arguments (`--x V` or `--x=V`)."""
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
