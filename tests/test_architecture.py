"""The package structure: no import cycle between conba's top-level packages, the layering, small files.

The import graph is built from the source with ``ast``: every ``import`` / ``from ... import`` in a
file counts, at module level and inside functions alike (a lazy import is still a dependency).
A node is a top-level package or module of ``conba`` (``conba.model``, ``conba.settings``, ...);
``from conba import X`` of a non-module name is the package facade and not an edge.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = SRC / "conba"
MAX_LINES = 400

# Lower layers never import higher ones; a package may import its own layer (without a cycle).
LAYERS: list[set[str]] = [
    {"errors", "utils", "settings", "text"},
    {"data", "syntax", "lexical"},  # lexical: identifier-word TF-IDF vectors, the fused score
    {"encoder", "heads"},          # backbone, the one layer loop, SDTP inference (encoder.sdtp); heads
    {"engine"},                    # batching, chunks, precision, ONNX: what ConbaModel.encode runs
    {"model", "merge"},
    {"prune", "index", "train", "eval", "experiments", "pretrain", "bench"},
    {"mapping"},                   # conba map: port coverage of one tree in another, over an index
    {"cli", "serve", "client", "testing"},
]


def _node(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "conba" or len(parts) < 2:
        return None
    name = parts[1]
    return name if (ROOT / name).is_dir() or (ROOT / f"{name}.py").is_file() else None


def _imports(text: str, package: list[str]) -> list[tuple[str, int]]:
    """(imported module, line) for every import in ``text``, at any depth; relative imports resolved
    from ``package`` (the dotted parts of the package the file is in)."""
    out: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            out.append((module, node.lineno))
            out += [(f"{module}.{a.name}", node.lineno) for a in node.names]  # `from conba import model`
    return out


def import_graph() -> dict[str, dict[str, str]]:
    """{source node: {target node: "file:line" of one import}} over src/conba."""
    graph: dict[str, dict[str, str]] = defaultdict(dict)
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if parts == ("__init__.py",):
            continue  # the facade (lazy load_model / ConbaModel / Index / Client)
        source = parts[0].removesuffix(".py")
        package = list(path.relative_to(SRC).parts[:-1])
        for module, line in _imports(path.read_text(encoding="utf-8"), package):
            target = _node(module)
            if target and target != source:
                graph[source].setdefault(target, f"{path.relative_to(SRC)}:{line}")
    return graph


def find_cycle(graph: dict[str, dict[str, str]]) -> list[str] | None:
    """One cycle as [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, {})):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_checker_sees_function_level_and_relative_imports_and_cycles():
    text = "import os\n\ndef f():\n    from conba.prune.soft import soft_states\n    from ..model import core\n"
    found = _imports(text, ["conba", "engine"])
    assert ("conba.prune.soft", 4) in found and ("conba.model", 5) in found
    assert _node("conba.prune.soft") == "prune" and _node("conba.settings") == "settings"
    assert _node("conba.__version__") is None
    assert find_cycle({"a": {"b": "x"}, "b": {"c": "y"}, "c": {"a": "z"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b": "x"}, "b": {}, "c": {"a": "z"}}) is None


def test_no_cycle_between_packages():
    graph = import_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle between conba packages: " + " -> ".join(
        f"{a} ({graph[a][b]})" for a, b in zip(cycle, cycle[1:]))


def test_layers_only_import_downwards():
    rank = {name: i for i, layer in enumerate(LAYERS) for name in layer}
    graph = import_graph()
    unknown = sorted(set(graph) - set(rank))
    assert not unknown, f"packages missing from LAYERS in {__file__}: {unknown}"
    upward = [f"{src} -> {dst} ({where})" for src, targets in graph.items() for dst, where in targets.items()
              if rank.get(dst, -1) > rank[src]]
    assert not upward, "imports from a lower layer into a higher one:\n" + "\n".join(sorted(upward))


def test_no_source_file_over_400_lines():
    long = [f"{p.relative_to(SRC.parent)}: {n} lines" for p in sorted(ROOT.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert not long, f"files over {MAX_LINES} lines (split them):\n" + "\n".join(long)
