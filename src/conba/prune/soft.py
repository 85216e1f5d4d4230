"""SDTP training pass: soft, differentiable token weights instead of hard pruning.

Glossary: b batch, l tokens, d hidden width.

Nothing is removed; the Gumbel-softmax keep weights multiply into a running weight per token that acts
through the attention mask (log w added to the attention scores) and weights the final mean pooling,
so the task loss has a gradient w.r.t. every scorer.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from conba.encoder.layers import hard_mask, run_layers
from conba.encoder.sdtp.mask import protected_tokens
from conba.encoder.sdtp.scorer import PruneModule

_EPS = 1e-6


def gumbel_keep(logits: torch.Tensor, tau: float = 1.0) -> torch.Tensor:
    """Soft, differentiable keep decision from (drop, keep) logits: Gumbel-softmax, ``hard=False``.

    Args: logits: shape (b, l, 2). Returns (b, l) in (0, 1).
    """
    return F.gumbel_softmax(logits, tau=tau, hard=False, dim=-1)[..., 1]


def soft_attention_mask(weights: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Additive attention mask from keep weights w in [0, 1]: log(w) (a token with weight w gets its
    attention multiplied by w before renormalising); w = 0 gives the dtype's minimum.

    Args: weights: shape (b, l). Returns (b, 1, 1, l).
    """
    logw = torch.log(weights.clamp(min=_EPS))
    logw = torch.where(weights > 0, logw, torch.full_like(logw, torch.finfo(dtype).min))
    return logw[:, None, None, :].to(dtype)


@dataclass
class SoftPass:
    """Result of :func:`soft_states`: final states (b, l, d), running keep weights (b, l) and, per
    pruning layer, the scorer logits (b, l, 2)."""

    hidden: torch.Tensor
    weights: torch.Tensor
    logits: dict[int, torch.Tensor]


def soft_states(backbone, pruner: PruneModule, hidden: torch.Tensor, attention_mask: torch.Tensor,
                start: int, tau: float | None = None) -> SoftPass:
    """Training pass from the states entering layer ``start`` (layers below it are not re-run).

    The protected tokens (first ``keep_first`` and last ``keep_tail`` of the real tokens) keep weight 1.

    Args:
        hidden: shape (b, l, d), the states entering layer ``start``
        attention_mask: shape (b, l)
    """
    cfg = pruner.config
    if start > cfg.layers[0]:
        raise ValueError(f"soft pass must start at or before the first pruning layer {cfg.layers[0]}, got {start}")
    tau = cfg.tau if tau is None else tau
    mask = attention_mask.bool()
    protected = protected_tokens(mask, cfg.keep_first, cfg.keep_tail)
    logits: dict[int, torch.Tensor] = {}
    stages = set(cfg.layers)

    def weigh(i: int, hidden: torch.Tensor, weights: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if i not in stages:
            return hidden, weights
        logits[i] = pruner.logits(i, hidden)
        keep = gumbel_keep(logits[i], tau)
        return hidden, weights * torch.where(protected, torch.ones_like(keep), keep)

    def attention(weights: torch.Tensor, dtype: torch.dtype) -> torch.Tensor | None:
        return soft_attention_mask(weights, dtype) if logits else hard_mask(mask, dtype)

    hidden, weights = run_layers(backbone.layers, hidden, mask.to(hidden.dtype), start, stage=weigh,
                                 attention=attention)
    return SoftPass(hidden, weights, logits)


def weighted_mean(hidden: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Args: hidden: shape (b, l, d); weights: (b, l). Returns sum_i w_i h_i / sum_i w_i, shape (b, d)."""
    w = weights.unsqueeze(-1)
    return (hidden * w).sum(dim=1) / w.sum(dim=1).clamp(min=1e-9)
