"""Which engine serves an endpoint, and the settings that make its temperature-0 decoding greedy.

`evalsuite run` asks each endpoint once before the first item (GET /v1/models, then /props,
/version or /openapi.json at the server root) and records what it found in the manifest. Some
engines apply sampler settings by default even at temperature 0, so "greedy" runs are not:

- llama-cpp-python (its server's request models, llama_cpp/server/types.py): repeat_penalty
  defaults to 1.1, applied before the greedy pick (Llama._init_sampler adds the penalties
  sampler whatever the temperature). presence/frequency penalties default to 0. Neutral:
  {"repeat_penalty": 1.0}.
- llama.cpp's llama-server: its request defaults are neutral (repeat_penalty 1.0, DRY off), but
  the server's own command line can change them; /props shows the defaults it applies
  (default_generation_settings), so any that is not neutral is sent back at its neutral value.
- vLLM: by default it takes sampling defaults from the model's generation_config.json
  (repetition_penalty 1.05 for some models), applied at temperature 0 too. Neutral:
  {"repetition_penalty": 1.0}.
- SGLang: the same field and the same risk. Neutral: {"repetition_penalty": 1.0}.

A value the user set in --extra-body is never overridden. The end-of-run check
(`GreedyCheck`) still counts the tokens that were not the server's own top-1, for the engines
this does not know.
"""
from __future__ import annotations

import json
import sys
import urllib.request
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

from .lossless.tokens import not_top1_count, not_top1_in_columns

PROBE_TIMEOUT_S = 5.0

# neutral values of the fields that change which token a greedy decoder picks
LLAMA_CPP_NEUTRAL = {"repeat_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0, "dry_multiplier": 0.0}
NEUTRAL_BY_ENGINE: dict[str, dict[str, Any]] = {
    "llama-cpp-python": {"repeat_penalty": 1.0},
    "llama.cpp": {},          # only what /props shows is not neutral (neutral_for)
    "vllm": {"repetition_penalty": 1.0},
    "sglang": {"repetition_penalty": 1.0},
    "unknown": {},
}


@dataclass(frozen=True)
class EngineProfile:
    engine: str                              # llama.cpp, llama-cpp-python, vllm, sglang or unknown
    version: str | None = None
    evidence: tuple[str, ...] = ()           # what identified it
    server_defaults: Mapping[str, Any] = field(default_factory=dict)   # sampler defaults the server reported

    def to_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "version": self.version, "evidence": list(self.evidence),
                "server_defaults": dict(self.server_defaults)}


def _root(base_url: str) -> str:
    url = base_url.rstrip("/")
    return url[:-3] if url.endswith("/v1") else url


def profile_from_replies(models: Any, props: Any = None, version: Any = None, openapi: Any = None) -> EngineProfile:
    """The engine from the JSON replies of GET /v1/models, /props, /version and /openapi.json
    (None where a request failed). Pure: the tests feed it recorded replies."""
    data = models.get("data") if isinstance(models, dict) else None
    owned = {str(m.get("owned_by")) for m in data or () if isinstance(m, dict) and m.get("owned_by")}
    title = ((openapi or {}).get("info") or {}).get("title", "") if isinstance(openapi, dict) else ""
    if isinstance(props, dict) and ("default_generation_settings" in props or "build_info" in props):
        settings = props.get("default_generation_settings") or {}
        params = settings.get("params") if isinstance(settings.get("params"), dict) else settings
        defaults = {k: params[k] for k in LLAMA_CPP_NEUTRAL if k in params}
        return EngineProfile("llama.cpp", props.get("build_info"), ("GET /props",) + tuple(f"owned_by {o}" for o in owned),
                             defaults)
    if "llama.cpp Python" in title:
        return EngineProfile("llama-cpp-python", ((openapi or {}).get("info") or {}).get("version"),
                             (f"openapi title {title!r}",))
    if "vllm" in owned:
        v = version.get("version") if isinstance(version, dict) else None
        return EngineProfile("vllm", v, ("owned_by vllm",) + (("GET /version",) if v else ()))
    if "sglang" in owned:
        return EngineProfile("sglang", None, ("owned_by sglang",))
    if "llamacpp" in owned:
        return EngineProfile("llama.cpp", None, ("owned_by llamacpp",))
    if owned == {"me"}:
        # llama-cpp-python's /v1/models says owned_by "me" (llama_cpp/server/app.py)
        return EngineProfile("llama-cpp-python", None, ("owned_by me",))
    return EngineProfile("unknown", None, tuple(f"owned_by {o}" for o in sorted(owned)))


