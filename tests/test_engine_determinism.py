"""The manifest's engine entry records an engine's determinism setting as its server reports
it (issue 20): SGLang's enable_deterministic_inference from GET /get_server_info, vLLM's
VLLM_BATCH_INVARIANT from GET /server_info (a development endpoint) or "not reported by the
server"; other engines carry no such key. Fake servers shaped like each (only the replies
detection reads)."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evalsuite.engines import detect_engine, engine_settings


class _Server:
    def __init__(self, routes):
        routes = dict(routes)

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):   # noqa: N802
                body = routes.get(self.path)
                if body is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def models(owner):
    return {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": owner}]}


@pytest.mark.parametrize("reply, value", [
    ({"enable_deterministic_inference": True, "attention_backend": "fa3", "tp_size": 1}, True),
    ({"enable_deterministic_inference": False}, False),
    ({"server_args": {"enable_deterministic_inference": True}, "version": "0.5.4"}, True),
])
def test_sglang_deterministic_inference_is_recorded(reply, value):
    with _Server({"/v1/models": models("sglang"), "/get_server_info": reply}) as url:
        profile = detect_engine(url, timeout=5)
    assert profile.engine == "sglang"
    assert profile.determinism == {"setting": "enable_deterministic_inference", "value": value,
                                   "source": "GET /get_server_info enable_deterministic_inference"}
    _, entry = engine_settings([profile], 0.0, {})
    assert entry["endpoints"][0]["determinism"]["value"] is value


def test_sglang_without_the_flag_says_not_reported():
    with _Server({"/v1/models": models("sglang"), "/get_server_info": {"tp_size": 1}}) as url:
        profile = detect_engine(url, timeout=5)
    assert profile.determinism["value"] is None
    assert profile.determinism["source"].startswith("not reported by the server")
    with _Server({"/v1/models": models("sglang")}) as url:
        assert "did not answer" in detect_engine(url, timeout=5).determinism["source"]


def test_vllm_batch_invariance_from_the_dev_server_info_or_not_reported():
    version = {"version": "0.32.0"}
    with _Server({"/v1/models": models("vllm"), "/version": version}) as url:
        profile = detect_engine(url, timeout=5)
    assert profile.engine == "vllm" and profile.version == "0.32.0"
    assert profile.determinism["setting"] == "VLLM_BATCH_INVARIANT" and profile.determinism["value"] is None
    assert "not reported by the server" in profile.determinism["source"]
    info = {"vllm_config": "model=m", "vllm_env": {"VLLM_BATCH_INVARIANT": True, "VLLM_CPU_KVCACHE_SPACE": 1},
            "system_env": {}}
    with _Server({"/v1/models": models("vllm"), "/version": version, "/server_info": info}) as url:
        profile = detect_engine(url, timeout=5)
    assert profile.determinism == {"setting": "VLLM_BATCH_INVARIANT", "value": True, "source": "GET /server_info vllm_env"}
    off = dict(info, vllm_env={"VLLM_BATCH_INVARIANT": False})
    with _Server({"/v1/models": models("vllm"), "/version": version, "/server_info": off}) as url:
        assert detect_engine(url, timeout=5).determinism["value"] is False


def test_engines_without_a_setting_have_no_key():
    with _Server({"/v1/models": models("someone")}) as url:
        profile = detect_engine(url, timeout=5)
    assert profile.determinism is None and "determinism" not in profile.to_dict()
