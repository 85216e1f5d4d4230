"""``conba experiment fair``: equal-step and equal-time budgets, the backbone it sits on, the real-code
score, resuming, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from conba.cli.main import cli
from conba_research.fair import ROWS, RepoSet, score_repo, select_rows

FILES = {
    "py/add.py": "def add(a, b):\n    total = a + b\n    return total\n",
    "py/rev.py": "def reverse(text):\n    out = text[::-1]\n    return out\n",
    "js/add.js": "function add(a, b) {\n  const total = a + b;\n  return total;\n}\n",
    "js/rev.js": "function reverse(text) {\n  const out = text.split('').reverse().join('');\n  return out;\n}\n",
}
GROUPS = [{"group": "add", "files": ["py/add.py", "js/add.js"]},
          {"group": "rev", "files": ["py/rev.py", "js/rev.js"]}]


@pytest.fixture()
def repo_index(tmp_path, tiny_model):
    from conba.index import Index

    root = tmp_path / "repo"
    for rel, code in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(code)
    groups = root / "groups.jsonl"
    groups.write_text("".join(json.dumps(g) + "\n" for g in GROUPS))
    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([root], show_progress=False)
    return tmp_path / "idx", groups


@pytest.fixture()
def shifted_model(tiny_backbone, tmp_path):
    """A saved model whose backbone weights differ from the tiny backbone's (so we can tell them apart)."""
    from conba.model import ConbaModel

    m = ConbaModel.create(str(tiny_backbone), max_length=64)
    with torch.no_grad():
        for p in m.backbone.parameters():
            p.add_(0.01)
    return str(m.save(tmp_path / "shifted"))


def _run(*args):
    return CliRunner().invoke(cli, ["experiment", "fair", *args])


def _base(data_dir, tmp_path, tiny_backbone, backbone_from):
    return ["-d", str(data_dir), "-o", str(tmp_path / "fair"), "-w", str(tmp_path / "w"), "--backbone",
            str(tiny_backbone), "--backbone-from", backbone_from, "--max-length", "64", "--head-tokens", "8",
            "-P", "2", "-K", "2", "--cap", "0", "--dev-limit", "0", "--cache-dir", str(tmp_path / "cache"),
            "--device", "cpu", "--no-progress", "--seeds", "0,1"]


def test_rows_cover_every_head_with_and_without_codes_and_the_ablations():
    names = {v.name for v in ROWS}
    for head in ("linear", "pooled", "tokens", "scan"):
        assert head in names and f"{head}+prefix" in names
        assert head == "linear" or f"{head}+offset" in names  # the offset needs a control_weight
    assert {"no_control", "no_feedback", "no_state"} <= names
    with pytest.raises(Exception, match="unknown row"):
        select_rows(["pooled", "typo"])


def test_score_repo_is_file_level_map_at_r():
    from conba.eval.repo_units import UnitTable

    table = UnitTable(files=["a.py", "b.py", "a.js", "b.js"], languages=["python", "python", "javascript",
                                                                        "javascript"],
                      starts=np.array([0, 1, 2, 3, 4]), vectors=None, codes=["", "", "", ""])
    repo = RepoSet("r", table, [], {"a.py": "A", "b.py": "B", "a.js": "A", "b.js": "B"})
    right = np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=np.float32)
    assert score_repo(right, repo)["map_at_r"] == pytest.approx(1.0)
    wrong = np.array([[1, 0], [0, 1], [0, 1], [1, 0]], dtype=np.float32)
    assert score_repo(wrong, repo)["map_at_r"] == pytest.approx(0.0)


