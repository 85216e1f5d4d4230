"""A backbone's own read-out: token states -> one vector, as the embedding model defines it.

Glossary: b batch, l tokens, d hidden width, e read-out width.

The read-out of a sentence-transformers model (its ``modules.json``: Pooling, Dense, Normalize, and
``truncate_dim`` and ``prompts`` from ``config_sentence_transformers.json``), or of a bare model whose
pooling is not conba's masked mean (decoders: the last token; ``--pooling``). Saved in a conba model
folder as ``readout/readout_config.json`` + ``readout/readout.safetensors`` (the Dense weights), never a
pickle, so a saved model loads back bit-exact. Backbones that pool by the mean without anything else
have no read-out (``None``): every model saved before read-outs existed keeps its fingerprint.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch
from torch import nn

from conba.constants import POOLINGS
from conba.errors import ConfigError
from conba.utils.config_keys import JsonConfig

ACTIVATIONS = ("Identity", "Tanh", "ReLU", "GELU", "SiLU", "Sigmoid", "LeakyReLU")
DOCUMENT_PROMPTS = ("document", "passage", "corpus")  # sentence-transformers' encode_document() names
QUERY_PROMPTS = ("query",)
CONFIG_NAME = "readout_config.json"
WEIGHTS_NAME = "readout.safetensors"


@dataclass
class ReadoutConfig(JsonConfig):
    """``pooling``: one mode or several (concatenated, as sentence-transformers does); ``dense``: one
    entry per Dense layer, {in, out, bias, activation, residual}; ``prompts``: name -> text;
    ``default_prompt_name``: the prompt ``encode`` uses when none is named."""

    config_name: ClassVar[str] = "read-out config"
    pooling: list[str] = field(default_factory=lambda: ["mean"])
    include_prompt: bool = True
    dense: list[dict[str, Any]] = field(default_factory=list)
    normalize: bool = False
    truncate_dim: int | None = None
    prompts: dict[str, str] = field(default_factory=dict)
    default_prompt_name: str | None = None
    source: str = ""  # where it was read from (provenance; "--pooling" for an override)

    def checked(self) -> ReadoutConfig:
        if isinstance(self.pooling, str):
            self.pooling = [self.pooling]
        bad = [p for p in self.pooling if p not in POOLINGS]
        if not self.pooling or bad:
            raise ConfigError(f"pooling must be one or more of {', '.join(POOLINGS)}, got {self.pooling!r}")
        for i, layer in enumerate(self.dense):
            if set(layer) - {"in", "out", "bias", "activation", "residual"} or not {"in", "out"} <= set(layer):
                raise ConfigError(f"dense layer {i}: keys in, out (and bias, activation, residual), "
                                  f"got {sorted(layer)}")
            if layer.get("activation", "Identity") not in ACTIVATIONS:
                raise ConfigError(f"dense layer {i}: activation {layer.get('activation')!r} is not one of "
                                  f"{', '.join(ACTIVATIONS)}")
        if self.truncate_dim is not None and (not isinstance(self.truncate_dim, int) or self.truncate_dim < 1):
            raise ConfigError(f"truncate_dim must be a positive whole number or null, got {self.truncate_dim!r}")
        if not isinstance(self.prompts, dict) or any(not isinstance(v, str) for v in self.prompts.values()):
            raise ConfigError("prompts must map names to texts")
        if self.default_prompt_name is not None and self.default_prompt_name not in self.prompts:
            raise ConfigError(f"default_prompt_name {self.default_prompt_name!r} is not one of the prompts "
                              f"({', '.join(self.prompts) or 'none'})")
        return self

    def document_prompt(self) -> str:
        """The prompt conba's snippets (documents) get: the default prompt, else a document prompt."""
        if self.default_prompt_name:
            return self.prompts[self.default_prompt_name]
        return next((self.prompts[n] for n in DOCUMENT_PROMPTS if n in self.prompts), "")

    def query_prompt_name(self) -> str | None:
        return next((n for n in QUERY_PROMPTS if n in self.prompts), None)

    def describe(self) -> str:
        parts = ["+".join(self.pooling) + " pooling"] + [f"Dense {d['in']}->{d['out']}" for d in self.dense]
        if self.normalize:
            parts.append("Normalize")
        if self.truncate_dim:
            parts.append(f"truncate to {self.truncate_dim}")
        return ", ".join(parts)


