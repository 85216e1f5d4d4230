"""The lexical channel inside an index: lexical.npz, fused search / clones / scores, --lexical-weight."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import conba
from conba.cli.main import cli
from conba.index import CorruptIndexError, Index
from conba.index.ranking.lexical_file import read_rows
from helpers import write_tree

CODE = {
    "py/diff.py": "def diff_main(text1, text2):\n    common = diff_common_prefix(text1, text2)\n"
                  "    return common + len(text2)\n\n"
                  "def other(q):\n    total = 0\n    for v in q:\n        total += v\n    return total\n",
    "java/Diff.java": "class Diff {\n  int diffMain(String text1, String text2) {\n"
                      "    int common = diffCommonPrefix(text1, text2);\n    return common + text2.length();\n  }\n}\n",
    "js/sum.js": "function sumAll(values) {\n  let acc = 0;\n  for (const v of values) { acc += v; }\n"
                 "  return acc;\n}\n",
}


@pytest.fixture()
def project(tmp_path):
    return write_tree(tmp_path / "proj", CODE)


def _ids(idx):
    return {u.qualname: u.id for u in idx.units()}


def test_index_writes_lexical_rows_and_reuses_them(project, tmp_path, tiny_model):
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model, lexical_weight=0.4) as idx:
        idx.add([project])
        manifest = idx.manifest()
        assert manifest["lexical_weight"] == 0.4 and manifest["lexical"]["count"] == 4
        assert idx.lexical_weight == 0.4
    ids, hashes, tf = read_rows(folder / "lexical.npz")
    assert len(ids) == 4 and tf.shape[0] == 4 and tf.nnz > 0
    (project / "js" / "more.js").write_text("function product(xs) {\n  return xs.reduce((a, b) => a * b, 1);\n}\n")
    with Index(folder) as idx:  # the recorded weight stays
        idx.add([project])
        assert idx.lexical_weight == 0.4
    ids2, hashes2, tf2 = read_rows(folder / "lexical.npz")
    assert len(ids2) == 5
    row_of = {h: r for r, h in enumerate(hashes2.tolist())}
    for r, h in enumerate(hashes.tolist()):  # rows of unchanged units are the same
        assert (tf[r] != tf2[row_of[h]]).nnz == 0


def test_fused_score_matrix_is_the_weighted_sum(project, tmp_path, tiny_model):
    with Index(tmp_path / "idx", model=tiny_model, lexical_weight=0.5) as idx:
        idx.add([project])
        ids = np.array(sorted(_ids(idx).values()))
        fused = idx.score_matrix(ids, ids)
    with Index(tmp_path / "idx", lexical_weight=0.0) as dense_idx:
        dense = dense_idx.score_matrix(ids, ids)
        lex = dense_idx.lexical_index()
        lexical = lex.scores(lex.rows(ids), ids)
        q = _ids(dense_idx)
    np.testing.assert_allclose(fused, 0.5 * dense + 0.5 * lexical, atol=1e-5)
    np.testing.assert_allclose(np.diag(lexical), 1.0, atol=1e-5)
    a, b, c = (list(ids).index(q[n]) for n in ("diff_main", "Diff.diffMain", "sumAll"))
    assert lexical[a, b] > lexical[a, c]  # the ported name and its words are shared


def test_fused_search_ranks_by_the_fused_score(project, tmp_path, tiny_model):
    query = "def diff_main(a, b):\n    return diff_common_prefix(a, b)\n"
    with Index(tmp_path / "idx", model=tiny_model, lexical_weight=1.0) as idx:
        idx.add([project])
        hits = idx.search(query, k=3)
        assert [h.unit.qualname for h in hits][:2] == ["diff_main", "Diff.diffMain"]
        assert all(hits[i].score >= hits[i + 1].score for i in range(len(hits) - 1))
        java = idx.search(query, k=3, language="java")
        assert [h.unit.qualname for h in java] == ["Diff.diffMain"]
    with Index(tmp_path / "idx", lexical_weight=0.0) as idx:  # weight 0: the dense search, unchanged
        dense = idx.search(query, k=3)
        scores = idx.search_vectors(idx.model.encode([query]), k=3)[0]
        assert [h.unit.id for h in dense] == [h.unit.id for h in scores]


def test_fused_clones_use_the_fused_threshold(project, tmp_path, tiny_model):
    with Index(tmp_path / "idx", model=tiny_model, lexical_weight=1.0) as idx:
        idx.add([project])
        classes = idx.clones(threshold=0.3, cross_language_only=True)
        names = [sorted(u.qualname for u in c.units) for c in classes]
        assert ["Diff.diffMain", "diff_main"] in names
        for c in classes:
            for p in c.pairs:
                got = idx.score_matrix(np.array([p.a.id]), np.array([p.b.id]))[0, 0]
                assert p.score == pytest.approx(float(got), abs=1e-5) and p.score >= 0.3


def test_old_index_without_lexical_file_still_scores(project, tmp_path, tiny_model):
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([project])
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest.pop("lexical")
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "lexical.npz").unlink()
    with Index(folder, lexical_weight=0.5) as idx:
        assert idx.lexical_index().vectors.shape[0] == 4  # built in memory from the units
        assert idx.search("def diff_main(a, b): return a", k=1)[0].unit.qualname in {"diff_main", "Diff.diffMain"}


def test_damaged_lexical_file_is_reported(project, tmp_path, tiny_model):
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([project])
    (folder / "lexical.npz").write_bytes(b"garbage")
    with Index(folder, lexical_weight=0.5) as idx:
        with pytest.raises(CorruptIndexError, match="lexical.npz.*re-run `conba index`"):
            idx.search("def f(): pass", k=1)
    with Index(folder, model=tiny_model) as idx:  # a new run repairs it
        idx.add([project])
        assert idx.lexical_index().vectors.shape[0] == 4


def test_bad_weights_are_one_line_errors(project, tmp_path, tiny_model):
    with pytest.raises(conba.errors.ConfigError, match="lexical weight"):
        Index(tmp_path / "idx", model=tiny_model, lexical_weight=1.5)
    runner = CliRunner()
    folder = str(tmp_path / "i")
    for cmd in (["index", str(project), "-i", folder], ["search", "--code", "x", "-i", folder],
                ["clones", "-i", folder], ["compare", "--snippets", "a", "b"], ["eval-repo", "-g", "g.jsonl"],
                ["calibrate", "d.jsonl"]):
        res = runner.invoke(cli, [*cmd, "--lexical-weight", "2"])
        assert res.exit_code == 2 and "lexical weight must be a number in [0, 1]" in res.output, res.output


def test_cli_index_records_the_weight_and_search_uses_it(project, tmp_path, tiny_model):
    runner = CliRunner()
    folder = str(tmp_path / "idx")
    res = runner.invoke(cli, ["index", str(project), "-i", folder, "-m", tiny_model, "--lexical-weight", "0.6"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "idx" / "manifest.json").read_text())["lexical_weight"] == 0.6
    res = runner.invoke(cli, ["search", "--code", "def diffMain(x, y): return diffCommonPrefix(x, y)",
                              "-i", folder, "-k", "2"])
    assert res.exit_code == 0, res.output
    top = [json.loads(line)["name"] for line in res.output.strip().splitlines()]
    assert set(top) == {"diff_main", "Diff.diffMain"}


def test_lexical_scores_match_the_dense_cosines_for_many_queries():
    from conba.index.ranking.lexical_file import LexicalIndex
    from conba.lexical.vectorizer import LexicalVectorizer

    words = ["parse", "header", "diff", "main", "count", "total", "node", "tree", "left", "right", "match"]
    codes = [f"def {words[i % 11]}_{words[(3 * i) % 11]}(x): return {words[(5 * i + 1) % 11]}(x) + {i}"
             for i in range(30)]
    lex = LexicalIndex(np.arange(1, 31), LexicalVectorizer().term_frequencies(codes))
    queries = lex.encode(codes[:20] + ["nothing in common"])  # more than one block of 16 queries
    terms = np.union1d(lex.vectors.indices, queries.indices)  # the reference product over the terms in use
    dense_units, dense_queries = lex.vectors[:, terms].toarray(), queries[:, terms].toarray()
    got = lex.scores(queries)
    assert got.shape == (21, 30) and got.dtype == np.float32
    np.testing.assert_allclose(got, dense_queries @ dense_units.T, atol=1e-6)
    assert np.diag(got[:20]) == pytest.approx(1.0, abs=1e-5) and not got[20].any()
    subset = lex.scores(queries, ids=[5, 2])
    np.testing.assert_allclose(subset, got[:, [4, 1]], atol=1e-6)
