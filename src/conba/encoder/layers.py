"""The one layer loop over an encoder's layer list (:func:`conba.encoder.adapter.layers`), and the pieces
around it; which architectures it runs, how their layers are called and embedded: :mod:`conba.encoder.adapter`.

Glossary: b batch, l tokens, d hidden width.

Every forward conba runs itself goes through :func:`run_layers`: the plain (unpruned) pass
(:func:`dense_states`, ``Backbone.lower`` / ``upper``), SDTP hard pruning
(:mod:`conba.encoder.sdtp.pruned`), the soft training pass (:mod:`conba.prune.soft`), the ONNX export
segments (:mod:`conba.engine.onnx_export`) and the RTD generator (:mod:`conba.pretrain.rtd`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

from conba.encoder import adapter

# stage(i, hidden, mask) -> (hidden, mask), called before layer i (SDTP pruning changes the tokens)
Stage = Callable[[int, torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
Attention = Callable[[torch.Tensor, torch.dtype], "torch.Tensor | None"]


def supports_own_loop(backbone) -> bool:
    """True when conba can run (and prune, and export in segments) the backbone's layers itself."""
    return adapter.supports(backbone.model.config, "own-loop")


def require_own_loop(backbone, what: str) -> None:
    """One-line ConfigError naming the architecture when conba cannot run its layers itself."""
    adapter.require(backbone.model.config, "own-loop", what)


def extended_mask(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """(b, l) 0/1 -> additive (b, 1, 1, l) attention mask."""
    return (1.0 - mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min


def hard_mask(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor | None:
    """Additive mask for 0/1 ``mask`` (b, l); None when nothing is padded (the fast attention path)."""
    return None if bool(mask.all()) else extended_mask(mask, dtype)


def embed_input(backbone, input_ids: torch.Tensor) -> torch.Tensor:
    """Token + position embeddings. Args: input_ids: shape (b, l). Returns (b, l, d)."""
    return adapter.embed(backbone.model, input_ids)


def run_layer(layer, hidden: torch.Tensor, attn: torch.Tensor | None) -> torch.Tensor:
    """One encoder layer. Args: hidden: shape (b, l, d); attn: additive mask (b, 1, 1, l) or None."""
    return adapter.call_layer(layer, hidden, attn)


def run_layers(layers: Sequence | nn.ModuleList, hidden: torch.Tensor, mask: torch.Tensor, start: int = 0,
               end: int | None = None,
               *, stage: Stage | None = None, attention: Attention = hard_mask,
               layer_fn: Callable = run_layer) -> tuple[torch.Tensor, torch.Tensor]:
    """Run ``layers[start:end]`` on ``hidden``.

    Args:
        hidden: shape (b, l, d), the states entering layer ``start``
        mask: shape (b, l): 0/1 token mask, or keep weights when ``attention`` takes weights
        stage: called before each layer; may drop tokens (returns new hidden (b, k, d) and mask (b, k))
        attention: additive attention mask (b, 1, 1, l) (or None) from ``mask``; recomputed only when
            ``stage`` returns a new mask
        layer_fn: ``layer_fn(layer, hidden, attn)`` runs one layer (the ONNX export swaps in its own)
    Returns:
        (hidden, mask) after the last layer
    """
    end = len(layers) if end is None else end
    attn, seen = None, None
    for i in range(start, end):
        if stage is not None:
            hidden, mask = stage(i, hidden, mask)
        if mask is not seen:
            attn, seen = attention(mask, hidden.dtype), mask
        hidden = layer_fn(layers[i], hidden, attn)
    return hidden, mask


def dense_states(backbone, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """The backbone's final token states through conba's own layer loop: the same maths as the HF
    forward (bit-identical on BERT-family models), with a broadcast (b, 1, 1, l) mask, or none at all
    for batches without padding, and no pooler. Args: input_ids, attention_mask: (b, l). Returns (b, l, d)."""
    return run_layers(backbone.layers, embed_input(backbone, input_ids), attention_mask)[0]
