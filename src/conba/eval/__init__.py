"""Evaluation: cross-language retrieval metrics, the TF-IDF baseline, clone-pair classification and
text reports."""

from conba.eval.metrics import (
    cross_language_retrieval,
    embedding_similarity,
    map_at_r,
    mrr,
    pair_name,
    recall_at_1,
)
from conba.eval.pairs import balanced_pairs, calibrate_threshold, classification_metrics
from conba.eval.precision import cross_language_pairs, threshold_for_precision
from conba.eval.report import format_classification, format_retrieval_table
from conba.eval.tfidf import tfidf_similarity, tfidf_vectorizer

__all__ = [
    "balanced_pairs",
    "calibrate_threshold",
    "classification_metrics",
    "cross_language_pairs",
    "cross_language_retrieval",
    "embedding_similarity",
    "format_classification",
    "format_retrieval_table",
    "map_at_r",
    "mrr",
    "pair_name",
    "recall_at_1",
    "tfidf_similarity",
    "tfidf_vectorizer",
    "threshold_for_precision",
]
