"""Records real engine responses as small fixture files, so the client's handling of each engine's
quirks can be tested without the engines (tests/engines/fixtures/).

    .venv/bin/python tests/engines/capture_fixtures.py [llamacpp_server] [vllm] [transformers] [llama_cpp_python]

Each case is written as NAME.json (an unstreamed response) or NAME.sse (the raw `data:` lines of
a streamed one, exactly as sent), and described in fixtures/index.json: engine, version, the
request, and the quirk it shows. Engines that are not installed are left out, saying so.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from engine_servers import (LlamaCppServer, MODEL_ALIAS, TransformersServer, VllmServer,  # noqa: E402
                            llama_server_binary, tiny_hf_model, transformers_python, vllm_python)

FIXTURES = HERE / "fixtures"
REPO = HERE.parents[1]
MULTIBYTE = "é€😀ж中"


def chat(content: str, model: str = MODEL_ALIAS, **extra) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": content}], "max_tokens": 48,
            "temperature": 0, **extra}


class Recorder:
    def __init__(self):
        path = FIXTURES / "index.json"
        self.index = json.loads(path.read_text()) if path.exists() else {}

    def save(self, name: str, engine: str, version: str, request: dict, quirk: str, response=None,
             lines: list[bytes] | None = None) -> None:
        FIXTURES.mkdir(parents=True, exist_ok=True)
        if lines is not None:
            file = f"{name}.sse"
            (FIXTURES / file).write_bytes(scrub(b"\n\n".join(lines) + b"\n\n"))
        else:
            file = f"{name}.json"
            (FIXTURES / file).write_bytes(scrub(json.dumps(response, ensure_ascii=False, indent=1).encode() + b"\n"))
        request = json.loads(scrub(json.dumps(request).encode()))
        self.index[name] = {"file": file, "engine": engine, "version": version, "request": request, "quirk": quirk}
        print(f"  {file}: {quirk}")

    def close(self) -> None:
        (FIXTURES / "index.json").write_text(json.dumps(dict(sorted(self.index.items())), ensure_ascii=False,
                                                        indent=1) + "\n")


def scrub(data: bytes) -> bytes:
    """Paths of the capturing machine (the engine cache, the checkout) become placeholders:
    the fixtures are shared and must not name one machine's folders."""
    import os

    cache = os.environ.get("EVALSUITE_ENGINE_CACHE") or str(Path.home() / ".cache" / "evalsuite" / "engines")
    for path, placeholder in ((cache, "<engine-cache>"), (str(REPO), "<repo>"), (str(Path.home()), "~")):
        data = data.replace(path.encode(), placeholder.encode())
    return data


def version_of(server) -> str:
    for path in ("/version", "/props"):
        try:
            from engine_servers import _get
            body = json.loads(_get(f"{server.base}{path}")[1])
            return str(body.get("version") or body.get("build_info") or body)[:80]
        except Exception:
            continue
    return "unknown"


def find_prompt(server, want, tries: int = 120, **extra) -> tuple[str, dict]:
    """A prompt whose greedy answer satisfies want(response): the tiny model's text depends on it."""
    for n in range(tries):
        content = f"Question {n}: a shop sells {n + 3} apples at {n % 7 + 2} dollars each. What is the total?"
        r = server.post("/v1/chat/completions", chat(content, **extra))
        if want(r):
            return content, r
    raise RuntimeError("no prompt found")