def neutral_for(profile: EngineProfile) -> dict[str, Any]:
    """The settings to send so temperature 0 is greedy on this engine."""
    if profile.engine == "llama.cpp":
        return {k: LLAMA_CPP_NEUTRAL[k] for k, v in profile.server_defaults.items()
                if isinstance(v, (int, float)) and float(v) != LLAMA_CPP_NEUTRAL[k]}
    return dict(NEUTRAL_BY_ENGINE.get(profile.engine, {}))


def _get_json(url: str, api_key: str | None, timeout: float) -> Any:
    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as r:
            return json.loads(r.read(1 << 20).decode("utf-8", errors="replace"))
    except Exception:   # a probe that fails only means "not this engine"
        return None


def detect_engine(base_url: str, api_key: str | None = None, timeout: float = PROBE_TIMEOUT_S) -> EngineProfile:
    """Ask the endpoint what it is (a few GETs, each bounded by `timeout`)."""
    root = _root(base_url)
    models = _get_json(base_url.rstrip("/") + "/models", api_key, timeout)
    props = _get_json(root + "/props", api_key, timeout)
    if isinstance(props, dict) and ("default_generation_settings" in props or "build_info" in props):
        return profile_from_replies(models, props)
    version = _get_json(root + "/version", api_key, timeout)
    openapi = _get_json(root + "/openapi.json", api_key, timeout)
    return profile_from_replies(models, None, version, openapi)


def engine_settings(profiles: Sequence[EngineProfile], temperature: float,
                    user_extra_body: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the neutral settings to add to the request body, the manifest's `engine` entry).
    Nothing is sent when sampling (temperature > 0) or where the user set the field."""
    wanted: dict[str, Any] = {}
    for p in profiles:
        wanted.update(neutral_for(p))
    sent = {k: v for k, v in wanted.items() if k not in user_extra_body} if temperature == 0 else {}
    kept = sorted(k for k in wanted if k in user_extra_body)
    entry = {"endpoints": [p.to_dict() for p in profiles], "neutral_sent": sent, "user_set": kept,
             "why": ("temperature 0 must be greedy: these engines' defaults would change the token picked"
                     if sent else "nothing to send" if temperature == 0 or not wanted else "temperature > 0: sampling")}
    return sent, entry


async def apply_neutral_settings(settings: Any, api_key: str | None) -> tuple[Any, dict[str, Any]]:
    """For the runner: detect each endpoint's engine, merge the neutral settings into the
    request body (never over --extra-body), return (settings, manifest `engine` entry)."""
    import asyncio

    profiles = [await asyncio.to_thread(detect_engine, url, api_key) for url in settings.endpoints]
    decoding = settings.decoding
    sent, entry = engine_settings(profiles, decoding.temperature, decoding.extra_body)
    if sent:
        settings = replace(settings, decoding=replace(decoding, extra_body={**sent, **decoding.extra_body}))
    return settings, entry


class GreedyCheck:
    """Counts, over a run's records, the emitted tokens that were not the server's own top-1
    (records with logprobs only), and says so at the end of a greedy run."""

    def __init__(self) -> None:
        self.tokens = self.not_top1 = self.items = 0

    def add(self, record: Mapping[str, Any], tokens: Any = None) -> None:
        """`tokens`: the record's token stream as the client collected it (store.TokenColumns),
        or None to read an inline `record["logprobs"]` list."""
        if tokens is not None and hasattr(tokens, "to_arrow"):
            n_tokens, n = len(tokens), not_top1_in_columns(tokens.to_arrow()) if len(tokens) else 0
        else:

            entries = tokens if tokens is not None else record.get("logprobs")
            n_tokens, n = len(entries or ()), not_top1_count(entries) if entries else 0
        self.tokens += n_tokens
        self.not_top1 += n
        self.items += n > 0

    def warning(self) -> str | None:
        if not self.not_top1:
            return None
        return (f"warning: {self.not_top1} of {self.tokens} generated tokens (in {self.items} items) were not the "
                f"server's own top-1 choice: this run did not decode greedily, and `evalsuite diff` will mark those "
                f"items not_greedy. Set the engine's neutral sampler settings, e.g. --extra-body "
                f"'{{\"repeat_penalty\": 1.0}}' (llama-cpp-python) or '{{\"repetition_penalty\": 1.0}}' (vLLM, SGLang).")

    def warn(self, stream: Any = None) -> None:
        text = self.warning()
        if text:
            print(text, file=stream or sys.stderr)

