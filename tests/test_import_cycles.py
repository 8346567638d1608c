"""No two of kubetide's modules import each other, directly or round a circle, counting the imports
made only for type checking: a circle of imports means two modules that cannot be read, tested or
moved apart (issue 24: "the drawing of the project has no import that runs back up and no import
cycle"). A package's ``__init__`` that only hands names on is read through to the modules it names."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def _modules() -> dict[str, Path]:
    out = {}
    for path in (SRC / "kubetide").rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imported(name: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """The kubetide modules ``name`` imports, wherever the import stands (also under TYPE_CHECKING
    and inside functions)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    yield f"{base}.{alias.name}"  # a module imported from its package
                elif base in modules:
                    yield base


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _is_face(path: Path) -> bool:
    """An ``__init__`` that defines nothing: it only hands on names of its package's modules."""
    tree = ast.parse(path.read_text())
    return path.name == "__init__.py" and not any(
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for n in tree.body
    )


def test_no_module_imports_itself_round_a_circle() -> None:
    modules = _modules()
    graph = {name: set(_imported(name, path, modules)) - {name} for name, path in modules.items()}
    # A module that imports a package's face imports what the face hands on: read through it (the face
    # itself imports its package's modules, which may import each other through it by name).
    faces = {name for name, path in modules.items() if _is_face(path)}

    def through(target: str, seen: frozenset[str] = frozenset()) -> set[str]:
        if target not in faces or target in seen:
            return {target}
        return {m for t in graph[target] for m in through(t, seen | {target})}

    graph = {
        name: set() if name in faces else {m for t in targets for m in through(t)} - {name}
        for name, targets in graph.items()
    }
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _circles(graph) == [["a", "b", "c"]]