def capture_llama_server(rec: Recorder) -> None:
    sys.path.insert(0, str(HERE.parent))
    from tiny_gguf import write_tiny_gguf

    gguf = write_tiny_gguf(FIXTURES.parent / ".tiny-f32.gguf")
    try:
        with LlamaCppServer(gguf) as s:
            v = version_of(s)
            body = chat("Natalia sold 48 clips. How many in May?", logprobs=True, top_logprobs=3)
            rec.save("llama_server-chat-logprobs", "llama-server", v, body,
                     "logprob entries {id, token, bytes, logprob, top_logprobs:[{id, token, bytes, logprob}]}; "
                     "`timings` beside `usage`", response=s.post("/v1/chat/completions", body))
            sbody = dict(body, stream_options={"include_usage": True})
            rec.save("llama_server-chat-stream", "llama-server", v, sbody, "streamed logprobs and timings",
                     lines=s.post_stream("/v1/chat/completions", sbody))
            cbody = {"model": MODEL_ALIAS, "prompt": "The answer is", "max_tokens": 12, "temperature": 0, "logprobs": 3}
            rec.save("llama_server-completions-logprobs", "llama-server", v, cbody,
                     "/v1/completions logprobs in the chat shape (content entries), not the legacy OpenAI lists",
                     response=s.post("/v1/completions", cbody))
            ebody = {"model": MODEL_ALIAS, "prompt": "The answer is 42", "max_tokens": 0, "echo": True,
                     "temperature": 0, "logprobs": 3}
            try:
                rec.save("llama_server-completions-echo", "llama-server", v, ebody,
                         "echo + max_tokens 0 (what --rescore sends)", response=s.post("/v1/completions", ebody))
            except Exception as exc:
                print(f"  echo request refused: {exc}")
            # partial UTF-8: the random GGUF emits raw high bytes; the server merges them into one entry
            content, r = find_prompt(s, lambda r: len(r["choices"][0]["logprobs"]["content"])
                                     < r["usage"]["completion_tokens"], tries=60, logprobs=True, top_logprobs=2)
            rec.save("llama_server-chat-merged-bytes", "llama-server", v, chat(content, logprobs=True, top_logprobs=2),
                     "fewer logprob entries than usage.completion_tokens: partial UTF-8 byte tokens merged "
                     "into one entry (align on bytes, not positions)", response=r)
            rec.save("llama_server-props", "llama-server", v, {"GET": "/props"}, "/props (speculative.types none)",
                     response=json.loads(__import__("engine_servers")._get(f"{s.base}/props")[1]))
        with LlamaCppServer(gguf, draft_model=gguf) as s:
            v = version_of(s)
            body = chat("Natalia sold 48 clips. How many in May?", logprobs=True, top_logprobs=3)
            rec.save("llama_server-draft-chat-logprobs", "llama-server", v, body,
                     "draft model on: drafted tokens come back with logprob 0.0 and empty top_logprobs; "
                     "timings.draft_n / draft_n_accepted", response=s.post("/v1/chat/completions", body))
            rec.save("llama_server-draft-chat-stream", "llama-server", v, body,
                     "draft model on, streamed: chunks of drafted tokens carry no `logprobs` key",
                     lines=s.post_stream("/v1/chat/completions", body))
            rec.save("llama_server-draft-props", "llama-server", v, {"GET": "/props"},
                     "/props while drafting: default_generation_settings.params['speculative.types'] is still 'none'",
                     response=json.loads(__import__("engine_servers")._get(f"{s.base}/props")[1]))
            metrics = __import__("engine_servers")._get(f"{s.base}/metrics")[1].decode()
            (FIXTURES / "llama_server-draft-metrics.txt").write_text(metrics)
            rec.index["llama_server-draft-metrics"] = {"file": "llama_server-draft-metrics.txt", "engine": "llama-server",
                                                       "version": v, "request": {"GET": "/metrics"},
                                                       "quirk": "llamacpp:spec_decode_* counters (with --metrics)"}
    finally:
        (FIXTURES.parent / ".tiny-f32.gguf").unlink(missing_ok=True)


def capture_vllm(rec: Recorder) -> None:
    model = tiny_hf_model()
    for ngram in (False, True):
        with VllmServer(model, ngram=ngram) as s:
            v = version_of(s)
            tag = "vllm-ngram" if ngram else "vllm"
            lp = dict(logprobs=True, top_logprobs=3, stream_options={"include_usage": True})
            content, _ = find_prompt(s, lambda r: any(ch in r["choices"][0]["message"]["content"] for ch in MULTIBYTE))
            body = chat(content, **lp)
            rec.save(f"{tag}-chat-stream-partial-utf8", "vllm", v, body,
                     "a character split over byte tokens: entries with token '' / bytes [] or '\\ufffd' while the "
                     "text delta lags a chunk; usage on a final chunk with no choices" +
                     ("; several tokens per chunk under speculation" if ngram else ""),
                     lines=s.post_stream("/v1/chat/completions", body))
            rec.save(f"{tag}-chat-partial-utf8", "vllm", v, chat(content, logprobs=True, top_logprobs=3),
                     "unstreamed: bytes per entry show the split character",
                     response=s.post("/v1/chat/completions", chat(content, logprobs=True, top_logprobs=3)))
            if ngram:
                time.sleep(1)
                metrics = __import__("engine_servers")._get(f"{s.base}/metrics")[1].decode()
                keep = "\n".join(line for line in metrics.splitlines() if "spec_decode" in line or "vllm:num_requests" in line)
                (FIXTURES / "vllm-ngram-metrics.txt").write_text(keep + "\n")
                rec.index["vllm-ngram-metrics"] = {"file": "vllm-ngram-metrics.txt", "engine": "vllm", "version": v,
                                                   "request": {"GET": "/metrics"},
                                                   "quirk": "vllm:spec_decode_* counters (spec_decode lines only)"}
                continue
            tbody = chat(content, logprobs=True, top_logprobs=2, return_tokens_as_token_ids=True)
            rec.save("vllm-chat-token-ids", "vllm", v, tbody, "return_tokens_as_token_ids: tokens are 'token_id:N'",
                     response=s.post("/v1/chat/completions", tbody))
            cbody = {"model": MODEL_ALIAS, "prompt": content, "max_tokens": 24, "temperature": 0, "logprobs": 5}
            rec.save("vllm-completions-logprobs", "vllm", v, cbody,
                     "legacy completions: top_logprobs as {token: logprob} dicts (partial-UTF-8 tokens collide on '')",
                     response=s.post("/v1/completions", cbody))
            rec.save("vllm-completions-stream", "vllm", v, dict(cbody, stream_options={"include_usage": True}),
                     "legacy completions streamed", lines=s.post_stream("/v1/completions",
                                                                        dict(cbody, stream_options={"include_usage": True})))
            ebody = {"model": MODEL_ALIAS, "prompt": content, "max_tokens": 1, "echo": True, "temperature": 0,
                     "logprobs": 5, "prompt_logprobs": 5}
            try:
                rec.save("vllm-completions-echo", "vllm", v, ebody, "echo + prompt_logprobs (what --rescore reads)",
                         response=s.post("/v1/completions", ebody))
            except Exception as exc:
                print(f"  echo request refused: {exc}")


