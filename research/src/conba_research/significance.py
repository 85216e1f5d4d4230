"""Is a difference between two methods on the same queries more than chance? A paired bootstrap.

Per-pair tables of ``conba eval-repo`` rest on 29-99 queries each, and one query that flips moves a
pair's MAP@R by 1-3 points. :func:`paired_bootstrap` resamples the queries (with replacement, the
same resample for both methods) and gives the interval of the mean difference, so a table can say
which per-pair gaps the data supports. ``conba experiment significance`` applies it to an eval-repo
JSON (``-j``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["PairedDifference", "paired_bootstrap"]


@dataclass(frozen=True)
class PairedDifference:
    """Mean of ``a - b`` over ``n`` queries, its bootstrap interval, and the queries each side wins."""

    n: int
    mean: float
    low: float
    high: float
    wins: int    # queries where a > b
    losses: int  # queries where a < b

    @property
    def significant(self) -> bool:
        """The interval leaves out 0."""
        return self.low > 0 or self.high < 0


def paired_bootstrap(a: Sequence[float], b: Sequence[float], samples: int = 10_000, seed: int = 0,
                     level: float = 0.95) -> PairedDifference:
    """The ``level`` percentile interval of mean(a - b) over ``samples`` resamples of the paired queries."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"a and b must be 1-D and paired, got shapes {x.shape} and {y.shape}")
    if x.size == 0:
        raise ValueError("no queries to compare")
    if samples < 1 or not 0 < level < 1:
        raise ValueError(f"samples must be >= 1 and level in (0, 1), got {samples} and {level}")
    d = x - y
    from scipy.stats import bootstrap  # the maintained resampler (percentile interval, vectorised)

    ci = bootstrap((d,), np.mean, n_resamples=samples, confidence_level=level, method="percentile",
                   random_state=np.random.default_rng(seed)).confidence_interval
    return PairedDifference(int(d.size), float(d.mean()), float(ci.low), float(ci.high), int((d > 0).sum()),
                            int((d < 0).sum()))
