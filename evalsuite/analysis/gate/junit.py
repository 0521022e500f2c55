"""The gate's JUnit XML report (--junit FILE), the format CI systems display."""
from __future__ import annotations

from pathlib import Path

from .checks import Check, GateResult

# ---------------------------------------------------------------------------- JUnit


def junit_xml(result: GateResult, baseline: str | Path, candidate: str | Path) -> bytes:
    """A JUnit XML report CI systems display: one test case per check, an <error> case for
    unusable input."""
    import xml.etree.ElementTree as ET

    checks = result.checks or (Check("gate input", None, result.line),)
    suite = ET.Element("testsuite", {
        "name": "evalsuite.gate",
        "tests": str(len(checks)),
        "failures": str(sum(1 for c in checks if c.passed is False)),
        "errors": str(sum(1 for c in checks if c.passed is None)),
        "skipped": "0",
    })
    props = ET.SubElement(suite, "properties")
    facts = [("baseline", str(baseline)), ("candidate", str(candidate)), ("exit_code", str(result.code))]
    d = result.details
    if d.get("diff_only"):
        facts.append(("diff_only", "true"))
    if d and "n_items" in d:
        facts += [("errors_baseline", str(d["errors_baseline"])), ("errors_candidate", str(d["errors_candidate"])),
                  ("n_items", str(d["n_items"])), ("n_pairs", str(d["n_pairs"]))]
    pw = d.get("power") or {}
    if pw:   # also on a refused (underpowered) gate: what it would take
        facts += [("min_detectable_drop_pp", "" if pw.get("min_detectable_drop_pp") is None
                   else f"{pw['min_detectable_drop_pp']:.4g}"),
                  ("items_needed_for_max_drop", str(pw.get("items_needed")))]
        if "samples_needed" in pw:
            facts.append(("samples_needed_for_max_drop", str(pw["samples_needed"])))
    if d.get("underpowered"):
        facts.append(("underpowered", d["underpowered"]))
    settings = d.get("settings") or {}
    if settings.get("refused"):
        facts.append(("settings_mismatch", "; ".join(settings["refused"])))
    if settings.get("shown"):
        facts.append(("compared_across", "; ".join(settings["shown"])))
    if d and "n_items" in d:
        eq = d.get("equivalence")
        if eq:
            facts += [("equivalence_verdict", eq["verdict"]), ("equivalence_margin_pp", f"{eq['margin_pp']:g}"),
                      ("equivalence_ci_pp", f"{eq['ci_pp'][0]:.4g},{eq['ci_pp'][1]:.4g}"),
                      ("equivalence_more_items", "" if eq["more_items"] is None else str(eq["more_items"]))]
    for name, value in facts:
        ET.SubElement(props, "property", {"name": name, "value": value})
    for check in checks:
        case = ET.SubElement(suite, "testcase", {"classname": "evalsuite.gate", "name": check.name})
        if check.passed is False:
            ET.SubElement(case, "failure", {"message": check.message, "type": "GateFailure"}).text = check.message
        elif check.passed is None:
            ET.SubElement(case, "error", {"message": check.message, "type": "UnusableInput"}).text = check.message
        else:
            ET.SubElement(case, "system-out").text = check.message
    root = ET.Element("testsuites")
    root.append(suite)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