def capture_transformers(rec: Recorder) -> None:
    model = tiny_hf_model()
    with TransformersServer(model) as s:
        v = "transformers " + subprocess.run([str(transformers_python()), "-c", "import transformers; print(transformers.__version__)"],
                                             capture_output=True, text=True, check=True).stdout.strip()
        body = chat("What is 3 times 7?", s.model_name, logprobs=True, top_logprobs=3,
                    stream_options={"include_usage": True})
        rec.save("transformers-chat-stream", "transformers serve", v, body,
                 "ignores logprobs; no `data: [DONE]`; usage on the last content chunk",
                 lines=s.post_stream("/v1/chat/completions", body))
        rec.save("transformers-chat", "transformers serve", v, chat("What is 3 times 7?", logprobs=True),
                 "unstreamed: no logprobs",
                 response=s.post("/v1/chat/completions", chat("What is 3 times 7?", s.model_name, logprobs=True)))


def capture_llama_cpp_python(rec: Recorder) -> None:
    import threading
    import urllib.request

    from llama_server import EXTRA_BODY, LlamaServer
    from tiny_gguf import write_tiny_gguf

    gguf = write_tiny_gguf(FIXTURES.parent / ".tiny-f32.gguf")
    try:
        with LlamaServer(gguf) as s:
            import llama_cpp
            v = f"llama-cpp-python {llama_cpp.__version__}"
            base = s.url.rsplit("/v1", 1)[0]
            post = lambda path, body: json.load(urllib.request.urlopen(urllib.request.Request(  # noqa: E731
                base + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}), timeout=120))

            def stream(path, body):
                req = urllib.request.Request(base + path, data=json.dumps(dict(body, stream=True)).encode(),
                                             headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=120) as r:
                    return [line.rstrip(b"\r\n") for line in r if line.strip()]

            body = dict(chat("Natalia sold 48 clips. How many in May?", logprobs=True, top_logprobs=3), **EXTRA_BODY)
            rec.save("llama_cpp_python-chat-logprobs", "llama-cpp-python", v, body,
                     "partial UTF-8 tokens as '' with neither bytes nor ids; OpenAI chat shape",
                     response=post("/v1/chat/completions", body))
            rec.save("llama_cpp_python-chat-stream", "llama-cpp-python", v, body, "streamed chat with logprobs",
                     lines=stream("/v1/chat/completions", body))
            cbody = dict({"model": MODEL_ALIAS, "prompt": "The answer is", "max_tokens": 12, "temperature": 0,
                          "logprobs": 3}, **EXTRA_BODY)
            rec.save("llama_cpp_python-completions-logprobs", "llama-cpp-python", v, cbody,
                     "legacy completions lists", response=post("/v1/completions", cbody))
            # --interrupt_requests (default true): a new request cuts the stream in flight
            # the end-of-text tokens banned, so the first answer runs long enough to be cut
            long_body = dict(body, max_tokens=300, logit_bias={"270": -100, "271": -100, "272": -100})
            cut: list[bytes] = []

            def first():
                try:
                    cut.extend(stream("/v1/chat/completions", long_body))
                except Exception as exc:  # the cut may surface as a torn connection
                    cut.append(f"# client saw: {type(exc).__name__}: {exc}".encode())

            t = threading.Thread(target=first)
            t.start()
            time.sleep(0.3)
            post("/v1/chat/completions", dict(body, max_tokens=4))
            t.join(60)
            rec.save("llama_cpp_python-interrupted-stream", "llama-cpp-python", v, long_body,
                     "a second request arrived mid-stream: the first stream ends with `data: [DONE]` but no "
                     "finish_reason (--interrupt_requests defaults to true)", lines=cut)
    finally:
        (FIXTURES.parent / ".tiny-f32.gguf").unlink(missing_ok=True)


def _llama_cpp_python():
    from llama_server import llama_cpp_available

    return True if llama_cpp_available() else None


def main(argv: list[str]) -> int:
    wanted = set(argv) or {"llamacpp_server", "vllm", "transformers", "llama_cpp_python"}
    rec = Recorder()
    try:
        for name, present, capture in (("llamacpp_server", llama_server_binary, capture_llama_server),
                                       ("vllm", vllm_python, capture_vllm),
                                       ("transformers", transformers_python, capture_transformers),
                                       ("llama_cpp_python", _llama_cpp_python, capture_llama_cpp_python)):
            if name not in wanted:
                continue
            if present() is None:
                print(f"{name}: not installed, left out")
                continue
            print(f"{name}:")
            capture(rec)
    finally:
        rec.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
