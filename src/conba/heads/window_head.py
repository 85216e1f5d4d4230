"""Window heads: one vector from the sequence of a program's window vectors.

Glossary:
    b: batch size
    f: windows per item (the windows of a long snippet, or the functions of a file, in source
       order; padding included). The code once said fragments; the saved files keep that name
       (``fragment_config.json``, ``fragment_head.safetensors``: file-format names, :mod:`conba.model.persist`)
    d: model width (``WindowHeadConfig.dim``)

The backbone encodes each window once (``conba_research.window_encode.encode_windows``); a window
head reads x (b, f, d) with a mask (b, f) and returns (b, d). Readers (``WindowHeadConfig.reader``):

* ``conba``: the seed ConbaLayer as a recurrence over f (:class:`conba_research.heads.seed_layer.ConbaLayer`,
  mode "tokens", diagonal A):  state_t = A · state_{t-1} + B · x_t,
  out_t = C · (swish(selective_fc(x_t)) ⊙ x_t ⊙ control_weight + state_t ⊙ feedback_weight),
  y = mean_t x_t + fc2(mean_t out_t) with fc2 zero at init. ``use_control`` / ``use_feedback`` /
  ``use_state`` are the ablations (no control_weight, no feedback_weight, no state).
* ``conba-scan``: the S6 selective scan over f (:class:`conba_research.heads.selective_scan.ConbaScan`).
* ``mean``: the mean of the windows weighted by their content tokens (``weight``; uniform without),
  what ``encode(max_windows=f)`` returns; ``max``: the element-wise max; ``first``: the first window.
* ``linear``: ``mean`` followed by a trained d × d map (identity at init).
* ``attention``: attention pooling, softmax over f of (x_t · q) / sqrt(d) + log weight_t, with a
  learned query q (zero at init: the ``mean``).

With ``single="identity"`` (default), an item with one window is returned as that window, so
a trained head changes only the vectors of items longer than one window and maps them into the
space of the single-window ones; ``single="head"`` runs the head on every item.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import nn

from conba.errors import ConfigError
from conba.heads.config import HeadConfig
from conba.heads.factory import build_head
from conba.heads.pooling import first_token
from conba.utils.config_keys import JsonConfig
from conba.utils.saved import load_built, save_module

READERS: tuple[str, ...] = ("conba", "conba-scan", "mean", "max", "first", "linear", "attention")
TRAINED: tuple[str, ...] = ("conba", "conba-scan", "linear", "attention")
SINGLES: tuple[str, ...] = ("identity", "head")
CONFIG_NAME = "fragment_config.json"  # file-format names, kept: folders saved before load unchanged
WEIGHTS_NAME = "fragment_head.safetensors"


@dataclass
class WindowHeadConfig(JsonConfig):
    """Which window reader, its width, and the ConbaLayer switches (readers conba, conba-scan)."""

    config_name: ClassVar[str] = "window head config"

    reader: str = "linear"  # the shipped read-out; saved configs always name their reader
    dim: int = 384
    use_control: bool = True
    use_feedback: bool = True
    use_state: bool = True
    state_dim: int = 16
    single: str = "identity"

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        if self.reader not in READERS:
            raise ConfigError(f"WindowHeadConfig.reader must be one of {list(READERS)}, got {self.reader!r}")
        if self.single not in SINGLES:
            raise ConfigError(f"WindowHeadConfig.single must be one of {list(SINGLES)}, got {self.single!r}")
        for name in ("dim", "state_dim"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError(f"WindowHeadConfig.{name} must be a positive int, got {v!r}")
        for name in ("use_control", "use_feedback", "use_state"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"WindowHeadConfig.{name} must be a bool, got {getattr(self, name)!r}")

    def head_config(self) -> HeadConfig:
        """The HeadConfig of the inner ConbaLayer / conba-scan (over f as its sequence)."""
        return HeadConfig(kind=self.reader, dim=self.dim, mode="tokens", state_dim=self.state_dim,
                          use_control=self.use_control, use_feedback=self.use_feedback, use_state=self.use_state)


def _check(x: torch.Tensor, mask: torch.Tensor | None,
           weight: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """(mask as bool (b, f), weight (b, f): the given one, or 1 per real window)."""
    if x.dim() != 3:
        raise ValueError(f"window vectors must have shape (b, f, d), got {tuple(x.shape)}")
    m = torch.ones(x.shape[:2], dtype=torch.bool, device=x.device) if mask is None else mask.to(x.device).bool()
    if tuple(m.shape) != tuple(x.shape[:2]):
        raise ValueError(f"mask shape {tuple(m.shape)} does not match windows {tuple(x.shape)}")
    if weight is None:
        w = m.to(x.dtype)
    else:
        if tuple(weight.shape) != tuple(x.shape[:2]):
            raise ValueError(f"weight shape {tuple(weight.shape)} does not match windows {tuple(x.shape)}")
        w = weight.to(x.device, x.dtype) * m
    return m, w


class WindowHead(nn.Module):
    """Window vectors (b, f, d) with mask (b, f) -> (b, d). See the module docstring."""

    def __init__(self, config: WindowHeadConfig) -> None:
        super().__init__()
        config.validate()
        self.config = WindowHeadConfig.from_dict(config.to_dict())
        d = config.dim
        self.inner: nn.Module | None = None
        self.linear: nn.Linear | None = None
        self.query: nn.Parameter | None = None
        if config.reader in ("conba", "conba-scan"):  # the research suite's heads (conba.utils.head_kinds)
            self.inner = build_head(config.head_config())
        elif config.reader == "linear":
            self.linear = nn.Linear(d, d)
            with torch.no_grad():
                self.linear.weight.copy_(torch.eye(d))
                self.linear.bias.zero_()
        elif config.reader == "attention":
            self.query = nn.Parameter(torch.zeros(d))

    @property
    def trainable(self) -> bool:
        return self.config.reader in TRAINED

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None,
                weight: torch.Tensor | None = None) -> torch.Tensor:
        """Args:
            x: shape (b, f, d) window vectors in source order
            mask: shape (b, f), True = a real window (None: all real); each item needs one
            weight: shape (b, f) content tokens per window, or None (equal weights)
        Returns:
            shape (b, d), not normalised
        """
        m, w = _check(x, mask, weight)
        if self.config.single == "head":
            return self._read(x, m, w)
        # one window: returned as it is; the head runs only on the others, cut to their longest
        out = first_token(x, m)
        many = m.sum(dim=1) > 1
        if bool(many.any()):
            pos = torch.arange(x.shape[1], device=x.device)
            f = int(torch.where(m[many], pos, -1).amax()) + 1
            out = out.clone()
            out[many] = self._read(x[many, :f], m[many, :f], w[many, :f]).to(out.dtype)
        return out

    def _read(self, x: torch.Tensor, m: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        reader = self.config.reader
        if reader in ("conba", "conba-scan"):
            assert self.inner is not None  # built for these readers in __init__
            return self.inner(x, m)
        if reader == "first":
            return first_token(x, m)
        if reader == "max":
            return x.masked_fill(~m[..., None], float("-inf")).amax(dim=1).nan_to_num(0.0, neginf=0.0)
        if reader == "attention":
            logits = torch.einsum("bfd,d->bf", x, self.query) / math.sqrt(x.shape[-1])
            logits = logits + torch.log(w.clamp_min(1e-9))
            a = torch.softmax(logits.masked_fill(~m, float("-inf")), dim=1).nan_to_num(0.0)
            return torch.einsum("bf,bfd->bd", a, x)
        mean = torch.einsum("bf,bfd->bd", w, x) / w.sum(dim=1, keepdim=True).clamp_min(1e-9)
        return self.linear(mean) if self.linear is not None else mean


def build_window_head(config: WindowHeadConfig | dict[str, Any]) -> WindowHead:
    return WindowHead(config if isinstance(config, WindowHeadConfig) else WindowHeadConfig.from_dict(config))


def save_window_head(head: WindowHead, directory: str | os.PathLike[str]) -> None:
    """Write ``fragment_config.json`` and ``fragment_head.safetensors`` into ``directory``."""
    save_module(directory, head, head.config, CONFIG_NAME, WEIGHTS_NAME, {"conba_fragment_reader": head.config.reader})


def load_window_head(directory: str | os.PathLike[str], device: str | torch.device = "cpu") -> WindowHead:
    """Restore a window head saved by :func:`save_window_head` (bit-exact)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"window head directory not found: {directory}")
    return load_built(directory, WindowHeadConfig, CONFIG_NAME, WEIGHTS_NAME, build_window_head).to(device)
