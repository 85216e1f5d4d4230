"""Narrower feed-forward blocks: structured pruning of a BERT/RoBERTa-family encoder's FFN neurons.

Glossary: b batch, l tokens, d hidden width, f feed-forward width (``intermediate_size``; MiniLM: 1536).

Each transformer layer's feed-forward block is ``out = W_o · gelu(W_i · x + b_i) + b_o`` with W_i (f, d)
and W_o (d, f): two thirds of a MiniLM layer's multiply-adds at d 384, f 1536. Keeping ``size`` of the
f neurons (rows of W_i and b_i, columns of W_o) cuts that part in proportion and leaves every shape the
rest of the model sees unchanged, so a student can be made narrower as well as shallower
(:func:`conba.train.distill.make_student`). Which neurons to keep: :func:`ffn_importance`, the mean
absolute activation of each neuron on sample code times the norm of its output column (how much it
moves the layer's output), as in first-order structured pruning of transformers.
"""

from __future__ import annotations

from typing import cast

import torch
from torch import nn

from conba.encoder import adapter
from conba.errors import ConfigError

__all__ = ["ffn_importance", "ffn_size", "narrow_ffn"]


def _blocks(hf_model: nn.Module) -> list[tuple[nn.Module, nn.Module]]:
    """(intermediate, output) of every layer (:func:`conba.encoder.adapter_bert.ffn_blocks`); a one-line
    error naming the architecture for encoders of another shape."""
    from conba.encoder.adapter_bert import ffn_blocks

    return ffn_blocks(hf_model)


def ffn_size(hf_model: nn.Module) -> int:
    """The feed-forward width f of the model's layers."""
    return adapter.ffn_width(hf_model.config)


def _sliced(linear: nn.Linear, index: torch.Tensor, dim: int) -> nn.Linear:
    """A copy of ``linear`` keeping the rows (dim 0: output features) or columns (dim 1: input features)
    ``index``."""
    weight = linear.weight.detach().index_select(dim, index).clone()
    out_f, in_f = weight.shape
    new = nn.Linear(in_f, out_f, bias=linear.bias is not None, dtype=weight.dtype, device=weight.device)
    with torch.no_grad():
        new.weight.copy_(weight)
        if linear.bias is not None:
            new.bias.copy_(linear.bias.detach() if dim == 1 else linear.bias.detach().index_select(0, index))
    new.train(linear.training)
    return new


def narrow_ffn(hf_model: nn.Module, size: int, keep: list[torch.Tensor] | None = None) -> nn.Module:
    """Cut every layer's feed-forward block to ``size`` neurons, in place; the config's
    ``intermediate_size`` follows. ``keep``: per layer, the neuron indices to keep (``size`` of them;
    default: the first ``size``, for a folder whose saved weights are loaded over it). A model already
    ``size`` wide is left as it is. Returns the model."""
    blocks = _blocks(hf_model)
    current = ffn_size(hf_model)
    if not 1 <= size <= current:
        raise ConfigError(f"feed-forward width must be in 1..{current} (the model's), got {size}")
    if size == current and keep is None:
        return hf_model
    if keep is not None and (len(keep) != len(blocks) or any(len(k) != size for k in keep)):
        raise ConfigError(f"narrow_ffn: need {len(blocks)} index lists of {size} neurons each")
    for i, (inter, output) in enumerate(blocks):
        index = torch.arange(size) if keep is None else torch.as_tensor(keep[i], dtype=torch.long).sort().values
        inter.dense = _sliced(cast(nn.Linear, inter.dense), index, 0)     # W_i (f, d) -> (size, d)
        output.dense = _sliced(cast(nn.Linear, output.dense), index, 1)   # W_o (d, f) -> (d, size)
    adapter.set_ffn_width(hf_model.config, size)
    return hf_model


@torch.no_grad()
def ffn_importance(backbone, codes: list[str], batch_size: int = 16) -> list[torch.Tensor]:
    """Per layer, a score (f,) for each feed-forward neuron: E_tokens |gelu(W_i x + b_i)_j| · ||W_o[:, j]||,
    the mean over the real (unpadded) tokens of ``codes`` run through ``backbone``."""
    if not codes:
        raise ConfigError("ffn_importance: no code to measure the neurons on")
    blocks = _blocks(backbone.model)
    sums = [torch.zeros(ffn_size(backbone.model)) for _ in blocks]
    mask_now: list[torch.Tensor] = []
    tokens = 0

    def hook(i: int):
        def record(_module, _inputs, act):  # act: (b, l, f) after the activation
            m = mask_now[0].unsqueeze(-1).to(act.dtype)   # (b, l, 1)
            sums[i].add_((act.abs() * m).sum(dim=(0, 1)).float())
        return record

    handles = [inter.register_forward_hook(hook(i)) for i, (inter, _) in enumerate(blocks)]
    was_training = backbone.training
    backbone.eval()
    try:
        for start in range(0, len(codes), batch_size):
            enc = backbone.tokenize(codes[start:start + batch_size])
            mask_now[:] = [enc["attention_mask"]]
            tokens += int(enc["attention_mask"].sum())
            backbone(enc["input_ids"], enc["attention_mask"])
    finally:
        for h in handles:
            h.remove()
        backbone.train(was_training)
    return [s / tokens * cast(nn.Linear, output.dense).weight.detach().float().norm(dim=0)
            for s, (_, output) in zip(sums, blocks)]
