"""SDTP (saliency-driven dynamic token pruning) training for conba encoders.

Glossary: b batch, l tokens, k kept tokens, d hidden width.

The inference side (PruneConfig, scorers, hard top-k, the pruned forward) is :mod:`conba.encoder.sdtp`;
its public names are re-exported here.

* :mod:`conba.prune.saliency` — stage 1: token saliency = sum_d h * dL/dh with forward/backward hooks
* :mod:`conba.prune.soft` — the soft (training) pass: Gumbel-softmax keep weights through attention
* :mod:`conba.prune.losses` — ranking and MSE losses, saliency normalisation
* :mod:`conba.prune.train` — ``conba prune train``
"""

from conba.encoder.sdtp import PruneConfig, PruneModule, TokenScorer, keep_score, load_pruner, parse_layers, save_pruner

__all__ = ["PruneConfig", "PruneModule", "TokenScorer", "keep_score", "load_pruner", "parse_layers", "save_pruner"]