@pytest.mark.slow
def test_fair_end_to_end_budgets_backbone_repo_and_resume(data_dir, tmp_path, tiny_backbone, shifted_model,
                                                          repo_index):
    idx, groups = repo_index
    args = [*_base(data_dir, tmp_path, tiny_backbone, shifted_model), "--rows", "linear,tokens,no_state",
            "--steps", "3", "--epoch-steps", "1", "--seconds", "1", "--repo-index", str(idx),
            "--repo-groups", str(groups)]
    res = _run(*args)
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "fair" / "fair.json").read_text())
    assert set(data["rows"]) == {f"{b}|{r}" for b in ("seconds", "steps") for r in ("linear", "tokens", "no_state")}
    for key, row in data["rows"].items():
        assert row["seeds"] == 2
        assert set(row["scores"]) == {"tiny_dev", "algorithms_dev"}
        if key.startswith("steps|"):
            assert row["steps"][0] == 3  # equal optimiser steps for every row
    assert all(0.0 <= r["scores"]["algorithms_dev"]["map_at_r"] <= 1.0 for r in data["runs"].values())
    assert "identity start, first 8 tokens" in data["reference"]
    md = (tmp_path / "fair" / "fair.md").read_text()
    assert "## Equal steps" in md and "## Equal seconds" in md and "| tokens | 2 |" in md

    # every run sat on the shifted backbone, not on the tiny one the config names
    from conba.model import ConbaModel

    run_dir = next((tmp_path / "w" / "runs").glob("linear-steps-s0-*"))
    trained = ConbaModel.load(run_dir).backbone.state_dict()
    shifted = ConbaModel.load(shifted_model).backbone.state_dict()
    assert all(torch.equal(trained[k], shifted[k]) for k in shifted)

    # a re-run trains nothing: finished runs are read back
    before = (tmp_path / "fair" / "fair_runs.json").read_text()
    again = _run(*args)
    assert again.exit_code == 0, again.output
    assert "training ->" not in again.output and "[fair" not in again.output
    assert json.loads(before) == json.loads((tmp_path / "fair" / "fair_runs.json").read_text())

    # --report-only with another seed list trains nothing and reports what finished
    only = _run(*args, "--seeds", "0,1,2", "--report-only")
    assert only.exit_code == 0, only.output
    assert "training ->" not in only.output
    assert all(r["seeds"] == 2 for r in json.loads((tmp_path / "fair" / "fair.json").read_text())["rows"].values())


@pytest.mark.slow
def test_prefix_rows_run_only_with_prefix_seeds(data_dir, tmp_path, tiny_backbone, tiny_model):
    base = [*_base(data_dir, tmp_path, tiny_backbone, tiny_model), "--rows", "linear+prefix", "--budgets", "steps",
            "--steps", "2", "--epoch-steps", "1"]
    res = _run(*base)
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "fair" / "fair.json").read_text())["rows"] == {}
    res = _run(*base, "--prefix-seeds", "1")
    assert res.exit_code == 0, res.output
    rows = json.loads((tmp_path / "fair" / "fair.json").read_text())["rows"]
    assert rows["steps|linear+prefix"]["seeds"] == 1


@pytest.mark.parametrize("extra,msg", [
    (["--rows", "pooled,typo"], "unknown row"),
    (["--budgets", "epochs"], "choose from seconds, steps"),
    (["--steps", "0"], "must be > 0"),
    (["--repo-index", "IDX"], "--repo-index and --repo-groups together"),
    (["--view", "pretty"], "'pretty' is not one of"),  # a choice since --view means one thing everywhere
])
def test_bad_input_is_a_one_line_error(data_dir, tmp_path, tiny_backbone, extra, msg):
    extra = [str(tmp_path) if e == "IDX" else e for e in extra]
    res = _run("-d", str(data_dir), "-o", str(tmp_path / "o"), "--backbone", str(tiny_backbone), *extra)
    assert res.exit_code != 0
    assert msg in res.output, res.output
    assert "Traceback" not in res.output


def test_repo_groups_without_any_indexed_file_is_an_error(tmp_path, repo_index):
    from conba.errors import ConfigError
    from conba_research.fair import load_repo_set

    idx, _ = repo_index
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"group": "x", "files": ["nowhere/a.py", "nowhere/b.js"]}) + "\n")
    with pytest.raises(ConfigError, match="none of the grouped files"):
        load_repo_set(idx, other, "code+docs")
    repo = load_repo_set(idx, Path(idx).parent / "repo" / "groups.jsonl", "code+docs")
    assert len(repo.records) == repo.table.n_units == 4 and len(repo.group_of) == 4
