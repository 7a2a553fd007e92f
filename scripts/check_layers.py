"""Check the import graph of the probeval package: no cycle, and no import pointing up a layer.

Every ``import`` and ``from ... import`` counts, wherever it stands: at module level, inside a
function (a deferred import is still a dependency) or under ``if TYPE_CHECKING:``.

The layers, from the bottom:

1. ``probeval._util`` and the Rust extension ``probeval._core``: validation, random streams,
   class labels, tables, frames. They know nothing of statistics.
2. ``probeval.base``: the posterior object, intervals, densities, priors, the metric registry.
3. ``probeval.labels``: confusion matrices, scores, audits, segments, ``evaluate``.
4. ``probeval.compare``: comparisons and decisions.
5. ``probeval.labelfree`` and ``probeval.ensemble``: capabilities built on all of the above,
   independent of each other.
6. ``probeval.experiment``: experiments and their planning, which use labelled and label-free
   evaluation alike.
7. The edges: ``probeval`` itself (the public API), the CLI, plots, reports, Dask, io and the
   demo data.

A module may import from its own layer and from lower layers, except that the two packages of
layer 5 may not import each other. Run ``python scripts/check_layers.py``; it exits 1 and lists
what is wrong otherwise.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = "probeval"
ROOT = Path(__file__).resolve().parent.parent / "python" / PACKAGE

#: Bottom first. Each layer lists its packages (or single modules).
LAYERS: list[list[str]] = [
    ["probeval._util", "probeval._core"],
    ["probeval.base"],
    ["probeval.labels"],
    ["probeval.compare"],
    ["probeval.labelfree", "probeval.ensemble"],
    ["probeval.experiment"],
    [
        "probeval",
        "probeval.__main__",
        "probeval._io",
        "probeval.cli",
        "probeval.dask",
        "probeval.datasets",
        "probeval.plot",
        "probeval.reporting",
    ],
]
#: Layers whose packages must stay independent of each other.
INDEPENDENT = {4}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found = {module_name(p): p for p in ROOT.rglob("*.py")}
    found[f"{PACKAGE}._core"] = ROOT / "_core.pyi"
    return found


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The probeval modules that ``name`` imports."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                # `from probeval import _core` imports the module probeval._core.
                candidate = f"{source}.{alias.name}"
                targets.add(candidate if candidate in known else source)
    return {t for t in targets if t == PACKAGE or t.startswith(PACKAGE + ".")}


def unit_of(name: str) -> tuple[int, str]:
    """(layer index, package or module of that layer) that ``name`` belongs to."""
    best: tuple[int, str] | None = None
    for index, units in enumerate(LAYERS):
        for unit in units:
            if (name == unit or name.startswith(unit + ".")) and (
                best is None or len(unit) > len(best[1])
            ):
                best = (index, unit)
    if best is None:
        raise SystemExit(f"{name} belongs to no layer: add it to LAYERS in {__file__}")
    return best


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def main() -> int:
    known = modules()
    graph = {
        name: imports(name, path, set(known)) - {name}
        for name, path in known.items()
        if path.suffix == ".py"
    }
    problems = []
    for name, targets in sorted(graph.items()):
        layer, unit = unit_of(name)
        for target in sorted(targets):
            target_layer, target_unit = unit_of(target)
            if target_layer > layer:
                problems.append(f"{name} imports {target}, a higher layer")
            elif target_layer == layer and layer in INDEPENDENT and target_unit != unit:
                problems.append(f"{name} imports {target}: same layer, different package")
    problems.extend(f"import cycle: {' -> '.join(c)}" for c in cycles(graph))
    n_edges = sum(len(t) for t in graph.values())
    if problems:
        print("\n".join(problems))
        return 1
    print(f"import graph: {len(graph)} modules, {n_edges} imports, no cycle, none points up")
    return 0


if __name__ == "__main__":
    sys.exit(main())
