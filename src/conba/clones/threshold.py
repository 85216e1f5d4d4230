"""Clone decision threshold: a number, or ``auto`` = the model's calibrated threshold.

A model can carry two thresholds: ``clone_threshold`` (set by ``conba calibrate``: the lowest score
whose precision on all cross-language pairs of a dev set reaches a target) and the older
``threshold`` (best F1 on balanced pairs, set by training). ``auto`` takes the first that the model
has, else :data:`DEFAULT_THRESHOLD` (cosine similarity 0.80), e.g. for a zero-shot encoder.
"""

from __future__ import annotations

from typing import Any

from conba.errors import ConfigError

DEFAULT_THRESHOLD = 0.80


def model_clone_threshold(model: Any) -> float | None:
    """The model's calibrated ``clone_threshold`` value, else its F1 ``threshold``, else None."""
    calibrated = getattr(model, "clone_threshold", None)
    if isinstance(calibrated, dict) and calibrated.get("value") is not None:
        return float(calibrated["value"])
    threshold = getattr(model, "threshold", None)
    return float(threshold) if threshold is not None else None


def resolve_threshold(value: str | float | None, model_threshold: float | None) -> float:
    """``None`` / ``"auto"`` -> the model's threshold (or the default); else the number, in [-1, 1]."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
        return float(model_threshold) if model_threshold is not None else DEFAULT_THRESHOLD
    try:
        t = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"threshold must be a number in [-1, 1] or 'auto', got {value!r}") from None
    if not -1.0 <= t <= 1.0:
        raise ConfigError(f"threshold must be a number in [-1, 1] or 'auto', got {value!r}")
    return t


def model_threshold(value: str | float | None, model: Any) -> float:
    """The clone threshold for comparing with ``model``: ``value``, or for ``None`` / ``"auto"`` the
    model's (:func:`model_clone_threshold`). ``conba compare`` and the server's ``/compare`` both use it,
    so one pair is a clone on both or on neither."""
    return resolve_threshold(value, model_clone_threshold(model))
