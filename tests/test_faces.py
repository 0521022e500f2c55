"""What a user reads on the console: `--help` matches the README's command table and shows
readable metavars; `show`'s tables have header rows; `diff` lines carry no stray
punctuation; `gate` leads with the reason that decided."""
from __future__ import annotations

import io
import re
from pathlib import Path

from runfactory import make_run, rec, runs_from_outcomes

from evalsuite.lossless.runs import diff_runs, format_diff
from evalsuite.analysis.gate.decide import gate_main
from evalsuite.analysis.summary import format_summary, summarize
from evalsuite.store import load_run

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_commands() -> dict[str, set[str]]:
    """Command -> the --options its row of the README's command table names."""
    rows = [line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("| `evalsuite ")]
    assert rows, "the README has no command table"
    out: dict[str, set[str]] = {}
    for row in rows:
        for usage in re.findall(r"`evalsuite ([a-z-]+)[^`]*`", row.split("|")[1]):
            out.setdefault(usage, set())
        first = re.match(r"\| `evalsuite ([a-z-]+)", row).group(1)
        out[first] |= set(re.findall(r"(--[a-z][a-z-]*)", row))
    return out


def test_readme_table_matches_help(run_cli):
    top = run_cli("--help", timeout=60)
    assert top.returncode == 0, top.stderr
    listed = set(re.findall(r"^  ([a-z][a-z-]+)\s", top.stdout.split("Commands:")[1], re.M))
    table = readme_commands()
    assert set(table) == listed, f"README table {sorted(table)} vs --help {sorted(listed)}"
    for command, options in table.items():
        shown = run_cli(command, "--help", timeout=60)
        assert shown.returncode == 0, shown.stderr
        missing = {o for o in options if not re.search(re.escape(o) + r"\b", shown.stdout)}
        assert not missing, f"README names {missing} for `evalsuite {command}`, which --help lacks"
        # readable metavars: no Python types or "<int range>"
        assert not re.search(r"<list\[|range>|<list", shown.stdout), (command, shown.stdout)


def test_show_category_and_subset_tables_have_header_rows():
    records = [rec(f"{s}/{n}", "correct" if n % 3 else "wrong", subset=s) for s in ("algebra", "geometry")
               for n in range(6)]
    manifest = {"pack": "math500", "model": "m", "status": "finished"}
    summary = summarize(manifest, records, categories={"algebra": "STEM", "geometry": "STEM-ish"})
    text = format_summary(summary, manifest)
    lines = text.splitlines()
    assert any(re.match(r"subset\s+n\s+acc\s+95% CI", ln) for ln in lines), text
    assert any(re.match(r"category\s+n\s+acc\s+95% CI", ln) for ln in lines), text
    header = next(n for n, ln in enumerate(lines) if ln.startswith("category"))
    assert lines[header + 1].split()[0] in ("STEM", "STEM-ish")


def test_diff_line_without_token_position_has_no_stray_punctuation(tmp_path):
    b = make_run(tmp_path / "b", records=[rec("aqua-rat/21", "wrong", answer="The answer is B", extracted="B")])
    c = make_run(tmp_path / "c", records=[rec("aqua-rat/21", "correct", answer="The answer is C", extracted="C")])
    text = format_diff(diff_runs(load_run(b), load_run(c)))
    line = next(ln for ln in text.splitlines() if "aqua-rat/21" in ln)
    assert ":," not in line and "None" not in line, line
    assert line.split() == ["undetermined", "aqua-rat/21:", "answer", "'B'", "->", "'C'"], line


def test_gate_leads_with_the_reason_that_decided(tmp_path):
    outcomes = ["correct"] * 40 + ["wrong"] * 10
    base, cand = runs_from_outcomes(tmp_path, {"base": outcomes, "cand": outcomes[:-3] + ["error"] * 3})
    out = io.StringIO()
    code = gate_main(base, cand, max_drop=5, alpha=1.0, out=out, allow_underpowered=True)
    line = out.getvalue().splitlines()[0]
    assert code == 1 and line.startswith("FAIL: errored items: candidate 3 of 50"), line


def test_gate_on_two_packs_says_different_packs_first(tmp_path):
    base = make_run(tmp_path / "a", "gsm8k", [rec("main/0")])
    cand = make_run(tmp_path / "b", "math500", [rec("main/0")], fingerprint="e" * 64)
    out = io.StringIO()
    assert gate_main(base, cand, max_drop=5, out=out) == 2
    assert out.getvalue().startswith("UNUSABLE: different packs: baseline 'gsm8k' vs candidate 'math500'"), out.getvalue()


def test_diff_of_two_packs_says_different_packs_first(tmp_path):
    import pytest

    from evalsuite.lossless.tokens import DiffRefused

    base = load_run(make_run(tmp_path / "a", "gsm8k", [rec("main/0")]))
    cand = load_run(make_run(tmp_path / "b", "math500", [rec("main/0")], fingerprint="e" * 64))
    with pytest.raises(DiffRefused) as refused:
        diff_runs(base, cand)
    assert str(refused.value).startswith("different packs: baseline 'gsm8k' vs candidate 'math500'"), str(refused.value)


def test_every_command_but_run_only_parses_and_calls_its_function():
    """One command convention (issue 25): cli.py parses the options and hands them to a function
    in the module the command belongs to, which returns the exit code. `run` alone checks its
    option combinations there (they become RunSettings)."""
    import ast

    import evalsuite.cli

    tree = ast.parse(Path(evalsuite.cli.__file__).read_text(encoding="utf-8"))
    commands = [f for f in tree.body if isinstance(f, ast.FunctionDef)
                and any(isinstance(d, ast.Call) and getattr(d.func, "attr", "") == "command" for d in f.decorator_list)]
    assert len(commands) >= 12
    for f in commands:
        if f.name == "run":
            continue
        last = f.body[-1]
        assert isinstance(last, ast.Raise) and isinstance(last.exc, ast.Call) and last.exc.func.attr == "Exit" \
            and isinstance(last.exc.args[0], ast.Call), f"{f.name}: does not end in raise typer.Exit(its_main(...))"
        loops = [n for n in ast.walk(f) if isinstance(n, (ast.For, ast.While, ast.Try, ast.With))]
        assert not loops, f"{f.name}: a body in cli.py (line {loops[0].lineno}); move it to its module"
