"""Backbone adapter, BERT family: a BERT/RoBERTa layer's insides (the ONNX export's written-out layer,
layer-wise distillation's attention relations, the feed-forward blocks that ``ffn_size`` narrows).

Glossary: b batch, l tokens, d hidden width, h attention heads, e head width (d = h * e).

Part of the backbone adapter (:mod:`conba.encoder.adapter`): the only other module that knows a BERT
layer's insides (``attention.self.{query,key,value}``, ``attention.output``, ``intermediate``, ``output``).
"""

from __future__ import annotations

import math
from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from conba.errors import ConfigError

MASKED = -1e9  # score of a padding key: exp() is 0 in float32, and finite, so no NaN reaches a gradient


def is_bert_layer(layer) -> bool:
    """A BERT/RoBERTa-style layer (attention.self.{query,key,value}, attention.output, intermediate, output)."""
    att = getattr(layer, "attention", None)
    sa = getattr(att, "self", None)
    return (all(hasattr(sa, n) for n in ("query", "key", "value")) and hasattr(att, "output")
            and hasattr(layer, "intermediate") and hasattr(layer, "output"))


def bert_layer(layer, hidden: torch.Tensor, ext: torch.Tensor, heads: int) -> torch.Tensor:
    """The same maths as a BERT layer, written as the classic graph ONNX Runtime fuses into one
    Attention op (scores = QK^T / sqrt(d_head) + mask). Args: hidden: (b, l, d); ext: (b, 1, 1, l)."""
    sa = layer.attention.self
    d = hidden.shape[-1]
    d_head = d // heads

    def split(x: torch.Tensor) -> torch.Tensor:
        return x.view(x.size()[:-1] + (heads, d_head)).permute(0, 2, 1, 3)

    q, k, v = split(sa.query(hidden)), split(sa.key(hidden)), split(sa.value(hidden))
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d_head) + ext
    context = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).contiguous()
    context = context.view(context.size()[:-2] + (d,))
    attn_out = layer.attention.output(context, hidden)
    return layer.output(layer.intermediate(attn_out), attn_out)


def attention_relations(layer, hidden: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log attention distributions and log value relations of a BERT layer on its input ``hidden`` (b, l, d).

    Returns two tensors of shape (b, h, l, l), log-softmaxed over the keys (padding keys at ~-1e9)."""
    attn = layer.attention.self
    h, e = attn.num_attention_heads, attn.attention_head_size
    b, n, _ = hidden.shape
    q = attn.query(hidden).view(b, n, h, e)
    k = attn.key(hidden).view(b, n, h, e)
    v = attn.value(hidden).view(b, n, h, e)
    keys = attention_mask.bool()[:, None, None, :]  # (b, 1, 1, l)
    scale = e ** -0.5
    scores = torch.einsum("bqhe,bkhe->bhqk", q, k) * scale
    values = torch.einsum("bqhe,bkhe->bhqk", v, v) * scale
    return (F.log_softmax(scores.masked_fill(~keys, MASKED), dim=-1),
            F.log_softmax(values.masked_fill(~keys, MASKED), dim=-1))


def ffn_blocks(model: nn.Module) -> list[tuple[nn.Module, nn.Module]]:
    """(intermediate, output) of every layer, each holding its ``dense`` Linear: W_i (f, d), W_o (d, f)."""
    from conba.encoder import adapter

    config = getattr(model, "config", None)
    if config is None:
        raise ConfigError(f"feed-forward narrowing supports BERT/RoBERTa-family backbones; not {type(model).__name__}")
    adapter.require(config, "ffn", "feed-forward narrowing")
    return [(cast(nn.Module, layer.intermediate), cast(nn.Module, layer.output)) for layer in adapter.layers(model)]
