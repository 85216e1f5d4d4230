"""Baseline heads: "none" (pooling only) and "linear" (pooling then one Linear layer).

Glossary:
    b: batch size
    l: sequence length (padding included)
    d: model width (``HeadConfig.dim``)
"""

from __future__ import annotations

import torch
from torch import nn

from conba.heads.base import Head
from conba.heads.config import HeadConfig
from conba.heads.pooling import pool


class PoolingHead(Head):
    """kind="none": masked-mean (or first-token) pooling, no parameters; out_dim = d."""

    def __init__(self, config: HeadConfig) -> None:
        super().__init__(config)
        if config.kind != "none":
            raise ValueError(f"PoolingHead needs kind 'none', got {config.kind!r}")

    @property
    def needs_tokens(self) -> bool:
        return False

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None,
                lang_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Pool token states (lang_ids is ignored).

        Args:
            x: shape (b, l, d) token states, or (b, d) pooled vectors with mask=None
            mask: shape (b, l), True / 1 = real token; None = no padding
            lang_ids: ignored
        Returns:
            shape (b, d)
        """
        return pool(x, mask, self.config.pooling)


class LinearHead(Head):
    """kind="linear": pooling then Linear(d, out_dim), initialised to the identity when out_dim == d."""

    def __init__(self, config: HeadConfig) -> None:
        super().__init__(config)
        if config.kind != "linear":
            raise ValueError(f"LinearHead needs kind 'linear', got {config.kind!r}")
        self.fc = nn.Linear(config.dim, config.resolved_out_dim)
        if config.resolved_out_dim == config.dim:
            with torch.no_grad():
                self.fc.weight.copy_(torch.eye(config.dim))
                self.fc.bias.zero_()

    @property
    def needs_tokens(self) -> bool:
        return False

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None,
                lang_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Pool token states, then the linear map (lang_ids is ignored).

        Args:
            x: shape (b, l, d) token states, or (b, d) pooled vectors with mask=None
            mask: shape (b, l), True / 1 = real token; None = no padding
            lang_ids: ignored
        Returns:
            shape (b, out_dim)
        """
        return self.fc(pool(x, mask, self.config.pooling))
