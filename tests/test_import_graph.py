"""The import graph of evalsuite/ runs one way: no module reaches itself through its imports, and
no analysis (which reads run folders only) imports the modules that call servers or run the CLI.
Lazy imports inside functions count too: they are read from the source with `ast`, not executed."""
from __future__ import annotations

import ast
from pathlib import Path

import evalsuite

ROOT = Path(evalsuite.__file__).parent
# the floors above the analyses: they call endpoints, run packs or parse the command line
ABOVE_ANALYSIS = ("evalsuite.cli", "evalsuite.runner", "evalsuite.client", "evalsuite.engines",
                  "evalsuite.lossless.command", "evalsuite.lossless.rescore")


def module_name(path: Path) -> tuple[str, list[str]]:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), parts
    return ".".join(parts), parts[:-1]


def import_graph() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        name, package = module_name(path)
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
        found[name] = {t for t in targets if t.startswith("evalsuite")}
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


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_graph_covers_the_packages():
    graph = import_graph()
    for name in ("evalsuite.cli", "evalsuite.runner", "evalsuite.analysis.compare", "evalsuite.lossless.runs"):
        assert name in graph
    assert "evalsuite.lossless.runs" in graph["evalsuite.lossless.command"]   # edges are read


def test_no_import_cycles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_analyses_import_nothing_above_them():
    graph = import_graph()
    analyses = [m for m in graph if m.startswith("evalsuite.analysis")]
    assert len(analyses) > 5
    bad = {m: sorted(reachable(graph, m) & set(ABOVE_ANALYSIS)) for m in analyses}
    assert not {m: up for m, up in bad.items() if up}, bad
