"""Clone-class statistics of an index against the groups of a repository-level evaluation.

Uses only the public :meth:`conba.index.Index.clones` API and the :class:`CloneClass` objects it
returns, so any clone grouping algorithm behind it is measured the same way.

* ``classes``: number of clone classes; ``largest_share``: units of the largest class / all units;
  ``pairs_per_unit``: clone pairs / all units; ``units_in_classes``: share of units in some class.
* Cross-language file pairs: a predicted pair is two files of different languages, both grouped,
  with at least one clone pair between their units; a true pair is two grouped files of different
  languages in the same group. Precision, recall and F1 of the predicted pairs.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

__all__ = ["clone_statistics", "true_file_pairs"]


def true_file_pairs(group_of: dict[str, str], language_of: dict[str, str]) -> set[frozenset[str]]:
    """Every cross-language pair of grouped files in the same group."""
    members: dict[str, list[str]] = {}
    for f, g in group_of.items():
        members.setdefault(g, []).append(f)
    return {frozenset((a, b)) for files in members.values() for a, b in itertools.combinations(sorted(files), 2)
            if language_of[a] != language_of[b]}


def _ratio(num: int, den: int) -> float:
    return num / den if den else float("nan")


def _set_scores(predicted: set, truth: set) -> tuple[float, float, float]:
    """Precision, recall and F1 of the ``predicted`` items against ``truth`` (scikit-learn); NaN where
    undefined: precision without predictions, recall without truth, F1 without either."""
    if not predicted or not truth:
        return _ratio(len(predicted & truth), len(predicted)), _ratio(len(predicted & truth), len(truth)), float("nan")
    from sklearn.metrics import precision_recall_fscore_support

    items = list(predicted | truth)
    p, r, f, _ = precision_recall_fscore_support([x in truth for x in items], [x in predicted for x in items],
                                                 average="binary", zero_division=0.0)
    return float(p), float(r), float(f)


def clone_statistics(index: Any, group_of: dict[str, str], language_of: dict[str, str], n_units: int,
                     cross_language_only: bool = False, threshold: str | float = "auto") -> dict:
    """Statistics of ``index.clones(threshold, cross_language_only=...)`` (see the module docstring).

    ``group_of``: index path -> group of the grouped files found in the index; ``language_of``: index
    path -> language; ``n_units``: all units of the index."""
    from conba.clones.threshold import resolve_threshold

    used = resolve_threshold(threshold, index.threshold)
    t0 = time.perf_counter()
    report = index.clone_report(threshold, cross_language_only=cross_language_only)
    classes = report.classes
    seconds = time.perf_counter() - t0
    n_pairs = sum(len(c.pairs) for c in classes)
    in_classes = sum(len(c.units) for c in classes)
    largest = max((len(c.units) for c in classes), default=0)
    predicted: set[frozenset[str]] = set()
    for c in classes:
        for p in c.pairs:
            a, b = p.a.file, p.b.file
            if a in group_of and b in group_of and p.a.language != p.b.language:
                predicted.add(frozenset((a, b)))
    truth = true_file_pairs(group_of, language_of)
    hits = len(predicted & truth)
    precision, recall, f1 = _set_scores(predicted, truth)
    return {
        "cross_language_only": cross_language_only, "threshold": round(used, 4),
        "classes": len(classes), "pairs": n_pairs,
        "largest_class": largest, "largest_share": _ratio(largest, n_units),
        "pairs_per_unit": _ratio(n_pairs, n_units), "units_in_classes": _ratio(in_classes, n_units),
        "units_considered": report.stats.considered, "skipped_trivial": report.stats.trivial,
        "largest_share_of_considered": report.stats.largest_share,
        "file_pairs": {"predicted": len(predicted), "true": len(truth), "correct": hits,
                       "precision": precision, "recall": recall, "f1": f1},
        "seconds": round(seconds, 2),
    }
