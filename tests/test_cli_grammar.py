"""Issue 42 #2: one command-line grammar, read from the CLI itself (the click parameters typer
builds for every command), not from a list kept beside it. The same option name must mean the
same thing everywhere: the same type (its choices, whether it repeats) and the same first sentence
of help, unless docs/cli.md's table of exceptions says otherwise and why. Beside it, the rules of
docs/cli.md that the parameters show: no `-o`, files written are paths, `--format` chooses among
table/json/csv/none, booleans come as --x/--no-x, a folder or URL says so in its name, a short
option means one long one. A command added with an option that breaks a rule fails here (the last
test plants one). Old spellings: hidden aliases, each listed in docs/cli.md, each reaching the
command as its new spelling does, with one deprecation line."""
from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Optional

import pytest
import typer

from evalsuite import cli

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
PRINT_FORMATS = {"table", "json", "csv", "none"}
WRITTEN_FILES = ("--json", "--html", "--csv", "--junit")
FOLDER_METAVARS, FOLDER_ENDINGS = ("DIR", "RUN_DIR"), ("-dir", "-run")
URL_METAVARS, URL_ENDINGS = ("URL",), ("-url", "-endpoint")


def commands() -> dict:
    return dict(typer.main.get_command(cli.app).commands)


def long_name(param) -> str:
    return next((o for o in param.opts if o.startswith("--")), param.opts[0])


def options(hidden: bool = False) -> list[tuple[str, object]]:
    """(command, click option) of every option, the visible ones or the hidden ones."""
    return [(name, p) for name, command in commands().items() for p in command.params
            if p.param_type_name == "option" and bool(getattr(p, "hidden", False)) == hidden]


def value_type(param) -> tuple:
    """What a value is: its type, its choices, whether it is a flag, whether it repeats."""
    choices = tuple(sorted(map(str, getattr(param.type, "choices", ()) or ())))
    return (param.type.name, choices, bool(param.is_flag), bool(param.multiple), param.nargs)


def meaning(param) -> str:
    """The first sentence of the help (an "e.g." does not end it)."""
    return re.split(r"(?<!e\.g)(?<!i\.e)\.\s+", (param.help or "").strip(), maxsplit=1)[0].rstrip(".")


def table_rows(heading: str) -> list[list[str]]:
    """The rows of the markdown table under `## heading` in docs/cli.md, cells stripped of code marks."""
    if not DOC.exists():
        return []
    section = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", DOC.read_text(encoding="utf-8"), re.S | re.M)
    assert section, f"docs/cli.md has no section {heading!r}"
    rows = []
    for line in section.group(1).splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if cells and not set(cells[0]) <= set("-: ") and cells[0] not in ("option", "command"):
            rows.append([c.replace("`", "") for c in cells])
    return rows


def exceptions() -> set[tuple[str, str, str]]:
    """(option, command, what differs) from docs/cli.md's table of exceptions."""
    return {(row[0], command.strip(), row[2]) for row in table_rows("Exceptions")
            for command in row[1].split(",")}


def grammar_problems(allowed: set[tuple[str, str, str]] | None = None) -> list[str]:
    """Every departure from the grammar that the exceptions do not list (and every exception
    that no longer departs)."""
    allowed = exceptions() if allowed is None else allowed
    problems, used = [], set()
    by_name: dict[str, dict[str, object]] = defaultdict(dict)
    for command, p in options():
        by_name[long_name(p)][command] = p
    for name, uses in sorted(by_name.items()):
        if len(uses) < 2:
            continue
        for aspect, of in (("type", value_type), ("meaning", meaning)):
            excepted = {c for c in uses if (name, c, aspect) in allowed}
            rest = {c: of(p) for c, p in uses.items() if c not in excepted}
            if len(set(rest.values())) > 1:
                shapes = defaultdict(list)
                for c, v in rest.items():
                    shapes[v].append(c)
                problems.append(f"{name} differs in {aspect} between commands: "
                                + "; ".join(f"{', '.join(cs)}: {v!r}" for v, cs in shapes.items()))
            for c in excepted:
                used.add((name, c, aspect))
                if rest and of(uses[c]) in set(rest.values()):
                    problems.append(f"{name} in {c} no longer differs in {aspect}: delete its row in docs/cli.md")
    shorts: dict[str, set[str]] = defaultdict(set)
    for command, p in options():
        name = long_name(p)
        for opt in p.opts + p.secondary_opts:
            if not opt.startswith("--"):
                shorts[opt].add(name)
        if "-o" in p.opts:
            problems.append(f"{command} {name}: uses -o (rule 3: no command uses -o)")
        if not (p.help or "").strip():
            problems.append(f"{command} {name}: no help")
        if name in WRITTEN_FILES and (p.is_flag or p.type.name != "path"):
            problems.append(f"{command} {name}: writes a file, so its value is a path (rule 2), not {value_type(p)}")
        if name == "--format" and not (set(value_type(p)[1]) and set(value_type(p)[1]) <= PRINT_FORMATS):
            problems.append(f"{command} --format: a choice among table, json, csv, none (rule 3), not {value_type(p)}")
        if p.is_flag and not p.count and not p.secondary_opts:
            problems.append(f"{command} {name}: a boolean without --no-{name[2:]} (rule 4)")
        for metavars, endings, what in ((FOLDER_METAVARS, FOLDER_ENDINGS, "folder"), (URL_METAVARS, URL_ENDINGS, "URL")):
            takes = (p.metavar or "") in metavars
            said = name.endswith(endings)
            if takes != said and (name, command, "name") not in allowed:
                problems.append(f"{command} {name} {p.metavar or ''}: a {what} must be said in the name "
                                f"({' or '.join(endings)}) and a name so ending must take a {what} (rule 5)")
            if takes != said:
                used.add((name, command, "name"))
    problems += [f"{short} means {sorted(names)} (rule 9: one long option per short one)"
                 for short, names in sorted(shorts.items()) if len(names) > 1]
    problems += [f"docs/cli.md's exception ({o}, {c}, {a}) matches no option: delete its row"
                 for o, c, a in sorted(allowed - used)]
    return problems


