"""Clone decision threshold: a number, or ``auto`` = the model's calibrated threshold.

When the model carries no calibrated threshold (e.g. a zero-shot encoder), ``auto`` falls back
to :data:`DEFAULT_THRESHOLD` (cosine similarity 0.80).
"""

from __future__ import annotations

from conba.errors import ConfigError

DEFAULT_THRESHOLD = 0.80


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
