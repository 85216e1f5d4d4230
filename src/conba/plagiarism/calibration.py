"""From a pair's similarity to its **score**: the share of same-task independent pairs that are less similar.

The structure channel alone is calibrated the same way (``structure_score``): a renamed copy keeps its
structure but not its names, so its similarity is no higher than that of independent solutions whose names
happen to agree with the copy's, while its structure stands out.

Two submissions in one language share far more than a submission and its translation (syntax, idioms,
library names), so one similarity threshold cannot serve both: on plagiarism_dev, the similarity that 1% of
cross-language independent pairs reach is exceeded by a fifth of the same-language (Python) independent pairs.
The score therefore maps the similarity through the distribution of independent pairs of the same kind
(cross-language or same-language), measured on plagiarism_dev by ``conba bench plagiarism-eval
--write-calibration`` and stored in ``calibration.json``: a score of 0.99 means that 1% of independent solutions
of one task, of that kind, are as similar. The map is increasing, so rankings within a kind are the
similarity's. Without the file (or for a kind it lacks) the score is the similarity.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import numpy as np

CALIBRATION_FILE = "calibration.json"
KINDS = ("cross_language", "same_language")
# quantile levels stored: every 1% up to 90%, then every 0.1% up to 99.9%; above the last, the score rises
# linearly to 1 at similarity 1, so pairs more similar than any independent one keep their order
LEVELS = [round(float(x), 4) for x in [*np.arange(0, 0.90, 0.01), *np.arange(0.90, 0.9995, 0.001)]]


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    try:
        text = resources.files("conba.plagiarism").joinpath(CALIBRATION_FILE).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return {}
    return json.loads(text)


def quantiles(similarities: list[float]) -> list[float]:
    """The similarities at :data:`LEVELS` (what the calibration file stores per kind)."""
    return [round(float(x), 6) for x in np.quantile(np.asarray(similarities, dtype=np.float64), LEVELS)]


def _percentile(sim: np.ndarray, table: dict[str, Any], key: str) -> np.ndarray | None:
    q = table.get(key)
    if not q:
        return None
    xs, levels = [0.0], [0.0]
    for x, level in zip(q, table["levels"]):
        if x > xs[-1]:
            xs.append(x)
            levels.append(level)
        else:
            levels[-1] = level
    if xs[-1] < 1.0:
        xs.append(1.0)
        levels.append(1.0)
    return np.interp(sim, xs, levels)


def calibrate(values: np.ndarray, same_language: np.ndarray, channel: str = "") -> np.ndarray:
    """The percentile of each pair's ``values`` (float64, in [0, 1]) among the independent pairs of its kind
    (both sides in one language or not): of the similarity (``channel`` ""), or of the structure channel's
    cosine (``channel`` "structure": what a renamed copy keeps). Pairs of a kind the file lacks keep ``values``."""
    vals = np.asarray(values, dtype=np.float64)
    out = vals.copy()
    table = _table()
    same = np.asarray(same_language, dtype=bool)
    suffix = f"_{channel}" if channel else ""
    for kind, mask in (("same_language", same), ("cross_language", ~same)):
        if mask.any():
            p = _percentile(vals[mask], table, kind + suffix)
            if p is not None:
                out[mask] = p
    return out