def test_every_option_means_one_thing_in_every_command():
    problems = grammar_problems()
    assert not problems, "the command line breaks docs/cli.md's grammar:\n  " + "\n  ".join(problems)


def test_docs_list_every_shared_option_with_its_commands():
    assert DOC.exists(), "docs/cli.md is missing"
    shared: dict[str, set[str]] = defaultdict(set)
    for command, p in options():
        shared[long_name(p)].add(command)
    shared = {name: cs for name, cs in shared.items() if len(cs) > 1}
    documented = {}
    for row in table_rows("Shared options"):
        name = re.match(r"(--[a-z0-9-]+)", row[0]).group(1)
        documented[name] = {c.strip() for c in row[-1].split(",")}
    assert documented == shared, {n: (documented.get(n), shared.get(n)) for n in set(documented) | set(shared)
                                  if documented.get(n) != shared.get(n)}


# --- old spellings: hidden, listed, and each the same as its new spelling ---

# (command, the old spelling's arguments, the new spelling's, the function the command hands them to)
OLD_SPELLINGS = [
    ("show", ["RUN", "--json"], ["RUN", "--format", "json"], "evalsuite.analysis.summary.show_main"),
    ("diff", ["A", "B", "--aa", "A2"], ["A", "B", "--aa-run", "A2"], "evalsuite.lossless.command.diff_main"),
    ("diff", ["A", "B", "--rescore", "http://h/v1"], ["A", "B", "--rescore-url", "http://h/v1"],
     "evalsuite.lossless.command.diff_main"),
    ("diff", ["A", "B", "--teacher-forced", "http://h/v1"], ["A", "B", "--teacher-url", "http://h/v1"],
     "evalsuite.lossless.command.diff_main"),
    ("sweep", ["gsm8k", "--serve", "s {port}", "--report", "OUT/r.html"],
     ["gsm8k", "--serve", "s {port}", "--html", "OUT/r.html"], "evalsuite.serve.sweep.sweep_main"),
    ("speed", ["-o", "json"], ["--format", "json"], "evalsuite.speed.command.speed_cli"),
    ("speed", ["--output", "csv"], ["--format", "csv"], "evalsuite.speed.command.speed_cli"),
    ("speed", ["--seed", "3"], ["--text-seed", "3"], "evalsuite.speed.command.speed_cli"),
    ("gallery", ["RUN", "-o", "OUT/g.html"], ["RUN", "--html", "OUT/g.html"], "evalsuite.analysis.gallery.gallery_main"),
    ("gallery", ["RUN", "--output", "OUT/g.html"], ["RUN", "--html", "OUT/g.html"], "evalsuite.analysis.gallery.gallery_main"),
    ("compare", ["A", "B", "--plots", "OUT/p"], ["A", "B", "--plots-dir", "OUT/p"],
     "evalsuite.analysis.compare.tables.compare_main"),
    ("report", ["A", "-o", "OUT/r.html"], ["A", "--html", "OUT/r.html"], "evalsuite.analysis.report.report_main"),
    ("report", ["A", "--output", "OUT/r.html"], ["A", "--html", "OUT/r.html"], "evalsuite.analysis.report.report_main"),
    ("report", ["A", "--samples", "3"], ["A", "--transcripts", "3"], "evalsuite.analysis.report.report_main"),
]


