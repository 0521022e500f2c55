"""Where the first token went, on real CPU servers (issue 44 #2): the TTFT of `evalsuite speed`'s
pp rows broken into the client's steps and the server's own queue and prefill, and how much of
the TTFT the named parts hold (target on vLLM CPU: the parts within 5% of the TTFT, or the rest
named).

    python benchmarks/speed_ttft_parts.py --hf-model ~/.cache/evalsuite/models/SmolLM2-135M-Instruct-from-Q4_1

vLLM's CPU build on the SmolLM2 weights (its /metrics histograms: queue and prefill per test),
and llama-server on the SmolLM2 GGUF (its per-response timings: prefill only), each at
pp 512, tg 32, concurrency 1 and 2 (one server slot for llama-server: the second stream queues).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))
from overhead import default_data_dir  # noqa: E402
from speed_rate_side_by_side import smollm2_gguf  # noqa: E402


def parts_of(url: str, data_dir: Path) -> list[dict]:
    from evalsuite.speed import SpeedSettings, profile

    from evalsuite.speed.table import profile_table

    p = profile(SpeedSettings(endpoint=url, pp=(512,), tg=(32,), concurrency=(1, 2), runs=3, data_dir=data_dir,
                              quiet=True))
    print(profile_table(p), flush=True)
    out = []
    for r in p.rows:
        if r.test != "pp" or not r.ttft_parts:
            continue
        t = r.ttft_parts
        named = sum(t[k] or 0 for k in ("connect", "send", "queue", "prefill"))
        out.append({"row": r.name, "text": t["text"], "server_source": t["server_source"], "ttft_ms": 1000 * t["ttft"],
                    "named_share": named / t["ttft"] if t["server_source"] else None,
                    "unaccounted_ms": None if t["unaccounted"] is None else 1000 * t["unaccounted"]})
        print(f"  {r.name}: {t['text']} ({t['server_source'] or 'no server figures'})", flush=True)
    return out


def main() -> int:
    from engine_servers import LlamaCppServer, VllmServer

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hf-model", type=Path, required=True)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--only", choices=("vllm", "llama-server"), default=None)
    a = p.parse_args()
    report = {"load_before": os.getloadavg()[0]}
    for name, make in (("vllm", lambda: VllmServer(a.hf_model, max_model_len=2048,
                                                   env={"OMP_NUM_THREADS": "2"})),
                       ("llama-server", lambda: LlamaCppServer(smollm2_gguf()))):
        if a.only not in (None, name):
            continue
        print(name, flush=True)
        with make() as server:
            report[name] = parts_of(server.url, default_data_dir())
    report["load_after"] = os.getloadavg()[0]
    if a.out:
        a.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
