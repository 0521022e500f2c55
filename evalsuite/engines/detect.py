"""Which engine serves an endpoint, and the settings that make its temperature-0 decoding greedy.

`evalsuite run` asks each endpoint once before the first item (GET /v1/models, then /props,
/version or /openapi.json at the server root) and records what it found in the manifest. Some
engines apply sampler settings by default even at temperature 0, so "greedy" runs are not:

Each engine's file (llama_server.py, llama_cpp_python.py, vllm.py, sglang.py, transformers_serve.py)
says which settings and why.

A value the user set in --extra-body is never overridden. The end-of-run check
(`GreedyCheck`) still counts the tokens that were not the server's own top-1, for the engines
this does not know.
"""
from __future__ import annotations

import json
import urllib.request
from dataclasses import replace
from typing import Any, Mapping, Sequence

from . import llama_cpp_python, llama_server, sglang, transformers_serve, vllm
from .base import PROBE_TIMEOUT_S, Engine, EngineProfile, Replies, root as _root

# every engine file, in the order detection tries them: a new engine is one file and one line here
ENGINES: tuple[Engine, ...] = (llama_server.ENGINE, llama_cpp_python.ENGINE, vllm.ENGINE, sglang.ENGINE,
                               transformers_serve.ENGINE)
BY_NAME = {e.name: e for e in ENGINES}

# neutral values of the fields that change which token a greedy decoder picks
LLAMA_CPP_NEUTRAL = llama_server.LLAMA_CPP_NEUTRAL
NEUTRAL_BY_ENGINE: dict[str, dict[str, Any]] = {**{e.name: dict(e.neutral) for e in ENGINES}, "unknown": {}}


def profile_from_replies(models: Any, props: Any = None, version: Any = None, openapi: Any = None) -> EngineProfile:
    """The engine from the JSON replies of GET /v1/models, /props, /version and /openapi.json
    (None where a request failed). Pure: the tests feed it recorded replies."""
    replies = Replies(models, props, version, openapi)
    tries = [e.detect for e in ENGINES] + [e.detect_fallback for e in ENGINES if e.detect_fallback is not None]
    for detect in tries:
        profile = detect(replies)
        if profile is not None:
            return profile
    return EngineProfile("unknown", None, tuple(f"owned_by {o}" for o in sorted(replies.owned)))


def neutral_for(profile: EngineProfile) -> dict[str, Any]:
    """The settings to send so temperature 0 is greedy on this engine."""
    engine = BY_NAME.get(profile.engine)
    if engine is not None and engine.neutral_for is not None:
        return engine.neutral_for(profile)
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
    if llama_server.has_props(props):
        return profile_from_replies(models, props)
    version = _get_json(root + "/version", api_key, timeout)
    openapi = _get_json(root + "/openapi.json", api_key, timeout)
    profile = profile_from_replies(models, None, version, openapi)
    engine = BY_NAME.get(profile.engine)
    if engine is not None and engine.determinism is not None:   # vLLM's batch invariance, SGLang's deterministic mode
        profile = replace(profile, determinism=engine.determinism(lambda path: _get_json(root + path, api_key, timeout)))
    return profile


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


def models_wait_for_requests(entry: Mapping[str, Any], urls: Sequence[str]) -> set[str]:
    """The endpoints (by URL, in the order they were detected) whose engine's GET /models waits for
    the requests it is serving: the watchdog must not read a busy one as stuck."""
    names = [e.get("engine") for e in entry.get("endpoints") or ()]
    return {url for url, name in zip(urls, names) if name in BY_NAME and BY_NAME[name].models_wait_for_requests}
