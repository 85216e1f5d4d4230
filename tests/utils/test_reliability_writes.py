"""Issue 41 "writes": every file the package writes goes through one helper (conba.utils.io.atomic_write and
its forms: write_text_atomic, write_json_atomic, write_npy_atomic, open_output, replace_dir), which renames a
temporary file over a regular file and writes into a FIFO or device. This walks the source for direct writes:
each must be to a temporary (a name with ``tmp``, renamed by its caller) or listed below with why."""

from __future__ import annotations

import ast
from pathlib import Path

from helpers.source import parse

ROOT = Path(__file__).resolve().parents[2]
# module -> why its direct writes are fine
ALLOWED = {
    "conba/utils/io.py": "the helper itself",
    "conba_research/bench/gpu_tree.py": "work files of `bench gpu` in its work folder, its stamp written last",
    "conba/index/scale/ray_encode.py": "a Ray worker's private copy of the model in a fresh mkdtemp folder",
    "conba_research/bench/corpus.py": "the scratch source tree of `bench index-scale --phase build`, removed and "
                                      "rewritten unless its BUILD.json stamp (written last, atomically) matches",
    "conba_research/bench/ann.py": "faiss.write_index into a byte-counting callback (the serialised size; no file)",
    "conba_research/bench/plagiarism_eval.py": "the teacher's folders and each run's JSONL in a fresh temporary folder",
    "conba_research/bench/plagiarism_scale.py": "the laid-out submissions in the bench's own work folder",
    "conba_research/gpu_train/export.py": "checkpoint archives and their parts in the GPU run's result folder",
    "conba_research/gpu_train/pack.py": "the pack's archives in the folder `gpu_train.sh prepare` makes",
    "conba_research/gpu_train/sweep.py": "each run's spec and log in the sweep's work folder",
}
HANDLES = {"fh", "f", "fp", "p", "tmp", "handle"}  # a file already opened (or a path) given by atomic_write
WRITERS = {"write_text", "write_bytes", "savefig", "save", "dump", "to_csv", "write_index"}


PACKAGES = (ROOT / "src" / "conba", ROOT / "research" / "src" / "conba_research")  # the product, the research suite


def _direct_writes(packages: tuple[Path, ...] = PACKAGES) -> list[str]:
    found = []
    for base in packages:
        for path in sorted(base.rglob("*.py")):
            module = path.relative_to(base.parent).as_posix()
            if module in ALLOWED:
                continue
            tree = parse(path.read_text(encoding="utf-8"))
            in_callback = {id(n) for lam in ast.walk(tree) if isinstance(lam, ast.Lambda) for n in ast.walk(lam)}
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call) or id(node) in in_callback:
                    continue  # a lambda is the write callback of atomic_write
                target = ast.unparse(node)
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                mode = next((a.value for a in node.args[1:2] if isinstance(a, ast.Constant)), None) or next(
                    (k.value.value for k in node.keywords if k.arg == "mode" and isinstance(k.value, ast.Constant)), "")
                opens_for_writing = name == "open" and isinstance(mode, str) and "w" in mode  # "a": a log
                if not (opens_for_writing or name in WRITERS):
                    continue
                if name in {"save", "dump"} and not (ast.unparse(func).startswith(("np.", "json.", "torch."))):
                    continue  # model.save(DIR) etc.: folders written through replace_dir
                first = node.args[0] if node.args else None
                if isinstance(first, ast.Name) and first.id in HANDLES:
                    continue  # np.save(fh, ...): into a handle of a temporary file
                if "tmp" in target.lower() or "temp" in target.lower():
                    continue  # a temporary, renamed by the caller
                found.append(f"{module}:{node.lineno}: {target[:100]}")
    return found


def test_every_write_goes_through_the_atomic_helper():
    found = _direct_writes()
    assert not found, "direct writes (use conba.utils.io.write_text_atomic / atomic_write):\n" + "\n".join(found)


def test_the_walk_sees_a_direct_write_and_not_a_callback(tmp_path):
    (tmp_path / "conba").mkdir()
    (tmp_path / "conba" / "m.py").write_text(
        "from pathlib import Path\nimport json\n"
        "def report(out, data):\n    Path(out).write_text(json.dumps(data))\n"
        "def fine(out):\n    atomic_write(out, lambda p: p.write_text('x'))\n"
        "def also_fine(out):\n    with open(out, 'a') as log:\n        log.write('x')\n")
    assert [f.split(": ")[0] for f in _direct_writes((tmp_path / "conba",))] == ["conba/m.py:4"]
