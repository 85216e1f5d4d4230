"""Pooling token states to one vector per snippet, with a padding mask.

Glossary:
    b: batch size
    l: sequence length (padding included)
    d: model width
"""

from __future__ import annotations

import torch


def as_mask(mask: torch.Tensor | None, x: torch.Tensor) -> torch.Tensor:
    """Return a bool mask of shape (b, l) on x's device (None -> every position is a real token).

    Args:
        mask: shape (b, l), bool or 0/1 numbers; True / non-zero = real token.
        x: shape (b, l, d)
    """
    if x.dim() != 3:
        raise ValueError(f"token states must have shape (b, l, d), got {tuple(x.shape)}")
    if mask is None:
        return torch.ones(x.shape[:2], dtype=torch.bool, device=x.device)
    if tuple(mask.shape) != tuple(x.shape[:2]):
        raise ValueError(f"mask shape {tuple(mask.shape)} does not match token states {tuple(x.shape)}")
    mask = mask.to(x.device)
    return mask if mask.dtype == torch.bool else mask != 0


def masked_mean(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Mean over the real tokens of each snippet; an all-padding snippet gives zeros.

    Args:
        x: shape (b, l, d)
        mask: shape (b, l) or None
    Returns:
        shape (b, d)
    """
    m = as_mask(mask, x)
    total = torch.where(m.unsqueeze(-1), x, torch.zeros((), dtype=x.dtype, device=x.device)).sum(dim=1)
    count = m.sum(dim=1, keepdim=True).clamp(min=1).to(x.dtype)
    return total / count


def first_token(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """The first *real* token of each snippet (the CLS token, also under left padding).

    Args:
        x: shape (b, l, d)
        mask: shape (b, l) or None
    Returns:
        shape (b, d)
    """
    m = as_mask(mask, x)
    idx = m.to(torch.uint8).argmax(dim=1)  # first True (0 when a row has none)
    return x[torch.arange(x.shape[0], device=x.device), idx]


def pool(x: torch.Tensor, mask: torch.Tensor | None, method: str) -> torch.Tensor:
    """Pool token states, or pass through an already pooled batch.

    Args:
        x: shape (b, l, d) token states, or (b, d) already pooled vectors (then mask must be None)
        mask: shape (b, l) or None
        method: "mean" or "cls"
    Returns:
        shape (b, d)
    """
    if x.dim() == 2:
        if mask is not None:
            raise ValueError("pooled input x of shape (b, d) takes mask=None")
        return x
    if method == "mean":
        return masked_mean(x, mask)
    if method == "cls":
        return first_token(x, mask)
    raise ValueError(f"unknown pooling {method!r} (mean, cls)")
