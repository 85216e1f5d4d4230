"""docs/RESULTS.md is generated from the committed result JSON (docs/results) and agrees with it; every
shipped model has rows; the README quotes only numbers of that table."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba_research.bench.results import add_result, check, load_rows, render, shipped_fingerprints

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
TABLE = ROOT / "docs" / "RESULTS.md"


def _eval_json(fp: str = "w1", efp: str = "e1", conba: float = 0.6177) -> dict:
    mean = lambda v: {"mean": {"map_at_r": v, "mrr": 0.9, "recall_at_1": 0.8}}  # noqa: E731
    return {"command": "conba eval ../shared/data/atcoder_dev.jsonl -m default -j a.json",
            "data": "../shared/data/atcoder_dev.jsonl", "model": "default", "fingerprint": fp,
            "embedding_fingerprint": efp, "retrieval": {"conba": mean(conba), "dense": mean(0.61),
                                                        "tfidf": mean(0.179)},
            "classification": {"f1": 0.931, "roc_auc": 0.978}}


def _repo_json(efp: str = "e1", level: str = "file") -> dict:
    mean = lambda v: {"mean": {"map_at_r": v}}  # noqa: E731
    out = {"command": "conba eval-repo ALG -g ALG/groups.jsonl -j b.json", "cwd": "/somewhere/main",
           "index": "/tmp/idx", "paths": ["/somewhere/shared/data/algorithms_dev/cpp"],
           "groups_file": "/somewhere/shared/data/algorithms_dev/groups.jsonl", "level": level,
           "model": {"name": "default", "fingerprint": efp},
           "retrieval": {"conba": mean(0.63), "zero-shot": mean(0.579), "tfidf": mean(0.494)}}
    if level == "function":
        out["blind"] = {"conba": mean(0.934), "zero-shot": mean(0.856)}
    return out


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    (root / "default").mkdir(parents=True)
    (root / "default" / "atcoder_dev.json").write_text(json.dumps(_eval_json()))
    (root / "default" / "algorithms_dev.json").write_text(json.dumps(_repo_json()))
    (root / "default" / "ports_dev.json").write_text(json.dumps(_repo_json(level="function")))
    return root


def test_render_reads_every_number_from_the_json(tmp_path):
    root = _tree(tmp_path)
    text = render(root)
    assert "| default | `w1` / `e1` | atcoder_dev (? snippets) | snippet | **0.618** | 0.610 | – | 0.179 |" in text
    assert ("| default | `w1` / `e1` | algorithms_dev (? files, ? functions) | file | **0.630** | – | 0.579 | 0.494 |"
            in text)
    assert "| function | **0.630** | – | 0.579 | 0.494 | 0.934 | 0.856 |" in text
    assert "`conba eval-repo ALG -g ALG/groups.jsonl -j b.json`" in text
    assert [r.data for r in load_rows(root)] == ["atcoder_dev", "algorithms_dev", "ports_dev"]
    assert check(root, text, {"default": "w1"}) == []


def test_a_changed_number_or_a_missing_model_is_caught(tmp_path):
    root = _tree(tmp_path)
    text = render(root)
    (root / "default" / "atcoder_dev.json").write_text(json.dumps(_eval_json(conba=0.7)))
    assert any("regenerate" in p for p in check(root, text, {"default": "w1"}))
    text = render(root)
    problems = check(root, text, {"default": "w1", "default-fast": "w2"})
    assert problems == ["shipped model default-fast (fingerprint w2) has no row (the results hold none): "
                        "re-run its evaluations"]
    assert "has no row" in check(root, text, {"default": "w9"})[0]  # new weights, old numbers


def test_rows_of_other_vectors_are_caught(tmp_path):
    root = _tree(tmp_path)
    (root / "default" / "algorithms_dev.json").write_text(json.dumps(_repo_json(efp="stale")))
    problems = check(root, render(root), {"default": "w1"})
    assert problems == ["default/algorithms_dev.json: vectors stale, but default's are e1"]


def test_add_result_drops_machine_paths(tmp_path):
    raw = tmp_path / "raw.json"
    raw.write_text(json.dumps(_repo_json()))
    dest = add_result(raw, tmp_path / "results")
    assert dest == tmp_path / "results" / "default" / "algorithms_dev.json"
    text = dest.read_text()
    assert "/somewhere" not in text and "/tmp/idx" not in text and '"cwd"' not in text
    assert json.loads(text)["paths"] == ["../shared/data/algorithms_dev/cpp"]
    assert json.loads(text)["command"] == "conba eval-repo ALG -g ALG/groups.jsonl -j OUT.json"


def test_cli_writes_and_checks(tmp_path):
    root, out = _tree(tmp_path), tmp_path / "RESULTS.md"
    runner = CliRunner()
    assert runner.invoke(cli, ["bench", "results", "--results", str(root), "-o", str(out)]).exit_code == 0
    assert out.read_text() == render(root)
    out.write_text(out.read_text().replace("0.630", "0.640"))
    res = runner.invoke(cli, ["bench", "results", "--results", str(root), "-o", str(out), "--check"])
    assert res.exit_code == 1 and "regenerate" in res.output


def test_speed_of_other_weights_is_caught(tmp_path):
    root = _tree(tmp_path)
    speed = {"command": "conba bench speed -n 128 -j s.json", "timed_snippets": 128, "load_before": [0.4],
             "machine": {"cores": 2, "cpu": "x", "torch": "2"}, "model": {"fingerprint": "w1"},
             "student": {"fingerprint": "old"},
             "variants": {"st": {"snippets_per_s": 10.1, "ratio_to_st": 1.0},
                          "fast-onnx": {"snippets_per_s": 53.2, "ratio_to_st": 5.27}}}
    (root / "speed.json").write_text(json.dumps(speed))
    text = render(root)
    assert "| default-fast, int8 ONNX Runtime (`fast-onnx`) | 53.2 | – – – | 5.27 |" in text
    assert "load average 0.4" in text
    assert check(root, text, {"default": "w1", "default-fast": "old"})[-1:] == [
        "shipped model default-fast (fingerprint old) has no row (the results hold none): re-run its evaluations"]
    assert "speed.json: measured default-fast old, shipped new: re-run conba bench speed" in check(
        root, text, {"default": "w1", "default-fast": "new"})


@pytest.mark.skipif(not RESULTS.is_dir(), reason="no committed results")
def test_the_committed_table_is_the_generated_one():
    assert check(RESULTS, TABLE.read_text(encoding="utf-8"), shipped_fingerprints()) == []
    rows = load_rows(RESULTS)
    for name in shipped_fingerprints():
        assert {"atcoder_dev", "mbxp_dev", "algorithms_dev", "ports_dev"} <= {r.data for r in rows if r.model == name}


def test_readme_quotes_only_the_table():
    """Every number between the README's results markers appears in the generated table."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- results -->(.*?)<!-- /results -->", readme, re.S)
    assert found, "README.md: no <!-- results --> block"
    table = render(RESULTS)
    numbers = re.findall(r"\b\d\.\d{3}\b", found.group(1))
    assert numbers, "the README's results block quotes no number"
    assert [n for n in numbers if n not in table] == []
    for row in found.group(1).splitlines():  # a row about a data set quotes that data set's rows
        name = re.match(r"\| (\w+_dev)", row)
        if name:
            rows = "\n".join(line for line in table.splitlines() if f"| {name.group(1)} (" in line)
            assert [n for n in re.findall(r"\b\d\.\d{3}\b", row) if n not in rows] == [], row


def test_no_machine_paths_in_docs_and_docstrings():
    texts = [*(ROOT / "docs").rglob("*.md"), ROOT / "README.md", *(ROOT / "src").rglob("*.py"),
             *(ROOT / "research").rglob("*.py"),
             *(RESULTS.rglob("*.json") if RESULTS.is_dir() else [])]
    bad = [f"{p.relative_to(ROOT)}:{k}" for p in texts
           for k, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
           if re.search(r"(?<![\w.])/(work|root|home)/", line)]
    assert bad == []

