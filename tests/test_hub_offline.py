"""Issue 33 #5: a hub found unreachable once switched `datasets` and `huggingface_hub` to
offline mode (HF_HUB_OFFLINE=1 in os.environ and their module settings) for the rest of the
process: a notebook using the Python API stayed offline after the network came back. The
decision now holds for that one load only."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys


PROBE = r"""
import json, os
import datasets, datasets.config
import huggingface_hub.constants as hub_constants
from evalsuite.tasks import get_pack
from evalsuite.tasks.pack import BadDataError, LoadOptions

def state():
    return {"env": os.environ.get("HF_HUB_OFFLINE"), "datasets_env": os.environ.get("HF_DATASETS_OFFLINE"),
            "datasets": datasets.config.HF_HUB_OFFLINE, "hub": hub_constants.HF_HUB_OFFLINE}

before, during = state(), []
real = datasets.load_dataset
def spy(*args, **kwargs):
    during.append(state())
    return real(*args, **kwargs)
datasets.load_dataset = spy
message = None
try:
    get_pack("math500").load(LoadOptions())
except BadDataError as e:
    message = str(e)
print(json.dumps({"before": before, "during": during, "after": state(), "message": message}))
"""


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_hub_makes_only_that_load_offline(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "EVALSUITE_DATA_DIR")}
    env.update(HF_ENDPOINT=f"http://127.0.0.1:{closed_port()}", HF_HOME=str(tmp_path / "hf"),
               HF_DATASETS_CACHE=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    online = {"env": None, "datasets_env": None, "datasets": False, "hub": False}
    assert seen["before"] == online
    # the one load read the local cache only (it had nothing: "offline" is said at once) ...
    assert seen["during"] == [{"env": "1", "datasets_env": "1", "datasets": True, "hub": True}]
    assert seen["message"].startswith("offline: cannot connect to 127.0.0.1"), seen["message"]
    # ... and the process is as it was: the next load asks the hub again
    assert seen["after"] == online
