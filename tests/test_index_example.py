"""The example project: its ground truth names real functions, and the eval script runs end to end."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from conba.index.extract import extract_units
from conba.index.filters import read_source
from conba.index.walker import discover

ROOT = Path(__file__).resolve().parents[1]
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
    assert 20 <= len(units) <= 50
    assert {lang for _, _, lang in units} == {"python", "java", "cpp", "go", "javascript"}
    planted = [(m["file"], m["name"], m["language"]) for s in truth["clone_sets"] for m in s["members"]]
    assert len(planted) == len(set(planted)) and set(planted) <= units
    assert all(len({m["language"] for m in s["members"]}) >= 2 for s in truth["clone_sets"])
    assert len(units - set(planted)) >= 8  # distractors


@pytest.fixture(scope="module")
def tiny_model(tiny_backbone, tmp_path_factory):
    from conba.model import ConbaModel

    return str(ConbaModel.create(str(tiny_backbone), max_length=64).save(tmp_path_factory.mktemp("m")))


def test_eval_script(tiny_model):
    spec = importlib.util.spec_from_file_location("eval_polyglot", ROOT / "scripts" / "eval_polyglot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.evaluate(tiny_model, "-1")  # everything is a clone: recall 1
    assert result["planted_pairs"] == 41 and result["recall"] == 1.0
    assert 0 < result["precision"] < 1 and result["threshold"] == -1.0
