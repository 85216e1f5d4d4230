"""The example project: its ground truth names real functions, and the eval script runs end to end."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conba.source.extract import extract_units
from conba.source.filters import read_source
from conba.source.walker import discover

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "polyglot"


def _units() -> set[tuple[str, str, str]]:
    out = set()
    for c in discover([EXAMPLE]).files:
        for u in extract_units(c.path, read_source(c.path), c.language):
            out.add((os.path.relpath(u.file, EXAMPLE), u.qualname, u.language))
    return out


def test_ground_truth_matches_the_code():
    truth = json.loads((EXAMPLE / "CLONES.json").read_text())
    units = _units()
    assert 20 <= len(units) <= 60
    assert {lang for _, _, lang in units} == {"python", "java", "cpp", "go", "javascript"}
    planted = [(m["file"], m["name"], m["language"]) for s in truth["clone_sets"] for m in s["members"]]
    assert len(planted) == len(set(planted)) and set(planted) <= units
    assert all(len({m["language"] for m in s["members"]}) >= 2 for s in truth["clone_sets"])
    assert len(units - set(planted)) >= 8  # distractors


def test_units_are_methods_not_classes():
    """No ``MathUtils.MathUtils``: empty private constructors are skipped, real ones are ``Class.<init>``."""
    names = {name for _, name, _ in _units()}
    doubled = [n for n in names if len(n.split(".")) >= 2 and n.split(".")[-1] == n.split(".")[-2]]
    assert doubled == []
    assert "Matrix.<init>" in names and not any(n.startswith(("MathUtils.<init>", "Search.<init>")) for n in names)
