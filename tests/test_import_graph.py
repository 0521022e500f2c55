"""The import graph of the three floors runs one way: graders <- tasks <- core (evalsuite/).

tasks/ and graders/ live at the top of the repository but install as evalsuite.tasks and
evalsuite.graders, so the graph is read from all three folders under the names Python imports
them by. No module reaches itself through its imports; graders import nothing above them; tasks
never import the core; analyses (which read run folders only) never import the modules that
call servers or run the CLI (run/, engines/, serve/, the client's sending half, the judge), and
no analysis but regrade imports tasks. Lazy imports inside functions count too: they are read
from the source with `ast`, not executed. The rooms that are packages list their modules here
(docs/house.md maps them), so a module added to a room is placed in these rules on purpose."""
from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

import evalsuite
import evalsuite.graders
import evalsuite.tasks

ROOT = Path(evalsuite.__file__).parent
# each floor's folder and the package name it installs as (pyproject's package-dir)
FLOORS = {"evalsuite": ROOT, "evalsuite.tasks": Path(evalsuite.tasks.__file__).parent,
          "evalsuite.graders": Path(evalsuite.graders.__file__).parent}
GRADERS, TASKS = "evalsuite.graders", "evalsuite.tasks"


def modules_of(package: str) -> tuple[str, ...]:
    """Every module of one package of the core, read from its folder (its __init__ as the
    package's own name). A glob that finds no module fails at once: a room that moved or was
    renamed must be named again here, not checked as empty."""
    folder = ROOT.joinpath(*package.split(".")[1:])
    found = tuple(package if p.stem == "__init__" else f"{package}.{p.stem}" for p in sorted(folder.glob("*.py")))
    if not [m for m in found if m != package]:
        raise AssertionError(f"no module of {package} in {folder}: has the room moved?")
    return found


# The rooms of the core that are packages, each with every one of its modules by name (the
# test below fails when a module is added, moved or renamed without being listed): a new
# module is placed in the floors' rules here, on purpose, not by accident of its folder.
ROOMS = {
    "evalsuite.run": ("settings", "items", "records", "runner", "scheduler", "grading", "progress", "resume", "manifest"),
    "evalsuite.client": ("endpoint", "exchange", "stream", "logprobs", "errors", "phases"),
    "evalsuite.svg": ("render", "judge"),
    "evalsuite.analysis.gate": ("decide", "settings", "checks", "power", "junit"),
    "evalsuite.analysis.compare": ("comparison", "tables", "sweep"),
    "evalsuite.analysis.sampling": ("estimators", "compare", "report"),
    "evalsuite.speed": ("settings", "text", "prompts", "endpoint", "measure", "profiling", "rows", "command",
                        "sweep", "pack_sweep", "compare", "table", "html", "plots", "stats", "figures", "quantile", "load", "load_rows",
                        "replay", "replay_rows"),
}
# of the client, what analyses may import: the plain values of an exchange and logprob entries as
# records keep them; the rest sends requests or classifies its failures (client/errors.py: an
# analysis that needs UsageError takes it from evalsuite/errors.py, below the client)
CLIENT_VALUES = ("evalsuite.client.exchange", "evalsuite.client.logprobs")
# the run machinery: it calls endpoints, runs packs or parses the command line (every module of
# run/, engines/ and serve/, sweep.py among them; the client's sending half; the audited judge)
RUN_MACHINERY = ("evalsuite.cli", "evalsuite.judge") + tuple(
    m for package in ("evalsuite.run", "evalsuite.engines", "evalsuite.serve", "evalsuite.client")
    for m in modules_of(package) if m != "evalsuite.client" and m not in CLIENT_VALUES)
# the analyses that ask an endpoint (the lossless command, rescore's per-position re-scoring,
# teacher-forced drift on the candidate)
ASK_ENDPOINTS = ("evalsuite.lossless.command", "evalsuite.lossless.rescore", "evalsuite.lossless.teacher")
ABOVE_ANALYSIS = RUN_MACHINERY + ASK_ENDPOINTS
# the one analysis that grades again, so it needs the packs' grade functions
GRADES_AGAIN = "evalsuite.analysis.regrade"

# Today's exceptions to the analysis rules, each an arrow (importer, imported module) with why.
# They are taken out of the graph before the rules are checked, so an arrow not listed here
# (or reached through another module) fails; a test below fails when an entry's arrow is gone,
# so the lists only shrink (issue 25, item 5).
ANALYSIS_IMPORTS_TASKS = {
    # first-correct grades each response's prefixes again with the pack's grader, as regrade does
    ("evalsuite.analysis.first_correct", "evalsuite.tasks"),
    ("evalsuite.analysis.first_correct", "evalsuite.analysis.regrade"),
}
ANALYSIS_ABOVE: set[tuple[str, str]] = set()   # none today


def module_name(path: Path, floor: str, root: Path) -> tuple[str, list[str]]:
    parts = floor.split(".") + list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), parts
    return ".".join(parts), parts[:-1]


