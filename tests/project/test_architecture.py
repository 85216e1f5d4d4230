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

from helpers.source import parse

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
ROOT = SRC / "conba"
RESEARCH = REPO / "research" / "src" / "conba_research"  # the research suite: its own distribution (research/)
MAX_LINES = 400

# Lower layers never import higher ones; a package may import its own layer (without a cycle).
LAYERS: list[set[str]] = [
    {"errors", "utils", "settings", "text", "constants"},
    # lexical: identifier-word TF-IDF vectors, the fused score; source: walking, filters, unit extraction,
    # plain records; augment: perturbations of code (data augmentation, conba experiment augment-data)
    {"data", "syntax", "lexical", "source", "augment"},
    {"encoder", "heads"},          # backbone, the one layer loop, SDTP inference (encoder.sdtp); heads
    {"engine"},                    # batching, windows, precision, ONNX: what ConbaModel.encode runs
    {"model", "merge"},
    # index -> clones; plagiarism: conba plagiarism (no model, no index), scored by bench plagiarism-eval
    {"prune", "index", "clones", "train", "eval", "pretrain", "bench", "plagiarism"},
    {"mapping"},                   # conba map: port coverage of one tree in another, over an index
    {"cli", "serve", "mcp", "client"},  # mcp: conba mcp (reuses serve's snapshot holder)
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
    for node in ast.walk(parse(text)):
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


# Module cycles inside a package that are known and kept for now (each with its reason).
KNOWN_MODULE_CYCLES = {
    # ConbaModel.save / .load delegate to persist (function-level imports); persist reads core's constants
    frozenset({"conba.model.core", "conba.model.persist"}),
}


def _runtime_text(text: str) -> str:
    """``text`` without its ``if TYPE_CHECKING:`` blocks (annotations only, no import at run time)."""
    tree = parse(text)
    lines = text.splitlines()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            for i in range(node.lineno - 1, node.end_lineno):
                lines[i] = ""
    return "\n".join(lines)


def module_graph(package: str) -> dict[str, dict[str, str]]:
    """{module: {module: "file:line"}} between the modules of one package (``conba.index.storage.store``, ...);
    a subpackage's modules are nodes of their own, the package's ``__init__`` (its facade) is not."""
    graph: dict[str, dict[str, str]] = defaultdict(dict)
    base = ROOT / package
    names = {".".join(("conba", package, *p.relative_to(base).with_suffix("").parts))
             for p in base.rglob("*.py") if p.name != "__init__.py"}
    for path in sorted(base.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        source = ".".join(("conba", package, *path.relative_to(base).with_suffix("").parts))
        text = _runtime_text(path.read_text(encoding="utf-8"))
        for module, line in _imports(text, list(path.relative_to(SRC).parts[:-1])):
            if module in names and module != source and frozenset({source, module}) not in KNOWN_MODULE_CYCLES:
                graph[source].setdefault(module, f"{path.relative_to(SRC)}:{line}")
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


def test_no_cycle_between_modules_inside_a_package():
    cycles = []
    for package in sorted(p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").is_file()):
        graph = module_graph(package)
        if cycle := find_cycle(graph):
            cycles.append(" -> ".join(f"{a} ({graph[a][b]})" for a, b in zip(cycle, cycle[1:])))
    assert not cycles, "import cycles between the modules of a package:\n" + "\n".join(cycles)


def test_clones_and_source_do_not_reach_up_into_the_index():
    """The index builds on source/ (reading code) and clones/ (clone analysis), never the other way."""
    graph = import_graph()
    assert "index" not in graph.get("clones", {}), graph["clones"]
    assert "index" not in graph.get("source", {}), graph.get("source")
    for package in ("train", "pretrain"):
        assert "index" not in graph.get(package, {}), f"{package} walks files through conba.source, not the index"


# conba.index by concern (its __init__ lists the sub-packages): the vector stores and the ranking above them import
# nothing of the index's storage, model, files or scale, so another vector engine can stand where they stand.
INDEX_APART = {"vectors": {"errors"}, "ranking": {"errors", "vectors"}}


def test_the_vector_stores_and_the_ranking_stand_apart_from_the_rest_of_the_index():
    graph = module_graph("index")
    found = [f"{src} -> {dst} ({where})" for src, targets in graph.items() if src.split(".")[2] in INDEX_APART
             for dst, where in targets.items()
             if dst.split(".")[2] not in INDEX_APART[src.split(".")[2]] | {src.split(".")[2]}]
    assert not found, "\n".join(found)
    assert {p.name for p in (ROOT / "index").iterdir() if p.is_dir() and p.name != "__pycache__"} == {
        "storage", "vectors", "ranking", "model", "files", "scale"}


def test_no_shim_modules_left():
    assert not (ROOT / "index" / "languages.py").exists()
    flat = {p.stem for p in (ROOT / "index").glob("*.py")}  # the modules moved into sub-packages left no shims
    assert flat == {"__init__", "errors", "defaults"}, flat


def test_layers_only_import_downwards():
    rank = {name: i for i, layer in enumerate(LAYERS) for name in layer}
    graph = import_graph()
    unknown = sorted(set(graph) - set(rank))
    assert not unknown, f"packages missing from LAYERS in {__file__}: {unknown}"
    upward = [f"{src} -> {dst} ({where})" for src, targets in graph.items() for dst, where in targets.items()
              if rank.get(dst, -1) > rank[src]]
    assert not upward, "imports from a lower layer into a higher one:\n" + "\n".join(sorted(upward))


def test_the_runtime_never_imports_the_research_suite():
    """conba_research (`conba experiment`, the developer benchmarks, matplotlib figures) builds on conba, never
    the other way; conba's CLI lists its commands through entry points (conba.cli.plugins) when installed."""
    found = [f"{path.relative_to(SRC)}:{line}" for path in sorted(ROOT.rglob("*.py"))
             for module, line in _imports(path.read_text(encoding="utf-8"), list(path.relative_to(SRC).parts[:-1]))
             if module.split(".")[0] == "conba_research"]
    assert not found, found
    assert not (ROOT / "experiments").exists()
    assert (ROOT / "augment").is_dir()  # the perturbations are data augmentation


def test_matplotlib_is_only_imported_lazily_by_the_runtime():
    top_level = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in parse(path.read_text(encoding="utf-8")).body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n.split(".")[0] == "matplotlib" for n in names):
                top_level.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not top_level, top_level


def test_no_source_file_over_400_lines():
    long = [f"{p.relative_to(REPO)}: {n} lines" for p in sorted([*ROOT.rglob("*.py"), *RESEARCH.rglob("*.py")])
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert not long, f"files over {MAX_LINES} lines (split them):\n" + "\n".join(long)


# What the product's bench package holds: `conba bench speed` and what it runs; the developer benchmarks are
# the research suite's (research/src/conba_research/bench).
PRODUCT_BENCH = {"__init__.py", "speed.py", "variants.py", "report.py", "probes.py"}


def test_the_research_suite_and_the_developer_tools_live_in_research():
    """src/ holds the product only (the wheel of pyproject.toml); the research suite is the distribution of
    research/pyproject.toml, its tests in research/tests; test helpers live in tests/helpers."""
    assert sorted(p.name for p in SRC.iterdir() if not p.name.startswith(".") and not p.name.endswith(".egg-info")) \
        == ["conba"]
    assert (RESEARCH / "__init__.py").is_file() and (REPO / "research" / "pyproject.toml").is_file()
    assert sorted(p.name for p in (ROOT / "bench").glob("*.py")) == sorted(PRODUCT_BENCH)
    for gone in ("serve/load_test.py", "mapping/evaluate.py", "cli/passthrough.py", "cli/bench_tools_cmd.py",
                 "cli/bench_gpu_cmd.py", "testing.py"):
        assert not (ROOT / gone).exists(), gone
    assert (REPO / "tests" / "helpers" / "__init__.py").is_file()
    readout = (ROOT / "model" / "window_readout.py").read_text(encoding="utf-8")  # the product keeps the read-out
    assert "def read_out_windows" in readout and "def encode_windows" not in readout
    assert not list((REPO / "tests").rglob("test_experiments_*.py"))  # the lab's tests live with the lab


def test_shared_choices_are_defined_once_in_conba_constants():
    """The torch-free tuples of conba.constants (poolings, heads, engines, devices, precisions, views) and its
    file names are never copied as literals elsewhere in the product (a copy drifts: --pooling once offered 5
    of the 6 read-outs)."""
    import conba.constants as constants

    shared = {value: name for name, value in vars(constants).items()
              if name.isupper() and isinstance(value, tuple | str) and (isinstance(value, tuple) or value.endswith(
                  ".json"))}
    copies = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.name == "constants.py" and path.parent == ROOT:
            continue
        for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple | ast.Constant):
                try:
                    value = ast.literal_eval(node)
                    hit = isinstance(value, tuple | str) and len(value) > 1 and value in shared
                except (ValueError, TypeError):  # not a literal, or a tuple holding a list
                    continue
                if hit:
                    copies.append(f"{path.relative_to(SRC)}:{node.lineno}: a copy of conba.constants.{shared[value]}")
    assert not copies, "\n".join(copies)
