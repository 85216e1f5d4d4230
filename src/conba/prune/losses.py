"""SDTP training losses for the token scorers (the contrastive task loss lives in conba.train.losses).

Glossary: b batch, l tokens.

* :func:`ranking_loss` — pairwise logistic ranking loss over the real tokens of each snippet:
  ``log(1 + exp(-(s_i - s_j) * sign(t_i - t_j)))``, averaged over ordered pairs (i, j) whose targets
  differ (tied targets carry no order and are left out).
* :func:`score_mse` — mean squared error between the keep probability and the target in [0, 1].
* :func:`normalize_saliency` — per-snippet rank normalisation of raw saliency to [0, 1], so the MSE
  target does not depend on the (batch-dependent, heavy-tailed) scale of gradients.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def ranking_loss(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Args: pred, target: shape (b, l); mask: (b, l) real tokens. Returns a scalar (0 with no pairs)."""
    if pred.shape != target.shape or pred.shape != mask.shape:
        raise ValueError(f"shape mismatch: pred {tuple(pred.shape)}, target {tuple(target.shape)}, "
                         f"mask {tuple(mask.shape)}")
    m = mask.bool()
    sign = torch.sign(target[:, :, None] - target[:, None, :])  # (b, l, l)
    valid = m[:, :, None] & m[:, None, :] & (sign != 0)
    if not valid.any():
        return pred.sum() * 0.0
    diff = pred[:, :, None] - pred[:, None, :]
    loss = F.softplus(-diff * sign)  # = log(1 + exp(-(p_i - p_j) * sign(t_i - t_j))), stable
    return loss[valid].mean()


def score_mse(prob: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Args: prob, target: shape (b, l); mask: (b, l). Mean of (prob - target)^2 over real tokens."""
    if prob.shape != target.shape or prob.shape != mask.shape:
        raise ValueError(f"shape mismatch: prob {tuple(prob.shape)}, target {tuple(target.shape)}, "
                         f"mask {tuple(mask.shape)}")
    m = mask.bool()
    if not m.any():
        return prob.sum() * 0.0
    return ((prob - target) ** 2)[m].mean()


def normalize_saliency(saliency: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Rank-normalise each row over its real tokens: the smallest gets 0, the largest 1 (a single
    token gets 1); padding gets 0. Args: saliency, mask: shape (b, l). Returns (b, l) float."""
    m = mask.bool()
    s = saliency.float().masked_fill(~m, float("inf"))  # padding sorts last
    ranks = torch.argsort(torch.argsort(s, dim=1, stable=True), dim=1, stable=True).float()
    n = m.sum(dim=1, keepdim=True).float()
    out = torch.where(n > 1, ranks / (n - 1).clamp(min=1), torch.ones_like(ranks))
    return out.masked_fill(~m, 0.0)