class Readout(nn.Module):
    """Pooling (with the prompt tokens left out when ``include_prompt`` is False), Dense layers,
    Normalize, Matryoshka truncation: sentence-transformers' maths, step for step."""

    def __init__(self, config: ReadoutConfig, width: int):
        super().__init__()
        self.config = config.checked()
        self.width = width
        self.prompt_length = 0  # tokens of the prompt (with the leading special tokens): set by encode()
        self.dense = nn.ModuleList()
        self.residual = nn.ModuleDict()
        for i, spec in enumerate(config.dense):
            self.dense.append(nn.Linear(int(spec["in"]), int(spec["out"]), bias=bool(spec.get("bias", True))))
            if spec.get("residual") and spec["in"] != spec["out"]:
                self.residual[str(i)] = nn.Linear(int(spec["in"]), int(spec["out"]), bias=False)
        self._acts = [getattr(nn, spec.get("activation", "Identity"))() for spec in config.dense]

    @property
    def out_dim(self) -> int:
        dim = int(self.config.dense[-1]["out"]) if self.config.dense else self.width * len(self.config.pooling)
        return min(dim, self.config.truncate_dim or dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Args: x: (b, l, d) token states; mask: (b, l) 0/1 or bool. Returns (b, e)."""
        mask = mask.long()
        original = mask
        if not self.config.include_prompt and self.prompt_length:
            mask = _without_prompt(mask, self.prompt_length)
        y = torch.cat([_pool(x, mask, original, mode) for mode in self.config.pooling], dim=-1)
        for i, (linear, act) in enumerate(zip(self.dense, self._acts)):
            out = act(linear(y))
            if self.config.dense[i].get("residual"):
                out = out + (self.residual[str(i)](y) if str(i) in self.residual else y)
            y = out
        if self.config.normalize:
            y = nn.functional.normalize(y, p=2, dim=1)
        if self.config.truncate_dim:
            y = y[..., : self.config.truncate_dim]
        return y


def _without_prompt(mask: torch.Tensor, length: int) -> torch.Tensor:
    """``mask`` with the first ``length`` real tokens of each row set to 0 (left padding counted)."""
    pad = mask.to(torch.int32).argmax(dim=1)
    positions = torch.arange(mask.shape[1], device=mask.device).unsqueeze(0)
    return mask.masked_fill(positions < (pad + length).unsqueeze(1), 0)


def _pool(x: torch.Tensor, mask: torch.Tensor, original: torch.Tensor, mode: str) -> torch.Tensor:
    """One pooling mode. Args: x: (b, l, d); mask, original: (b, l) 0/1. Returns (b, d)."""
    acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    if mode == "cls":
        first = mask.to(torch.int).argmax(dim=1)
        return x[torch.arange(x.shape[0], device=x.device), first]
    if mode == "max":
        return x.masked_fill(mask.unsqueeze(-1) == 0, float("-inf")).max(dim=1).values
    if mode in ("mean", "mean_sqrt_len_tokens"):
        m = mask.unsqueeze(-1).to(x.dtype)
        total = (x * m).sum(dim=1, dtype=acc)
        count = torch.clamp(m.sum(dim=1, dtype=acc), min=1e-9)
        return (total / (count if mode == "mean" else count.sqrt())).to(x.dtype)
    if mode == "weightedmean":
        weights = torch.arange(1, x.shape[1] + 1, device=x.device, dtype=acc).view(1, -1, 1)
        weights = weights - original.to(torch.int32).argmax(dim=1).view(-1, 1, 1)
        weighted = mask.unsqueeze(-1).to(acc) * weights
        return ((x * weighted).sum(dim=1) / torch.clamp(weighted.sum(dim=1), min=1e-9)).to(x.dtype)
    if mode == "lasttoken":
        seq = x.shape[1]
        values, index = mask.flip(1).max(1)
        index = torch.where(values == 0, seq - 1, index)
        rows = torch.arange(x.shape[0], device=x.device)
        return (x * mask.unsqueeze(-1).to(x.dtype))[rows, seq - index - 1]
    raise ConfigError(f"unknown pooling {mode!r} ({', '.join(POOLINGS)})")


def save_readout(readout: Readout, directory: str | os.PathLike[str]) -> None:
    """``readout_config.json`` + ``readout.safetensors`` (the Dense weights) in ``directory``."""
    from conba.utils.saved import save_module

    save_module(directory, readout, readout.config, CONFIG_NAME, WEIGHTS_NAME, {"conba_readout": "1"})


def load_readout(directory: str | os.PathLike[str], width: int) -> Readout:
    """The read-out saved by :func:`save_readout` (bit-exact)."""
    from conba.utils.saved import load_built

    return load_built(directory, ReadoutConfig, CONFIG_NAME, WEIGHTS_NAME, lambda config: Readout(config, width))