def test_every_old_spelling_is_hidden_and_listed_in_the_docs():
    hidden = {(command, opt) for command, p in options(hidden=True) for opt in p.opts}
    listed = set()
    for row in table_rows("Old spellings"):
        for spelling in row[1].split(","):
            listed.add((row[0], spelling.split()[0]))
    assert hidden == listed, f"hidden but not in docs/cli.md: {sorted(hidden - listed)}; listed but not hidden: {sorted(listed - hidden)}"
    tested = {(c, a) for c, old, _, _ in OLD_SPELLINGS for a in old if a.startswith("-") and (c, a) in hidden}
    assert tested == hidden, f"old spellings without a case here: {sorted(hidden - tested)}"


def invoke(monkeypatch, capsys, args: list[str]) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["evalsuite", *args])
    with pytest.raises(SystemExit) as done:
        cli.main(args)
    out, err = capsys.readouterr()
    return done.value.code, out, err


@pytest.mark.parametrize("command, old, new, target", OLD_SPELLINGS, ids=lambda v: v if isinstance(v, str) else None)
def test_an_old_spelling_reaches_the_command_as_the_new_one_with_one_deprecation_line(
        command, old, new, target, monkeypatch, capsys, tmp_path):
    import importlib

    module, function = target.rsplit(".", 1)
    given: list[dict] = []
    monkeypatch.setattr(importlib.import_module(module), function,
                        lambda *args, **kwargs: given.append({"args": args, **kwargs}) or 0)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "OUT").mkdir()
    (tmp_path / "A2").mkdir()   # --aa-run's folder must be there
    seen = []
    for args in (old, new):
        code, out, err = invoke(monkeypatch, capsys, [command, *args])
        assert code == 0, (args, out, err)
        seen.append((given.pop(), [line for line in err.splitlines() if line.startswith("deprecated:")]))
    (old_call, old_lines), (new_call, new_lines) = seen
    old_call.pop("argv", None), new_call.pop("argv", None)
    assert old_call == new_call
    spelled = next(a for a in old if a.startswith("-") and a not in new)
    assert len(old_lines) == 1 and spelled in old_lines[0] and "next version" in old_lines[0], old_lines
    assert new_lines == []


def test_the_old_and_the_new_spelling_at_once_is_a_usage_error(monkeypatch, capsys):
    code, _, err = invoke(monkeypatch, capsys, ["show", "RUN", "--json", "--format", "table"])
    assert code == 2 and "error: --json is the old spelling of --format json" in err


def test_gate_takes_its_runs_positionally_or_by_name(monkeypatch, capsys):
    from evalsuite.analysis.gate import decide

    given = []
    monkeypatch.setattr(decide, "gate_main", lambda baseline, candidate, **kw: given.append((baseline, candidate)) or 0)
    for args in (["A", "B"], ["--baseline", "A", "--candidate", "B"], ["--baseline", "A", "B"], ["--candidate", "B", "A"]):
        assert invoke(monkeypatch, capsys, ["gate", *args, "--max-drop", "1"])[0] == 0
    assert given == [(Path("A"), Path("B"))] * 4
    code, _, err = invoke(monkeypatch, capsys, ["gate", "A", "--max-drop", "1"])
    assert code == 2 and err.startswith("error: --candidate: missing") and len(err.splitlines()) == 1


# --- the test has teeth: a command that breaks the grammar is caught ---


def test_a_new_command_that_breaks_the_grammar_fails(monkeypatch):
    registered = list(cli.app.registered_commands)

    def broken(json_out: bool = typer.Option(False, "--json", help="Print JSON."),
               output: Optional[Path] = typer.Option(None, "--output", "-o", help="The page."),
               timeout: float = typer.Option(1.0, help="Seconds one step may take."),
               verbose: bool = typer.Option(False, "--verbose", "-e", help="Say more."),
               plots: Optional[Path] = typer.Option(None, metavar="DIR", help="Plots here."),
               quiet: bool = typer.Option(False, "--quiet", help="Hide the progress, not the result."),
               concurrency: int = typer.Option(1, min=1, help="Requests in flight at once per endpoint.")) -> None:
        pass

    monkeypatch.setattr(cli.app, "registered_commands", registered)
    cli.app.command("broken")(broken)
    try:
        problems = "\n".join(grammar_problems())
    finally:
        cli.app.registered_commands.pop()
    for expected in ("--json differs in type", "broken --output: uses -o", "--timeout differs in meaning",
                     "broken --verbose: a boolean without --no-verbose", "broken --plots DIR: a folder must be said",
                     "-e means", "broken --quiet: a boolean without --no-quiet"):
        assert expected in problems, (expected, problems)
    assert "--concurrency differs" not in problems    # one number, as in run: no departure
    assert not grammar_problems()                      # and gone again with the command
