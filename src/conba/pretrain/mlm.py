"""Masked language modelling on top of any Hugging Face encoder: a BERT-style prediction head whose
decoder is tied to the encoder's input word embeddings.

Glossary: b batch, l tokens, m chosen (masked) positions, d width, V vocabulary size.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from conba.pretrain.masking import IGNORE


class MLMHead(nn.Module):
    """dense -> GELU -> LayerNorm -> tied decoder (+ bias), as in BERT's ``cls.predictions``.

    The word embedding is shared, not owned: it is kept outside the module's parameters so it is
    saved (and optimised) once, with the backbone.
    """

    def __init__(self, in_dim: int, word_embeddings: nn.Embedding):
        super().__init__()
        d = word_embeddings.embedding_dim
        self.dense = nn.Linear(in_dim, d)
        self.norm = nn.LayerNorm(d, eps=1e-12)
        self.bias = nn.Parameter(torch.zeros(word_embeddings.num_embeddings))
        self._embeddings = [word_embeddings]

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        """Args: hidden: shape (m, in_dim). Returns logits (m, V)."""
        x = self.norm(F.gelu(self.dense(hidden)))
        weight = self._embeddings[0].weight
        return x.to(weight.dtype) @ weight.t() + self.bias.to(weight.dtype)


def mlm_loss(head: MLMHead, hidden: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy at the chosen positions only (the head runs on those m rows, not on all b·l).

    Args: hidden: shape (b, l, d); labels: shape (b, l), -100 where not chosen.
    Returns (loss, logits (m, V)); the loss is 0 (with a graph) when nothing was chosen.
    """
    chosen = labels != IGNORE
    if not bool(chosen.any()):
        return hidden.sum() * 0.0, hidden.new_zeros((0, head.bias.numel()))
    logits = head(hidden[chosen])
    return F.cross_entropy(logits.float(), labels[chosen]), logits
