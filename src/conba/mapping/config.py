"""Settings of ``conba map``: the mapping configuration (the clone threshold, the scoring constants, what is
mapped, the CI gate), one JSON file a user saves and passes with ``conba map --config FILE``
(docs/MAP_CONFIG.md lists every key and its default)."""

from __future__ import annotations

from dataclasses import dataclass

from conba.errors import ConfigError
from conba.utils.config_keys import JsonConfig

DEFAULT_MARGIN = 0.02
DEFAULT_CANDIDATES = 3
DEFAULT_RELAX = 0.1       # mutual-best pairs are matched down to threshold - relax
DEFAULT_CONTRAST = 0.05   # an assigned score this far above the mean of the row's next 5 scores, else missing
DEFAULT_PATH_WEIGHT = 0.5  # the weight of the file names' words in the file-level score
DEFAULT_NAME_BONUS = 0.2  # a pair alone sharing a name key is raised this much (if at least t - this on its own)
DEFAULT_CONSTRUCTOR_PENALTY = 1.0  # a constructor and a non-constructor: never a pair above the threshold
DEFAULT_NEAREST = 2       # closest targets listed with each missing function, for the reader to check
ONLY = ("matched", "ambiguous", "missing")


@dataclass(frozen=True)
class MapConfig(JsonConfig):
    """How source functions are mapped onto target functions.

    ``threshold``: the score a pair needs to count as a counterpart (None: the index's calibrated clone
    threshold). ``margin``: a match is *ambiguous* when another candidate above the threshold scores within
    ``margin`` of it (or higher). ``candidates``: the best few targets listed with each source function.
    ``keep_trivial``: also map trivial functions (empty bodies, one-line accessors, tests), skipped by default.
    ``relax``: a source and a target function that are each other's best are matched down to ``threshold -
    relax`` (0: never below the threshold). ``contrast``: an assigned pair whose score is less than this above
    the mean of the source function's next 5 scores is *missing* (a flat row: nothing stands out; 0: off).
    ``path_weight``: the weight of the words of the file names (``bubble_sort.rs`` ~ ``BubbleSort.js``) in the
    file-level score, next to the function scores and the files' lexical similarity (0: contents only).
    ``nearest``: the closest target functions listed with each missing function (0: none). ``align``: align
    the lines of each matched and ambiguous pair with its counterpart (:mod:`conba.mapping.align`).
    ``name_bonus``: how much a source and a target function that alone share a name key are raised for the
    assignment when they score at least ``threshold - name_bonus`` (:mod:`conba.mapping.names`; 0: off).
    ``constructor_penalty``: how much lower a pair of a constructor and a function that is not one (in two
    languages that have constructors) scores for the assignment (:mod:`conba.mapping.kinds`; 0: off).
    ``lexical_weight``: the share of the lexical cosine in the score of an index the command creates or opens
    (None: the index's own). ``min_coverage``: ``conba map`` exits with status 1 when less than this percent of
    the source functions have a counterpart (None: never)."""

    config_name = "mapping configuration"

    threshold: float | None = None
    margin: float = DEFAULT_MARGIN
    candidates: int = DEFAULT_CANDIDATES
    keep_trivial: bool = False
    relax: float = DEFAULT_RELAX
    contrast: float = DEFAULT_CONTRAST
    path_weight: float = DEFAULT_PATH_WEIGHT
    nearest: int = DEFAULT_NEAREST
    align: bool = True
    name_bonus: float = DEFAULT_NAME_BONUS
    constructor_penalty: float = DEFAULT_CONSTRUCTOR_PENALTY
    lexical_weight: float | None = None
    min_coverage: float | None = None

    def __post_init__(self) -> None:
        if self.threshold is not None and not -1.0 <= self.threshold <= 1.0:
            raise ConfigError(f"threshold must be in [-1, 1], got {self.threshold}")
        if not 0.0 <= self.margin <= 2.0:
            raise ConfigError(f"margin must be in [0, 2], got {self.margin}")
        for name in ("relax", "contrast", "path_weight", "name_bonus", "constructor_penalty"):
            if not 0.0 <= getattr(self, name) <= 2.0:
                raise ConfigError(f"{name} must be in [0, 2], got {getattr(self, name)}")
        if self.lexical_weight is not None and not 0.0 <= self.lexical_weight <= 1.0:
            raise ConfigError(f"lexical_weight must be in [0, 1] or null, got {self.lexical_weight}")
        if self.min_coverage is not None and not 0.0 <= self.min_coverage <= 100.0:
            raise ConfigError(f"min_coverage must be in [0, 100] or null, got {self.min_coverage}")
        if self.nearest < 0:
            raise ConfigError(f"nearest must be >= 0, got {self.nearest}")
        if self.candidates < 1:
            raise ConfigError(f"candidates must be >= 1, got {self.candidates}")
