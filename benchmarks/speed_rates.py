"""`speed --rate` against its ground truth, and beside GuideLLM's Poisson profile (issue 44 #3, #5).

    python benchmarks/speed_rates.py                                  # the targets, ~2 min
    python benchmarks/speed_rates.py --guidellm ~/.cache/evalsuite/tools/guidellm-0.8.1/bin/guidellm \\
        --tokenizer ~/.cache/evalsuite/models/SmolLM2-135M-Instruct-from-Q4_1 --out rates.json

The paced fake server (tests/paced_server.py) in a process of its own, with two slots (a request
waits for a free one), 256-token prompts at 2,000 t/s and 24 tokens at 36 t/s (0.77 s a slot):
1. `evalsuite speed --rate R --requests N` at each --rates: the TTFT p50 against a simulation
   of the same queue over the same seeded arrivals (tests/queue_sim.py; target within 10%),
   and the client's lag;
2. goodput against planted misses: every 4th request decodes 4x slower (it misses tpot=60ms):
   the count within the SLO against the server's own list (target: exact);
3. with --guidellm: GuideLLM's `poisson` profile at 2.2 requests/s, 60 requests, beside
   `speed --rate 2.2 --requests 60`: each tool's TTFT p50, its realized arrival rate, the
   simulation over the schedule it asked for and over the sends it made, and how many distinct
   gaps its schedule had; GuideLLM once more with one worker process
   (GUIDELLM__MAX_WORKER_PROCESSES=1).
Load average before and after goes with the figures.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from queue_sim import p50_over_runs, service_of, simulate  # noqa: E402

PREFILL, DECODE, PP, TG, SLOTS, LATENCY = 2000.0, 36.0, 256, 24, 2, 0.01


def load() -> float:
    return os.getloadavg()[0]


def start_server(*extra: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "paced_server.py"), "--slots", str(SLOTS),
                             "--prefill-rate", str(PREFILL), "--decode-rate", str(DECODE), "--latency", str(LATENCY),
                             *extra], stdout=subprocess.PIPE, text=True)
    port = proc.stdout.readline().strip()
    return proc, f"http://127.0.0.1:{port}/v1"


def ours(url: str, rates: tuple[float, ...], n: int, data_dir: Path, slo: str | None = None):
    from evalsuite.speed import SpeedSettings, profile
    from evalsuite.speed.settings import parse_slo

    return profile(SpeedSettings(endpoint=url, pp=(PP,), tg=(TG,), rates=rates, requests=n, data_dir=data_dir,
                                 slo=parse_slo(slo), quiet=True)).load


def sim_p50(arrivals: list[float], prompt: int = PP) -> float:
    prefill, service = service_of(prompt, TG, PREFILL, DECODE)
    n = len(arrivals)
    return statistics.median(simulate(sorted(arrivals), SLOTS, LATENCY, [prefill] * n, [service] * n))


def guidellm(binary: str, tokenizer: str, url: str, rate: float, n: int, folder: Path, workers: int | None = None) -> dict:
    out = folder / "guidellm.json"
    cmd = [binary, "run", "--backend", f"kind=openai_http,target={url.removesuffix('/v1')}", "--profile",
           f"kind=poisson,rate={rate}", "--constraint", f"kind=max_requests,count={n}", "--data",
           f"kind=synthetic_text,prompt_tokens={PP - 27},output_tokens={TG}", "--tokenizer",
           f"kind=huggingface_auto,model={tokenizer}", "--output", f"kind=json,path={out}", "--disable-progress"]
    env = dict(os.environ, **({"GUIDELLM__MAX_WORKER_PROCESSES": str(workers)} if workers else {}))
    subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True, cwd=folder, env=env)
    bench = json.loads(out.read_text())["benchmarks"][0]
    reqs = bench["requests"]["successful"]
    t = [r["info"]["timings"] for r in reqs]
    targets = sorted(x["targeted_start"] for x in t)
    sends = sorted(x["request_start"] for x in t)
    ttft = [x["first_token_iteration"] - x["request_start"] for x in t]
    gaps = {round(b - a, 6) for a, b in zip(targets, targets[1:])}
    prompt = statistics.median(r["prompt_tokens"] for r in reqs)
    return {"requests": len(reqs), "workers": bench["config"]["strategy"].get("worker_count"),
            "ttft_p50_ms": 1000 * statistics.median(ttft), "asked_rate": rate,
            "schedule_rate": (len(targets) - 1) / (targets[-1] - targets[0]),
            "sent_rate": (len(sends) - 1) / (sends[-1] - sends[0]), "distinct_gaps": len(gaps),
            "lag_p99_ms": 1000 * sorted(s - g for s, g in zip(sends, targets))[int(0.99 * (len(t) - 1))],
            "prompt_tokens": prompt,
            "sim_schedule_p50_ms": 1000 * sim_p50([x - targets[0] for x in targets], round(prompt)),
            "sim_sends_p50_ms": 1000 * sim_p50([x - sends[0] for x in sends], round(prompt))}


def sweep_rows(rates: tuple[float, ...], n: int, data_dir: Path) -> list[dict]:
    """Our TTFT p50 at each rate against the simulation of the same schedule."""
    from evalsuite.speed.load_rows import poisson_arrivals

    proc, url = start_server()
    try:
        t0 = time.time()
        rows = []
        for point in ours(url, rates, n, data_dir).points:
            sim = 1000 * sim_p50(poisson_arrivals(point.rate, n, 0))
            rows.append({"rate": str(point.rate), "ttft_p50_ms": point.ttft_ms[0], "sim_p50_ms": sim,
                         "off": point.ttft_ms[0] / sim - 1, "lag_p99_ms": point.lag_ms[1],
                         "sent_rate": point.achieved_rate})
            print(f"rate {point.rate:>5}: TTFT p50 {point.ttft_ms[0]:8.1f} ms, simulation {sim:8.1f} ms "
                  f"({100 * (point.ttft_ms[0] / sim - 1):+.1f}%, target within 10%); lag p99 {point.lag_ms[1]:.1f} ms")
        print(f"  ({time.time() - t0:.0f} s)")
        return rows
    finally:
        proc.terminate()
        proc.wait(10)


def goodput(data_dir: Path) -> dict:
    """Every 4th request planted 4x slower: the count within tpot=60ms against the server's list."""
    import urllib.request

    proc, url = start_server("--slow-every", "4")
    try:
        point = ours(url, (2.0,), 24, data_dir, slo="tpot=60ms").points[0]
        served = json.loads(urllib.request.urlopen(url.removesuffix("/v1") + "/served").read())["served"]
        slow = sum(bool(r["slow"]) for r in served[-24:])
        print(f"goodput: {point.good} of {point.requests} within tpot=60ms; planted misses {slow} "
              f"(target: exactly {point.requests - slow})")
        return {"good": point.good, "requests": point.requests, "planted_misses": slow}
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rates", default="1,2,2.5,inf")
    p.add_argument("--requests", type=int, default=30)
    p.add_argument("--guidellm", default=None, help="GuideLLM's entry point (its own venv)")
    p.add_argument("--tokenizer", default=None, help="a local HF tokenizer folder for GuideLLM's synthetic data")
    p.add_argument("--data-dir", type=Path, default=Path(os.environ.get("EVALSUITE_DATA_DIR", ROOT.parent / "shared" / "data")))
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--skip-sweep", action="store_true", help="only the side by side with GuideLLM")
    a = p.parse_args()
    rates = tuple(math.inf if r == "inf" else float(r) for r in a.rates.split(","))
    report: dict = {"load_before": load(), "setup": {"slots": SLOTS, "prefill_tps": PREFILL, "decode_tps": DECODE,
                                                    "pp": PP, "tg": TG, "latency_s": LATENCY}}
    prefill, service = service_of(PP, TG, PREFILL, DECODE)
    if not a.skip_sweep:
        report["sweep"] = sweep_rows(rates, a.requests, a.data_dir)
        report["goodput"] = goodput(a.data_dir)
    if a.guidellm:
        # a fresh server for each client: GuideLLM's seeded prompts are the same in every run, and
        # the paced server's prefix cache would serve a second run's from the first's
        def fresh(run):
            proc, url = start_server()
            try:
                return run(url)
            finally:
                proc.terminate()
                proc.wait(10)

        def gl(workers):
            def run(url):
                with tempfile.TemporaryDirectory() as folder:
                    return guidellm(a.guidellm, a.tokenizer, url, 2.2, 60, Path(folder), workers=workers)
            return run

        report["guidellm"] = fresh(gl(None))
        report["guidellm_one_worker"] = fresh(gl(1))     # one worker process: one generator
        point = fresh(lambda url: ours(url, (2.2,), 60, a.data_dir)).points[0]
        sends = sorted(s["due"] + s["lag"] for s in point.sent)
        band = p50_over_runs(2.2, 60, SLOTS, LATENCY, prefill, service, 1000)
        report["evalsuite"] = {"ttft_p50_ms": point.ttft_ms[0], "sent_rate": point.achieved_rate,
                               "lag_p99_ms": point.lag_ms[1], "sim_sends_p50_ms": 1000 * sim_p50(sends),
                               "sim_band_ms": [1000 * x for x in band]}
        print(json.dumps({k: report[k] for k in ("guidellm", "guidellm_one_worker", "evalsuite")}, indent=1))
    report["load_after"] = load()
    print(f"load average before {report['load_before']:.2f}, after {report['load_after']:.2f}")
    if a.out:
        a.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
