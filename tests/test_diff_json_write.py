"""`diff --json` is written by orjson (lossless/json_write.py) in exactly the bytes of
json.dump(ensure_ascii=False, indent=1, allow_nan=False): indent, float notation, escapes."""
from __future__ import annotations

import io
import json
import random

from test_diff_row_groups import inline_run, planted

from evalsuite.lossless import json_write
from evalsuite.lossless.command import diff_main
from evalsuite.lossless.runs import diff_runs
from evalsuite.lossless.speed import speed_beside
from evalsuite.store import load_run

# floats orjson writes in its own notation (below 1e-4, from 1e16 up) and some it writes as json does
FLOATS = [1e-7, -2.5e-05, 9.99e-05, 1e-05, 1e16, -1.2345e22, 1e45, 3e-120, 5e-324, 1.7976931348623157e308,
          0.0, -0.0, 1e-4, 123.0, 0.1, 1e15, 2.870837725698948]
# strings that look like numbers in orjson's notation, quotes, escapes, newlines, control characters
STRINGS = ['x": 1e5', 'a": 1e-07,', '\x00\x1f\x7f', "plain", "0.00001", "\n 1e16", "漢字 é \u2028", "",
           '\\"": 2e30', "  spaces  ", "1e-7"]


def value(rng, depth=0):
    r = rng.random()
    if depth < 6 and r < 0.2:
        return {rng.choice(["a", "b", 'c"', "d\\", "e\n", "é", f"k{rng.random()}"]): value(rng, depth + 1)
                for _ in range(rng.randint(0, 4))}
    if depth < 6 and r < 0.4:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if r < 0.55:
        return rng.choice(FLOATS + [rng.random() * 10 ** rng.uniform(-12, 60)])
    if r < 0.65:
        return rng.randint(-10**6, 10**6)
    if r < 0.68:
        return rng.choice([2**70, -2**64, 2**63 - 1])     # past orjson's 64 bits: the chunk goes to json
    if r < 0.75:
        return rng.choice([True, False, None])
    return rng.choice(STRINGS)


def written(data):
    out = io.StringIO()
    json_write.dump_indent1(data, out)
    return out.getvalue()


def test_random_documents_are_written_as_json_dump_writes_them():
    rng = random.Random(3)
    for _ in range(400):
        data = {"schema": 1, "items": [value(rng) for _ in range(rng.randint(1, 700))], "after": value(rng)}
        assert written(data) == json.dumps(data, ensure_ascii=False, indent=1, allow_nan=False)


def test_shapes_orjson_refuses_or_writes_otherwise_are_written_as_json_does():
    import numpy as np

    for items in ([{"a": 1}, {1: "int key"}], [np.float64(0.5), np.float64(1e-7)], [[]], [{}], [2**80],
                  [{"x": 1e-7, "y": [1e16, -0.0]}], ["\ud800"]):
        data = {"items": items, "tail": {"k": [1, 2]}}
        assert written(data) == json.dumps(data, ensure_ascii=False, indent=1, allow_nan=False)
    for data in ({"items": []}, {"no items": 1}, {"items": "\x00evalsuite diff items\x00"}, [1, 2]):
        assert written(data) == json.dumps(data, ensure_ascii=False, indent=1, allow_nan=False)


def test_the_items_go_through_orjson(monkeypatch):
    calls = []
    real = json_write._reindent
    monkeypatch.setattr(json_write, "_reindent", lambda body: calls.append(len(body)) or real(body))
    data = {"items": [{"id": n, "margin": 1e-7 * n, "bytes": [32, 119]} for n in range(600)]}
    assert written(data) == json.dumps(data, ensure_ascii=False, indent=1, allow_nan=False)
    assert len(calls) == 3          # 600 items, 256 a chunk


def test_diff_json_file_is_json_dump_of_the_result(tmp_path):
    items = planted()
    b, c = inline_run(tmp_path / "b", items, 0), inline_run(tmp_path / "c", items, 1)
    out = tmp_path / "diff.json"
    diff_main(b, c, json_path=out, echo=lambda s: None)
    from evalsuite.lossless.noise_scale import rescale

    data = rescale(diff_runs(load_run(b), load_run(c))).to_dict()   # each flip against its noise scale
    data["speed"] = speed_beside(load_run(b).by_id, load_run(c).by_id, load_run(c).manifest).to_dict()  # issue 36 #3
    assert any(i["class"] != "identical" for i in data["items"])
    assert out.read_text(encoding="utf-8") == json.dumps(data, ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def test_items_written_unprepared_read_as_prepared_by_finite():
    """diff_main hands the items over before runs._finite: orjson's writing of a non-finite
    float (null) and of a tuple (a list) is _finite's; what orjson refuses is prepared, then json."""
    import numpy as np

    from evalsuite.lossless.runs import _finite

    rng = random.Random(9)
    odd = [float("nan"), float("-inf"), float("inf"), (1, 2.5e-7, (float("-inf"),)), {"t": (None, "x")}]
    for _ in range(100):
        items = [rng.choice(odd + [value(rng)]) for _ in range(rng.randint(1, 400))]
        if rng.random() < 0.2:
            items.append({"np": np.float64(rng.choice([0.5, float("-inf")]))})   # refused by orjson: json's path
        data = {"head": 1, "items": items}
        out = io.StringIO()
        json_write.dump_indent1(data, out, prepare=_finite)
        want = {"head": 1, "items": [_finite(i) for i in items]}
        assert out.getvalue() == json.dumps(want, ensure_ascii=False, indent=1, allow_nan=False)
