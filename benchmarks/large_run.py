"""Large-run check: CMMLU test (11,582 items) against the instant stub server.

    python benchmarks/large_run.py                    # cmmlu, concurrency 32
    python benchmarks/large_run.py --pack gsm8k --out large.json

Runs `evalsuite run <pack>` as a child process and samples every --interval seconds its
resident memory (VmRSS from /proc, the process and its children) and the number of records in
records.jsonl. Two things must hold for a run of any length:
  * memory stays flat: records stream to disk, nothing keeps whole-run lists of responses, so
    RSS in the last tenth of the run is within --rss-growth-mb of RSS at 30 % of the run;
  * throughput per item does not fall as the run grows: items/s over the last tenth is at least
    --min-rate-ratio of the median items/s over the tenths from 20 % to 80 %.
Peak RSS (wait4 ru_maxrss, the whole process) is checked against the 300 MB target.
The stub answers multiple-choice packs with a letter ("The answer is C").
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead import StubServer, default_data_dir, evalsuite_command, machine  # noqa: E402

TARGET_RSS_MB = 300.0
LETTER_PACKS = {"cmmlu", "ceval", "agieval"}


def rss_mb(pid: int) -> float:
    """VmRSS of pid and its direct children (a grader pool, if one was started)."""
    total = 0.0
    pids = [pid]
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                pids += [int(p) for p in f.read().split()]
    except OSError:
        pass
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) / 1024.0
                        break
        except OSError:
            pass
    return total


class LineCounter:
    """Counts newline-terminated records as the file grows, reading only the new bytes."""

    def __init__(self, path: Path):
        self.path, self.offset, self.count = path, 0, 0

    def update(self) -> int:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return self.count
        self.count += data.count(b"\n")
        self.offset += len(data)
        return self.count


def run(args: argparse.Namespace) -> dict:
    data_dir = Path(args.data_dir)
    tmp = Path(tempfile.mkdtemp(prefix="evalsuite-large-"))
    run_dir = tmp / "run"
    server = StubServer(0.0, "letter" if args.pack in LETTER_PACKS else "number")
    samples: list[dict] = []
    try:
        cmd = evalsuite_command() + ["run", args.pack, "--endpoint", server.url, "--data-dir", str(data_dir),
                                     "--concurrency", str(args.concurrency), "--max-tokens", str(args.max_tokens),
                                     "--run-dir", str(run_dir), "--quiet"]
        if args.limit:
            cmd += ["--limit", str(args.limit)]
        counter = LineCounter(run_dir / "records.jsonl")
        with open(tmp / "stderr.txt", "wb") as err:
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
            while True:
                done, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if done:
                    break
                samples.append({"t": round(time.perf_counter() - t0, 3), "records": counter.update(),
                                "rss_mb": round(rss_mb(proc.pid), 1)})
                time.sleep(args.interval)
            wall = time.perf_counter() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"evalsuite run failed (rc {proc.returncode}):\n{(tmp / 'stderr.txt').read_text()[-3000:]}")
        n_records = sum(1 for _ in open(run_dir / "records.jsonl", "rb"))
        served = server.served()
    finally:
        server.stop()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return analyse(args, samples, wall, usage, n_records, served)


def analyse(args, samples: list[dict], wall: float, usage, n_records: int, served: int) -> dict:
    # the request phase: from the first record to the last (then compaction and parquet)
    running = [s for s in samples if 0 < s["records"] < n_records] or samples
    tenths = []
    for k in range(10):
        lo, hi = n_records * k / 10, n_records * (k + 1) / 10
        inside = [s for s in running if lo <= s["records"] <= hi]
        if len(inside) >= 2 and inside[-1]["t"] > inside[0]["t"]:
            rate = (inside[-1]["records"] - inside[0]["records"]) / (inside[-1]["t"] - inside[0]["t"])
            tenths.append({"tenth": k + 1, "items_per_s": round(rate, 1),
                           "rss_mb": max(s["rss_mb"] for s in inside)})
        else:
            tenths.append({"tenth": k + 1, "items_per_s": None, "rss_mb": None})

    def rss_at(fraction: float) -> float | None:
        after = [s["rss_mb"] for s in running if s["records"] >= fraction * n_records]
        return after[0] if after else None

    middle = [t["items_per_s"] for t in tenths[1:8] if t["items_per_s"]]
    last = tenths[-1]["items_per_s"] or tenths[-2]["items_per_s"]
    rate_ratio = (last / statistics.median(middle)) if (last and middle) else None
    rss30, rss_end = rss_at(0.3), rss_at(0.9)
    growth = (rss_end - rss30) if (rss30 is not None and rss_end is not None) else None
    peak = usage.ru_maxrss / 1024.0
    return {
        "machine": machine(), "pack": args.pack, "n_records": n_records, "served": served,
        "concurrency": args.concurrency, "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2), "peak_rss_mb": round(peak, 1),
        "cpu_ms_per_item": round(1000 * (usage.ru_utime + usage.ru_stime) / max(1, n_records), 3),
        "tenths": tenths, "rss_at_30pct_mb": rss30, "rss_at_90pct_mb": rss_end, "rss_growth_mb": growth,
        "last_tenth_rate_ratio": round(rate_ratio, 3) if rate_ratio else None,
        "checks": {
            "peak_rss": {"value": round(peak, 1), "target": TARGET_RSS_MB, "ok": peak <= TARGET_RSS_MB},
            "rss_flat": {"value": growth, "target": args.rss_growth_mb,
                         "ok": growth is not None and growth <= args.rss_growth_mb},
            "rate_holds": {"value": round(rate_ratio, 3) if rate_ratio else None, "target": args.min_rate_ratio,
                           "ok": rate_ratio is not None and rate_ratio >= args.min_rate_ratio},
            "all_recorded": {"value": n_records, "ok": n_records == served},
        },
        "samples": samples,
    }


def print_report(r: dict) -> None:
    m = r["machine"]
    print(f"{r['pack']}: {r['n_records']} records ({r['served']} requests served), concurrency {r['concurrency']}; "
          f"{m['cores']} cores, load avg {m['loadavg'][0]:.2f}")
    print(f"wall {r['wall_s']} s, CPU {r['cpu_s']} s ({r['cpu_ms_per_item']} ms/item), peak RSS {r['peak_rss_mb']} MB")
    print(f"{'tenth':>5} {'items/s':>8} {'RSS MB':>7}")
    for t in r["tenths"]:
        print(f"{t['tenth']:>5} {t['items_per_s'] if t['items_per_s'] is not None else '-':>8} "
              f"{t['rss_mb'] if t['rss_mb'] is not None else '-':>7}")
    print(f"RSS at 30 % {r['rss_at_30pct_mb']} MB, at 90 % {r['rss_at_90pct_mb']} MB; "
          f"last-tenth rate / middle median {r['last_tenth_rate_ratio']}")
    for name, c in r["checks"].items():
        print(f"  {name:<13} {c['value']!s:>8}  {'<= ' + str(c['target']) if 'target' in c else ''}  "
              f"{'ok' if c['ok'] else 'MISSED'}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pack", default="cmmlu")
    parser.add_argument("--data-dir", default=str(default_data_dir()))
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--interval", type=float, default=0.25, help="seconds between samples")
    parser.add_argument("--rss-growth-mb", type=float, default=20.0)
    parser.add_argument("--min-rate-ratio", type=float, default=0.8)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the run folder")
    args = parser.parse_args(argv)
    report = run(args)
    print_report(report)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
