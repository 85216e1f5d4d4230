"""One score from the dense cosine and the lexical cosine.

``score = (1 - w) * dense + w * lexical``, with ``w`` the lexical weight (0.0: the dense cosine alone, 1.0:
the lexical one alone). Both cosines lie in [-1, 1] (lexical ones in [0, 1]), so the fused score does
too and a clone threshold is a number on the same scale; thresholds are calibrated for the fused
score of a given weight (:mod:`conba.eval.calibrate`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conba.errors import ConfigError

__all__ = ["LexicalConfig", "fuse", "check_weight"]


def check_weight(value: float) -> float:
    """``value`` as a float in [0, 1], else :class:`ConfigError`."""
    try:
        w = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"lexical weight must be a number in [0, 1], got {value!r}") from None
    if not 0.0 <= w <= 1.0 or w != w:
        raise ConfigError(f"lexical weight must be a number in [0, 1], got {value!r}")
    return w


@dataclass(frozen=True)
class LexicalConfig:
    """How a model fuses the lexical channel: ``weight`` is the share of the *lexical* cosine
    (``--lexical-weight``; 0 = dense only)."""

    weight: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "weight", check_weight(self.weight))

    @property
    def enabled(self) -> bool:
        return self.weight > 0.0


def fuse(dense: np.ndarray, lexical: np.ndarray, weight: float) -> np.ndarray:
    """``(1 - weight) * dense + weight * lexical``, float32, same shape (``weight`` = lexical share)."""
    w = np.float32(check_weight(weight))
    out = np.asarray(dense, dtype=np.float32) * (np.float32(1.0) - w)
    if w:
        out = out + w * np.asarray(lexical, dtype=np.float32)
    return out
