"""Inputs of ``conba bench gpu`` that need no network and no data folder: a source tree of at least N
Python functions copied from installed packages, its functions as snippets, and a MiniLM-shaped
stand-in model when the shipped ones cannot load.

Glossary: n snippets / functions.

The tree is built from the Python files of installed packages (``site-packages``: torch,
transformers, scikit-learn, ... are on any machine that can run the benchmark), taken in sorted
path order until their ``def`` count (Python's own ``ast``) reaches the target, so the same machine
gives the same tree. The stand-in has all-MiniLM-L6-v2's shape (6 layers, width 384, 12 heads,
feed-forward 1,536, 512 positions: the default model's shape and speed) with seeded random weights
and a given WordPiece tokenizer (``scripts/gpu_bench.sh`` carries MiniLM's tokenizer files along).
"""

from __future__ import annotations

import ast
import fnmatch
import json
import os
import shutil
import sysconfig
import textwrap
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conba.errors import ConfigError
from conba.source.filters import EXCLUDED_DIRS, GENERATED_MARKER, GENERATED_NAMES

MAX_FILE_BYTES = 500_000  # larger files are skipped (conba index skips files over 1 MB by default)
MINILM_SHAPE = {"hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12, "intermediate_size": 1536,
                "max_position_embeddings": 512}


@dataclass
class PyFile:
    path: Path       # where it is installed
    rel: str         # its path under the source root it came from
    functions: list[str]  # the source of each def (nested ones too)


def default_roots() -> list[Path]:
    """The folders of installed pure-Python and platform packages (``site-packages``)."""
    paths = sysconfig.get_paths()
    return sorted({Path(paths[k]) for k in ("purelib", "platlib") if Path(paths[k]).is_dir()})


def _functions(text: str) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences in old files
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return []
    lines = text.splitlines(keepends=True)  # whole lines, dedented (ast.get_source_segment is quadratic)
    return [textwrap.dedent("".join(lines[node.lineno - 1:node.end_lineno])) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno]


def python_files(roots: list[Path]) -> Iterator[PyFile]:
    """Readable ``.py`` files under ``roots`` in sorted order, without what ``conba index`` skips (hidden,
    vendored and generated files: :mod:`conba.source.filters`) and without test folders. ``rel`` starts
    with ``src<k>/`` (k: the root's position), not the root's name: ``site-packages`` is skipped as vendored."""
    for k, root in enumerate(roots):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in EXCLUDED_DIRS
                                 and d not in ("tests", "test", "_vendor", "vendored"))
            for name in sorted(filenames):
                path = Path(dirpath) / name
                if not name.endswith(".py") or path.is_symlink() or any(fnmatch.fnmatch(name, g)
                                                                        for g in GENERATED_NAMES):
                    continue
                try:
                    if path.stat().st_size > MAX_FILE_BYTES:
                        continue
                    text = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                if GENERATED_MARKER.search("\n".join(text.splitlines()[:10])):  # as conba index decides
                    continue
                funcs = _functions(text)
                if funcs:
                    yield PyFile(path, f"src{k}/{path.relative_to(root)}", funcs)


def build_tree(out: Path, functions: int, roots: list[Path] | None = None) -> dict:
    """Copy Python files into ``out`` until they hold at least ``functions`` defs; returns
    ``{"files", "functions", "roots"}``. A tree already there with its ``tree.json`` is reused."""
    stamp = out.parent / f"{out.name}.json"  # beside the tree, not in it
    roots = roots or default_roots()
    if stamp.is_file():
        info = json.loads(stamp.read_text(encoding="utf-8"))
        if info.get("target") == functions and info.get("roots") == [str(r) for r in roots]:
            return info
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    files = count = 0
    for f in python_files(roots):
        dest = out / f.rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f.path, dest)
        files += 1
        count += len(f.functions)
        if count >= functions:
            break
    if count < functions:
        raise ConfigError(f"only {count} Python functions under {', '.join(map(str, roots))}; "
                          f"{functions} wanted (pass --source FOLDER or fewer --functions)")
    info = {"target": functions, "files": files, "functions": count, "roots": [str(r) for r in roots]}
    stamp.write_text(json.dumps(info), encoding="utf-8")
    return info


def tree_snippets(tree: Path, n: int) -> list[str]:
    """``n`` function snippets of ``tree`` (every k-th def in file order, so all parts of the tree are
    represented); fewer when the tree holds fewer."""
    found = [s for f in python_files([tree]) for s in f.functions if s.strip()]
    if not found:
        raise ConfigError(f"{tree}: no Python functions to time")
    step = max(1, len(found) // max(1, n))
    return found[::step][:n]


def write_snippets(path: Path, snippets: list[str]) -> Path:
    """Grouped JSONL (one group per snippet, language python), as ``conba bench speed --data`` reads it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for i, code in enumerate(snippets):
            fh.write(json.dumps({"id": f"f{i}", "group": f"g{i}", "language": "python", "code": code}) + "\n")
    return path


def stand_in_model(tokenizer_dir: Path, out: Path, shape: dict | None = None, seed: int = 0) -> Path:
    """A BERT encoder of ``shape`` (default :data:`MINILM_SHAPE`) with seeded random weights and the
    tokenizer in ``tokenizer_dir``, saved as a Hugging Face folder ``out`` (conba and
    sentence-transformers load it offline)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    if not tokenizer_dir.is_dir():
        raise ConfigError(f"{tokenizer_dir}: no tokenizer folder for the stand-in model (scripts/gpu_bench.sh "
                          "prepare copies all-MiniLM-L6-v2's tokenizer there)")
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir), trust_remote_code=False)  # never asks on stdin
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tokenizer), **(shape or MINILM_SHAPE))
    BertModel(config).save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    return out
