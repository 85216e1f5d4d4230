"""SDTP token pruning at inference: settings, per-layer scorers, hard top-k and the pruned forward.

Glossary: b batch, l tokens, k kept tokens, d hidden width.

* :mod:`conba.encoder.sdtp.config` — PruneConfig (layers, keep ratio, protected tokens), JSON save/load
* :mod:`conba.encoder.sdtp.scorer` — per-layer scorers Linear(d, d/4) -> GELU -> Linear(d/4, 2), save/load
* :mod:`conba.encoder.sdtp.mask` — protected tokens, hard top-k
* :mod:`conba.encoder.sdtp.pruned` — the hard-pruned forward

Training the scorers (saliency, soft pass, losses) is :mod:`conba.prune`.
"""

from conba.encoder.sdtp.config import PruneConfig, parse_layers
from conba.encoder.sdtp.scorer import PruneModule, TokenScorer, keep_score, load_pruner, save_pruner

__all__ = ["PruneConfig", "PruneModule", "TokenScorer", "keep_score", "load_pruner", "parse_layers", "save_pruner"]
