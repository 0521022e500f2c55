"""SGLang, when two are given: its PyPI wheels are CUDA-only and its CPU path needs a from-source
kernel build, so no machine of the suite's CI can run it. Point EVALSUITE_SGLANG_URL at a server
(e.g. http://127.0.0.1:30000/v1, greedy, any model) and EVALSUITE_SGLANG_SPEC_URL at a second
server of the same model with speculation on, started with `--enable-metrics`: `evalsuite
lossless` between them must say identical, and the candidate's /metrics must show that it
speculated. Both URLs are required and must differ: one server compared with itself proves
nothing (issue 33).

Whether it speculated: SGLang's metrics keep no running totals of drafted and accepted tokens
(what evalsuite reads from vLLM and llama-server), but a gauge of the mean accepted length per
verification step, `sglang:spec_accept_length` (its metrics collector's name; not checked on a
machine here, as none can run SGLang). Above 1, drafted tokens were accepted.
"""
from __future__ import annotations

import os
import urllib.request

import pytest
from engines.engine_e2e import lossless

from evalsuite.speculation import metrics_url, parse_prometheus

BASE, SPEC = os.environ.get("EVALSUITE_SGLANG_URL"), os.environ.get("EVALSUITE_SGLANG_SPEC_URL")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not (BASE and SPEC),
    reason="no two SGLang endpoints given (EVALSUITE_SGLANG_URL, and EVALSUITE_SGLANG_SPEC_URL with speculation "
           "on): SGLang has no CPU wheels to install here")]


def accept_length(url: str) -> float | None:
    try:
        with urllib.request.urlopen(metrics_url(url), timeout=10) as r:
            metrics = parse_prometheus(r.read(4 << 20).decode("utf-8", "replace"))
    except OSError:   # no /metrics (urllib's errors are OSErrors)
        return None
    values = [v for k, v in metrics.items() if k.split("{")[0].endswith("spec_accept_length")]
    return max(values) if values else None


def test_two_distinct_servers_are_required():
    assert BASE.rstrip("/") != SPEC.rstrip("/"), \
        "EVALSUITE_SGLANG_SPEC_URL is the baseline's URL: the server would be compared with itself"


def test_sglang_speculation_on_vs_off_is_lossless(tmp_path, data_dir):
    if BASE.rstrip("/") == SPEC.rstrip("/"):
        pytest.fail("EVALSUITE_SGLANG_SPEC_URL is the baseline's URL", pytrace=False)
    data = lossless(tmp_path, data_dir, BASE, SPEC, "sglang", n_items=int(os.environ.get("EVALSUITE_SGLANG_ITEMS", "20")))
    length = accept_length(SPEC)
    assert length is not None, f"{metrics_url(SPEC)} has no spec_accept_length: start the candidate with --enable-metrics"
    assert length > 1.0, f"the candidate accepted no drafted token (spec_accept_length {length}): it did not speculate"
    bad = [(i["id"], i["class"], i["reason"]) for i in data["items"] if i["class"] not in ("identical", "near_tie")]
    assert not bad, bad
