"""Settings of ``conba map``: the clone threshold, the margin that makes a match ambiguous, candidates shown."""

from __future__ import annotations

from dataclasses import dataclass

from conba.errors import ConfigError

DEFAULT_MARGIN = 0.02
DEFAULT_CANDIDATES = 3
ONLY = ("matched", "ambiguous", "missing")


@dataclass(frozen=True)
class MapConfig:
    """How source functions are mapped onto target functions.

    ``threshold``: the score a pair needs to count as a counterpart (None: the index's calibrated clone
    threshold). ``margin``: a match is *ambiguous* when another candidate above the threshold scores within
    ``margin`` of it (or higher). ``candidates``: the best few targets listed with each source function.
    ``keep_trivial``: also map trivial functions (empty bodies, one-line accessors, tests), skipped by default."""

    threshold: float | None = None
    margin: float = DEFAULT_MARGIN
    candidates: int = DEFAULT_CANDIDATES
    keep_trivial: bool = False

    def __post_init__(self) -> None:
        if self.threshold is not None and not -1.0 <= self.threshold <= 1.0:
            raise ConfigError(f"threshold must be in [-1, 1], got {self.threshold}")
        if not 0.0 <= self.margin <= 2.0:
            raise ConfigError(f"margin must be in [0, 2], got {self.margin}")
        if self.candidates < 1:
            raise ConfigError(f"candidates must be >= 1, got {self.candidates}")
