"""SDTP stage 1: token saliency from the gradient of the contrastive task loss.

Glossary: b batch, l tokens, d hidden width.

For each pruning layer p, the hidden states h entering p (the output of the embeddings for p = 0,
of ``layers[p-1]`` otherwise) are captured with a forward hook and dL/dh with a full backward hook on
the same module; the saliency of a token is ``sum_d h[t, d] * dL/dh[t, d]`` (first-order Taylor
estimate of how the loss changes when the token's state is removed, up to sign). The loss is the
model's in-batch contrastive loss (supcon by default) on P×K batches of clone groups, with every
weight frozen; the earliest hooked state is made a leaf that requires grad, so no weight gradients
are computed.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import torch

from conba.engine.batching import pad_batch, pad_token_id, tokenize_ids
from conba.errors import ConfigError
from conba.train.losses import in_batch_loss

SALIENCY_MODES = ("abs", "signed", "neg")


class SaliencyHooks:
    """Forward + backward hooks that record h and dL/dh entering each pruning layer.

    Use as a context manager; after ``loss.backward()``, :meth:`saliency` gives (b, l) per layer.
    """

    def __init__(self, backbone, layers: Sequence[int]):
        if not layers:
            raise ConfigError("no layers to hook")
        self.layers = sorted(set(int(p) for p in layers))
        if self.layers[0] < 0 or self.layers[-1] >= len(backbone.layers):
            raise ConfigError(f"layers must be in 0..{len(backbone.layers) - 1}, got {self.layers}")
        self.backbone = backbone
        self.states: dict[int, torch.Tensor] = {}
        self.grads: dict[int, torch.Tensor] = {}
        self._handles: list = []

    def _module(self, p: int):
        return self.backbone.model.embeddings if p == 0 else self.backbone.layers[p - 1]

    def __enter__(self) -> SaliencyHooks:
        first = self.layers[0]
        for p in self.layers:
            module = self._module(p)
            self._handles.append(module.register_forward_hook(self._forward_hook(p, p == first)))
            self._handles.append(module.register_full_backward_hook(self._backward_hook(p)))
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()

    def _forward_hook(self, p: int, make_leaf: bool) -> Callable:
        def hook(module, inputs, output):
            is_tuple = isinstance(output, tuple)
            h = output[0] if is_tuple else output
            if make_leaf and not h.requires_grad:
                h = h.detach().requires_grad_(True)
                self.states[p] = h
                return (h, *output[1:]) if is_tuple else h
            self.states[p] = h
            return None
        return hook

    def _backward_hook(self, p: int) -> Callable:
        def hook(module, grad_input, grad_output):
            self.grads[p] = grad_output[0]
        return hook

    def saliency(self) -> dict[int, torch.Tensor]:
        """{layer: (b, l)} = sum over d of h * dL/dh, for the last backward pass."""
        missing = [p for p in self.layers if p not in self.grads or p not in self.states]
        if missing:
            raise RuntimeError(f"no gradient recorded for layers {missing}; call loss.backward() inside the hooks")
        return {p: (self.states[p].detach() * self.grads[p].detach()).sum(dim=-1) for p in self.layers}


def importance(saliency: torch.Tensor, mode: str = "abs") -> torch.Tensor:
    """Turn raw saliency into an importance to rank by: 'abs' |s| (default: the size of the loss change),
    'signed' s, 'neg' -s (removing the token would raise the loss)."""
    if mode == "abs":
        return saliency.abs()
    if mode == "signed":
        return saliency
    if mode == "neg":
        return -saliency
    raise ConfigError(f"unknown saliency mode {mode!r} ({', '.join(SALIENCY_MODES)})")


def batch_saliency(model, codes: Sequence[str], languages: Sequence[str], groups: Sequence[int],
                   layers: Sequence[int], temperature: float, loss: str = "supcon"
                   ) -> tuple[list[list[int]], dict[int, list[np.ndarray]]]:
    """Saliency of one P×K batch. Returns (token ids per snippet, {layer: per-snippet float32 arrays})."""
    backbone = model.backbone
    ids = tokenize_ids(backbone, codes)
    input_ids, mask = pad_batch(ids, pad_token_id(backbone.tokenizer))
    device = model.device
    lang_ids = model.head.language_ids(list(languages)).to(device)
    flags = [p.requires_grad for p in model.parameters()]
    for p in model.parameters():
        p.requires_grad_(False)
    try:
        with torch.enable_grad(), SaliencyHooks(backbone, layers) as hooks, warnings.catch_warnings():
            # the first hooked module has no input that requires grad; its hook firing on outputs is intended
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            emb = model.embed_tokens(input_ids.to(device), mask.to(device), lang_ids)
            task = in_batch_loss(emb, torch.as_tensor(list(groups), device=device), temperature, loss)
            task.backward()
            sal = hooks.saliency()
    finally:
        for p, f in zip(model.parameters(), flags):
            p.requires_grad_(f)
    out = {p: [s[row, : len(ids[row])].float().cpu().numpy() for row in range(len(ids))] for p, s in sal.items()}
    return ids, out
