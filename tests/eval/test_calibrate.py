"""Threshold for a target precision (conba.eval.precision) and `conba calibrate` with the tiny model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.errors import ConfigError
from conba.eval.precision import cross_language_pairs, threshold_for_precision


def test_threshold_for_precision_on_hand_made_scores():
    scores = np.array([0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5])
    labels = np.array([1, 1, 0, 1, 0, 1, 0])
    # precision at >= 0.95: 1, >= 0.9: 1, >= 0.85: 2/3, >= 0.8: 3/4, >= 0.7: 3/5, >= 0.6: 4/6, >= 0.5: 4/7
    assert threshold_for_precision(scores, labels, 1.0) == pytest.approx((0.9, 1.0, 0.5))
    assert threshold_for_precision(scores, labels, 0.75) == pytest.approx((0.8, 0.75, 0.75))
    assert threshold_for_precision(scores, labels, 0.6) == pytest.approx((0.6, 4 / 6, 1.0))  # lowest, not first dip
    assert threshold_for_precision(scores, labels, 0.5) == pytest.approx((0.5, 4 / 7, 1.0))
    with pytest.raises(ValueError, match=r"no threshold reaches precision 1: the best is 0\.5000"):
        threshold_for_precision(np.array([0.9, 0.9]), np.array([1, 0]), 1.0)
    with pytest.raises(ValueError, match="no clone pairs"):
        threshold_for_precision(scores, np.zeros(7, dtype=int), 0.9)
    with pytest.raises(ValueError, match=r"target precision must be in \(0, 1\]"):
        threshold_for_precision(scores, labels, 1.5)


def test_cross_language_pairs_scores_every_pair_once():
    emb = np.eye(4, dtype=np.float32)
    emb[1] = emb[0]
    scores, labels = cross_language_pairs(emb, ["a", "a", "b", "b"], ["py", "java", "py", "py"], block=3)
    # cross-language pairs: (0,1) same group, (1,2), (1,3) -> other groups
    assert scores.tolist() == [1.0, 0.0, 0.0] and labels.tolist() == [1, 0, 0]
    with pytest.raises(ValueError, match="all in one language"):
        cross_language_pairs(emb, ["a", "a", "b", "b"], ["py"] * 4)


CODES = {
    "gcd": "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n",
    "rev": "def rev(s):\n    return s[::-1]\n",
    "fib": "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
}


@pytest.fixture()
def dev(tmp_path):
    """Each task in python and java with the same text: clones score 1.0 with the tiny model."""
    path = tmp_path / "dev.jsonl"
    rows = [{"id": f"{g}/{lang}", "group": g, "language": lang, "code": code}
            for g, code in CODES.items() for lang in ("python", "java")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture()
def model_copy(tiny_model, tmp_path):
    return str(shutil.copytree(tiny_model, tmp_path / "model"))


@pytest.mark.slow
def test_calibrate_prints_and_writes_the_threshold(dev, model_copy, tmp_path):
    from conba.index import Index
    from conba.model import load_model

    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text(CODES["gcd"])
    with Index(tmp_path / "idx", model=model_copy) as idx:  # an index made before the calibration
        idx.add([src])
        assert idx.threshold is None
    res = CliRunner().invoke(cli, ["calibrate", str(dev), "-m", model_copy, "--precision", "0.9", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["precision"] >= 0.9 and out["recall"] == 1.0 and out["value"] > 0.99
    assert out["pairs"] == 9 and out["clone_pairs"] == 3 and out["calibrated_on"] == ["dev.jsonl"]
    assert "6 snippets, 9 cross-language pairs (3 clones)" in res.stderr
    assert "clone_threshold" not in json.loads((tmp_path / "model" / "conba_config.json").read_text())

    res = CliRunner().invoke(cli, ["calibrate", str(dev), "-m", model_copy, "-p", "0.9", "--write", "--plain"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith(f"threshold {out['value']:.4f}: precision 1.000, recall 1.000 on dev.jsonl")
    stored = json.loads((tmp_path / "model" / "conba_config.json").read_text())["clone_threshold"]
    assert {k: stored[k] for k in ("value", "precision", "recall", "calibrated_on")} == {
        k: out[k] for k in ("value", "precision", "recall", "calibrated_on")}

    assert load_model(model_copy).clone_threshold["value"] == out["value"]
    res = CliRunner().invoke(cli, ["clones", "--index", str(tmp_path / "idx"), "-m", model_copy])
    assert f"at threshold {out['value']:.3f}" in res.stderr  # the index took the model's new threshold
    with Index(tmp_path / "idx2", model=model_copy) as idx:  # a new index stores it at creation
        idx.add([src])
        assert idx.threshold == pytest.approx(out["value"])


def test_calibrate_refuses_the_shipped_model_without_force(dev):
    res = CliRunner().invoke(cli, ["calibrate", str(dev), "-m", "default", "--write"])
    assert res.exit_code != 0 and "shipped inside the conba package" in res.output and "--force" in res.output


@pytest.mark.parametrize("content, args, message", [
    ('{"id": "a", "group": "g", "language": "python", "code": "x"}\n{oops\n', [], "dev.jsonl:2: invalid JSON"),
    ('{"id": "a", "group": "g", "language": "python", "code": "def f(): return 1"}\n'
     '{"id": "b", "group": "g", "language": "python", "code": "def f(): return 2"}\n', [], "one language"),
    ('{"id": "a", "group": "g", "language": "python", "code": "def f(): return 1"}\n'
     '{"id": "b", "group": "h", "language": "java", "code": "int f() { return 2; }"}\n', [],
     "no cross-language clone pairs"),
    ('{"id": "a", "group": "g", "language": "python", "code": "def f(): return 1"}\n'
     '{"id": "b", "group": "g", "language": "java", "code": "int f() { return 2; }"}\n', ["--write"],
     "no cross-language non-clone pairs: every pair is a clone (one group)"),
    ("", ["--precision", "1.5"], "1.5 is not in the range"),
    ("", ["--write"], "not a conba model folder"),
])
def test_calibrate_bad_input_is_one_line(tmp_path, tiny_model, content, args, message):
    path = tmp_path / "dev.jsonl"
    path.write_text(content or '{"id": "a", "group": "g", "language": "python", "code": "x"}\n')
    model = str(tmp_path) if "--write" in args and not content else tiny_model  # a folder without conba_config.json
    res = CliRunner().invoke(cli, ["calibrate", str(path), "-m", model, *args])
    assert res.exit_code != 0
    lines = [line for line in res.output.splitlines() if line.strip() and not line.startswith("Usage")]
    assert message in res.output and lines[-1].startswith("Error") and "Traceback" not in res.output, res.output


def test_index_threshold_prefers_the_clone_threshold_and_falls_back(tmp_path, tiny_model):
    from conba.index import Index

    (tmp_path / "a.py").write_text(CODES["gcd"])
    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([tmp_path / "a.py"])
        assert idx.threshold is None
        idx.store.set_meta(threshold="0.7")  # an index made before clone_threshold existed
        assert idx.threshold == 0.7
        idx.store.set_meta(clone_threshold="0.9")
        assert idx.threshold == 0.9


def test_model_clone_threshold_order_and_bad_config(model_copy):
    from types import SimpleNamespace

    from conba.clones.threshold import model_clone_threshold
    from conba.model import ModelError, load_model

    assert model_clone_threshold(SimpleNamespace(clone_threshold={"value": 0.9}, threshold=0.7)) == 0.9
    assert model_clone_threshold(SimpleNamespace(clone_threshold=None, threshold=0.7)) == 0.7
    assert model_clone_threshold(SimpleNamespace(threshold=None)) is None
    path = Path(model_copy) / "conba_config.json"
    config = json.loads(path.read_text())
    for key, bad, message in [("clone_threshold", {"value": "high"}, r"'clone_threshold' must be an object with a "
                                                                      r"'value' in \[-1, 1\]"),
                              ("clone_threshold", {"value": 7}, r"'value' in \[-1, 1\]"),
                              ("threshold", 5, r"'threshold' must be in \[-1, 1\] or null, got 5"),
                              ("threshold", "x", "model config field 'threshold' must be a number or null, got \"x\""),
                              ("backbone", {**config["backbone"], "max_length": "x"},
                               "backbone config field 'max_length' must be an integer, got \"x\"")]:
        path.write_text(json.dumps({**config, key: bad}))
        with pytest.raises((ModelError, ConfigError), match=message) as info:
            load_model(model_copy)
        assert "conba_config.json" in str(info.value), str(info.value)


def test_cross_language_pairs_fuse_the_lexical_scores():
    from scipy import sparse

    emb = np.eye(3, dtype=np.float32)
    lex = sparse.csr_matrix(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    scores, labels = cross_language_pairs(emb, ["a", "a", "b"], ["py", "java", "go"], lexical=lex, lexical_weight=0.4)
    # pairs (0,1), (0,2), (1,2): dense 0 everywhere, lexical 1, 0, 0
    assert scores.tolist() == pytest.approx([0.4, 0.0, 0.0]) and labels.tolist() == [1, 0, 0]


def test_calibrate_with_a_lexical_weight_writes_it_to_the_model(dev, model_copy):
    from conba.model import load_model

    res = CliRunner().invoke(cli, ["calibrate", str(dev), "-m", model_copy, "-p", "0.9", "--lexical-weight", "0.25",
                                   "--write", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["lexical_weight"] == 0.25
    model = load_model(model_copy)
    assert model.lexical_weight == 0.25 and model.clone_threshold["lexical_weight"] == 0.25
    res = CliRunner().invoke(cli, ["calibrate", str(dev), "-m", model_copy, "-p", "0.9", "--lexical-weight", "0",
                                   "--write", "--json"])
    assert res.exit_code == 0, res.output
    assert load_model(model_copy).lexical_weight == 0.0
    assert "lexical_weight" not in json.loads(res.stdout)


def test_eval_reports_fused_and_dense(dev, tiny_model):
    res = CliRunner().invoke(cli, ["eval", str(dev), "-m", tiny_model, "--lexical-weight", "0.5", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["lexical_weight"] == 0.5 and set(out["retrieval"]) == {"conba", "dense", "tfidf"}
    assert out["retrieval"]["conba"]["mean"]["map_at_r"] == pytest.approx(1.0)


@pytest.mark.parametrize("folder", ["default_model", "default_fast"])
def test_shipped_clone_thresholds_are_calibrated_for_the_models_fused_score(folder):
    """A shipped model's clone threshold was calibrated at its own lexical weight (a threshold of the
    dense cosine would be wrong for the fused score that index, clones and compare use)."""
    import conba

    config = json.loads((Path(conba.__file__).parent / folder / "conba_config.json").read_text())
    assert config["lexical_weight"] == 0.2
    assert config["clone_threshold"]["lexical_weight"] == config["lexical_weight"]
    assert 0 < config["clone_threshold"]["value"] < 1 and config["clone_threshold"]["precision"] >= 0.9
