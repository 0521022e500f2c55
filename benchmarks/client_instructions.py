"""Instructions per generated token of the client's streamed path with logprobs, counted by
valgrind: a figure that does not move with the machine's load (CPU seconds on the shared
2-core machine vary 2-3x from run to run whatever the code; docs/performance.md).

    python benchmarks/client_instructions.py              # 8 and 24 items, top-5, 1,000 tokens each
    python benchmarks/client_instructions.py --small 4 --large 12
    python benchmarks/client_instructions.py --short --small 200 --large 1000   # GSM8K's short answers, per item

What it counts: `Endpoint.complete` (SSE split, JSON parse, text and token columns) and the
record's token blob (`_encode_blob`), on the body benchmarks/overhead.py's long stub answers (one
chunk per token as llama-server streams, top-5 alternatives with bytes), handed over by a fake
aiohttp response in 16 KiB blocks, 32 streams interleaved as on a socket. No network, no
server, no start-up: the two runs' instruction counts are subtracted, over the tokens between
them. Under callgrind with OpenBLAS's threads off (idle, they spin and add counts) and a fixed
hash seed; ~2 minutes per 10,000 tokens. This checkout's evalsuite is the one measured.
`--short`: the stub's short answer instead ("The answer is N" in 4 deltas, finish, usage: a
GSM8K run's), no logprobs, counted per item. Internal mode `run N [short]`: the client path
alone, N items.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOKENS = 1000
BLOCK = 16 * 1024


def run(items: int, short: bool = False) -> None:
    sys.path.insert(0, str(REPO))
    sys.path.insert(1, str(REPO / "benchmarks"))
    import overhead

    overhead.LONG_TOKENS, overhead.LONG_TOP, overhead.ANSWER_STYLE = TOKENS, 5, "letter"
    body = overhead.sse_body(b"item") if short else overhead.long_sse_body(b"item")

    from evalsuite.client.endpoint import Endpoint
    from evalsuite.client.exchange import Decoding, Request
    from evalsuite.store import _encode_blob

    class Content:
        async def iter_any(self):
            for at in range(0, len(body), BLOCK):
                await asyncio.sleep(0)   # the other streams run in between, as on a socket
                yield body[at:at + BLOCK]

        def at_eof(self) -> bool:
            return True

    class Reply:
        status = 200
        content = Content()

        def release(self) -> None:
            pass

        def close(self) -> None:
            pass

    class Session:
        async def post(self, url, data=None):
            return Reply()

    async def main() -> None:
        endpoint = Endpoint("http://stub/v1", None, 600)
        endpoint._session = Session()
        decoding = Decoding(max_tokens=256) if short else Decoding(max_tokens=TOKENS + 100, logprobs=5)
        request = Request("subject/0", ({"role": "user", "content": "question"},))
        gc.freeze()
        gc.set_threshold(20_000, 20, 20)   # as the runner sets them for the run
        slots = asyncio.Semaphore(32)

        async def one() -> None:
            async with slots:
                response = await endpoint.complete(request, "stub", decoding)
                if response.logprobs is not None:
                    _encode_blob(request.item_id, response.logprobs)

        await asyncio.gather(*(one() for _ in range(items)))

    asyncio.run(main())


def instructions(items: int, short: bool = False) -> int:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                          __file__, "run", str(items)] + (["short"] if short else []),
                         env=env, capture_output=True, text=True, check=True).stderr
    return int(re.search(r"Collected : (\d+)", out).group(1))


def main() -> None:
    if sys.argv[1:2] == ["run"]:
        return run(int(sys.argv[2]), sys.argv[3:4] == ["short"])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--small", type=int, default=8)
    p.add_argument("--large", type=int, default=24)
    p.add_argument("--short", action="store_true", help="GSM8K's short answers, no logprobs: per item")
    args = p.parse_args()
    small, large = instructions(args.small, args.short), instructions(args.large, args.short)
    if args.short:
        print(f"{(large - small) / (args.large - args.small):,.0f} instructions per item, short answers ({REPO})")
        return
    per_token = (large - small) / ((args.large - args.small) * TOKENS)
    print(f"{per_token:,.0f} instructions per generated token ({REPO})")


if __name__ == "__main__":
    main()
