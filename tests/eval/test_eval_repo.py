"""Repository-level evaluation (``conba eval-repo``): groups file, file scores, metrics checked by hand,
baselines and their cache, clone statistics, the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.data.records import DataError
from conba.eval.repo import evaluate_repo
from conba.eval.repo_groups import load_groups
from conba.eval.repo_scores import file_scores

KEYWORDS = ("ALPHA", "BETA", "GAMMA", "DELTA")


class KeywordModel:
    """A stand-in encoder whose vector counts keywords: cosine 1 for the same keyword, 0 otherwise."""

    dim = len(KEYWORDS)
    threshold = 0.9

    def embedding_fingerprint(self) -> str:
        return "keyword-model"

    def encode(self, codes, languages=None, batch_size=32, show_progress_bar=None, normalize=True, **_):
        v = np.array([[code.count(k) for k in KEYWORDS] for code in codes], dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def _py(*words: str) -> str:
    return "".join(f"def f{i}(x):\n    y = x.strip()\n    return '{w}' + y + '{w}'\n\n" for i, w in enumerate(words))


# Two groups over Python, Java and JavaScript; java/Z.java is an ungrouped distractor and
# js/missing.js is listed but does not exist.
FILES = {
    "py/a.py": _py("ALPHA", "DELTA"),
    "py/b.py": _py("BETA"),
    "java/A.java": 'class A {\n  String f(String x) { String y = x.trim(); return "ALPHA" + y; }\n}\n',
    "java/A2.java": 'class A2 {\n  String f(String x) { String y = x.trim(); return "GAMMA" + y; }\n}\n',
    "java/B.java": 'class B {\n  String f(String x) { String y = x.trim(); return "BETA" + y; }\n}\n',
    "java/Z.java": 'class Z {\n  String f(String x) { String y = x.trim(); return "DELTA" + y; }\n}\n',
    "js/a.js": 'function f(x) {\n  const y = x.trim();\n  return "ALPHA" + y;\n}\n',
    "js/b.js": 'function f(x) {\n  const y = x.trim();\n  return "GAMMA" + y;\n}\n',
}
GROUPS = [
    {"group": "g1", "files": ["py/a.py", "java/A.java", "java/A2.java", "js/a.js"]},
    {"group": "g2", "files": ["py/b.py", "java/B.java", "js/b.js", "js/missing.js"]},
]


def _write_groups(path: Path, groups: list) -> Path:
    path.write_text("".join(json.dumps(g) + "\n" for g in groups))
    return path


@pytest.fixture()
def repo(tmp_path) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    for rel, code in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(code)
    return root, _write_groups(root / "groups.jsonl", GROUPS)


def test_file_scores_by_hand():
    # query files Q1 = units 0-1, Q2 = unit 2; target files T1 = unit 0, T2 = units 1-2
    sim = np.array([[0.9, 0.1, 0.2], [0.3, 0.5, 0.8], [0.0, 0.4, 0.6]], dtype=np.float32)
    q, t = np.array([0, 2]), np.array([0, 1])
    np.testing.assert_allclose(file_scores(sim, q, t, "max"), [[0.9, 0.8], [0.0, 0.6]])
    # Q1-T1: (mean(0.9, 0.3) + 0.9) / 2; Q1-T2: (mean(0.2, 0.8) + mean(0.5, 0.8)) / 2; Q2-T2: (0.6 + 0.5) / 2
    np.testing.assert_allclose(file_scores(sim, q, t, "mean-best"), [[0.75, 0.575], [0.0, 0.55]], rtol=1e-6)
    with pytest.raises(ValueError, match="aggregate"):
        file_scores(sim, q, t, "median")


def test_metrics_by_hand_and_clone_statistics(repo, tmp_path):
    root, groups = repo
    result = evaluate_repo([root], groups, model=KeywordModel(), index_dir=tmp_path / "idx", baselines=("tfidf",))
    got = result["retrieval"]["conba"]["pairs"]
    pairs = {k: (v["map_at_r"], v["recall_at_1"], v["queries"]) for k, v in got.items()}
    # python->java: a.py (ALPHA, DELTA) ranks A=1, Z=1, A2=0, B=0 (ties by path): relevant A, A2 at ranks 1, 3
    # -> MAP@R (R=2) = (1/1)/2 = 0.5, R@1 = 1; b.py ranks B first -> 1. Mean 0.75.
    assert pairs["python->java"] == pytest.approx((0.75, 1.0, 2))
    # python->javascript: b.py (BETA) ties a.js and b.js at 0 -> b.js second -> 0; a.py -> 1
    assert pairs["python->javascript"] == pytest.approx((0.5, 0.5, 2))
    # java->python: A -> a.py; A2 (GAMMA) ties, a.py first (relevant); B -> b.py
    assert pairs["java->python"] == pytest.approx((1.0, 1.0, 3))
    # java->javascript: A -> a.js; A2 (GAMMA) -> b.js first (wrong); B (BETA) ties -> a.js first (wrong)
    assert pairs["java->javascript"] == pytest.approx((1 / 3, 1 / 3, 3))
    assert pairs["javascript->python"] == pytest.approx((0.5, 0.5, 2))
    # javascript->java: a.js: A rank 1, A2 rank 2 (tie at 0, first by path) -> 1; b.js (GAMMA): A2 first -> 0
    assert pairs["javascript->java"] == pytest.approx((0.5, 0.5, 2))
    assert result["retrieval"]["conba"]["mean"]["map_at_r"] == pytest.approx(3.5833333 / 6, abs=1e-6)
    assert {"pair": "python->java", "file": "py/a.py", "r": 2, "map_at_r": 0.5, "recall_at_1": 1.0,
            "top": "java/A.java"} in result["per_query"]["conba"]
    assert result["missing"] == [{"group": "g2", "file": "js/missing.js", "reason": "file not found"}]
    counts = result["counts"]
    assert (counts["files"], counts["units"], counts["grouped_files_found"], counts["groups_usable"]) == (8, 9, 7, 2)
    assert set(result["retrieval"]) == {"conba", "tfidf"} and result["baselines"]["tfidf"]["vocabulary"] > 4
    # clones (threshold 0.9): ALPHA x3, BETA x2, GAMMA x2, DELTA x2 -> 4 classes, 6 pairs over 9 units
    clones = result["clones"]["all"]
    assert (clones["classes"], clones["pairs"], clones["largest_class"]) == (4, 6, 3)
    assert clones["largest_share"] == pytest.approx(3 / 9) and clones["pairs_per_unit"] == pytest.approx(6 / 9)
    # predicted file pairs: a.py-A, a.py-a.js, A-a.js, b.py-B (right), A2-b.js (wrong); a.py-Z: Z is ungrouped.
    # true: 5 cross-language pairs in g1 (A-A2 is same-language), 3 in g2
    fp = clones["file_pairs"]
    assert (fp["predicted"], fp["true"], fp["correct"]) == (5, 8, 4)
    assert fp["precision"] == pytest.approx(0.8) and fp["recall"] == pytest.approx(0.5)


def test_existing_index_only_and_mean_best(repo, tmp_path):
    root, groups = repo
    evaluate_repo([root], groups, model=KeywordModel(), index_dir=tmp_path / "idx", baselines=(), clones=False)
    again = evaluate_repo([], groups, model=KeywordModel(), index_dir=tmp_path / "idx", baselines=(),
                          aggregate="mean-best", clones=False)
    assert again["indexing"] == {} and again["aggregate"] == "mean-best" and again["clones"] == {}
    # a.py vs A and vs Z: (mean(1, 0) + 1) / 2 = 0.75 each -> the same ranking as max
    assert again["retrieval"]["conba"]["pairs"]["python->java"]["map_at_r"] == pytest.approx(0.75)
    with pytest.raises(RuntimeError, match="no index here"):
        evaluate_repo([], groups, index_dir=tmp_path / "nothing", baselines=())


@pytest.mark.parametrize("line, reason", [
    ("{not json", "invalid JSON"),
    ('{"files": ["a.py"]}', "field 'group'"),
    ('{"group": "x", "files": "a.py"}', "field 'files'"),
    ('{"group": "x", "files": []}', "field 'files'"),
    ('{"group": "x", "files": ["d.py", ""]}', "files[1]"),
    ('{"group": "g1", "files": ["b.py"]}', "already defined on line 1"),
    ('{"group": "y", "files": ["./a.py"]}', "already in group 'g1' (line 1)"),
])
def test_bad_group_lines_name_file_and_line(tmp_path, line, reason):
    path = tmp_path / "groups.jsonl"
    path.write_text('{"group": "g1", "files": ["a.py", "c.py"]}\n' + line + "\n")
    with pytest.raises(DataError, match=rf"groups.jsonl:2: .*{re.escape(reason)}"):
        load_groups(path)


@pytest.mark.slow
def test_zero_shot_baseline_is_injected_and_cached(repo, tmp_path, tiny_model, tiny_backbone):
    from conba.model import ConbaModel

    root, groups = repo
    other = ConbaModel.create(str(tiny_backbone))  # stands in for the zero-shot MiniLM
    kwargs = dict(model=tiny_model, index_dir=tmp_path / "idx", baselines=("zero-shot", "tfidf"),
                  baseline_model=other, clones=False)
    first = evaluate_repo([root], groups, **kwargs)
    info = first["baselines"]["zero-shot"]
    assert info["units_encoded"] == 9 and Path(info["index"]).parent == tmp_path / "idx" / "eval-repo"
    assert first["methods"] == ["conba", "zero-shot", "tfidf"]
    for method in first["methods"]:
        assert set(first["retrieval"][method]["pairs"]) == set(first["retrieval"]["conba"]["pairs"])
        assert 0.0 <= first["retrieval"][method]["mean"]["map_at_r"] <= 1.0
    (root / "js" / "b.js").write_text('function g() {\n  return "BETA";\n}\n')
    second = evaluate_repo([root], groups, **kwargs)
    assert second["baselines"]["zero-shot"]["units_encoded"] == 1  # only the changed function
    assert second["indexing"]["units_encoded"] == 1


def test_cli_table_json_and_errors(repo, tmp_path, tiny_model):
    root, groups = repo
    out = tmp_path / "r.json"
    args = ["eval-repo", str(root), "-g", str(groups), "-i", str(tmp_path / "idx"), "-m", tiny_model,
            "--baselines", "tfidf"]
    res = CliRunner().invoke(cli, [*args, "--plain", "-j", str(out)])
    assert res.exit_code == 0, res.output
    assert "python->java" in res.stdout and "tfidf MAP@R" in res.stdout and "mean" in res.stdout
    assert "skipped js/missing.js (g2): file not found" in res.stdout
    saved = json.loads(out.read_text())
    assert saved["command"].startswith("conba ") and set(saved["retrieval"]) == {"conba", "tfidf"}
    assert saved["model"]["fingerprint"] and saved["clones"]["cross_language"]["cross_language_only"] is True
    jsonl = CliRunner().invoke(cli, ["eval-repo", "-g", str(groups), "-i", str(tmp_path / "idx"),
                                     "--baselines", "none", "--no-clones", "--json"])
    assert jsonl.exit_code == 0, jsonl.output
    assert json.loads(jsonl.stdout)["methods"] == ["conba"]
    bad = CliRunner().invoke(cli, [*args[:2], "-g", str(_write_groups(tmp_path / "bad.jsonl", [{"group": 1}]))])
    assert bad.exit_code == 1 and "bad.jsonl:1: field 'group'" in bad.output
    assert CliRunner().invoke(cli, [*args, "--baselines", "bm25"]).exit_code == 2
