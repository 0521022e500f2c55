"""One file per engine (evalsuite/engines/): every engine file fills in the shape and is listed
for detection, speculation.py reads every counter an engine file says its server serves, and the
client asks the engines package instead of naming an engine itself."""
from __future__ import annotations

import ast
from pathlib import Path

import evalsuite
from evalsuite import engines
from evalsuite.engines import ENGINES, Engine, reasoning_of, server_timings_of
from evalsuite.speculation import counters_from_metrics, parse_prometheus

ROOT = Path(evalsuite.__file__).parent
NOT_ENGINES = {"__init__", "base", "detect", "greedy"}
ENGINE_NAMES = ("llama", "vllm", "sglang", "transformers")


def test_every_engine_file_is_listed_once_for_detection():
    import importlib

    files = sorted(p.stem for p in (ROOT / "engines").glob("*.py") if p.stem not in NOT_ENGINES)
    assert files == ["llama_cpp_python", "llama_server", "sglang", "transformers_serve", "vllm"]
    for stem in files:
        engine = importlib.import_module(f"evalsuite.engines.{stem}").ENGINE
        assert isinstance(engine, Engine)
        assert sum(e is engine for e in ENGINES) == 1, f"{stem}.ENGINE is not in engines.detect.ENGINES"
    assert len({e.name for e in ENGINES}) == len(ENGINES)


def test_speculation_reads_the_counters_every_engine_file_names():
    with_counters = [e for e in ENGINES if e.spec_metrics]
    assert {e.name for e in with_counters} >= {"llama.cpp", "vllm"}
    for e in with_counters:
        drafted, accepted = e.spec_metrics
        text = f'{drafted}{{engine="0"}} 12\n{drafted}{{engine="1"}} 8\n{accepted} 5\n'
        got = counters_from_metrics(parse_prometheus(text))
        assert got is not None and (got.drafted, got.accepted) == (20.0, 5.0), e.name


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """String constants in a module's code, docstrings left out (they may name engines)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_the_client_and_runner_name_no_engine_in_their_code():
    for module in ("client/endpoint.py", "run/runner.py"):
        named = [(line, s[:80]) for line, s in _code_strings(ROOT / module)
                 if any(name in s.lower() for name in ENGINE_NAMES)]
        assert not named, f"{module} names an engine; ask evalsuite.engines instead: {named}"


def test_reasoning_and_timings_come_from_the_fields_the_engine_files_name():
    assert reasoning_of({"reasoning": "vllm's field"}) == "vllm's field"
    assert reasoning_of({"reasoning_content": "first", "reasoning": "second"}) == "first"
    assert reasoning_of({"content": "answer"}) is None and reasoning_of(None) is None
    assert server_timings_of({"timings": {"predicted_n": 3}}) == {"predicted_n": 3}
    assert server_timings_of({"usage": {}}) is None
    assert engines.empty_stream_may_be_overflow(0, dropped=True, stalled=False)
    assert not engines.empty_stream_may_be_overflow(3, dropped=True, stalled=False)
    assert not engines.empty_stream_may_be_overflow(0, dropped=False, stalled=False)


def test_an_owned_by_that_another_server_could_say_is_tried_last():
    """Detection order as before the split: /props, llama-cpp-python's openapi title, vLLM's and
    SGLang's owned_by come before owned_by "llamacpp" and owned_by "me"."""
    from evalsuite.engines import profile_from_replies

    def models(*owners):
        return {"data": [{"id": str(i), "owned_by": o} for i, o in enumerate(owners)]}

    title = {"info": {"title": "🦙 llama.cpp Python API", "version": "0.3.16"}}
    assert profile_from_replies(models("llamacpp"), None, None, title).engine == "llama-cpp-python"
    assert profile_from_replies(models("llamacpp", "vllm")).engine == "vllm"
    assert profile_from_replies(models("sglang", "llamacpp")).engine == "sglang"
    assert profile_from_replies(models("llamacpp")).engine == "llama.cpp"
    assert profile_from_replies(models("me")).engine == "llama-cpp-python"
    assert profile_from_replies(models("me", "openai")).engine == "unknown"
