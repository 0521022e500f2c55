"""`diff --json` written with orjson, byte for byte what `json.dump(data, f, ensure_ascii=False,
indent=1, allow_nan=False)` writes. The json module's indenting encoder is pure Python: ~3 CPU s
for the ~50 MB of an 11,582-item divergent diff, on the diff's critical path.

orjson knows only a two-space indent and writes floats outside [1e-4, 1e16) in its own notation
(`1e-7`, `0.0000999`, `1e16` where Python writes `1e-07`, `9.99e-05`, `1e+16`); in between both
write the shortest repr that round-trips. So the items are encoded by orjson a chunk at a time,
the indent is halved (and moved one level in) with numpy, and every number in orjson's own
notation is re-written as Python's repr of the same float. Anything orjson refuses (an integer
over 64 bits, a non-string key, a numpy scalar, a lone surrogate) sends its chunk to the json
module. The values must already be finite (runs._finite): orjson would write NaN as null where
json raises. tests/test_diff_json_write.py checks the bytes against json.dump.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, TextIO

_CHUNK = 256                      # items per orjson call: bounded memory, few numpy calls
_SENTINEL = "\x00evalsuite diff items\x00"
# a number orjson writes differently from Python: in exponent form, or below 1e-4 written out;
# as a dict value (after `": `) or a list element (a line of its own), always followed by `,` or
# the end of a line (inside a JSON string, which holds no raw newline, text like `": 1e5` is
# followed by more string or by its closing quote)
_ORJSON_MARK = re.compile(rb"e[-1-9]|0\.0000")     # a cheap look first: the full regex is slow
_ORJSON_ONLY = re.compile(rb'(": |\n *|\A *)(-?(?:\d+(?:\.\d+)?e[-+]?\d+|0\.0000\d*))(?=,?\n|,?\Z)')


def dump_indent1(data: Any, f: TextIO, prepare: Callable[[Any], Any] | None = None) -> None:
    """json.dump(data, f, ensure_ascii=False, indent=1, allow_nan=False), the same text; fast for a
    dict whose "items" is a long list. `prepare`: applied to each item first (runs._finite: a
    non-finite float becomes None, a tuple a list), which orjson's own writing makes needless
    (it writes a non-finite float as null, a tuple as a list); the json module's path applies it."""
    items = data.get("items") if type(data) is dict else None
    if type(items) is not list or not items:
        if prepare is not None and type(items) is list:
            data = {**data, "items": [prepare(i) for i in items]}
        json.dump(data, f, ensure_ascii=False, indent=1, allow_nan=False)
        return
    head = json.dumps({k: (_SENTINEL if k == "items" else v) for k, v in data.items()},
                      ensure_ascii=False, indent=1, allow_nan=False)
    marker = json.dumps(_SENTINEL)
    if head.count(marker) != 1:       # the sentinel text is somewhere else too: no shortcut
        if prepare is not None:
            data = {**data, "items": [prepare(i) for i in items]}
        json.dump(data, f, ensure_ascii=False, indent=1, allow_nan=False)
        return
    before, after = head.split(marker)
    f.write(before)
    f.write("[\n")
    for start in range(0, len(items), _CHUNK):
        if start:
            f.write(",\n")
        f.write(_items_text(items[start:start + _CHUNK], prepare))
    f.write("\n ]")
    f.write(after)


def _items_text(chunk: list[Any], prepare: Callable[[Any], Any] | None) -> str:
    """The lines of these list elements as json.dump(indent=1) writes them at depth 2 (no brackets)."""
    try:
        import orjson

        # only the types json writes: a dataclass, a datetime, a subclass (numpy's float64) raise
        encoded = orjson.dumps(chunk, option=orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_DATACLASS
                               | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS)
    except (ImportError, TypeError, ValueError):
        if prepare is not None:
            chunk = [prepare(i) for i in chunk]
        text = json.dumps(chunk, ensure_ascii=False, indent=1, allow_nan=False)
        return " " + text[2:-2].replace("\n", "\n ")
    body = _reindent(encoded[2:-2])    # without "[\n" and "\n]"
    return _python_floats(body).decode("utf-8")


def _python_floats(body: bytes) -> bytes:
    """_ORJSON_ONLY's rewriting, on the lines holding a mark (_ORJSON_MARK) only: the full
    pattern over a whole chunk took ~35 ms a 1 MB chunk, the marks' one pass ~6 ms. No match
    spans lines (a line's start stands for the `\\n *` a match may begin with: that newline is
    outside the line, kept as it is)."""
    out, done = [], 0
    for mark in _ORJSON_MARK.finditer(body):
        if mark.start() < done:
            continue                    # a line already rewritten
        start = body.rfind(b"\n", 0, mark.start()) + 1
        end = body.find(b"\n", mark.end())
        end = len(body) if end < 0 else end
        out.append(body[done:start])
        out.append(_ORJSON_ONLY.sub(lambda m: m.group(1) + repr(float(m.group(2))).encode(), body[start:end]))
        done = end
    out.append(body[done:])
    return b"".join(out)


def _reindent(body: bytes) -> bytes:
    """orjson's indent of 2 spaces a level, elements at level 1, to json's 1 space a level one
    level deeper: a line led by 2d spaces keeps d + 1 of them. (A JSON string holds no raw
    newline, so every line's leading spaces are indent.)"""
    import numpy as np

    a = np.frombuffer(body, np.uint8)
    starts = np.concatenate(([0], np.flatnonzero(a == 10) + 1)).astype(np.int64)
    starts = starts[starts < len(a)]
    indent = np.zeros(len(starts), np.int64)
    live, pos = np.arange(len(starts)), starts
    while live.size:                 # one pass per space of the deepest indent, over the lines still in spaces
        inside = pos < len(a)
        live, pos = live[inside], pos[inside]
        space = a[pos] == 32
        live, pos = live[space], pos[space] + 1
        indent[live] += 1
    drop = np.maximum(indent // 2 - 1, 0)
    keep = np.ones(len(a), bool)
    for j in range(int(drop.max()) if drop.size else 0):
        keep[starts[drop > j] + j] = False
    return a[keep].tobytes()
