"""The file-level scorers of conba.eval.file_level, and file groups made from function groups."""

from __future__ import annotations

import numpy as np

from conba.eval.repo_units import UnitTable


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def _table() -> UnitTable:
    """A (x): a1, a2. Its port B (y) matches both functions closely; C (y) holds an exact copy of a1 and
    nothing else of A. D (x) shares nothing."""
    e = np.eye(5, dtype=np.float32)
    vectors = np.stack([
        e[0], e[1],                                        # A: a1, a2
        _unit(1, 0, 0.3, 0, 0), _unit(0, 1, 0.3, 0, 0),    # B: b1 ~ a1, b2 ~ a2
        e[0], e[3],                                        # C: c1 = a1, c2 unrelated
        e[4], _unit(0, 0, 0, 1, 1),                        # D
    ])
    codes = ["f a1", "f a2 x y z", "f b1", "f b2", "f c1", "g c2 with many more tokens in it", "d1", "d2"]
    return UnitTable(["A", "B", "C", "D"], ["x", "y", "y", "x"], np.array([0, 2, 4, 6, 8]), vectors, codes)


def test_best_pair_is_fooled_by_one_copied_function_and_mean_best_is_not():
    from conba.eval.file_level import score_table
    from conba.eval.repo_scores import repo_retrieval

    table, groups = _table(), {"A": "g", "B": "g"}
    scores = score_table(table, groups)
    assert set(scores) >= {"pairs-max", "pairs-mean-best", "vector-mean", "vector-tokens", "rerank-mean-best-50"}
    by_pair = repo_retrieval(table, groups, "max")["pairs"]
    assert by_pair["x->y"]["map_at_r"] == 0.0  # C's exact copy of a1 beats B's close ports of both
    assert repo_retrieval(table, groups, "mean-best")["pairs"]["x->y"]["map_at_r"] == 1.0
    assert scores["pairs-mean-best"]["map_at_r"] == 1.0 and scores["pairs-max"]["map_at_r"] < 1.0
    assert scores["rerank-mean-best-10"]["map_at_r"] == scores["pairs-mean-best"]["map_at_r"]


def test_file_vectors_of_the_eval_are_the_index_aggregation():
    from conba.eval.file_level import file_vector_matrix
    from conba.index.files.vectors import aggregate, token_counts

    table = _table()
    tokens = file_vector_matrix(table, "tokens")
    np.testing.assert_allclose(tokens[2], aggregate(table.vectors[4:6], token_counts(table.codes[4:6])), atol=1e-6)
    assert not np.allclose(tokens[2], file_vector_matrix(table, "mean")[2])
    np.testing.assert_allclose(np.linalg.norm(tokens, axis=1), 1.0, atol=1e-5)


