"""The client's own CPU per streamed token in `evalsuite speed`, beside the bare aiohttp floor and
`evalsuite run`'s per-token cost, on the same flooding server (issue 36, item 4).

    python benchmarks/speed_client.py                    # 8 streams x 2 runs x 50,000 tokens
    python benchmarks/speed_client.py --tokens 20000 --runs 1 --out speed_client.json

The server is tests/paced_server.py with --flood, in its own process: every token event built
before and written in one block, so nothing but the client limits the stream. Three clients,
each a process of its own, read the same streams (chat, one token a chunk, usage at the end):
  1. `evalsuite speed -c C --runs R --tg T`: its whole process (rusage, start-up included) and the
     figure the profile reports itself (the loop thread's CPU during each test / its tokens);
  2. the floor: a bare aiohttp client that, like the profile, parses each event with orjson and
     stamps every content chunk with time.perf_counter(), C requests in flight, nothing else;
  3. `evalsuite run gsm8k --max-tokens T --concurrency C` over the same number of tokens: what a
     run costs a token (records, grading, progress), the ceiling the speed client must stay under.
Each figure is CPU microseconds per streamed token; the machine is shared, so compare the
clients of the same run, not the absolute figures of two runs (benchmarks/README.md).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from overhead import byte_compile, default_data_dir, evalsuite_command, machine, measure  # noqa: E402


def start_flood() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "paced_server.py"), "--flood", "--prefill-rate", "1e9",
                             "--context", "100000000"], stdout=subprocess.PIPE, text=True)
    return proc, f"http://127.0.0.1:{int(proc.stdout.readline())}/v1"


def bare_main(url: str, requests: int, concurrency: int, tokens: int) -> None:
    """The floor: the same streamed requests, each event parsed, each content chunk stamped."""
    import asyncio

    import aiohttp
    import orjson

    async def main() -> int:
        semaphore = asyncio.Semaphore(concurrency)
        seen = 0
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
            async def one(n: int) -> None:
                nonlocal seen
                payload = {"model": "paced", "messages": [{"role": "user", "content": f"Document {n}. Say hello."}],
                           "max_tokens": tokens, "temperature": 0.0, "ignore_eos": True, "stream": True,
                           "stream_options": {"include_usage": True}}
                async with semaphore:
                    async with session.post(f"{url}/chat/completions", json=payload) as response:
                        stamps = []
                        buffer = b""
                        async for block in response.content.iter_any():
                            now = time.perf_counter()
                            buffer += block
                            *lines, buffer = buffer.split(b"\n")
                            for line in lines:
                                if line.startswith(b"data: {"):
                                    event = orjson.loads(line[6:])
                                    for choice in event.get("choices") or ():
                                        if (choice.get("delta") or {}).get("content"):
                                            stamps.append(now)
                        seen += len(stamps)

            await asyncio.gather(*(one(n) for n in range(requests)))
        return seen

    print(asyncio.run(main()))


def profile_run(url: str, args, tmp: Path) -> dict:
    out = tmp / "speed.json"
    cmd = evalsuite_command() + ["speed", "-e", url, "--pp", "32", "--tg", str(args.tokens), "-c", str(args.concurrency),
                                 "--runs", str(args.runs), "--no-warmup", "--format", "none", "-q", "--json", str(out),
                                 "--data-dir", str(args.data_dir)]
    r = measure(cmd)
    if r["rc"] != 0:
        raise SystemExit(f"evalsuite speed failed (rc {r['rc']}):\n{r['stderr']}")
    data = json.loads(out.read_text())
    tg = next(row for row in data["rows"] if row["test"] == "tg")
    tokens = args.tokens * args.concurrency * args.runs
    return {"cpu_s": round(r["cpu_s"], 3), "wall_s": round(r["wall_s"], 2), "tokens": tokens,
            "us_per_token": round(1e6 * r["cpu_s"] / tokens, 3),
            "in_profile_us_per_token": round(tg["client"]["cpu_us_per_token"], 3), "client_busy": tg["client"]["busy"],
            "client_bound": tg["client"]["bound"], "aggregate_tps": tg["aggregate"]["mean"] if tg["aggregate"] else None,
            "rss_mb": round(r["rss_mb"], 1)}


def bare_run(url: str, args) -> dict:
    requests = args.concurrency * args.runs
    r = measure([sys.executable, __file__, "bare", url, str(requests), str(args.concurrency), str(args.tokens)])
    if r["rc"] != 0:
        raise SystemExit(f"the bare client failed:\n{r['stderr']}")
    seen = int(r["stdout"].split()[-1])
    return {"cpu_s": round(r["cpu_s"], 3), "wall_s": round(r["wall_s"], 2), "tokens": seen,
            "us_per_token": round(1e6 * r["cpu_s"] / seen, 3), "rss_mb": round(r["rss_mb"], 1)}


def run_run(url: str, args, tmp: Path) -> dict:
    items = args.concurrency * args.runs
    cmd = evalsuite_command() + ["run", "gsm8k", "--endpoint", url, "--data-dir", str(args.data_dir), "--limit",
                                 str(items), "--concurrency", str(args.concurrency), "--max-tokens", str(args.tokens),
                                 "--extra-body", json.dumps({"ignore_eos": True}), "--run-dir", str(tmp / "run"), "-q"]
    r = measure(cmd)
    if r["rc"] not in (0, 1):
        raise SystemExit(f"evalsuite run failed (rc {r['rc']}):\n{r['stderr']}")
    tokens = items * args.tokens
    return {"cpu_s": round(r["cpu_s"], 3), "wall_s": round(r["wall_s"], 2), "tokens": tokens,
            "us_per_token": round(1e6 * r["cpu_s"] / tokens, 3), "rss_mb": round(r["rss_mb"], 1)}


def main(argv: list[str] | None = None) -> None:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "bare":
        url, requests, concurrency, tokens = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
        return bare_main(url, requests, concurrency, tokens)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=50_000, help="tokens per request (default 50,000)")
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--runs", type=int, default=2, help="requests per stream")
    p.add_argument("--data-dir", type=Path, default=default_data_dir())
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--no-run", action="store_true", help="leave out `evalsuite run`")
    args = p.parse_args(argv)
    byte_compile()
    proc, url = start_flood()
    tmp = Path(tempfile.mkdtemp(prefix="evalsuite-speed-client-"))
    try:
        load_before = os.getloadavg()
        report = {"machine": machine(), "tokens_per_request": args.tokens, "concurrency": args.concurrency,
                  "runs": args.runs, "speed": profile_run(url, args, tmp), "bare": bare_run(url, args)}
        if not args.no_run:
            report["run"] = run_run(url, args, tmp)
        report["load_before_after"] = [load_before, os.getloadavg()]
    finally:
        proc.terminate()
        proc.wait(10)
    s, b = report["speed"], report["bare"]
    print(f"evalsuite speed: {s['us_per_token']} us/token whole process ({s['cpu_s']} CPU s, {s['tokens']:,} tokens, "
          f"{s['wall_s']} s), {s['in_profile_us_per_token']} us/token inside the profile's tests "
          f"(busy {s['client_busy']:.2f}, client-bound: {s['client_bound']})")
    print(f"bare aiohttp + orjson floor: {b['us_per_token']} us/token ({b['cpu_s']} CPU s); "
          f"speed = {s['us_per_token'] / b['us_per_token']:.2f}x the floor")
    if "run" in report:
        r = report["run"]
        verdict = "met" if s["us_per_token"] <= r["us_per_token"] else "NOT met"
        print(f"evalsuite run: {r['us_per_token']} us/token ({r['cpu_s']} CPU s): speed <= run {verdict}")
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
