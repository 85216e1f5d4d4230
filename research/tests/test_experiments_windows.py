"""``conba experiment windows``: cached window vectors, the rows, resuming, the long-query score."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.data.records import CodeRecord
from conba_research.window_cache import group_order
from conba_research.window_fight import long_query_map

BODY = {"python": "    total = total + x * {k} - 1\n", "java": "        total = total + x * {k} - 1;\n",
        "go": "\ttotal = total + x * {k} - 1\n"}
HEAD = {"python": "def f{g}(x):\n    total = 0\n", "java": "int f{g}(int x) {{\n        int total = 0;\n",
        "go": "func f{g}(x int) int {{\n\ttotal := 0\n"}


def _data(path, groups: int = 4):
    lines = []
    for g in range(groups):
        for lang in BODY:
            for copy in range(2):
                lines_of = 40 if (g + copy) % 2 else 2  # half the snippets are over one 64-token window
                code = HEAD[lang].format(g=g) + "".join(BODY[lang].format(k=g + i) for i in range(lines_of))
                lines.append(json.dumps({"id": f"{g}/{lang}/{copy}", "group": f"g{g}", "language": lang,
                                         "code": code}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(*args):
    return CliRunner().invoke(cli, ["experiment", "windows", *args])


@pytest.mark.slow
def test_windows_fight_runs_and_resumes(tmp_path, tiny_model, monkeypatch):
    monkeypatch.setenv("CONBA_CACHE", str(tmp_path / "cache"))
    data = _data(tmp_path / "tiny.jsonl")
    args = ["--train", str(data), "--dev", str(data), "-m", tiny_model, "-o", str(tmp_path / "out"),
            "--steps", "3", "--seeds", "0,1", "--windows", "4", "-P", "3", "-K", "2",
            "--rows", "truncate,mean,first,conba,conba-no-state,attention"]
    res = _run(*args)
    assert res.exit_code == 0, res.output
    out = json.loads((tmp_path / "out" / "fragments.json").read_text())
    assert out["dev"]["tiny"]["long"] == 12 and out["train"]["snippets"] == 24
    rows = {r["row"]: r for r in out["rows"]}
    assert rows["conba"]["seeds"] == 2 and rows["mean"]["seeds"] == 1 and rows["conba"]["steps"] == 3
    for r in rows.values():
        for mean, _std in r["scores"].values():
            assert 0.0 <= mean <= 1.0
    assert (tmp_path / "out" / "heads" / "conba-s1" / "fragment_config.json").exists()
    md = (tmp_path / "out" / "fragments.md").read_text()
    assert "| conba-no-state |" in md and "tiny long" in md
    runs = (tmp_path / "out" / "fragment_runs.json").read_text()
    assert _run(*args).exit_code == 0  # resumed: nothing trained again
    assert (tmp_path / "out" / "fragment_runs.json").read_text() == runs
    (tmp_path / "out" / "fragment_runs.json").unlink()  # the saved heads are scored again, not retrained
    assert _run(*args).exit_code == 0
    again = json.loads((tmp_path / "out" / "fragment_runs.json").read_text())
    before = json.loads(runs)
    assert again["conba|1"]["reused_head"] and not before["conba|1"]["reused_head"]
    assert again["conba|1"]["scores"] == before["conba|1"]["scores"]


def test_bad_row_is_one_line(tmp_path):
    data = _data(tmp_path / "tiny.jsonl", groups=2)
    res = _run("--train", str(data), "--dev", str(data), "-o", str(tmp_path / "o"), "--rows", "lstm")
    assert res.exit_code != 0 and "unknown row(s) ['lstm']" in res.output


def test_long_first_order_keeps_groups_and_puts_long_snippets_first():
    # g0: 1 long + 3 short, g1: 0 long + 4 short, g2: 2 long + 2 short
    lengths = {"g0": [2000, 10, 10, 10], "g1": [10] * 4, "g2": [10, 2000, 10, 2000]}
    recs = [CodeRecord(id=f"{g}-{k}", group=g, language="python", code="x" * n)
            for g, ns in lengths.items() for k, n in enumerate(ns)]
    order = group_order(recs, seed=0, long_first=True)
    assert sorted(r.id for r in order) == sorted(r.id for r in recs)
    first = order[:6]  # the first pass: each group's long snippets and as many short ones
    assert sorted(r.group for r in first) == ["g0", "g0", "g2", "g2", "g2", "g2"]
    assert sum(len(r.code) > 1500 for r in first) == 3
    assert [r.group for r in order[6:]].count("g1") == 4
    assert [r.id for r in group_order(recs, 0)] == [r.id for r in group_order(recs, 0)]  # seeded
    plain = group_order(recs, 0)
    assert all(plain[i].group == plain[i + 1].group for i in (0, 1, 2, 4, 5, 6, 8, 9, 10))  # groups together


def test_long_query_map_scores_only_the_long_queries():
    recs = [CodeRecord(id=str(i), group=f"g{i // 2}", language=("python", "java")[i % 2], code="")
            for i in range(4)]
    sim = np.array([[1, 0.9, 0, 0.1], [0.9, 1, 0.1, 0], [0, 0.2, 1, 0.1], [0.2, 0, 0.1, 1]], dtype=np.float32)
    # query 2 (python, group g1) ranks java record 1 (g0) above its own record 3: MAP@R 0
    assert long_query_map(sim, recs, np.array([False, False, True, False])) == 0.0
    assert long_query_map(sim, recs, np.array([True, False, False, False])) == 1.0


def test_repo_index_needs_its_groups(tmp_path):
    data = _data(tmp_path / "tiny.jsonl", groups=2)
    (tmp_path / "idx").mkdir()
    res = _run("--train", str(data), "--dev", str(data), "-o", str(tmp_path / "o"),
               "--repo-index", str(tmp_path / "idx"))
    assert res.exit_code != 0 and "one --repo-groups per --repo-index" in res.output


@pytest.mark.slow
def test_dev_offset_holds_out_whole_groups(tmp_path, tiny_model, monkeypatch):
    monkeypatch.setenv("CONBA_CACHE", str(tmp_path / "cache"))
    data = _data(tmp_path / "tiny.jsonl")  # 4 groups of 6 snippets, in a seeded group order
    res = _run("--train", str(data), "--dev", str(data), "-m", tiny_model, "-o", str(tmp_path / "o"),
               "--rows", "mean", "--dev-offset", "9", "--windows", "4")
    assert res.exit_code == 0, res.output
    out = json.loads((tmp_path / "o" / "fragments.json").read_text())
    assert out["dev"]["tiny-heldout"]["snippets"] == 12  # the group cut at snippet 9 is left out too
    res = _run("--train", str(data), "--dev", str(data), "-m", tiny_model, "-o", str(tmp_path / "o2"),
               "--rows", "mean", "--dev-offset", "20", "--fragments", "4")
    assert res.exit_code != 0 and "nothing left after --dev-offset 20" in res.output


def test_problem_bootstrap_interval():
    from conba_research.window_significance import bootstrap

    groups = np.array(["a", "a", "b", "c", "c", "c"])
    assert bootstrap(np.full(6, 0.25), groups) == (0.25, 0.25, 0.25)
    mean, lo, hi = bootstrap(np.array([1.0, 1.0, -1.0, 0.0, 0.0, 0.0]), groups, n=2000)
    assert mean == pytest.approx(1 / 6) and lo < 0 < hi and lo >= -1 and hi <= 1


def test_old_experiment_name_points_to_windows():
    res = CliRunner().invoke(cli, ["experiment", "fragments", "--fragments", "4"])
    assert res.exit_code == 2 and "`conba experiment fragments` is now `conba experiment windows`" in res.output
