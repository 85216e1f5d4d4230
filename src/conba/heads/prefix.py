"""Prefix control codes (CTRL): a learned language code in front of the backbone's input.

Glossary:
    b: batch size
    l: sequence length (padding included)
    d: model width (backbone hidden size)

CTRL conditions the whole network on a control code placed in front of the text. Here each language of
``HeadConfig.languages`` has a learned vector (code 0 is shared by unknown languages and snippets with no
language). It is inserted right after the first real token (the CLS token, also under left padding) of
the backbone's embedding-layer output (word + position embeddings after their LayerNorm), as one extra
attended position with no position embedding of its own, so the token positions do not shift and the
backbone's position table (max_length) still fits. Every layer attends to it; after the last layer its
state is removed again, so the head pools exactly the snippet's own tokens, now conditioned on the code.

The codes live in the head (``Head.prefix``, saved in head.safetensors) and start as N(0, 0.02²)
vectors (BERT's initializer range), so a fresh prefix model is close to, not equal to, the model
without codes. They need the backbone's layers run by conba (BERT/RoBERTa family, ``Backbone.layers``):
the ONNX engines and SDTP pruning refuse prefix models (``require_no_prefix``).
"""

from __future__ import annotations

import torch
from torch import nn

PREFIX_INIT_STD = 0.02


class PrefixCodes(nn.Module):
    """One learned d-vector per language (+ the shared code 0), inserted after CLS."""

    def __init__(self, num_languages: int, dim: int) -> None:
        super().__init__()
        self.codes = nn.Embedding(num_languages + 1, dim)
        nn.init.normal_(self.codes.weight, std=PREFIX_INIT_STD)

    def _positions(self, mask: torch.Tensor) -> torch.Tensor:
        """Where the code goes in each row: one after the first real token, shape (b,)."""
        return (mask != 0).to(torch.uint8).argmax(dim=1) + 1

    def insert(self, hidden: torch.Tensor, mask: torch.Tensor,
               lang_ids: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """Insert each row's code after its first real token.

        Args:
            hidden: shape (b, l, d) embedding-layer output
            mask: shape (b, l), 1 / True = real token
            lang_ids: shape (b,) code ids, or None (every row uses the shared code 0)
        Returns:
            hidden: shape (b, l + 1, d); mask: shape (b, l + 1), the code position marked real
        """
        b, l, _ = hidden.shape
        if lang_ids is None:
            lang_ids = torch.zeros(b, dtype=torch.long, device=hidden.device)
        lang_ids = torch.as_tensor(lang_ids, dtype=torch.long).to(self.codes.weight.device)
        if tuple(lang_ids.shape) != (b,):
            raise ValueError(f"lang_ids must have shape ({b},), got {tuple(lang_ids.shape)}")
        pos = self._positions(mask).unsqueeze(1)  # (b, 1)
        j = torch.arange(l + 1, device=hidden.device).unsqueeze(0)  # (1, l + 1)
        src = (j - (j > pos).long()).clamp(max=max(l - 1, 0))  # (b, l + 1) source position
        at_code = j == pos  # (b, l + 1)
        code = self.codes(lang_ids).to(device=hidden.device, dtype=hidden.dtype)  # (b, d)
        gathered = hidden.gather(1, src.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))
        new_hidden = torch.where(at_code.unsqueeze(-1), code.unsqueeze(1), gathered)
        new_mask = torch.where(at_code, torch.ones((), dtype=mask.dtype, device=mask.device), mask.gather(1, src))
        return new_hidden, new_mask

    def remove(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Drop the code position again.

        Args:
            hidden: shape (b, l + 1, d) states of a sequence made by ``insert``
            mask: shape (b, l), the mask *before* ``insert``
        Returns:
            shape (b, l, d)
        """
        pos = self._positions(mask).unsqueeze(1)  # (b, 1)
        i = torch.arange(mask.shape[1], device=hidden.device).unsqueeze(0)  # (1, l)
        src = i + (i >= pos).long()  # (b, l)
        return hidden.gather(1, src.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))


def _require_layers(backbone) -> None:
    """Prefix codes enter at the embedding layer: conba must run the backbone's layers itself."""
    backbone.require("own-loop", "prefix control codes (use control_codes offset)")


def run_prefixed(backbone, prefix: PrefixCodes, hidden: torch.Tensor, attention_mask: torch.Tensor,
                 lang_ids: torch.Tensor | None) -> torch.Tensor:
    """Every backbone layer on embedding-layer states with the code inserted; the code state removed.

    Args:
        backbone: a ``conba.encoder.Backbone``
        hidden: shape (b, l, d), the embedding-layer output (``backbone.lower(ids, mask, 0)``)
        attention_mask: shape (b, l)
        lang_ids: shape (b,) or None
    Returns:
        final token states, shape (b, l, d)
    """
    _require_layers(backbone)
    h, m = prefix.insert(hidden, attention_mask, lang_ids)
    h = backbone.run_layers(h, m.long(), 0, backbone.num_layers)
    return prefix.remove(h, attention_mask)


def prefixed_states(backbone, prefix: PrefixCodes, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    lang_ids: torch.Tensor | None) -> torch.Tensor:
    """The backbone's final token states with the language code inserted after CLS.

    Args:
        input_ids, attention_mask: shape (b, l)
        lang_ids: shape (b,) or None
    Returns:
        shape (b, l, d)
    """
    _require_layers(backbone)
    return run_prefixed(backbone, prefix, backbone.lower(input_ids, attention_mask, 0), attention_mask, lang_ids)


def require_no_prefix(head, what: str) -> None:
    """Raise ValueError when ``head`` has prefix control codes, which ``what`` cannot run."""
    if getattr(head, "prefix", None) is not None:
        raise ValueError(f"{what} does not support prefix control codes (head code_mode "
                         f"{head.config.code_mode!r}); encode with engine='torch' and no SDTP pruner, "
                         f"or train with control_codes offset")
