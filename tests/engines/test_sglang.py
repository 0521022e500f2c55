"""SGLang, when one is given: its PyPI wheels are CUDA-only and its CPU path needs a from-source
kernel build, so no machine of the suite's CI can run it. Point EVALSUITE_SGLANG_URL at a server
(e.g. http://127.0.0.1:30000/v1, greedy, any model) and, optionally, EVALSUITE_SGLANG_SPEC_URL at
the same model with speculation on: `evalsuite lossless` between them must say identical."""
from __future__ import annotations

import os

import pytest
from engines.engine_e2e import lossless

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not os.environ.get("EVALSUITE_SGLANG_URL"),
    reason="no SGLang endpoint given (EVALSUITE_SGLANG_URL): SGLang has no CPU wheels to install here")]


def test_sglang_speculation_on_vs_off_is_lossless(tmp_path, data_dir):
    base = os.environ["EVALSUITE_SGLANG_URL"]
    cand = os.environ.get("EVALSUITE_SGLANG_SPEC_URL", base)
    data = lossless(tmp_path, data_dir, base, cand, "sglang", n_items=int(os.environ.get("EVALSUITE_SGLANG_ITEMS", "20")))
    bad = [(i["id"], i["class"], i["reason"]) for i in data["items"] if i["class"] not in ("identical", "near_tie")]
    assert not bad, bad
