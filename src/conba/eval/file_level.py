"""File-level scores compared: file vectors, function-pair aggregations, and the two stages together.

Glossary: u units, F files, q query files, t target files, d embedding width, N re-ranked candidates.

Every scorer ranks files as ``conba eval-repo`` does (:func:`conba.eval.repo_scores.repo_retrieval`:
each grouped file a query per other language, against all files of that language); they differ in
the (q, t) file score:

* ``pairs-max``: the best function pair (eval-repo's default aggregation);
* ``pairs-mean-best``: the symmetric mean of each side's best match (chamfer-style);
* ``vector-mean`` / ``vector-tokens``: the cosine of file vectors, the (token-weighted) mean of the
  file's function vectors (:func:`conba.index.files.vectors.aggregate`);
* ``rerank-AGG-N``: ``vector-tokens`` (the index's file vectors) as the first stage, its ``N`` best
  candidates re-ranked by ``pairs-AGG`` (the rest keep their first-stage order below them);
  ``rerank-mean-best-50`` is what :mod:`conba.index.files.search` ships.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from conba.eval.repo_scores import file_scores, repo_retrieval
from conba.eval.repo_units import UnitTable
from conba.index.files.vectors import aggregate, token_counts

__all__ = ["SCORERS", "file_vector_matrix", "score_table"]

Scorer = Callable[[list[int], list[int]], np.ndarray]


def file_vector_matrix(table: UnitTable, weighting: str = "mean") -> np.ndarray:
    """(F, d) unit-length file vectors of the table's files from their units' dense vectors."""
    weights = token_counts(table.codes) if weighting == "tokens" else None
    out = np.zeros((len(table.files), table.vectors.shape[1]), np.float32)
    for k in range(len(table.files)):
        a, b = int(table.starts[k]), int(table.starts[k + 1])
        out[k] = aggregate(np.asarray(table.vectors[a:b]), None if weights is None else weights[a:b])
    return out


def _pairs(table: UnitTable, agg: str) -> Scorer:
    def score(queries: list[int], targets: list[int]) -> np.ndarray:
        q_rows, q_starts = table.rows(queries)
        t_rows, t_starts = table.rows(targets)
        return file_scores(table.similarity(q_rows, t_rows), q_starts, t_starts, agg)
    return score


def _vectors(files: np.ndarray) -> Scorer:
    return lambda queries, targets: files[queries] @ files[targets].T


def _rerank(table: UnitTable, files: np.ndarray, agg: str, top: int) -> Scorer:
    pairs = _pairs(table, agg)

    def score(queries: list[int], targets: list[int]) -> np.ndarray:
        first = files[queries] @ files[targets].T                        # (q, t)
        out = first - 4.0                                                # below every re-ranked one
        for row, q in enumerate(queries):
            best = np.argsort(-first[row], kind="stable")[:top]
            cand = [targets[j] for j in best]
            out[row, best] = pairs([q], cand)[0] + 4.0
        return out
    return score


SCORERS = ("pairs-max", "pairs-mean-best", "vector-mean", "vector-tokens", "rerank-max-50",
           "rerank-mean-best-10", "rerank-mean-best-20", "rerank-mean-best-50")


def _scorer(name: str, table: UnitTable, mean: np.ndarray, tokens: np.ndarray) -> Scorer:
    if name.startswith("pairs-"):
        return _pairs(table, name[len("pairs-"):])
    if name == "vector-mean":
        return _vectors(mean)
    if name == "vector-tokens":
        return _vectors(tokens)
    agg, top = name[len("rerank-"):].rsplit("-", 1)
    return _rerank(table, tokens, agg, int(top))


def score_table(table: UnitTable, group_of: dict[str, str], scorers: tuple[str, ...] = SCORERS) -> dict:
    """{scorer: {"map_at_r", "recall_at_1", "mrr", "seconds"}} of each scorer on the table's grouped files.
    File vectors come from the dense vectors; the pair scorers use the table's score (fused when it has
    a lexical channel)."""
    import time

    dense = dataclasses.replace(table, lexical=None, lexical_weight=0.0)
    mean, tokens = file_vector_matrix(dense, "mean"), file_vector_matrix(dense, "tokens")
    out: dict = {}
    for name in scorers:
        t0 = time.perf_counter()
        res = repo_retrieval(table, group_of, scorer=_scorer(name, table, mean, tokens))
        out[name] = {**{k: round(v, 4) for k, v in res["mean"].items()}, "seconds": round(time.perf_counter() - t0, 2)}
    return out
