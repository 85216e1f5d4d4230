"""Keep/drop decisions at inference: protected tokens and hard top-k (the soft, trainable masks are in
:mod:`conba.prune.soft`).

Glossary: b batch, l tokens (padding included), k tokens kept (the longest row's count), d width.

Masks are 0/1 or bool tensors of shape (b, l); a row's real tokens may sit anywhere (padding is
wherever the mask is 0), positions are counted among the real tokens of the row.
"""

from __future__ import annotations

import torch

_EPS = 1e-6


def protected_tokens(mask: torch.Tensor, keep_first: int, keep_tail: float) -> torch.Tensor:
    """Tokens that are never pruned: the first ``keep_first`` and the last ``ceil(keep_tail * n)``
    real tokens of each row (n = real tokens in the row).

    Args: mask: shape (b, l). Returns bool (b, l).
    """
    m = mask.bool()
    rank = torch.cumsum(m.long(), dim=1) - 1  # position among the real tokens
    n = m.sum(dim=1, keepdim=True)
    tail = torch.ceil(n.double() * keep_tail - _EPS).clamp(min=0).long()
    return m & ((rank < keep_first) | (rank >= n - tail))


def keep_counts(mask: torch.Tensor, keep_ratio: float, keep_first: int, keep_tail: float) -> torch.Tensor:
    """Tokens each row keeps: ``min(n, max(ceil(keep_ratio * n), protected))``. Args: mask: (b, l).
    Returns int64 (b,)."""
    if not 0.0 < keep_ratio <= 1.0:
        raise ValueError(f"keep_ratio must be in (0, 1], got {keep_ratio}")
    n = mask.bool().sum(dim=1)
    want = torch.ceil(n.double() * keep_ratio - _EPS).long()
    floor = protected_tokens(mask, keep_first, keep_tail).sum(dim=1)
    return torch.minimum(n, torch.maximum(want, floor))


def hard_keep_indices(scores: torch.Tensor, mask: torch.Tensor, keep_ratio: float, keep_first: int,
                      keep_tail: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Hard top-k with protected tokens. Kept tokens stay in their original order.

    Args:
        scores: shape (b, l), higher = more important
        mask: shape (b, l), real tokens
    Returns:
        index: int64 (b, k) positions to gather (padding slots repeat a valid position)
        new_mask: bool (b, k), True for the kept tokens of each row
    """
    if scores.shape != mask.shape:
        raise ValueError(f"scores {tuple(scores.shape)} and mask {tuple(mask.shape)} differ")
    m = mask.bool()
    b, l = m.shape
    counts = keep_counts(m, keep_ratio, keep_first, keep_tail)
    k = int(counts.max()) if b else 0
    k = max(k, 1)
    priority = scores.detach().float().masked_fill(~m, float("-inf"))
    priority = priority.masked_fill(protected_tokens(m, keep_first, keep_tail), float("inf"))
    top = torch.topk(priority, k, dim=1, sorted=True).indices  # best first
    valid = torch.arange(k, device=m.device)[None, :] < counts[:, None]
    index = torch.sort(top.masked_fill(~valid, l), dim=1).values  # kept in original order, sentinel l last
    new_mask = index < l
    return index.clamp(max=l - 1), new_mask


def gather_tokens(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Args: x: shape (b, l, d); index: (b, k). Returns (b, k, d)."""
    return x.gather(1, index[..., None].expand(-1, -1, x.shape[-1]))
