"""Replaced-token detection (ELECTRA, as used by CodeBERT): a small generator MLM fills the masked
positions with samples, the backbone as discriminator labels every token original or replaced.

Glossary: b batch, l tokens, m chosen positions, d backbone width, g generator width, V vocabulary.

The generator shares the backbone's embedding layer (word, position and type embeddings, as in
ELECTRA) and its tied decoder; its own body is a narrower stack of BERT layers (width
``generator_size`` × d) behind a linear projection from d to g. The discriminator is the backbone
plus a two-layer token-classification head. Loss = generator MLM + λ · discriminator BCE (λ = 50).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from conba.encoder import adapter
from conba.encoder.layers import extended_mask, run_layers
from conba.pretrain.mlm import MLMHead, mlm_loss


def generator_shape(width: int, size: float) -> tuple[int, int]:
    """(hidden width g, attention heads) of a generator ``size`` times as wide as the backbone."""
    g = max(16, int(round(width * size / 16.0)) * 16)
    heads = max(1, g // 64)
    return g, heads


class Generator(nn.Module):
    """A small MLM over the backbone's (shared) embedding layer."""

    def __init__(self, backbone: nn.Module, size: float = 0.25, layers: int = 0):
        super().__init__()
        from transformers import BertConfig, BertModel

        cfg = backbone.config
        d = adapter.hidden_size(cfg)
        g, heads = generator_shape(d, size)
        body = BertConfig(vocab_size=2, hidden_size=g, num_hidden_layers=layers or adapter.num_layers(cfg),
                          num_attention_heads=heads, intermediate_size=4 * g, type_vocab_size=1,
                          max_position_embeddings=adapter.position_table(cfg))
        self.width = g
        self.project = nn.Linear(d, g) if g != d else nn.Identity()
        self.encoder = BertModel(body, add_pooling_layer=False).encoder
        hf: Any = backbone  # a transformers PreTrainedModel
        self.head = MLMHead(g, hf.get_input_embeddings())
        self._backbone = [backbone]

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Args: input_ids, attention_mask: shape (b, l). Returns hidden states (b, l, g)."""
        emb = adapter.embed(self._backbone[0], input_ids)
        hidden = self.project(emb)
        return run_layers(self.encoder.layer, hidden, attention_mask, attention=extended_mask)[0]


class DiscriminatorHead(nn.Module):
    """dense -> GELU -> one logit per token (ELECTRA's discriminator head)."""

    def __init__(self, width: int):
        super().__init__()
        self.dense = nn.Linear(width, width)
        self.out = nn.Linear(width, 1)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        """Args: hidden: shape (b, l, d). Returns logits (b, l)."""
        return self.out(F.gelu(self.dense(hidden))).squeeze(-1)


def generator_step(generator: Generator, masked_ids: torch.Tensor, attention_mask: torch.Tensor,
                   labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Generator MLM loss and one sampled token per chosen position (m,), drawn from its softmax."""
    hidden = generator(masked_ids, attention_mask)
    loss, logits = mlm_loss(generator.head, hidden, labels)
    with torch.no_grad():
        if logits.shape[0] == 0:
            sampled = logits.new_zeros((0,), dtype=torch.long)
        else:
            sampled = torch.multinomial(torch.softmax(logits.detach().float(), dim=-1), 1).squeeze(-1)
    return loss, sampled


def discriminator_loss(logits: torch.Tensor, labels: torch.Tensor,
                       attention_mask: torch.Tensor) -> tuple[torch.Tensor, float]:
    """Mean BCE over every real (non-padding) token, and the accuracy of logit > 0 there.

    Args: logits, labels, attention_mask: shape (b, l).
    """
    real = attention_mask.bool()
    x, y = logits[real].float(), labels[real].float()
    loss = F.binary_cross_entropy_with_logits(x, y)
    accuracy = float(((x > 0).float() == y).float().mean()) if y.numel() else 0.0
    return loss, accuracy
