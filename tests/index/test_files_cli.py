"""`conba search --files` and `conba clones --files` through the CLI runner: every format, -o, bad input."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conba.cli.main import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "polyglot"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, tiny_model) -> tuple[Path, Path]:
    from conba.index import Index

    base = tmp_path_factory.mktemp("files")
    proj = base / "proj"
    shutil.copytree(EXAMPLE, proj)
    with Index(base / "idx", model=tiny_model) as idx:
        idx.add([proj])
    return proj, base / "idx"


def _run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args))
    return res.exit_code, res.output


def test_search_files_ranks_other_languages_files_in_every_format(indexed, tmp_path):
    proj, idx = indexed
    query = str(proj / "python" / "mathlib.py")
    code, out = _run("search", "--files", query, "-k", "4", "-i", str(idx))
    assert code == 0, out
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["rank"] for r in rows] == [1, 2, 3, 4]
    assert all(r["language"] != "python" for r in rows)
    assert all(a["score"] >= b["score"] for a, b in zip(rows, rows[1:]))
    assert set(rows[0]) == {"rank", "score", "vector_score", "file", "language", "functions"}
    assert all(r["functions"] >= 1 for r in rows)

    code, out = _run("search", "--files", query, "-k", "10", "-i", str(idx), "--same-language", "-f", "csv")
    table = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and any(r["file"].endswith("textutil.py") for r in table)
    assert not any(r["file"].endswith("mathlib.py") for r in table)  # never the query itself

    code, out = _run("search", "--files", query, "-k", "2", "-i", str(idx), "--plain")
    assert code == 0 and len(out.splitlines()) == 2 and "functions" in out.splitlines()[0]

    code, out = _run("search", "--files", query, "-i", str(idx), "--result-language", "java", "-o",
                     str(tmp_path / "hits.jsonl"))
    written = [json.loads(line) for line in (tmp_path / "hits.jsonl").read_text().splitlines()]
    assert code == 0 and len(written) == 4 and {r["language"] for r in written} == {"java"}


def test_search_files_takes_a_file_that_is_not_indexed(indexed, tmp_path):
    proj, idx = indexed
    outside = tmp_path / "gcd.py"
    outside.write_text((proj / "python" / "mathlib.py").read_text())
    code, out = _run("search", "--files", str(outside), "-k", "3", "-i", str(idx))
    inside_code, inside = _run("search", "--files", str(proj / "python" / "mathlib.py"), "-k", "3", "-i", str(idx))
    assert code == inside_code == 0, out
    got, want = [json.loads(x) for x in out.splitlines()], [json.loads(x) for x in inside.splitlines()]
    assert [r["file"] for r in got] == [r["file"] for r in want]  # the same file, encoded now, ranks alike
    assert [r["score"] for r in got] == pytest.approx([r["score"] for r in want], abs=2e-3)


def test_search_files_bad_input_is_one_line(indexed, tmp_path):
    proj, idx = indexed
    empty = tmp_path / "empty.py"
    empty.write_text("")
    cases = [
        (["search", "--files", str(tmp_path / "nope.py"), "-i", str(idx)], "no such file"),
        (["search", "--files", str(empty), "-i", str(idx)], "empty.py"),
        (["search", "--files", str(tmp_path), "-i", str(idx)], "is a directory"),
        (["search", "--files", "--code", "def f(): pass", "-i", str(idx)], "--files ranks files for a FILE"),
        (["search", "--same-language", "--code", "def f(): pass", "-i", str(idx)], "--same-language goes with"),
        (["search", "--files", str(proj / "python" / "mathlib.py"), "-i", str(tmp_path / "noidx")], "no index"),
    ]
    for args, message in cases:
        code, out = _run(*args)
        lines = [line for line in out.splitlines() if line.startswith("Error")]
        assert code != 0 and len(lines) == 1 and message in lines[0], (args, out)


def test_clones_files_pairs_files_in_every_format(indexed, tmp_path):
    _, idx = indexed
    code, out = _run("clones", "--files", "-x", "--threshold", "0.5", "-i", str(idx))
    assert code == 0, out
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    classes, stats = lines[:-1], lines[-1]["stats"]
    assert classes and stats["units"] == 11
    members = classes[0]["members"]
    assert all(m["kind"] == "file" and m["start_line"] == 1 for m in members)
    assert len({m["language"] for m in members}) >= 2

    code, out = _run("clones", "--files", "-x", "--threshold", "0.5", "-i", str(idx), "-f", "csv", "-o",
                     str(tmp_path / "pairs.csv"))
    pairs = list(csv.DictReader(io.StringIO((tmp_path / "pairs.csv").read_text())))
    assert code == 0 and len(pairs) == sum(len(c["pairs"]) for c in classes)
    assert all(p["language_a"] != p["language_b"] and float(p["score"]) >= 0.5 for p in pairs)

    code, out = _run("clones", "--files", "--threshold", "0.5", "-i", str(idx), "-f", "html", "-o",
                     str(tmp_path / "files.html"))
    page = (tmp_path / "files.html").read_text()
    assert code == 0 and "conba file clone report" in page and "mathlib.py" in page and "gcd" in page
    assert " files · " in page and " functions · " not in page

    code, out = _run("clones", "--files", "--threshold", "1.0", "-i", str(idx))
    assert code == 0 and "0 file clone classes" in out


def test_clones_files_bad_input_and_an_index_without_file_vectors_are_one_line(indexed, tmp_path):
    import sqlite3

    _, idx = indexed
    old = tmp_path / "old-idx"
    shutil.copytree(idx, old)
    db = sqlite3.connect(old / "index.sqlite")
    db.execute("DROP TABLE file_vectors")
    db.execute("DELETE FROM meta WHERE key = 'file_vectors'")
    db.commit()
    db.close()
    cases = [
        (["clones", "--files", "--threshold", "abc", "-i", str(idx)], "threshold must be a number"),
        (["clones", "--files", "-k", "0", "-i", str(idx)], "--neighbors"),
        (["clones", "--files", "-i", str(old)], "no file vectors (written by an older conba); run `conba index`"),
        (["search", "--files", str(EXAMPLE / "go" / "algo.go"), "-i", str(old)], "no file vectors"),
    ]
    for args, message in cases:
        code, out = _run(*args)
        lines = [line for line in out.splitlines() if line.startswith("Error")]
        assert code != 0 and len(lines) == 1 and message in lines[0], (args, out)
