"""SDTP token scorers: one small MLP per pruning layer, saved as ``prune/`` inside a model folder.

Glossary: b batch, l tokens, d hidden width, h = d // hidden_ratio scorer width.

Scorer: ``Linear(d, h) -> GELU -> Linear(h, 2)`` gives two logits per token, (drop, keep). The keep
score used for ranking and hard top-k is the log-odds ``s = logit_keep - logit_drop``; the keep
probability ``pi = softmax(logits)[keep] = sigmoid(s)`` is what the MSE term compares with the
normalised saliency.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import torch
from torch import nn

from conba.encoder.sdtp.config import CONFIG_NAME, PruneConfig
from conba.errors import ConfigError
from conba.utils.saved import load_state, read_config, save_module

WEIGHTS_NAME = "prune.safetensors"


class TokenScorer(nn.Module):
    """Linear(d, d/r) -> GELU -> Linear(d/r, 2): (drop, keep) logits per token."""

    def __init__(self, dim: int, hidden_ratio: int = 4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim // hidden_ratio), nn.GELU(), nn.Linear(dim // hidden_ratio, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Args: x: shape (b, l, d). Returns logits (b, l, 2), index 1 = keep."""
        return self.net(x)


def keep_score(logits: torch.Tensor) -> torch.Tensor:
    """Log-odds of keeping. Args: logits: shape (b, l, 2). Returns (b, l)."""
    return logits[..., 1] - logits[..., 0]


class PruneModule(nn.Module):
    """The scorers of every pruning layer, keyed by layer index."""

    def __init__(self, config: PruneConfig):
        super().__init__()
        self.config = PruneConfig.from_dict(config.validate().to_dict())
        self.scorers = nn.ModuleDict({str(p): TokenScorer(config.dim, config.hidden_ratio) for p in config.layers})

    def logits(self, layer: int, x: torch.Tensor) -> torch.Tensor:
        """Args: x: shape (b, l, d), the states entering ``layer``. Returns (b, l, 2)."""
        return self.scorers[str(layer)](x)


def save_pruner(pruner: PruneModule, directory: str | Path) -> Path:
    """Write ``prune_config.json`` + ``prune.safetensors`` (atomically) into ``directory``."""
    return save_module(directory, pruner, pruner.config.validate(), CONFIG_NAME, WEIGHTS_NAME)


def load_pruner(directory: str | Path) -> PruneModule:
    """Load what :func:`save_pruner` wrote; clear errors for missing or mismatching files."""
    directory = Path(directory)
    if not (directory / WEIGHTS_NAME).is_file():
        raise FileNotFoundError(f"{directory / WEIGHTS_NAME}: pruning weights missing")
    pruner = PruneModule(read_config(directory, PruneConfig, CONFIG_NAME))
    load_state(pruner, directory, WEIGHTS_NAME, CONFIG_NAME)
    pruner.eval()
    return pruner


def retarget_pruner(pruner: PruneModule, keep_ratio: float | None = None,
                    layers: list[int] | None = None) -> PruneModule:
    """A copy of ``pruner`` with another keep ratio and/or a subset of its pruning layers (trained
    scorers are reused as they are; no retraining). Raises ValueError for layers it has no scorer for."""
    data = pruner.config.to_dict()
    if keep_ratio is not None:
        data["keep_ratio"] = keep_ratio
    if layers is not None:
        missing = sorted(set(layers) - set(pruner.config.layers))
        if missing:
            raise ConfigError(f"no trained scorer for layer(s) {missing}: this pruner has layers "
                             f"{pruner.config.layers} (train one with `conba prune train --layers ...`)")
        data["layers"] = sorted(set(layers))
    history = list(data["info"].get("retargeted", []))
    history.append({"from": {"keep_ratio": pruner.config.keep_ratio, "layers": pruner.config.layers},
                    "to": {"keep_ratio": data["keep_ratio"], "layers": data["layers"]}})
    data["info"] = {**data["info"], "retargeted": history}
    out = PruneModule(PruneConfig.from_dict(data))
    state = {k: v for k, v in pruner.scorers.state_dict().items() if int(k.split(".")[0]) in out.config.layers}
    out.scorers.load_state_dict(state, strict=True)
    out.eval()
    return out


def pruner_key(pruner: PruneModule | None) -> str:
    """Identity of a pruner (settings + scorer weights), for caches and index checks; "dense" for None."""
    if pruner is None:
        return "dense"
    h = hashlib.sha256(str(sorted(pruner.config.to_dict().items())).encode())
    for k, v in sorted(pruner.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().float().cpu().numpy().tobytes())
    return "sdtp" + h.hexdigest()[:12]
