"""File level: a file's functions as windows, scored as eval-repo scores files."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from conba.eval.repo_units import UnitTable
from conba.heads.window_head import WindowHeadConfig, build_window_head, save_window_head
from conba_research.window_files import file_table, file_vectors, score_files

FILES = {
    "py/add.py": "def add(a, b):\n    total = a + b\n    return total\n\n\ndef sub(a, b):\n    return a - b\n",
    "py/rev.py": "def reverse(text):\n    out = text[::-1]\n    return out\n",
    "js/add.js": "function add(a, b) {\n  const total = a + b;\n  return total;\n}\n\n"
                 "function sub(a, b) {\n  return a - b;\n}\n",
    "js/rev.js": "function reverse(text) {\n  const out = text.split('').reverse().join('');\n  return out;\n}\n",
}
GROUPS = [{"group": "add", "files": ["py/add.py", "js/add.js"]},
          {"group": "rev", "files": ["py/rev.py", "js/rev.js"]}]


def test_file_vectors_are_the_head_over_each_files_units():
    vec = np.arange(12, dtype=np.float32).reshape(4, 3)
    table = UnitTable(["a", "b"], ["python", "java"], np.array([0, 3, 4]), vec, ["", "", "", ""])
    mean = file_vectors(table, build_window_head(WindowHeadConfig(reader="mean", dim=3)))
    assert np.allclose(mean, [vec[:3].mean(0), vec[3]])
    first = file_vectors(table, build_window_head(WindowHeadConfig(reader="first", dim=3)))
    assert np.allclose(first, [vec[0], vec[3]])
    one = file_table(table, mean)
    assert one.starts.tolist() == [0, 1, 2] and np.allclose(np.linalg.norm(one.vectors, axis=1), 1.0)


@pytest.mark.slow
def test_score_files_on_a_tiny_index(tmp_path, tiny_model):
    from conba.index import Index

    root = tmp_path / "repo"
    for rel, code in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(code)
    groups = root / "groups.jsonl"
    groups.write_text("".join(json.dumps(g) + "\n" for g in GROUPS))
    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([root], show_progress=False)
    torch.manual_seed(0)
    head = build_window_head(WindowHeadConfig(reader="conba", dim=32))
    save_window_head(head, tmp_path / "heads" / "conba-s0")
    res = score_files(tmp_path / "idx", groups, tmp_path / "heads", "tiny")
    assert res["files"] == 4 and res["grouped"] == 4 and res["units"] == 6
    assert set(res["rows"]) == {"function pairs (max)", "function pairs (mean-best)", "mean", "max", "first", "conba"}
    assert all(0.0 <= v <= 1.0 for vals in res["rows"].values() for v in vals)
    # a fresh ConbaLayer starts as the plain mean of its windows: the same file ranking as "mean"
    assert res["rows"]["conba"] == pytest.approx(res["rows"]["mean"])
