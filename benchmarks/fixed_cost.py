"""A run's CPU as fixed + per item, beside the bare client's (issue 37).

    python benchmarks/fixed_cost.py                            # 1 and 1,319 GSM8K items, 3 rounds
    python benchmarks/fixed_cost.py --runs 5 --out fixed.json
    python benchmarks/fixed_cost.py --also OLD_CHECKOUT/.venv/bin/evalsuite   # another checkout's entry point, alternated

What it does: against benchmarks/overhead.py's stub (0 ms, "The answer is N" in 4 deltas), runs
`evalsuite run gsm8k --limit N` and the bare aiohttp client of overhead.py on the same N items,
for each N of --sizes, in turn, --runs rounds (each client of a round right after the other, so
both see the same machine). Each round's CPU (user+sys of the process, os.wait4 rusage) is
fitted as cpu = fixed + per_item * N over the sizes: `fixed` is what a run costs whatever its
size (start-up, preflight, the finishing step's own part), `per_item` what each item adds
(request, stream, grading, its record, its share of the finishing). Reported per client: the
median and range over the rounds of both, the evalsuite/floor ratio of the per-item cost and
the fixed cost above the floor's. Targets (issue 37): fixed <= 0.4 s above the floor's,
per item <= 1.5x the floor's. Load average before and after goes with the figures.

The grader's share (issue 45): each round also grades the stub's answers ("The answer is N",
N as the stub picks it) with the pack's own grade() in a child process, one thread, and times
that loop alone (CPU per answer). A run grades every answer, the floor none: "per item without
the grade" is evalsuite's per-item CPU less that, beside the floor's.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import overhead  # noqa: E402
from overhead import GSM8K_N, StubServer, byte_compile, default_data_dir, machine, run_bare  # noqa: E402

TARGET_FIXED_ABOVE_FLOOR_S = 0.4
TARGET_PER_ITEM_X_FLOOR = 1.5


def fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares cpu = a + b n."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else 0.0
    return my - b * mx, b


def spread(values: list[float], scale: float = 1.0, digits: int = 3) -> dict:
    return {"median": round(statistics.median(values) * scale, digits),
            "min": round(min(values) * scale, digits), "max": round(max(values) * scale, digits)}


def grade_main(n: int, data_dir: str) -> None:
    """Grade the stub's answers to the first n GSM8K items; print the CPU seconds of the loop."""
    import time
    import zlib

    from evalsuite.tasks import LoadOptions, open_pack

    pack = open_pack("gsm8k", None)
    items = pack.load(LoadOptions(data_dir=data_dir))[:n]
    answers = [f"The answer is {zlib.crc32(item.id.encode()) % 1000}" for item in items]
    t0 = time.process_time()
    for item, answer in zip(items, answers):
        pack.grade(item, answer)
    print(time.process_time() - t0)


