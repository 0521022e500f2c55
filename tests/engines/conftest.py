"""Fixtures for the real-engine tests: where each engine is, whether to skip it, the tiny models.

A test of an engine that is not installed is skipped with the command that installs it, unless
CI=true: CI builds every engine (.ci/run), so an absent one there is a failure, not a skip.
EVALSUITE_SKIP_ENGINES=vllm,transformers (or `all`) skips engines on purpose, anywhere.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from engine_servers import (SCRIPTS, engine_cache, hf_model_python, llama_server_binary, tiny_hf_model,
                            transformers_python, vllm_python)

LOCATORS = {"llamacpp_server": llama_server_binary, "vllm": vllm_python, "transformers": transformers_python}


def skipped_engines() -> set[str]:
    return {name.strip() for name in os.environ.get("EVALSUITE_SKIP_ENGINES", "").split(",") if name.strip()}


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_engine(name: str):
    """The engine's executable; skips (or fails under CI) when it is absent."""
    skipped = skipped_engines()
    if name in skipped or "all" in skipped:
        pytest.skip(f"{name}: skipped by EVALSUITE_SKIP_ENGINES={os.environ['EVALSUITE_SKIP_ENGINES']}")
    found = LOCATORS[name]()
    if found is not None:
        return found
    message = (f"{name} is not installed in {engine_cache()}: run {SCRIPTS[name]} "
               f"(or set EVALSUITE_SKIP_ENGINES={name} to skip it)")
    if in_ci():
        pytest.fail(f"{message}; CI runs every engine test", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def llama_server_bin() -> Path:
    return require_engine("llamacpp_server")


@pytest.fixture(scope="session")
def vllm_py() -> Path:
    return require_engine("vllm")


@pytest.fixture(scope="session")
def transformers_py() -> Path:
    return require_engine("transformers")


@pytest.fixture(scope="session")
def tiny_hf():
    """A function (perturb=0.0, seed=0) -> folder of the tiny HF model (cached across sessions)."""
    if hf_model_python() is None:
        require_engine("transformers")

    def model(perturb: float = 0.0, seed: int = 0) -> Path:
        return tiny_hf_model(perturb=perturb, seed=seed)

    return model
