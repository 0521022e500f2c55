"""Client cost of a sampled run: `evalsuite run gsm8k --limit 500 --samples 16` (8,000 answers)
against a bare aiohttp client sending the same 8,000 requests, on benchmarks/overhead.py's stub.

    python benchmarks/sampling_cost.py                      # latency 0 and 200 ms, median of 3
    python benchmarks/sampling_cost.py --runs 1 --items 100 --samples 8 --latencies 0   # quick look

For each latency: wall s, user+sys CPU s and peak RSS of the whole `evalsuite run` process
(start-up, grading, finishing: summary with pass@k, compaction, parquet) and of the bare client
(the floor: same bodies, seeds 0..N-1, streamed, SSE decoded with json.loads, answers kept),
alternating so both see the same machine noise. Targets (issue 22): CPU <= 2x the bare client's,
wall at 200 ms <= 1.05x the bare client's (grading N x items answers must not be slower than the
server answers them). Prints a table; --out writes JSON with the machine's load.

Internal mode (started by the benchmark itself): `bare`.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import overhead  # noqa: E402  (the stub server, the measuring helpers)

TARGET_CPU_X = 2.0
TARGET_WALL_X = 1.05


def bare_main(args: argparse.Namespace) -> None:
    import aiohttp

    questions = overhead.gsm8k_questions(args.data_dir)
    questions = questions[: args.items]

    async def main() -> int:
        semaphore = asyncio.Semaphore(args.concurrency)
        done = 0
        connector = aiohttp.TCPConnector(limit=args.concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:
            async def one(question: str, seed: int) -> None:
                nonlocal done
                payload = {"model": "stub", "messages": [{"role": "user", "content": overhead.GSM8K_TEMPLATE.format(
                    question=question)}], "max_tokens": args.max_tokens, "temperature": 0.8, "seed": seed,
                    "stream": True, "stream_options": {"include_usage": True}}
                async with semaphore:
                    async with session.post(f"{args.url}/chat/completions", json=payload) as response:
                        parts = []
                        async for line in response.content:
                            if line.startswith(b"data: ") and not line.startswith(b"data: [DONE]"):
                                event = json.loads(line[6:])
                                for choice in event.get("choices") or ():
                                    parts.append((choice.get("delta") or {}).get("content") or "")
                        done += bool("".join(parts))

            await asyncio.gather(*(one(q, j) for q in questions for j in range(args.samples)))
        return done

    print(asyncio.run(main()))


def run_evalsuite(server, data_dir: Path, run_dir: Path, args: argparse.Namespace) -> dict:
    cmd = overhead.evalsuite_command() + [
        "run", "gsm8k", "--endpoint", server.url, "--data-dir", str(data_dir), "--limit", str(args.items),
        "--samples", str(args.samples), "--temperature", "0.8", "--concurrency", str(args.concurrency),
        "--max-tokens", str(args.max_tokens), "--run-dir", str(run_dir), "--quiet"]
    before = server.served()
    result = overhead.measure(cmd)
    result["served"] = server.served() - before
    if result["rc"] not in (0, 1):
        raise SystemExit(f"evalsuite run failed (rc {result['rc']}):\n{result['stderr']}")
    summary = json.loads((run_dir / "summary.json").read_text())
    result["records"] = summary.get("n_answers")
    return result


def run_bare(server, data_dir: Path, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "bare", "--url", server.url, "--data-dir", str(data_dir), "--items",
           str(args.items), "--samples", str(args.samples), "--concurrency", str(args.concurrency),
           "--max-tokens", str(args.max_tokens)]
    before = server.served()
    result = overhead.measure(cmd)
    result["served"] = server.served() - before
    if result["rc"] != 0:
        raise SystemExit(f"bare client failed (rc {result['rc']}):\n{result['stderr']}")
    result["records"] = int(result["stdout"].strip() or 0)
    return result


def main_bench(args: argparse.Namespace) -> dict:
    data_dir = Path(args.data_dir)
    overhead.byte_compile()
    report = {"items": args.items, "samples": args.samples, "concurrency": args.concurrency,
              "machine_before": overhead.machine(), "latencies": {}}
    work = Path(tempfile.mkdtemp(prefix="evalsuite-sampling-bench-"))
    try:
        for latency in args.latencies:
            server = overhead.StubServer(latency)
            try:
                ours, bare = [], []
                for n in range(args.runs):
                    run_dir = work / f"run-{latency:g}-{n}"
                    ours.append(run_evalsuite(server, data_dir, run_dir, args))
                    shutil.rmtree(run_dir, ignore_errors=True)
                    bare.append(run_bare(server, data_dir, args))
            finally:
                server.stop()
            e, b = overhead.summarise(ours), overhead.summarise(bare)
            report["latencies"][f"{latency:g}"] = {
                "evalsuite": e, "bare": b, "cpu_x_bare": e["cpu_s"] / b["cpu_s"] if b["cpu_s"] else None,
                "wall_x_bare": e["wall_s"] / b["wall_s"] if b["wall_s"] else None}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report["machine_after"] = overhead.machine()
    checks = {}
    for latency, row in report["latencies"].items():
        checks[f"cpu <= {TARGET_CPU_X}x bare at {latency} ms"] = row["cpu_x_bare"] is not None and row["cpu_x_bare"] <= TARGET_CPU_X
        if latency != "0":
            checks[f"wall <= {TARGET_WALL_X}x bare at {latency} ms"] = (row["wall_x_bare"] is not None
                                                                       and row["wall_x_bare"] <= TARGET_WALL_X)
    report["targets"] = checks
    return report


def print_table(report: dict) -> None:
    print(f"gsm8k, {report['items']} items x {report['samples']} samples, concurrency {report['concurrency']}")
    print(f"{'latency':>8}  {'client':>9}  {'wall s':>7}  {'CPU s':>6}  {'RSS MB':>6}  {'answers':>7}")
    for latency, row in report["latencies"].items():
        for name in ("evalsuite", "bare"):
            r = row[name]
            print(f"{latency + ' ms':>8}  {name:>9}  {r['wall_s']:7.2f}  {r['cpu_s']:6.2f}  {r['rss_mb']:6.0f}  "
                  f"{r['records']:>7.0f}")
        print(f"{'':>8}  {'ratio':>9}  {row['wall_x_bare']:7.2f}x {row['cpu_x_bare']:6.2f}x")
    for name, ok in report["targets"].items():
        print(f"{'ok  ' if ok else 'MISS'} {name}")
    print(f"load average before {report['machine_before'].get('loadavg')}, after {report['machine_after'].get('loadavg')}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode")
    b = sub.add_parser("bare")
    b.add_argument("--url", required=True)
    b.add_argument("--data-dir", required=True)
    b.add_argument("--items", type=int, default=500)
    b.add_argument("--samples", type=int, default=16)
    b.add_argument("--concurrency", type=int, default=32)
    b.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--data-dir", default=str(overhead.default_data_dir()))
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latencies", type=lambda s: [float(x) for x in s.split(",")], default=[0.0, 200.0])
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--out", type=Path, default=None)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.mode == "bare":
        bare_main(args)
        return
    report = main_bench(args)
    print_table(report)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