def grading_cpu(n: int, data_dir: Path) -> float:
    out = subprocess.run([sys.executable, __file__, "grade", str(n), str(data_dir)], capture_output=True, text=True,
                         check=True).stdout
    return float(out.split()[-1])


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["grade"]:
        return grade_main(int(argv[1]), argv[2])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[1, GSM8K_N])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--data-dir", default=str(default_data_dir()))
    p.add_argument("--also", action="append", default=[], metavar="ENTRY_POINT",
                   help="another evalsuite entry point (e.g. an older checkout's venv/bin/evalsuite), measured in turn")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    data_dir = Path(args.data_dir)
    byte_compile()
    clients = {"evalsuite": overhead.evalsuite_command()} | {f"also{n}": [path] for n, path in enumerate(args.also)}
    report: dict = {"machine_before": machine(), "sizes": args.sizes, "runs": args.runs,
                    "commands": {k: v[0] for k, v in clients.items()}, "rounds": []}
    server = StubServer(0.0)
    tmp = Path(tempfile.mkdtemp(prefix="evalsuite-fixed-"))
    try:
        for rnd in range(args.runs):
            row: dict = {}
            for n in args.sizes:
                ns = argparse.Namespace(concurrency=args.concurrency, max_tokens=args.max_tokens, limit=n)
                for name, command in clients.items():
                    overhead.evalsuite_command = lambda command=command: list(command)
                    r = overhead.run_evalsuite(server, data_dir, tmp / f"{name}-{rnd}-{n}", ns)
                    row.setdefault(name, {})[n] = r["cpu_s"]
                    print(f"  round {rnd + 1} n={n:<5} {name:<10} cpu {r['cpu_s']:.3f} s  wall {r['wall_s']:.2f} s",
                          file=sys.stderr, flush=True)
                b = run_bare(server, data_dir, ns)
                row.setdefault("floor", {})[n] = b["cpu_s"]
                print(f"  round {rnd + 1} n={n:<5} {'floor':<10} cpu {b['cpu_s']:.3f} s  wall {b['wall_s']:.2f} s",
                      file=sys.stderr, flush=True)
            n = max(args.sizes)
            row["grade_ms"] = 1000 * grading_cpu(n, data_dir) / n
            print(f"  round {rnd + 1} grading alone {row['grade_ms']:.3f} ms an answer", file=sys.stderr, flush=True)
            report["rounds"].append(row)
    finally:
        report["stub_cpu_s"] = round(server.stop(), 3)
        shutil.rmtree(tmp, ignore_errors=True)
    report["machine_after"] = machine()
    fits = {name: [fit(sorted(r[name].items())) for r in report["rounds"]] for name in report["rounds"][0]
            if name != "grade_ms"}
    grade_ms = [r["grade_ms"] for r in report["rounds"]]
    floor = fits["floor"]
    out = {}
    for name, per_round in fits.items():
        out[name] = {"fixed_s": spread([a for a, _ in per_round]), "per_item_ms": spread([b for _, b in per_round], 1000),
                     "cpu_s": {str(n): spread([r[name][n] for r in report["rounds"]]) for n in args.sizes}}
        if name != "floor":
            out[name]["fixed_above_floor_s"] = spread([a - f[0] for (a, _), f in zip(per_round, floor)])
            out[name]["per_item_x_floor"] = spread([b / f[1] for (_, b), f in zip(per_round, floor)], digits=2)
            out[name]["grade_ms"] = spread(grade_ms)
            out[name]["per_item_less_grade_x_floor"] = spread(
                [(b - g / 1000) / f[1] for (_, b), f, g in zip(per_round, floor, grade_ms)], digits=2)
    report["fits"] = out
    print_report(report)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.out}")


def print_report(report: dict) -> None:
    m0, m1 = report["machine_before"], report["machine_after"]
    print(f"\n`evalsuite run gsm8k` against the stub (0 ms), sizes {report['sizes']}, {report['runs']} rounds; "
          f"load avg before {m0['loadavg'][0]:.2f}, after {m1['loadavg'][0]:.2f}")
    print("cpu = fixed + per item x N, fitted per round; median [min-max] over the rounds")
    for name, f in report["fits"].items():
        cells = "  ".join(f"N={n}: {c['median']:.2f} s" for n, c in f["cpu_s"].items())
        line = (f"  {name:<10} fixed {f['fixed_s']['median']:.3f} s [{f['fixed_s']['min']:.3f}-{f['fixed_s']['max']:.3f}]"
                f"  per item {f['per_item_ms']['median']:.3f} ms [{f['per_item_ms']['min']:.3f}-{f['per_item_ms']['max']:.3f}]"
                f"  ({cells})")
        if "per_item_x_floor" in f:
            a, x = f["fixed_above_floor_s"], f["per_item_x_floor"]
            line += (f"\n  {'':<10} fixed above the floor's {a['median']:.3f} s [{a['min']:.3f}-{a['max']:.3f}] "
                     f"(target <= {TARGET_FIXED_ABOVE_FLOOR_S}); per item {x['median']:.2f}x the floor's "
                     f"[{x['min']:.2f}-{x['max']:.2f}] (target <= {TARGET_PER_ITEM_X_FLOOR})")
            if "grade_ms" in f:      # older --out files have no grading figure
                g, y = f["grade_ms"], f["per_item_less_grade_x_floor"]
                line += (f"\n  {'':<10} of which grading {g['median']:.3f} ms an answer [{g['min']:.3f}-{g['max']:.3f}] "
                         f"(the pack's grade alone, one thread); per item without it {y['median']:.2f}x the floor's "
                         f"[{y['min']:.2f}-{y['max']:.2f}]")
        print(line)
    print(f"  stub server CPU {report['stub_cpu_s']} s (not the clients')")


if __name__ == "__main__":
    main()
