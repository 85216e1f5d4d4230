"""Offset language control codes (the CTRL idea) added to the ConbaLayer control weight.

Glossary:
    b: batch size
    d: model width
    c: control-code width (``HeadConfig.code_dim``)

Code 0 is the shared code (unknown language, or no language given); the languages of
``HeadConfig.languages`` get codes 1..len(languages). The effective control weight of a snippet is

    control_weight + W · code(lang)          shape (b, d)

with ``W`` initialised to zero, so at init a head with codes computes exactly what the same head
without codes computes. The ids come from ``conba.heads.base.language_ids`` (also the prefix codes').
"""

from __future__ import annotations

import torch
from torch import nn


class ControlCodes(nn.Module):
    """Learned per-language offsets to the control weight."""

    def __init__(self, num_languages: int, dim: int, code_dim: int) -> None:
        super().__init__()
        self.codes = nn.Embedding(num_languages + 1, code_dim)
        self.W = nn.Linear(code_dim, dim, bias=False)
        nn.init.zeros_(self.W.weight)

    def forward(self, lang_ids: torch.Tensor | None, batch_size: int) -> torch.Tensor:
        """Offsets W · code(lang).

        Args:
            lang_ids: shape (b,) LongTensor, or None (every snippet uses the shared code 0)
            batch_size: b (used when lang_ids is None)
        Returns:
            shape (b, d)
        """
        device = self.codes.weight.device
        if lang_ids is None:
            lang_ids = torch.zeros(batch_size, dtype=torch.long, device=device)
        else:
            lang_ids = torch.as_tensor(lang_ids, dtype=torch.long).to(device)
            if tuple(lang_ids.shape) != (batch_size,):
                raise ValueError(f"lang_ids must have shape ({batch_size},), got {tuple(lang_ids.shape)}")
        return self.W(self.codes(lang_ids))

    def shared_offset(self) -> torch.Tensor:
        """W · code(0), shape (d,)."""
        return self.W(self.codes.weight[0])


def effective_control_weight(control_weight: torch.Tensor, codes: ControlCodes | None,
                             lang_ids: torch.Tensor | None, batch_size: int) -> torch.Tensor:
    """control_weight (+ W · code(lang) when codes are on).

    Args:
        control_weight: shape (d,)
        lang_ids: shape (b,) or None
    Returns:
        shape (b, d)
    """
    if codes is None:
        return control_weight.expand(batch_size, -1)
    return control_weight + codes(lang_ids, batch_size)
