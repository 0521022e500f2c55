"""Issue 34 #2: `gate`, `compare` and `report` took a baseline and a candidate made with
different settings (max_tokens 128 vs 4096, streaming, temperature, the prompt template, the
model) and gave a verdict without a word. Now every difference is listed; the gate refuses
(exit 2) those that make the comparison meaningless unless --allow-settings-mismatch, which
prints the note and writes it in the JUnit output; the point of a comparison (endpoint, model
file, engine, speculation flags) is shown, not refused."""
from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

from runfactory import make_run, paired_outcomes, rec

from evalsuite.analysis.compare.tables import compare_main
from evalsuite.analysis.gate.decide import gate_main
from evalsuite.analysis.report import report_main


def pair(tmp_path, n=400, base_manifest=None, cand_manifest=None, base_decoding=None, cand_decoding=None,
         base_model="test-model", cand_model="test-model"):
    a_out, b_out = paired_outcomes(both_right=n - 100, a_only=2, b_only=2, both_wrong=96)
    base = make_run(tmp_path / "base", records=[rec(f"main/{i}", o) for i, o in enumerate(a_out)],
                    decoding=base_decoding, extra_manifest=base_manifest, model=base_model, label="base")
    cand = make_run(tmp_path / "cand", records=[rec(f"main/{i}", o) for i, o in enumerate(b_out)],
                    decoding=cand_decoding, extra_manifest=cand_manifest, model=cand_model, label="cand")
    return base, cand


def gate(tmp_path, base, cand, **kw):
    out = io.StringIO()
    junit, js = tmp_path / "gate.xml", tmp_path / "gate.json"
    code = gate_main(base, cand, max_drop=3.0, config_start=tmp_path, out=out, junit=junit, json_path=js, **kw)
    return code, out.getvalue().strip(), ET.parse(junit).getroot(), json.loads(js.read_text())


MISMATCH = dict(base_decoding={"max_tokens": 128}, cand_decoding={"max_tokens": 4096, "temperature": 0.7},
                base_manifest={"client": {"stream": True, "concurrency": 1}},
                cand_manifest={"client": {"stream": False, "concurrency": 1}, "template_hash": "f" * 16})


def test_gate_refuses_runs_made_with_settings_that_change_the_answers(tmp_path):
    base, cand = pair(tmp_path, **MISMATCH)
    code, line, junit, data = gate(tmp_path, base, cand)
    assert code == 2, line
    assert line.startswith("UNUSABLE: the runs were made with settings that change the answers"), line
    for words in ("decoding.max_tokens: baseline 128 vs candidate 4096", "decoding.temperature: baseline 0.0 vs "
                  "candidate 0.7", "prompt template: baseline 0000000000000000 vs candidate ffffffffffffffff",
                  "--allow-settings-mismatch"):
        assert words in line, (words, line)
    assert junit.find(".//testcase[@name='gate input']/error") is not None
    assert "decoding.max_tokens: baseline 128 vs candidate 4096" in data["details"]["settings"]["refused"]


def test_allow_settings_mismatch_gates_them_and_writes_the_note_in_junit(tmp_path):
    base, cand = pair(tmp_path, **MISMATCH)
    code, line, junit, data = gate(tmp_path, base, cand, allow_settings_mismatch=True)
    assert code == 0, line
    assert "WARNING settings differ (--allow-settings-mismatch): " in line and "decoding.max_tokens" in line, line
    assert "streaming: baseline true vs candidate false" in line, line      # shown, never refused
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert "decoding.max_tokens: baseline 128 vs candidate 4096" in props["settings_mismatch"]
    case = junit.find(".//testcase[@name='run settings']")
    assert case is not None and "decoding.max_tokens" in case.findtext("system-out")
    assert data["details"]["settings"]["refused"]


def test_the_point_of_the_comparison_is_shown_not_refused(tmp_path):
    spec = {"speculative.n_max": 8}
    base, cand = pair(tmp_path, base_model="model-f16.gguf", cand_model="model-q8_0.gguf",
                      cand_decoding={"extra_body": spec},
                      base_manifest={"endpoints": ["http://127.0.0.1:8080/v1"],
                                     "engine": {"endpoints": [{"engine": "llama.cpp", "version": "b5000"}]}},
                      cand_manifest={"endpoints": ["http://127.0.0.1:8081/v1"],
                                     "engine": {"endpoints": [{"engine": "vllm", "version": "0.9"}]}})
    code, line, junit, data = gate(tmp_path, base, cand)
    assert code == 0, line
    shown = data["details"]["settings"]["shown"]
    assert not data["details"]["settings"]["refused"]
    for words in ("model: baseline model-f16.gguf vs candidate model-q8_0.gguf", "engine: baseline",
                  "endpoints: baseline", "extra_body.speculative.n_max (speculation/engine setting)"):
        assert any(words in s for s in shown), (words, shown)
        assert words in line
    assert "WARNING" not in line


def test_the_same_settings_say_nothing(tmp_path):
    from evalsuite.analysis.gate.settings import settings_differences

    base, cand = pair(tmp_path)
    code, line, junit, data = gate(tmp_path, base, cand)
    assert code == 0 and "settings" not in line and "compared across" not in line, line
    assert not settings_differences(json.loads((base / "manifest.json").read_text()),
                                    json.loads((cand / "manifest.json").read_text()))


def test_compare_and_report_list_the_differences(tmp_path):
    base, cand = pair(tmp_path, **MISMATCH)
    out = io.StringIO()
    assert compare_main([base, cand], out=out, json_path=tmp_path / "c.json") == 0
    text = out.getvalue()
    assert "settings: cand vs base: made with settings that change the answers" in text, text[:2000]
    assert "decoding.max_tokens: base 128 vs cand 4096" in text
    assert "compared across streaming: base true vs cand false" in text
    assert json.loads((tmp_path / "c.json").read_text())["settings"][0]["refused"]
    html = tmp_path / "r.html"
    assert report_main([base, cand], html, out=io.StringIO()) == 0
    page = html.read_text(encoding="utf-8")
    assert "decoding.max_tokens: base 128 vs cand 4096" in page and "made with settings that change the answers" in page
