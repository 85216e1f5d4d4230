"""Shared test helpers (tests/ and research/tests/ import them as `helpers`; `pythonpath` in pyproject.toml):
tiny in-memory models and datasets (no network, runs in milliseconds), crash-test and stub helpers."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

VOCAB = (
    ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    + list(string.ascii_lowercase) + list(string.digits) + list("()[]{}<>=+-*/%.,;:!&|^~\"'#_")
    + ["def", "return", "int", "for", "while", "if", "else", "public", "static", "void", "class", "print",
       "add", "sum", "max", "min", "sort", "list", "range", "in", "system", "out", "println", "func",
       "function", "let", "const", "var", "std", "cout", "include", "main", "args", "string"]
    + ["##" + c for c in string.ascii_lowercase + string.digits]
)


def make_tiny_backbone(directory: str | Path, hidden: int = 32, layers: int = 2, seed: int = 0) -> Path:
    """Write a 2-layer BERT (hidden 32) + WordPiece tokenizer to ``directory`` and return it."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    vocab_file = directory / "vocab.txt"
    vocab_file.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab=str(vocab_file), do_lower_case=True)  # vocab_file= is ignored by transformers 5
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=4, intermediate_size=2 * hidden, max_position_embeddings=128)
    BertModel(config).save_pretrained(directory, safe_serialization=True)
    tokenizer.save_pretrained(directory)
    return directory


TASKS = {
    "add": {"python": "def add(a, b):\n    return a + b\n",
            "java": "static int add(int a, int b) {\n    return a + b;\n}\n",
            "javascript": "function add(a, b) {\n  return a + b;\n}\n"},
    "max": {"python": "def biggest(xs):\n    return max(xs)\n",
            "java": "static int biggest(int[] xs) {\n    int m = xs[0];\n    for (int x : xs) if (x > m) m = x;\n"
                    "    return m;\n}\n",
            "javascript": "function biggest(xs) {\n  return Math.max(...xs);\n}\n"},
    "sort": {"python": "def order(xs):\n    return sorted(xs)\n",
             "java": "static int[] order(int[] xs) {\n    java.util.Arrays.sort(xs);\n    return xs;\n}\n",
             "javascript": "function order(xs) {\n  return xs.slice().sort((a, b) => a - b);\n}\n"},
    "hello": {"python": "def hello():\n    print('hello')\n",
              "java": "static void hello() {\n    System.out.println(\"hello\");\n}\n",
              "javascript": "function hello() {\n  console.log('hello');\n}\n"},
}


