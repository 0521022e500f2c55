"""The shape every engine file fills in, and what detection reads from an endpoint's replies.

An engine file (llama_server.py, vllm.py, ...) says what its server is and what it reports:
`ENGINE = Engine(...)` with how to recognise it from the replies of GET /v1/models, /props,
/version and /openapi.json, the sampler settings that make its temperature 0 greedy, the
speculation counters it serves at /metrics, its per-response `timings`, where it puts reasoning
text, and the quirks the client and the runner must handle. `engines/__init__.py` lists the
files in the order detection tries them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class EngineProfile:
    engine: str                              # llama.cpp, llama-cpp-python, vllm, sglang or unknown
    version: str | None = None
    evidence: tuple[str, ...] = ()           # what identified it
    server_defaults: Mapping[str, Any] = field(default_factory=dict)   # sampler defaults the server reported
    # the engine's own determinism setting as the server reported it (Engine.determinism); None:
    # the engine has none evalsuite knows of (the key is then left out of the manifest)
    determinism: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"engine": self.engine, "version": self.version, "evidence": list(self.evidence),
               "server_defaults": dict(self.server_defaults)}
        if self.determinism is not None:
            out["determinism"] = dict(self.determinism)
        return out


@dataclass(frozen=True)
class Replies:
    """The JSON replies of GET /v1/models, /props, /version and /openapi.json (None where a
    request failed), with the two things most engines are told apart by."""
    models: Any = None
    props: Any = None
    version: Any = None
    openapi: Any = None

    @property
    def owned(self) -> set[str]:
        data = self.models.get("data") if isinstance(self.models, dict) else None
        return {str(m.get("owned_by")) for m in data or () if isinstance(m, dict) and m.get("owned_by")}

    @property
    def title(self) -> str:
        openapi = self.openapi
        return ((openapi or {}).get("info") or {}).get("title", "") if isinstance(openapi, dict) else ""


@dataclass(frozen=True)
class Engine:
    """What one engine file says about its server."""
    name: str                                            # the manifest's `engine.endpoints[].engine`
    detect: Callable[[Replies], EngineProfile | None]    # its profile, or None: not this engine
    neutral: Mapping[str, Any] = field(default_factory=dict)   # sent at temperature 0 so it decodes greedily
    # weaker evidence (an owned_by another server could also say), tried only once every
    # engine's `detect` found nothing
    detect_fallback: Callable[[Replies], EngineProfile | None] | None = None
    # the settings to send for a detected profile, where they depend on what the server reported
    neutral_for: Callable[[EngineProfile], dict[str, Any]] | None = None
    spec_metrics: tuple[str, ...] = ()   # its /metrics speculation counters (speculation.py sums them by suffix)
    timings_key: str | None = None       # the response field with its per-response server timings
    reasoning_fields: tuple[str, ...] = ()   # the chat delta fields that carry reasoning text
    logprobs: str = ""                   # its logprob quirks, for a reader (docs/engines.md has the detail)
    # a line for the end of a run whose errors this engine explains, or None
    interrupt_hint: Callable[[dict[str, Any], int], str | None] | None = None
    start_example: str = ""              # a command line that starts it on port 8080, for "nothing answers"
    # its determinism setting (batch invariance), read from the server: given get(path) -> JSON
    # or None for a GET at the server root, `{setting, value, source}` (value None: not reported)
    determinism: Callable[[Callable[[str], Any]], dict[str, Any]] | None = None
    # its GET /models answers only once the requests it is serving are done (llama-cpp-python: the
    # endpoint takes the model's lock), so the watchdog's probe of a busy server waits that long
    models_wait_for_requests: bool = False


def root(base_url: str) -> str:
    url = base_url.rstrip("/")
    return url[:-3] if url.endswith("/v1") else url
