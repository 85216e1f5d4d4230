"""SDTP (saliency-driven dynamic token pruning) for conba encoders.

Glossary: b batch, l tokens, k kept tokens, d hidden width.

* :mod:`conba.prune.config` — PruneConfig (layers, keep ratio, protected tokens), JSON save/load
* :mod:`conba.prune.saliency` — stage 1: token saliency = sum_d h * dL/dh with forward/backward hooks
* :mod:`conba.prune.scorer` — stage 2: per-layer scorers Linear(d, d/4) -> GELU -> Linear(d/4, 2)
* :mod:`conba.prune.mask` — protected tokens, hard top-k, Gumbel-softmax keep masks
* :mod:`conba.prune.losses` — ranking and MSE losses, saliency normalisation
* :mod:`conba.prune.forward` — hard (inference) and soft (training) passes over ``Backbone.layers``
* :mod:`conba.prune.train` — ``conba prune train``
"""

from conba.prune.config import PruneConfig, parse_layers
from conba.prune.scorer import PruneModule, TokenScorer, keep_score, load_pruner, save_pruner

__all__ = ["PruneConfig", "PruneModule", "TokenScorer", "keep_score", "load_pruner", "parse_layers", "save_pruner"]
