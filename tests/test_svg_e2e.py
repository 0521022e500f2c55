"""The svg pack end to end against the real llama.cpp test server (a tiny random model:
its answers are gibberish, so nearly every item is "no SVG"), then render and gallery."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import EXTRA_BODY, requires_llama

pytestmark = [pytest.mark.llama, requires_llama]

COMMON = ["--extra-body", json.dumps(EXTRA_BODY), "--max-tokens", "48", "--per-subset", "1",
          "--concurrency", "1", "--quiet"]


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_svg_pack_end_to_end(llama_server, run_cli, tmp_path):
    runs = []
    for label in ("first", "second"):
        run_dir = tmp_path / label
        r = run_cli("run", "svg", "--endpoint", llama_server.url, "--run-dir", run_dir, "--label", label, *COMMON)
        assert r.returncode == 0, r.stderr
        runs.append(run_dir)
    manifest = json.loads((runs[0] / "manifest.json").read_text())
    assert manifest["pack"] == "svg" and manifest["status"] == "finished"
    assert len(manifest["item_ids"]) == 4 and all(i.startswith("svg/") for i in manifest["item_ids"])
    records = read_lines(runs[0] / "records.jsonl")
    assert [r["id"] for r in records] == manifest["item_ids"]
    no_svg = 0
    for rec in records:
        assert rec["error"] is None and rec["verdict"] is not None
        assert rec["gold"].startswith("valid SVG")
        verdict = rec["verdict"]
        if verdict["equal"] is None:
            no_svg += 1
            assert verdict["reason"].startswith("no SVG") and rec["extracted"] is None
            assert rec["outcome"] in ("unextracted", "truncated")
        json.dumps(verdict["details"])
    assert no_svg >= 3, "a random tiny model should almost never write an SVG"
    # greedy decoding on one server: the answers are byte-identical across runs (what diff checks)
    second = {r["id"]: r for r in read_lines(runs[1] / "records.jsonl")}
    assert all(second[r["id"]]["answer"] == r["answer"] for r in records)

    rendered = run_cli("svg-render", runs[0], "--size", "64", timeout=120)
    assert rendered.returncode == 0, rendered.stderr
    index = json.loads((runs[0] / "renders" / "index.json").read_text())
    assert set(index) == set(manifest["item_ids"])
    assert sum(e["status"] == "no-svg" for e in index.values()) == no_svg

    page = tmp_path / "gallery.html"
    shown = run_cli("gallery", *runs, "--html", page, "--size", "64", timeout=120)
    assert shown.returncode == 0, shown.stderr
    text = page.read_text()
    assert all(f"<h2>{i}</h2>" in text for i in manifest["item_ids"])
    assert "first" in text and "second" in text
