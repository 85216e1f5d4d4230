"""The project's files speak of the project only: no machine paths and no tooling from outside the project.

Scans every tracked file (``git ls-files``; without git, the tree minus ignored build folders). A machine path
is an absolute path into a machine's own folders (``/tmp/``, ``/work/``, ``/root/``, ``/home/``, ``/Users/``,
``/mnt/``, ``/scratch/``) where it is not part of a longer path or a URL; write a path relative to the project
(``runs/...``, ``../shared/data/...``) or a name (``idx``). Outside tooling: the GPU-lending tool's calls and
result folders (``run(command=...)``, ``give_back``, ``files_at``, ``files_fetch``, "device tool"), helper
scripts under ``shared/tools/``, and maintainers' own ``duplicates`` / ``issues`` commands used as commands.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()

MACHINE_DIRS = ("tmp", "work", "root", "home", "Users", "mnt", "scratch")
MACHINE_PATH = re.compile(r"(?<![\w.~/$-])/(?:" + "|".join(MACHINE_DIRS) + ")/")
OUTSIDE_TOOLING = re.compile(
    r"\brun\(\s*command\s*=|\bgive_back\b|\bfiles_(?:at|fetch)\b|\bdevice tool\b|\bshared/tools/"
    r"|(?:^[ \t]*|`|\$ )(?:duplicates|issues)[ \t]+(?:--?[a-z]|\d)", re.I | re.M)
# a pattern is searched only in texts holding one of its words (a regex over every character of the large
# result JSON files is slow)
WORDS = {MACHINE_PATH: tuple(f"/{d}/" for d in MACHINE_DIRS),
         OUTSIDE_TOOLING: ("run(", "give_back", "files_at", "files_fetch", "device tool", "shared/tools/", "duplicates",
                           "issues")}
# files that hold such text on purpose, with the reason
KEPT = {"research/tests/test_results_table.py": "fake machine paths, to test that result JSON drops them"}
BINARY = {".safetensors", ".png", ".jpg", ".npy", ".npz", ".bin", ".onnx", ".pt", ".gz", ".zip", ".sqlite"}
SKIPPED_DIRS = {".git", ".venv", "site", "runs", "build", "dist", "__pycache__", ".conba-index", ".gpu-bench"}


def project_files() -> list[str]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        return [p for p in listed.decode().split("\0") if p and (ROOT / p).is_file()]
    except (OSError, subprocess.CalledProcessError):
        return [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
                if p.is_file() and not SKIPPED_DIRS & set(p.relative_to(ROOT).parts)]


def offending_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of each line with a machine path or outside tooling (searched in the whole text)."""
    lower = text.lower()
    starts = sorted({m.start() for pattern, words in WORDS.items() if any(w.lower() in lower for w in words)
                     for m in pattern.finditer(text)})
    lines = text.splitlines() if starts else []
    numbers = sorted({text.count("\n", 0, at) for at in starts})
    return [(k + 1, lines[k].strip()[:120]) for k in numbers]


def test_the_patterns_find_what_they_should_and_nothing_else():
    bad = ["index at /tmp/w6/idx", "PYTHONPATH=/work/main/src", "cp /root/.cache/x .", "/home/me/data",
           'run(command="scripts/gpu_bench.sh", carry=[".x"])', "then call give_back", "under files_at",
           "python ../shared/tools/find.py", "with the device tool", "`duplicates --change`", "$ issues 45",
           "issues 45 --comment x"]
    good = ["https://example.com/home/page", "runs/w6/idx", "../shared/data/atcoder_dev.jsonl", "~/.cache/conba",
            "$TMPDIR/conba", "src/conba/tmp/x", "near duplicates are dropped", "(issues 36 and 39)",
            "see issue 45", "run(cmd)", "tmp_path / 'idx'", "a/work/b"]
    assert [s for s in bad if not offending_lines(s)] == []
    assert [s for s in good if offending_lines(s)] == []


def test_no_machine_paths_or_outside_tooling_in_the_project():
    found = []
    for path in project_files():
        if path in KEPT or path == THIS or Path(path).suffix in BINARY:
            continue
        try:
            text = (ROOT / path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary: images, weights
        found += [f"{path}:{k}: {line}" for k, line in offending_lines(text)]
    assert not found, "machine paths or outside tooling in the project's files:\n" + "\n".join(found[:50])