def ancestors(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def import_graph() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for floor, root in FLOORS.items():
        for path in sorted(root.rglob("*.py")):
            if floor == "evalsuite" and any(path.is_relative_to(r) for f, r in FLOORS.items() if f != floor):
                continue
            name, package = module_name(path, floor, root)
            targets: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.Import):
                    targets.update(a.name for a in node.names)
                elif isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = package[:len(package) - node.level + 1]
                        module = ".".join(base + ([node.module] if node.module else []))
                    else:
                        module = node.module or ""
                    targets.add(module)
                    targets.update(f"{module}.{a.name}" for a in node.names)   # `from . import x`
            # a module's own packages are imported before it anyway: `from . import sandbox`
            # inside graders/grade.py is no arrow back to graders/__init__
            found[name] = {t for t in targets if t.startswith("evalsuite") and t not in ancestors(name)}
    # keep edges to modules only (an imported name is not a module), never to the module itself
    return {m: {t for t in targets if t in found and t != m} for m, targets in found.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def reachable(graph: dict[str, set[str]], start: str, avoid: frozenset[str] = frozenset()) -> set[str]:
    """Every module `start` imports, directly or through others (never walking through `avoid`)."""
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                if nxt not in avoid:
                    todo.append(nxt)
    return seen


def in_floor(name: str, floor: str) -> bool:
    return name == floor or name.startswith(floor + ".")


def core(graph: dict[str, set[str]]) -> list[str]:
    return [m for m in graph if not in_floor(m, GRADERS) and not in_floor(m, TASKS)]


def analyses(graph: dict[str, set[str]]) -> list[str]:
    return [m for m in graph if in_floor(m, "evalsuite.analysis") or in_floor(m, "evalsuite.lossless")]


def test_graph_covers_the_three_floors():
    graph = import_graph()
    for name in ("evalsuite.cli", "evalsuite.run.runner", "evalsuite.analysis.compare.comparison", "evalsuite.lossless.runs",
                 "evalsuite.tasks", "evalsuite.tasks.gsm8k", "evalsuite.graders", "evalsuite.graders.grade",
                 "evalsuite.graders.parse"):
        assert name in graph
    assert "evalsuite.lossless.runs" in graph["evalsuite.lossless.command"]   # edges are read
    assert "evalsuite.graders.verdict" in graph["evalsuite.tasks.pack"]       # `from ..graders.verdict import`
    assert "evalsuite.graders.sandbox" in graph["evalsuite.run.runner"]       # core -> graders
    assert "evalsuite.graders.parse" in graph["evalsuite.graders.numeric"]    # inside graders/
    assert {"evalsuite.serve.managed", "evalsuite.engines.detect", "evalsuite.run.runner", "evalsuite.serve.sweep",
            "evalsuite.client.endpoint", "evalsuite.client.stream"} <= set(RUN_MACHINERY) & set(graph)
    assert not set(CLIENT_VALUES) & set(RUN_MACHINERY)
    assert len([m for m in graph if in_floor(m, GRADERS)]) > 10
    assert len([m for m in graph if in_floor(m, TASKS)]) > 10


def test_every_room_lists_every_module_it_holds():
    graph = import_graph()
    for package, stems in ROOMS.items():
        found = set(modules_of(package)) - {package}
        listed = {f"{package}.{stem}" for stem in stems}
        assert found == listed, f"{package}: found but not listed {sorted(found - listed)}, listed but gone {sorted(listed - found)}"
        assert listed <= set(graph)
    assert set(CLIENT_VALUES) < set(modules_of("evalsuite.client"))


def test_the_room_glob_fails_on_a_folder_without_modules():
    with pytest.raises(AssertionError, match="no module of evalsuite.nowhere"):
        modules_of("evalsuite.nowhere")


def test_the_core_is_rooms_and_a_handful_of_modules():
    """`ls evalsuite/` shows the rooms (packages) and the modules that stand alone: the CLI, the
    Python API, the audited judge (asked by run, regrade and the API), the speculation counters
    (the analyses read their manifest sentences, so they sit outside engines/ and run/) and the
    error of bad usage (every floor of the core raises it, so it sits below them all). In
    analysis/, no file name prefix is shared by three or more modules: such a group is a room."""
    assert {p.stem for p in ROOT.glob("*.py")} == {"__init__", "api", "cli", "errors", "judge", "speculation"}
    rooms = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert {"run", "client", "svg", "engines", "serve", "store", "lossless", "pages", "analysis"} <= rooms
    prefixes: dict[str, list[str]] = {}
    for p in (ROOT / "analysis").glob("*.py"):
        prefixes.setdefault(p.stem.split("_")[0], []).append(p.name)
    assert not {k: v for k, v in prefixes.items() if len(v) >= 3}, prefixes


def test_pyproject_installs_every_package():
    """A package missing from pyproject's list is left out of a (non-editable) install."""
    config = tomllib.loads((ROOT.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    found = {module_name(init, floor, root)[0] for floor, root in FLOORS.items() for init in root.rglob("__init__.py")}
    assert set(ROOMS) <= found
    assert set(config["packages"]) == found


def test_no_import_cycles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_graders_import_nothing_above_them():
    graph = import_graph()
    bad = {m: sorted(t for t in reachable(graph, m) if not in_floor(t, GRADERS))
           for m in graph if in_floor(m, GRADERS)}
    assert not {m: up for m, up in bad.items() if up}, bad


def test_tasks_never_import_the_core():
    graph = import_graph()
    bad = {m: sorted(t for t in reachable(graph, m) if not (in_floor(t, TASKS) or in_floor(t, GRADERS)))
           for m in graph if in_floor(m, TASKS)}
    assert not {m: up for m, up in bad.items() if up}, bad


def test_the_floor_checks_see_a_wrong_arrow():
    graph = import_graph()
    graph["evalsuite.graders.extract"] = graph["evalsuite.graders.extract"] | {"evalsuite.tasks.pack"}
    graph["evalsuite.tasks.pack"] = graph["evalsuite.tasks.pack"] | {"evalsuite.store"}
    assert "evalsuite.store" in reachable(graph, "evalsuite.graders.grade")
    assert "evalsuite.tasks.pack" in reachable(graph, "evalsuite.graders")
    graph["evalsuite.analysis.summary"] = graph["evalsuite.analysis.summary"] | {"evalsuite.tasks"}
    summary = without(graph, {("evalsuite.analysis.summary", "evalsuite.tasks")})["evalsuite.analysis.summary"]
    assert "evalsuite.tasks" in graph["evalsuite.analysis.summary"] and "evalsuite.tasks" not in summary


def without(graph: dict[str, set[str]], arrows: set[tuple[str, str]]) -> dict[str, set[str]]:
    return {m: targets - {t for a, t in arrows if a == m} for m, targets in graph.items()}


def test_analyses_import_nothing_above_them():
    """Not runner, client, engines or the CLI; only the lossless command and rescore ask endpoints."""
    graph = without(import_graph(), ANALYSIS_ABOVE)
    checked = [m for m in analyses(graph) if m not in ASK_ENDPOINTS]
    assert len(checked) > 10
    bad = {m: sorted(reachable(graph, m) & set(ABOVE_ANALYSIS)) for m in checked}
    assert not {m: up for m, up in bad.items() if up}, bad


def test_no_analysis_but_regrade_imports_tasks():
    """Importing regrade counts: it brings the packs in too. The run machinery (which the
    lossless command may call, and which runs packs) is judged by the test above, not walked."""
    graph = without(import_graph(), ANALYSIS_IMPORTS_TASKS)
    bad = {m: sorted(t for t in reachable(graph, m, avoid=frozenset(RUN_MACHINERY)) if in_floor(t, TASKS))
           for m in analyses(graph) if m != GRADES_AGAIN}
    assert not {m: up for m, up in bad.items() if up}, bad
    assert any(in_floor(t, TASKS) for t in graph[GRADES_AGAIN])    # the rule sees the arrows it allows


def test_every_allowed_exception_is_still_needed():
    """An exception whose arrow is gone must be deleted, so the lists only shrink."""
    graph = import_graph()
    for module, target in sorted(ANALYSIS_IMPORTS_TASKS | ANALYSIS_ABOVE):
        assert target in graph.get(module, ()), f"{module} no longer imports {target}: delete its entry"


def test_the_page_pieces_and_the_diff_reader_stand_between_analysis_and_lossless():
    """The shared page pieces (evalsuite/pages, beside templates/) import no analysis or diff
    module; the analyses read the diff's data only through its one reader (lossless/diff_json),
    and the diff page draws with the page pieces, not with an analysis."""
    graph = import_graph()
    pages = [m for m in graph if in_floor(m, "evalsuite.pages")]
    assert len(pages) >= 2
    bad = {m: sorted(t for t in reachable(graph, m) if not in_floor(t, "evalsuite.pages")) for m in pages}
    assert not {m: up for m, up in bad.items() if up}, bad
    into_lossless = {(m, t) for m in graph if in_floor(m, "evalsuite.analysis")
                     for t in graph[m] if in_floor(t, "evalsuite.lossless")}
    assert into_lossless and {t for _, t in into_lossless} == {"evalsuite.lossless.diff_json"}, into_lossless
    assert not {t for t in graph["evalsuite.lossless.html"] if in_floor(t, "evalsuite.analysis")}


def test_the_usage_error_sits_below_the_analyses_and_the_client():
    """Issue 42 #5: UsageError lived in client/errors.py, so regrade (an analysis) imported the
    client. Its home, evalsuite/errors.py, imports nothing of the suite; no analysis imports
    client/errors.py; the client's name for it is the same class."""
    graph = import_graph()
    assert graph["evalsuite.errors"] == set()
    assert "evalsuite.errors" in graph["evalsuite.analysis.regrade"]
    readers = {m for m in analyses(graph) if m not in ASK_ENDPOINTS and "evalsuite.client.errors" in reachable(graph, m)}
    assert not readers, readers
    from evalsuite.client import errors as client_errors
    from evalsuite.errors import UsageError

    assert client_errors.UsageError is UsageError
