"""The lexical channel: terms, hashed TF-IDF vectors, idf tables and the fused score."""

from __future__ import annotations

import numpy as np
import pytest

from conba.errors import ConfigError
from conba.lexical import LexicalConfig, LexicalVectorizer, fuse, lexical_terms
from conba.lexical.vectorizer import N_FEATURES, IdfTable, row_pair_cosines


def test_terms_keep_words_and_joined_names_only():
    terms = lexical_terms("def getMaxValue(x, items): return x + 10 * len(items) // 2")
    assert terms == ["def", "get", "max", "value", "getmaxvalue", "items", "return", "len", "items"]


def test_naming_conventions_share_the_joined_term():
    a, b, c = (set(lexical_terms(s)) for s in ("diff_main(a)", "diffMain(a)", "DiffMain(a)"))
    assert "diffmain" in a & b & c


def test_vectors_are_unit_length_and_empty_rows_stay_empty():
    x = LexicalVectorizer().vectors(["int add(int a, int b) { return a + b; }", "x = 1 + 2", "def add(a, b): ..."])
    assert x.shape == (3, N_FEATURES)
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms, [1.0, 0.0, 1.0], atol=1e-6)  # "x = 1 + 2" has no word term


def test_shared_rare_name_scores_higher_than_shared_keyword():
    codes = ["def diff_main(a, b): return a", "function diffMain(a, b) { return a; }",
             "def other(a, b): return b", "def more(q): return q"]
    x = LexicalVectorizer().vectors(codes)
    sim = (x @ x.T).toarray()
    assert sim[0, 1] > sim[0, 2] > 0
    assert sim[0, 1] > 0.5


def test_idf_table_round_trip_and_unseen_terms_weigh_most():
    vec = LexicalVectorizer()
    tf = vec.term_frequencies(["return value", "return other", "return"])
    table = IdfTable.fit(tf)
    assert table.n_docs == 3
    again = IdfTable.from_dict(table.to_dict())
    np.testing.assert_array_equal(again.weights(), table.weights())
    w = table.weights()
    ret = vec.term_frequencies(["return"]).indices[0]
    unseen = vec.term_frequencies(["zebra"]).indices[0]
    assert w[unseen] > w[ret]
    with pytest.raises(ValueError):
        IdfTable.from_dict({"n_docs": 1, "columns": [1, 2], "df": [1]})


def test_row_pair_cosines_are_the_pairs_of_the_full_matrix():
    codes = ["def parse_header(line): return line.split(':')", "int parseHeader(String line) { return 0; }",
             "fn binary_search(xs: &[i32]) -> usize { 0 }", ""]
    x = LexicalVectorizer().vectors(codes)
    full = (x @ x.T).toarray()
    a, b = [0, 1, 2, 3, 0], [1, 0, 2, 0, 2]
    got = row_pair_cosines(x, a, b)
    assert got.dtype == np.float32 and got.shape == (5,)
    assert np.allclose(got, full[a, b]) and got[0] > 0.3 and got[2] == pytest.approx(1.0) and got[3] == 0.0
    assert row_pair_cosines(x, [], []).shape == (0,)


def test_term_frequencies_are_sublinear():
    tf = LexicalVectorizer().term_frequencies(["node node node node"])
    assert tf.nnz == 1
    assert tf.data[0] == pytest.approx(1.0 + np.log(4.0))


def test_fuse_weights_and_bounds():
    dense, lex = np.array([[0.8, 0.2]]), np.array([[0.0, 1.0]])
    np.testing.assert_allclose(fuse(dense, lex, 0.0), dense)
    np.testing.assert_allclose(fuse(dense, lex, 1.0), lex)
    np.testing.assert_allclose(fuse(dense, lex, 0.25), [[0.6, 0.4]])
    assert fuse(dense, lex, 0.3).dtype == np.float32
    for bad in (-0.1, 1.5, "x", float("nan"), None):
        with pytest.raises(ConfigError, match="lexical weight"):
            fuse(dense, lex, bad)
    assert not LexicalConfig().enabled and LexicalConfig(0.2).enabled
    with pytest.raises(ConfigError):
        LexicalConfig(2.0)


def test_hashed_columns_are_scikit_learns():
    """The hashing trick without scikit-learn's import: the same columns and counts as its HashingVectorizer."""
    from sklearn.feature_extraction.text import HashingVectorizer

    from conba.lexical.terms import lexical_terms
    from conba.lexical.vectorizer import N_FEATURES, LexicalVectorizer

    codes = ["def gcd(a, b):\n    return a if b == 0 else gcd(b, a % b)", "int maxValue(int[] xs) { /* größte */ }",
             "", "fn parse_http_header(raw: &str) -> Header { todo!() }", "x x x y"]
    ours = LexicalVectorizer().term_frequencies(codes)
    ref = HashingVectorizer(analyzer=lexical_terms, n_features=N_FEATURES, alternate_sign=False, norm=None,
                            dtype=np.float32).transform(codes).tocsr()
    ref.sum_duplicates()
    np.log(ref.data, out=ref.data)
    ref.data += 1.0
    assert ours.nnz == ref.nnz > 10
    assert np.array_equal(ours.indptr, ref.indptr) and np.array_equal(ours.indices, ref.indices)
    assert np.array_equal(ours.data, ref.data)
