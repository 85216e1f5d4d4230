"""Tests for conba.eval.report: plain-text result tables."""

from __future__ import annotations

import numpy as np
import pytest

from conba.eval.metrics import cross_language_retrieval
from conba.eval.report import format_classification, format_retrieval_table


def _results() -> dict[str, dict]:
    groups = ["A", "B", "A", "B"]
    langs = ["java", "java", "python", "python"]
    perfect = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1]], dtype=float)
    return {
        "conba": cross_language_retrieval(perfect, groups, langs),
        "tfidf": cross_language_retrieval(1 - perfect, groups, langs, pairs=[("java", "python")]),
    }


def test_format_retrieval_table() -> None:
    text = format_retrieval_table(_results())
    lines = text.splitlines()
    assert "conba" in lines[1] and "tfidf" in lines[1] and "MRR(conba)" in lines[1]
    row = {line.split()[0]: line.split()[1:] for line in lines[2:] if not line.startswith("-")}
    assert row["java->python"] == ["1.000", "0.000", "1.000", "1.000", "2"]
    assert row["python->java"] == ["1.000", "-", "1.000", "1.000", "2"]  # tfidf has no such pair
    assert row["mean"] == ["1.000", "0.000", "1.000", "1.000", "4"]
    assert lines[-1].startswith("mean")


def test_format_retrieval_table_nan_and_errors() -> None:
    res = cross_language_retrieval(np.eye(2), ["A", "B"], ["java", "python"])
    assert "n/a" in format_retrieval_table({"m": res})
    with pytest.raises(ValueError):
        format_retrieval_table({})
    with pytest.raises(ValueError):
        format_retrieval_table({"m": {"pairs": {}}})


def test_format_classification() -> None:
    text = format_classification({"precision": 0.5, "recall": 1.0, "f1": 2 / 3, "accuracy": 0.75,
                                  "roc_auc": float("nan"), "threshold": 0.3, "n_pairs": 8,
                                  "threshold_source": "calibration file"})
    assert "0.6667" in text and "n/a" in text and "8" in text and "calibration file" in text
    with pytest.raises(ValueError):
        format_classification({})
