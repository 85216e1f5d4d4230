"""Issue 41 row 8: identical source functions get identical statuses and targets (conba.mapping.copies)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.mapping import assign
from conba.mapping.copies import share_copies
from conba.source.records import Unit

FUNCTIONS = [
    "def alpha(xs):\n    total = 0\n    for x in xs:\n        total += x * x\n    return total\n",
    "def beta(s):\n    out = []\n    for ch in s:\n        if ch.isupper():\n            out.append(ch.lower())\n"
    "    return ''.join(out)\n",
    "def gamma(n):\n    a, b = 0, 1\n    while n > 0:\n        a, b = b, a + b\n        n -= 1\n    return a\n",
    "def delta(items, key):\n    seen = {}\n    for item in items:\n"
    "        seen.setdefault(key(item), []).append(item)\n    return seen\n",
]


def test_copies_take_their_best_members_outcome():
    units = [Unit(f"/s/{k}.py", "f", "python", 1, 3, "def f(): return 1", id=k) for k in range(3)]
    units.append(Unit("/s/other.py", "g", "python", 1, 3, "def g(): return 2", id=9))
    scores = np.array([[0.95], [0.95], [0.95], [0.90]], dtype=np.float32)  # three copies, one target
    a = assign(scores, 0.8, 0.02)
    assert len(set(a.status[:3])) > 1  # the one-to-one assignment alone serves one copy only
    share_copies(a, units)
    assert a.status[:3] == ["matched"] * 3 and a.target[:3].tolist() == [0, 0, 0]
    assert a.reason[0] == a.reason[1] == a.reason[2] and a.score[0] == a.score[2]
    assert a.status[3] != "matched" or a.target[3] == 0  # a different function keeps its own outcome


def test_the_best_member_is_chosen_by_status_then_score_then_place():
    units = [Unit("/s/b.py", "f", "python", 5, 7, "same", id=1), Unit("/s/a.py", "f", "python", 9, 9, "same", id=2)]
    a = assign(np.array([[0.5, 0.1], [0.5, 0.1]], dtype=np.float32), 0.8, 0.02)  # both missing, tied
    share_copies(a, units)
    assert a.status == ["missing", "missing"] and a.target.tolist() == [0, 0]


@pytest.mark.slow
def test_ten_files_of_four_functions_against_thirty_copies(tmp_path, tiny_model):
    src, tgt = tmp_path / "src", tmp_path / "tgt"
    src.mkdir()
    tgt.mkdir()
    text = "\n\n".join(FUNCTIONS)
    for k in range(10):
        (src / f"s{k}.py").write_text(text)
    for k in range(30):
        (tgt / f"t{k}.py").write_text(text)
    result = CliRunner().invoke(cli, ["map", str(src), str(tgt), "-i", str(tmp_path / "idx"), "-m", tiny_model,
                                      "-t", "0.999"])
    assert result.exit_code == 0, result.output
    outcomes: dict[str, set] = {}
    for line in result.stdout.splitlines():
        r = json.loads(line)
        if r["type"] != "function":
            continue
        target = r["target"] and (r["target"]["file"], r["target"]["start_line"])
        outcomes.setdefault(r["source"]["name"], set()).add((r["status"], r["reason"], target, r["score"]))
    assert set(outcomes) == {"alpha", "beta", "gamma", "delta"}
    for name, seen in outcomes.items():
        assert len(seen) == 1, f"{name}: copies got {seen}"
        assert next(iter(seen))[3] == pytest.approx(1.0)  # the copies' one outcome: their exact counterpart


def _pairs(classes) -> list:
    """Every clone pair as ((file, line), (file, line), score): what a class is made of, ids left out."""
    def at(u):
        return u.file.rsplit("proj/", 1)[-1], u.start_line
    return [sorted([[at(p.a), at(p.b)] for p in c.pairs]) + [sorted(at(u) for u in c.units)] for c in classes]


@pytest.mark.slow  # seven index runs: seconds
def test_clone_pairs_of_an_incremental_build_equal_a_clean_builds_when_scores_tie(tmp_path, tiny_model):
    """Issue 49 row 17: copies of one function tie on score; which of them fill a unit's neighbour list was the
    vector index's order (the unit ids), so a file re-indexed (new ids) changed the pairs. Ties now break by
    where a unit is in the tree."""
    from conba.index import Index
    from helpers import write_tree

    copy = FUNCTIONS[0]
    proj = write_tree(tmp_path / "proj", {f"m{k}.py": copy + "\n\n" + FUNCTIONS[1 + k % 3] for k in range(6)})
    with Index(tmp_path / "inc", model=tiny_model) as idx:
        idx.add([proj])
        first = idx.clones(0.5, neighbors=2)
        for k in (0, 1, 2):  # the first files get new ids: changed, then back to their content
            text = (proj / f"m{k}.py").read_text()
            (proj / f"m{k}.py").write_text(text + "\n\ndef extra():\n    return 7\n")
            idx.add([proj])
            (proj / f"m{k}.py").write_text(text)
            idx.add([proj])
        incremental = idx.clones(0.5, neighbors=2)
    with Index(tmp_path / "clean", model=tiny_model) as idx:
        idx.add([proj])
        clean = idx.clones(0.5, neighbors=2)
    assert _pairs(clean) == _pairs(first)
    assert _pairs(incremental) == _pairs(clean)