def make_tiny_dataset(path: str | Path, copies: int = 1) -> Path:
    """Grouped JSONL with 4 tasks × 3 languages (× ``copies`` renamed variants)."""
    path = Path(path)
    lines = []
    for c in range(copies):
        for task, by_lang in TASKS.items():
            for lang, code in by_lang.items():
                variant = code if c == 0 else code.replace("xs", f"v{c}")
                lines.append(json.dumps({"id": f"{task}/{lang}/{c}", "group": task, "language": lang,
                                         "code": variant, "source": "tiny"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_tree(root: str | Path, files: dict[str, str]) -> Path:
    """Write ``files`` ({relative path: text}) below ``root`` (folders made as needed); returns ``root``."""
    root = Path(root)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def run_distill(teacher: str, data: tuple[Path, Path], out: str | Path, *extra: str, layers: str = "0,2"):
    """``conba distill`` through click's runner on the tiny (train, dev) files ``data``: teacher layers
    ``layers``, batches of 4, no progress bar, then ``extra``. Returns the click Result."""
    from click.testing import CliRunner

    from conba.cli.main import cli

    train, dev = data
    return CliRunner().invoke(cli, ["distill", "-m", teacher, "-o", str(out), "-L", layers, "-d", str(train),
                                    "-D", str(dev), "-b", "4", "--no-progress", *extra])


def sql_count(db_path: str | Path, sql: str) -> int:
    """The first value of ``sql``'s first row, read-only from a SQLite file another process may be writing
    (0 while it does not exist yet or is locked): what the crash tests poll before they kill a run."""
    import sqlite3

    try:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute(sql).fetchone()
            return int(row[0]) if row and row[0] is not None else 0
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def kill_conba_when(args: list[str], ready, env: dict[str, str] | None = None, timeout: float = 60.0,
                    what: str = "the run", log: str | Path | None = None):
    """Run ``python -m conba.cli.main *args`` (this checkout's ``src`` first on the path), wait until
    ``ready()`` is true, then SIGKILL it; returns the finished :class:`subprocess.Popen`. Fails (an
    AssertionError with the run's output) if it exits first or ``ready`` stays false for ``timeout`` s.
    ``log``: a file for its output (default: pipes)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    src = Path(__file__).resolve().parents[2] / "src"
    full = dict(os.environ if env is None else env)
    full["PYTHONPATH"] = str(src)
    full.setdefault("TOKENIZERS_PARALLELISM", "false")
    out = open(log, "w") if log is not None else subprocess.PIPE  # noqa: SIM115 (closed below)
    proc = subprocess.Popen([sys.executable, "-m", "conba.cli.main", *args], env=full, stdout=out,
                            stderr=subprocess.STDOUT if log is not None else subprocess.PIPE)

    def said() -> str:
        return Path(log).read_text()[-3000:] if log is not None else str(proc.communicate())

    try:
        deadline = time.monotonic() + timeout
        while not ready():
            assert proc.poll() is None, f"{what} ended before it was killed: {said()}"
            assert time.monotonic() < deadline, f"{what} never got there in {timeout:.0f} s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if log is not None:
            out.close()
    return proc


class ScoreStubIndex:
    """An index stub for ``conba.mapping`` tests: fixed scores between units by id (source ids index the
    rows; target ids minus 10 the columns) and the clone threshold 0.64."""

    threshold = 0.64

    def __init__(self, scores):
        self.scores = scores

    def score_matrix(self, a, b):
        import numpy as np

        return self.scores[np.ix_(a, [i - 10 for i in b])]


def write_clustered_chunks(folder: str | Path, per_chunk: int, chunks: int = 2, dim: int = 16,
                           centres: int = 6, seed: int = 0) -> Path:
    """Unit vectors drawn around ``centres`` random centres, saved as ``chunk-00000.npy``... in ``folder``
    (the layout ``conba bench ivf-encode`` writes): stand-ins for real embeddings in the IVF bench tests."""
    import numpy as np

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    middle = 2 * rng.standard_normal((centres, dim)).astype(np.float32)
    for k in range(chunks):
        x = middle[rng.integers(0, centres, per_chunk)] + rng.standard_normal((per_chunk, dim)).astype(np.float32)
        np.save(folder / f"chunk-{k:05d}.npy", x / np.linalg.norm(x, axis=1, keepdims=True))
    return folder


RESEARCH = Path(__file__).resolve().parents[2] / "research"


def research_entry_points(group: str = "conba.commands") -> list:
    """The entry points of ``group`` (``conba.commands``, ``conba.heads``) research/pyproject.toml declares
    (what ``pip install -e research/`` installs), as :class:`importlib.metadata.EntryPoint` objects."""
    import importlib.metadata

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: run the research tests with the distribution installed
        return []
    declared = tomllib.loads((RESEARCH / "pyproject.toml").read_text(encoding="utf-8"))
    return [importlib.metadata.EntryPoint(name, value, group)
            for name, value in declared["project"]["entry-points"][group].items()]


def _plug_in_research_heads() -> None:
    """The head kinds research/pyproject.toml declares that the installed metadata lacks (an install made
    before the suite declared them, or none): visible to ``conba.utils.head_kinds`` as installing it would."""
    import conba.utils.head_kinds as head_kinds

    installed = head_kinds.entry_points()
    names = {point.name for point in installed}
    missing = tuple(p for p in research_entry_points(head_kinds.ENTRY_POINT_GROUP) if p.name not in names)
    if missing:
        head_kinds.entry_points = lambda: (*installed, *missing)  # type: ignore[assignment]


def plug_in_research() -> bool:
    """When ``conba_research`` is importable but its distribution is not installed (tests run with
    PYTHONPATH=src:research/src), make the commands it declares visible to conba's CLI, as installing it
    would; its head kinds (``conba.heads``) also when an older install lacks them. Returns whether the
    research commands are plugged in."""
    import importlib.metadata
    import importlib.util

    import conba.cli.plugins as plugins

    if importlib.util.find_spec("conba_research") is None:
        return False
    _plug_in_research_heads()
    try:
        importlib.metadata.distribution("conba-research")
        return True
    except importlib.metadata.PackageNotFoundError:
        pass
    installed = plugins.entry_points
    declared = research_entry_points(plugins.ENTRY_POINT_GROUP)
    plugins.entry_points = lambda: [*installed(), *declared]
    return True


def map_config(folder: str | Path, **keys) -> str:
    """A mapping configuration file (``conba map --config``) with ``keys`` in ``folder``; returns its path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"map-config-{len(list(folder.glob('map-config-*.json')))}.json"
    path.write_text(json.dumps(keys), encoding="utf-8")
    return str(path)


def train_config(folder: str | Path, **keys) -> str:
    """A training configuration file (``conba train --config``) with ``keys`` (paths as strings) in ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "train-config.json"
    path.write_text(json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in keys.items()}), encoding="utf-8")
    return str(path)


def mcp_calls(server: Any, calls: list[tuple[str, dict]], timeout: float = 120.0) -> list[tuple[bool, str]]:
    """Call MCP tools through the SDK's client: ``server`` is an in-process ``MCPServer`` or the SDK's
    ``StdioServerParameters`` (a subprocess); ``calls`` are (tool, arguments). Returns (is_error, text) per
    call; the listed tools' names are the first item's when ``calls`` starts with ("tools/list", {})."""
    import asyncio

    from mcp import Client

    async def run() -> list[tuple[bool, str]]:
        out: list[tuple[bool, str]] = []
        async with Client(server, read_timeout_seconds=timeout) as client:
            for name, args in calls:
                if name == "tools/list":
                    listed = await client.list_tools()
                    out.append((False, json.dumps([t.model_dump(mode="json", by_alias=True) for t in listed.tools])))
                    continue
                result = await client.call_tool(name, args)
                out.append((bool(result.is_error), "".join(getattr(c, "text", "") for c in result.content)))
        return out

    return asyncio.run(run())
