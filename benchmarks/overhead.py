"""Client overhead of `evalsuite run`: CPU, wall, peak RSS, against a stub server and a bare-client floor.

    python benchmarks/overhead.py                         # latency 0 and 200 ms, median of 3
    python benchmarks/overhead.py --runs 5 --out bench.json
    python benchmarks/overhead.py --latencies 0 --limit 200 --runs 1   # quick look

What it does:
  1. starts a stub OpenAI-compatible server per latency, each its own process (a raw asyncio
     HTTP/1.1 server, keep-alive, no framework: it costs the client machine as little as
     possible). /v1/chat/completions streams a short SSE answer "The answer is N" with a usage
     chunk and [DONE], after --latency-ms of simulated server time;
  2. runs `evalsuite run gsm8k` over all 1,319 test items (concurrency 32, max_tokens 256) as
     a separate process, and a bare async client (aiohttp + a semaphore, the same request bodies,
     SSE parsed with json.loads) as the floor; alternating, so both see the same machine noise;
  3. reports per configuration the median over --runs of wall s, user+sys CPU s and peak RSS
     of that process (os.wait4 rusage: exact per child, includes any grader subprocesses it
     waited for), and the requests the stub served; plus `evalsuite --help` (median of 5).
It prints a table and writes JSON (--out). The machine (cores, load average before and after)
goes into the JSON: on a shared machine, quote it with the figures.

Internal modes (started by the benchmark itself): `serve` and `bare`.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GSM8K_N = 1319

# Targets (whole evalsuite process, 2-core machine).
TARGET_CPU_S = 2.0
TARGET_CPU_X_FLOOR = 3.0
TARGET_WALL_200_S = 9.0
TARGET_WALL_X_IDEAL = 1.1
TARGET_HELP_S = 0.3
TARGET_RSS_MB = 200.0


def default_data_dir() -> Path:
    env = os.environ.get("EVALSUITE_DATA_DIR")
    return Path(env) if env else REPO.parent / "shared" / "data"


# ----------------------------------------------------------------------------- stub server

ANSWER_STYLE = "number"  # or "letter" (multiple-choice packs): "The answer is C"


def sse_body(request_body: bytes, model: str = "stub") -> bytes:
    """A short streamed chat answer: role, four content deltas, finish, usage, [DONE]."""
    number = zlib.crc32(request_body) % 1000  # varies per item, deterministic
    last = f" {'ABCD'[number % 4]}" if ANSWER_STYLE == "letter" else f" {number}"
    created = 1700000000
    base = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": created, "model": model}
    deltas = [{"role": "assistant", "content": ""}, {"content": "The"}, {"content": " answer"},
              {"content": " is"}, {"content": last}]
    events = [dict(base, choices=[{"index": 0, "delta": d, "finish_reason": None}]) for d in deltas]
    events.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    events.append(dict(base, choices=[], usage={"prompt_tokens": 120, "completion_tokens": 5, "total_tokens": 125}))
    out = b"".join(b"data: " + json.dumps(e, separators=(",", ":")).encode() + b"\n\n" for e in events)
    return out + b"data: [DONE]\n\n"


LONG_TOKENS = 0   # > 0: answers are this many tokens long, each with top-LONG_TOP logprobs
LONG_TOP = 5
_long_prefix: bytes | None = None


def long_sse_body(request_body: bytes, model: str = "stub") -> bytes:
    """A long reasoning answer as llama-server streams it with `logprobs`/`top_logprobs`: one
    chunk per token (reasoning_content, then content), each with its id, text, bytes, logprob
    and top-K alternatives; then finish, usage, [DONE]. The reasoning part is the same for every
    request (built once: the stub must cost the client machine little); the answer varies."""
    global _long_prefix
    base = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 1700000000, "model": model}

    def chunk(text: str, token_id: int, field: str) -> bytes:
        lp = -((token_id * 7919) % 1000) / 997.0
        top = [{"id": token_id, "token": text, "bytes": list(text.encode()), "logprob": lp}]
        top += [{"id": (token_id + 13 * j) % 32000, "token": f" v{(token_id + 13 * j) % 32000}",
                 "bytes": list(f" v{(token_id + 13 * j) % 32000}".encode()), "logprob": lp - 0.37 * j - 0.01}
                for j in range(1, LONG_TOP)]
        entry = dict(top[0], top_logprobs=top)
        event = dict(base, choices=[{"index": 0, "delta": {field: text}, "logprobs": {"content": [entry]},
                                     "finish_reason": None}])
        return b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"

    if _long_prefix is None:
        _long_prefix = b"".join(chunk(f" w{(i * 104729) % 32000}", (i * 104729) % 32000, "reasoning_content")
                                for i in range(max(0, LONG_TOKENS - 4)))
    number = zlib.crc32(request_body) % 1000
    last = f" {'ABCD'[number % 4]}" if ANSWER_STYLE == "letter" else f" {number}"
    answer = b"".join(chunk(t, 32001 + n, "content") for n, t in enumerate([" The", " answer", " is", last]))
    tail = [dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]),
            dict(base, choices=[], usage={"prompt_tokens": 120, "completion_tokens": LONG_TOKENS, "total_tokens": 120 + LONG_TOKENS})]
    return (_long_prefix + answer + b"".join(b"data: " + json.dumps(e, separators=(",", ":")).encode() + b"\n\n" for e in tail)
            + b"data: [DONE]\n\n")


def json_body(request_body: bytes, model: str = "stub") -> bytes:
    number = zlib.crc32(request_body) % 1000
    return json.dumps({"id": "chatcmpl-stub", "object": "chat.completion", "created": 1700000000, "model": model,
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": f"The answer is {number}"},
                                    "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 120, "completion_tokens": 5, "total_tokens": 125}}).encode()


def http_response(body: bytes, content_type: str, status: str = "200 OK") -> bytes:
    return (f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
            f"Connection: keep-alive\r\n\r\n").encode() + body


class StubProtocol(asyncio.Protocol):
    """HTTP/1.1 with keep-alive and Content-Length bodies; enough for the openai SDK and aiohttp."""

    served = 0
    latency_s = 0.0

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buffer[:head_end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if len(self.buffer) < head_end + 4 + length:
                return
            body = self.buffer[head_end + 4: head_end + 4 + length]
            self.buffer = self.buffer[head_end + 4 + length:]
            self.respond(head.split(" ", 2), body)

    def respond(self, request_line: list[str], body: bytes) -> None:
        method, path = request_line[0], request_line[1] if len(request_line) > 1 else "/"
        if method == "GET" and path.endswith("/models"):
            out = http_response(b'{"object":"list","data":[{"id":"stub","object":"model","owned_by":"stub"}]}',
                                "application/json")
        elif method == "GET" and path == "/stats":
            out = http_response(json.dumps({"served": StubProtocol.served}).encode(), "application/json")
        elif method == "POST" and path.endswith("/chat/completions"):
            StubProtocol.served += 1
            streamed = b'"stream":true' in body.replace(b" ", b"")
            out = http_response((long_sse_body if LONG_TOKENS else sse_body)(body), "text/event-stream") if streamed else \
                http_response(json_body(body), "application/json")
        else:
            out = http_response(b'{"error":{"message":"not found"}}', "application/json", "404 Not Found")
        if StubProtocol.latency_s > 0 and method == "POST":
            # every response is due latency after its request: same delay, so order holds
            asyncio.get_running_loop().call_later(StubProtocol.latency_s, self.send, out)
        else:
            self.send(out)

    def send(self, out: bytes) -> None:
        if not self.transport.is_closing():
            self.transport.write(out)


def serve_main(args: argparse.Namespace) -> None:
    global ANSWER_STYLE, LONG_TOKENS, LONG_TOP
    StubProtocol.latency_s = args.latency_ms / 1000.0
    ANSWER_STYLE = args.answer_style
    LONG_TOKENS, LONG_TOP = args.tokens, args.top

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(StubProtocol, "127.0.0.1", 0, backlog=1024)
        port = server.sockets[0].getsockname()[1]
        print(port, flush=True)
        async with server:
            await server.serve_forever()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass


class StubServer:
    """The stub in its own process (so its CPU is not the client's)."""

    def __init__(self, latency_ms: float, answer_style: str = "number", tokens: int = 0, top: int = 5):
        self.latency_ms = latency_ms
        self.proc = subprocess.Popen([sys.executable, __file__, "serve", "--latency-ms", str(latency_ms),
                                      "--answer-style", answer_style, "--tokens", str(tokens), "--top", str(top)],
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def served(self) -> int:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=10) as r:
            return json.loads(r.read())["served"]

    def stop(self) -> float:
        """Stops it; returns its user+sys CPU seconds."""
        self.proc.terminate()
        _, _, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = 0
        return usage.ru_utime + usage.ru_stime


# ----------------------------------------------------------------------------- bare client (the floor)

GSM8K_TEMPLATE = (
    "Solve the following math word problem step by step. "
    "At the end, write the final answer on its own line as \"The answer is N\", where N is a number.\n\n"
    "{question}"
)


def gsm8k_questions(data_dir) -> list[str]:
    """The GSM8K test questions, in file order (what the bare clients send)."""
    questions = []
    with open(Path(data_dir) / "gsm8k" / "test.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                questions.append(json.loads(line)["question"])
    return questions


def bare_main(args: argparse.Namespace) -> None:
    """The least a client can do: same requests, streamed, SSE decoded, answers kept."""
    import aiohttp

    questions = gsm8k_questions(args.data_dir)
    if args.limit:
        questions = questions[: args.limit]

    async def main() -> int:
        semaphore = asyncio.Semaphore(args.concurrency)
        answers: list[str | None] = [None] * len(questions)
        connector = aiohttp.TCPConnector(limit=args.concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:
            async def one(n: int, question: str) -> None:
                payload = {"model": "stub", "messages": [{"role": "user", "content": GSM8K_TEMPLATE.format(question=question)}],
                           "max_tokens": args.max_tokens, "temperature": 0.0, "stream": True,
                           "stream_options": {"include_usage": True}}
                async with semaphore:
                    async with session.post(f"{args.url}/chat/completions", json=payload) as response:
                        parts = []
                        async for line in response.content:
                            if line.startswith(b"data: ") and not line.startswith(b"data: [DONE]"):
                                event = json.loads(line[6:])
                                for choice in event.get("choices") or ():
                                    parts.append((choice.get("delta") or {}).get("content") or "")
                        answers[n] = "".join(parts)

            await asyncio.gather(*(one(n, q) for n, q in enumerate(questions)))
        return sum(1 for a in answers if a)

    done = asyncio.run(main())
    print(done)


# ----------------------------------------------------------------------------- measuring

def evalsuite_command() -> list[str]:
    # the entry point of the interpreter running this benchmark (a venv's), never one found on
    # PATH: a pyenv shim is a shell script (0.2 s per call) and may run another checkout
    script = Path(sys.executable).parent / "evalsuite"
    return [str(script)] if script.exists() else [sys.executable, "-m", "evalsuite.cli"]


def byte_compile() -> None:
    """Byte-compile evalsuite's packages first, as `pip install` does: where PYTHONDONTWRITEBYTECODE
    is set (some sandboxes and CI images), every measured run would otherwise compile ~60 modules
    from source (~0.1 CPU s) that an installed evalsuite never compiles; the bare client's aiohttp
    comes compiled from its wheel."""
    import compileall

    import evalsuite

    root = Path(evalsuite.__file__).resolve().parent
    for package in (root, root.parent / "graders", root.parent / "tasks"):
        if package.is_dir():
            compileall.compile_dir(str(package), quiet=1)


def measure(cmd: list[str], env: dict[str, str] | None = None) -> dict:
    """Run `cmd` as a child; its wall, user+sys CPU and peak RSS from its own rusage."""
    # output goes to files, not pipes: no deadlock on a full pipe, and we reap the child
    # ourselves with wait4 (its own rusage, not the sum over all our children)
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out_f.seek(0)
        err_f.seek(0)
        out, err = out_f.read(), err_f.read()
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "user_s": usage.ru_utime,
            "sys_s": usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024.0, "rc": proc.returncode,
            "stdout": out.decode("utf-8", "replace")[-2000:], "stderr": err.decode("utf-8", "replace")[-2000:]}


def run_evalsuite(server: StubServer, data_dir: Path, run_dir: Path, args: argparse.Namespace) -> dict:
    cmd = evalsuite_command() + ["run", "gsm8k", "--endpoint", server.url, "--data-dir", str(data_dir),
                                 "--concurrency", str(args.concurrency), "--max-tokens", str(args.max_tokens),
                                 "--run-dir", str(run_dir), "--quiet"]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    before = server.served()
    result = measure(cmd)
    result["served"] = server.served() - before
    records = run_dir / "records.jsonl"
    result["records"] = sum(1 for _ in open(records, "rb")) if records.exists() else 0
    if result["rc"] not in (0, 1):  # 1: finished with item errors (reported via records)
        raise SystemExit(f"evalsuite run failed (rc {result['rc']}):\n{result['stderr']}")
    return result


def run_bare(server: StubServer, data_dir: Path, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "bare", "--url", server.url, "--data-dir", str(data_dir),
           "--concurrency", str(args.concurrency), "--max-tokens", str(args.max_tokens)]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    before = server.served()
    result = measure(cmd)
    result["served"] = server.served() - before
    if result["rc"] != 0:
        raise SystemExit(f"bare client failed (rc {result['rc']}):\n{result['stderr']}")
    result["records"] = int(result["stdout"].strip() or 0)
    return result


def summarise(samples: list[dict]) -> dict:
    keys = ("wall_s", "cpu_s", "user_s", "sys_s", "rss_mb")
    out = {k: statistics.median(s[k] for s in samples) for k in keys}
    out["served"] = statistics.median(s["served"] for s in samples)
    out["records"] = statistics.median(s["records"] for s in samples)
    out["samples"] = [{k: round(s[k], 3) if isinstance(s[k], float) else s[k] for k in keys + ("served", "records")}
                      for s in samples]
    return out


def machine() -> dict:
    cpu_model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cores": os.cpu_count(), "cpu": cpu_model, "python": platform.python_version(),
            "platform": platform.platform(), "loadavg": list(os.getloadavg())}


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def main_bench(args: argparse.Namespace) -> dict:
    data_dir = Path(args.data_dir)
    if not (data_dir / "gsm8k" / "test.jsonl").is_file():
        raise SystemExit(f"GSM8K data absent: {data_dir / 'gsm8k' / 'test.jsonl'} (pass --data-dir or set EVALSUITE_DATA_DIR)")
    n_items = min(args.limit, GSM8K_N) if args.limit else GSM8K_N
    byte_compile()
    report: dict = {"machine_before": machine(), "n_items": n_items, "concurrency": args.concurrency,
                    "max_tokens": args.max_tokens, "runs": args.runs, "latencies_ms": args.latencies,
                    "evalsuite_command": evalsuite_command(), "results": {}}
    tmp = Path(tempfile.mkdtemp(prefix="evalsuite-overhead-"))
    servers = {lat: StubServer(lat) for lat in args.latencies}
    try:
        samples: dict[str, list[dict]] = {}
        for rep in range(args.runs):
            for lat, server in servers.items():
                for who in ("bare", "evalsuite"):
                    key = f"{who}@{lat:g}ms"
                    if who == "bare":
                        result = run_bare(server, data_dir, args)
                    else:
                        result = run_evalsuite(server, data_dir, tmp / f"run-{lat:g}-{rep}", args)
                    samples.setdefault(key, []).append(result)
                    if not args.quiet:
                        print(f"  run {rep + 1}/{args.runs} {key:<18} wall {result['wall_s']:6.2f} s  cpu {result['cpu_s']:5.2f} s  "
                              f"rss {result['rss_mb']:6.1f} MB  served {result['served']}", file=sys.stderr, flush=True)
        for key, s in samples.items():
            report["results"][key] = summarise(s)
        helps = [measure(evalsuite_command() + ["--help"]) for _ in range(args.help_runs)]
        report["help"] = {"wall_s": statistics.median(h["wall_s"] for h in helps),
                          "cpu_s": statistics.median(h["cpu_s"] for h in helps),
                          "rss_mb": statistics.median(h["rss_mb"] for h in helps),
                          "samples": [round(h["wall_s"], 3) for h in helps]}
    finally:
        report["stub_cpu_s"] = {f"{lat:g}ms": round(server.stop(), 3) for lat, server in servers.items()}
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            report["run_dirs"] = str(tmp)
    report["machine_after"] = machine()
    report["targets"] = check_targets(report, n_items, args)
    return report


def check_targets(report: dict, n_items: int, args: argparse.Namespace) -> dict:
    res = report["results"]
    targets = {}
    if "evalsuite@0ms" in res:
        cpu, floor = res["evalsuite@0ms"]["cpu_s"], res["bare@0ms"]["cpu_s"]
        targets["cpu_0ms"] = {"value": round(cpu, 3), "target": TARGET_CPU_S, "ok": cpu <= TARGET_CPU_S}
        targets["cpu_x_floor_0ms"] = {"value": round(cpu / floor, 2), "target": TARGET_CPU_X_FLOOR,
                                      "ok": cpu / floor <= TARGET_CPU_X_FLOOR}
    if "evalsuite@200ms" in res:
        ideal = math.ceil(n_items / args.concurrency) * 0.2
        wall = res["evalsuite@200ms"]["wall_s"]
        targets["wall_200ms"] = {"value": round(wall, 3), "target": TARGET_WALL_200_S, "ok": wall <= TARGET_WALL_200_S}
        targets["wall_x_ideal_200ms"] = {"value": round(wall / ideal, 3), "ideal_s": round(ideal, 2),
                                         "target": TARGET_WALL_X_IDEAL, "ok": wall / ideal <= TARGET_WALL_X_IDEAL}
    rss = max((v["rss_mb"] for k, v in res.items() if k.startswith("evalsuite")), default=0.0)
    targets["peak_rss_mb"] = {"value": round(rss, 1), "target": TARGET_RSS_MB, "ok": rss <= TARGET_RSS_MB}
    targets["help_s"] = {"value": round(report["help"]["wall_s"], 3), "target": TARGET_HELP_S,
                         "ok": report["help"]["wall_s"] <= TARGET_HELP_S}
    return targets


def print_table(report: dict) -> None:
    m = report["machine_before"]
    print(f"\nGSM8K test, {report['n_items']} items, concurrency {report['concurrency']}, max_tokens {report['max_tokens']}, "
          f"median of {report['runs']}; {m['cores']} cores ({m['cpu']}), load avg before "
          f"{m['loadavg'][0]:.2f} after {report['machine_after']['loadavg'][0]:.2f}")
    print(f"{'client':<18} {'wall s':>8} {'CPU s':>7} {'user':>6} {'sys':>6} {'RSS MB':>7} {'served':>7} {'records':>8}")
    for key, r in report["results"].items():
        print(f"{key:<18} {r['wall_s']:8.2f} {r['cpu_s']:7.2f} {r['user_s']:6.2f} {r['sys_s']:6.2f} {r['rss_mb']:7.1f} "
              f"{r['served']:7.0f} {r['records']:8.0f}")
    h = report["help"]
    print(f"{'evalsuite --help':<18} {h['wall_s']:8.3f} {h['cpu_s']:7.3f} {'':>6} {'':>6} {h['rss_mb']:7.1f}")
    print(f"stub server CPU s: {report['stub_cpu_s']}")
    print("\ntargets:")
    for name, t in report["targets"].items():
        extra = f" (ideal {t['ideal_s']} s)" if "ideal_s" in t else ""
        print(f"  {name:<20} {t['value']:>8} <= {t['target']:<5}{extra}  {verdict(t['ok'])}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode")
    s = sub.add_parser("serve", help="(internal) run the stub server; prints its port")
    s.add_argument("--latency-ms", type=float, default=0.0)
    s.add_argument("--answer-style", choices=("number", "letter"), default="number")
    s.add_argument("--tokens", type=int, default=0, help="long answers: tokens per answer, with logprobs")
    s.add_argument("--top", type=int, default=5, help="top-K alternatives per token (with --tokens)")
    b = sub.add_parser("bare", help="(internal) the bare aiohttp client")
    b.add_argument("--url", required=True)
    b.add_argument("--data-dir", required=True)
    b.add_argument("--concurrency", type=int, default=32)
    b.add_argument("--max-tokens", type=int, default=256)
    b.add_argument("--limit", type=int, default=None)
    parser.add_argument("--data-dir", default=str(default_data_dir()))
    parser.add_argument("--runs", type=int, default=3, help="repetitions per configuration (median reported)")
    parser.add_argument("--help-runs", type=int, default=5)
    parser.add_argument("--latencies", type=lambda s: [float(x) for x in s.split(",")], default=[0.0, 200.0],
                        help="comma-separated simulated server latencies in ms")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--limit", type=int, default=None, help="only the first N items (quick looks)")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON report here")
    parser.add_argument("--keep", action="store_true", help="keep the run folders (printed in the JSON)")
    parser.add_argument("--quiet", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.mode == "serve":
        return serve_main(args)
    if args.mode == "bare":
        return bare_main(args)
    report = main_bench(args)
    print_table(report)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
