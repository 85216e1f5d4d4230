"""`conba map` on tiny trees with the tiny model: every status, the outputs, --min-coverage, bad input,
the HTML report (escaped; research/tests looks at it in headless Chromium), POST /map and conba.Client.map."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from helpers import map_config
from helpers.map_trees import ALPHA, T, map_trees, run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def trees(tmp_path_factory, tiny_model):
    """(source, target, index, model): alpha matched, beta ambiguous, gamma missing (helpers.map_trees)."""
    return map_trees(tmp_path_factory.mktemp("map"), tiny_model)


def records(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_every_status_and_the_file_level(trees):
    src, tgt, index, _ = trees
    result = run("map", str(src), str(tgt), "-i", index, "-t", T)
    assert result.exit_code == 0, result.output
    rows = records(result.stdout)
    status = {r["source"]["name"]: (r["status"], r["reason"]) for r in rows if r["type"] == "function"}
    assert status == {"alpha": ("matched", None), "beta": ("ambiguous", "close"), "gamma": ("missing", None)}
    beta = next(r for r in rows if r["type"] == "function" and r["source"]["name"] == "beta")
    assert len(beta["candidates"]) == 2 and {Path(c["file"]).name for c in beta["candidates"]} == {"x.py", "y.py"}
    (file_row,) = [r for r in rows if r["type"] == "file"]
    assert Path(file_row["target"]).name == "x.py" and file_row["coverage"] == pytest.approx(2 / 3, abs=1e-3)
    summary = rows[-1]
    assert summary["type"] == "summary" and (summary["matched"], summary["ambiguous"], summary["missing"]) == (1, 1, 1)
    assert "coverage 66.7%" in result.stderr and "a.py" in result.stderr


def test_one_to_one_two_copies_share_one_counterpart(trees, tmp_path):
    _, tgt, index, _ = trees
    twin = tmp_path / "twin"
    twin.mkdir()
    (twin / "p.py").write_text(ALPHA)
    (twin / "q.py").write_text(ALPHA)
    result = run("map", str(twin), str(tgt / "x.py"), "-i", index, "-t", T)
    got = [(r["status"], r["target"]["name"], r["score"]) for r in records(result.stdout) if r["type"] == "function"]
    assert len(got) == 2 and got[0] == got[1] and got[0][0] == "matched"  # identical copies: one outcome (issue 41)


def test_only_plain_csv_and_threshold(trees):
    src, tgt, index, _ = trees
    only = records(run("map", str(src), str(tgt), "-i", index, "-t", T, "--only", "missing").stdout)
    assert [(r["status"], r["source"]["name"]) for r in only] == [("missing", "gamma")]
    plain = run("map", str(src), str(tgt), "-i", index, "-t", T, "--plain", "--only", "matched").stdout
    assert plain.startswith("matched") and "alpha" in plain and len(plain.splitlines()) == 1
    table = list(csv.DictReader(io.StringIO(run("map", str(src), str(tgt), "-i", index, "-t", T, "-f", "csv").stdout)))
    assert sorted(r["status"] for r in table) == ["ambiguous", "matched", "missing"]
    low = records(run("map", str(src), str(tgt), "-i", index, "-t", "-1").stdout)[-1]
    assert low["missing"] == 0 and low["threshold"] == -1


def test_min_coverage_exit_codes(trees):
    src, tgt, index, _ = trees
    folder = Path(index).parent / "configs"
    assert run("map", str(src), str(tgt), "-i", index, "-t", T, "--config", map_config(folder, min_coverage=60)
               ).exit_code == 0
    ninety = map_config(folder, min_coverage=90)
    failed = run("map", str(src), str(tgt), "-i", index, "-t", T, "--config", ninety)
    assert failed.exit_code == 1 and f"coverage 66.7% is below min_coverage 90% ({ninety})" in failed.output
    bad = run("map", str(src), str(tgt), "-i", index, "--config", map_config(folder, min_coverage=101))
    assert bad.exit_code == 1 and "min_coverage must be in [0, 100] or null, got 101" in bad.output
    moved = run("map", str(src), str(tgt), "-i", index, "--min-coverage", "90")
    assert moved.exit_code == 2 and "--min-coverage moved to the mapping configuration" in moved.output


def test_groups_evaluation_in_the_output(trees, tmp_path):
    src, tgt, index, _ = trees
    groups = tmp_path / "groups.jsonl"
    member = {"language": "python", "file": "src/a.py", "name": "alpha", "line": 1}
    groups.write_text(json.dumps({"group": "alpha", "members": [member, {**member, "file": "tgt/x.py"}]}) + "\n")
    result = run("map", str(src), str(tgt), "-i", index, "-t", T, "-g", str(groups))
    evaluation = records(result.stdout)[-1]
    assert evaluation["type"] == "evaluation"
    assert evaluation["functions"]["precision"] == 1.0 and evaluation["functions"]["recall"] == 1.0
    assert "precision 1.0" in result.stderr


def test_index_with_languages_and_one_language_only(trees):
    _, _, index, _ = trees
    result = run("map", "-i", index, "--source-lang", "py", "--target-lang", "java")
    assert result.exit_code == 1
    assert "no functions in the target (language java); languages in the index: python" in result.output
    assert run("map", "-i", index, "--source-lang", "python").exit_code == 2          # which target?
    assert run("map", "onlyone", "-i", index).exit_code == 2


def test_bad_trees_fail_in_one_line(trees, tmp_path):
    src, _, index, model = trees
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run("map", str(src), str(empty), "-i", index)
    assert result.exit_code == 1 and "no functions in the target" in result.output and "empty" in result.output
    unreadable = tmp_path / "bad"
    unreadable.mkdir()
    (unreadable / "x.py").write_bytes(b"def f():\n    return '\xff\xfe'\n")     # not UTF-8: skipped
    result = run("map", str(unreadable), str(src), "-i", str(tmp_path / "idx2"), "-m", model)
    assert result.exit_code == 1 and "bad" in result.output and "Traceback" not in result.output
    same = run("map", str(src), str(src), "-i", index)  # one tree on both sides: nothing to port
    assert same.exit_code == 1 and "every source function is also a target function" in same.output
    assert "Traceback" not in same.output
    missing = run("map", str(tmp_path / "nope"), str(src), "-i", index)
    assert missing.exit_code == 1 and "nope" in missing.output
    assert run("map", "-i", str(tmp_path / "none"), "--source-lang", "python", "--target-lang", "go").exit_code == 1


def test_html_report_is_escaped(trees, tmp_path):
    src, tgt, index, _ = trees
    out = tmp_path / "map.html"
    result = run("map", str(src), str(tgt), "-i", index, "-t", T, "-f", "html", "--output", str(out))
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert page.index("missing (1)") < page.index("ambiguous (1)") < page.index("matched (1)")
    assert "66.7%" in page and "threshold 0.999" in page






def test_serve_map_and_client(tiny_model, tmp_path):
    pytest.importorskip("fastapi")
    from conba import Client
    from conba.client import ServerError
    from conba.index import Index
    from conba.serve import create_app
    from conba.serve.server import BackgroundServer

    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([ROOT / "examples" / "polyglot"])
    with BackgroundServer(create_app(tmp_path / "idx", reload_interval=0)) as url, Client(url) as c:
        port = c.map("python", "java")
        s = port["summary"]
        assert s["functions"] == len(port["functions"]) == s["matched"] + s["ambiguous"] + s["missing"] > 0
        assert {f["source"]["language"] for f in port["functions"]} == {"python"}
        assert all(f["target"]["language"] == "java" for f in port["functions"])
        assert port["files"] and all(f["type"] == "file" for f in port["files"])
        missing = c.map("py", "java", threshold=1.0, only="missing")["functions"]
        assert missing and {f["status"] for f in missing} == {"missing"}
        with pytest.raises(ServerError, match="422.*no functions in the target"):
            c.map("python", "kotlin")
        with pytest.raises(ServerError, match="422.*unknown language"):
            c.map("python", "klingon")


def test_score_matrix_is_the_cosine_of_the_stored_vectors(trees):
    import numpy as np

    from conba.index import Index
    from conba.index.errors import IncompleteIndexError

    _, _, index, _ = trees
    with Index(index, create=False) as idx:
        units = idx.units()
        ids = np.array([u.id for u in units])
        s = idx.score_matrix(ids[:2], ids)
        assert s.shape == (2, len(ids)) and s.dtype == np.float32
        assert np.allclose(np.diag(s[:, :2]), 1.0, atol=1e-5)
        twins = [j for j, u in enumerate(units) if u.code == units[0].code]
        assert len(twins) >= 2 and np.allclose(s[0, twins], 1.0, atol=1e-5)
        assert idx.score_matrix(ids[:0], ids).shape == (0, len(ids))
        with pytest.raises(IncompleteIndexError, match="no embedding"):
            idx.score_matrix(np.array([10**9]), ids)
