"""PruneTrainConfig: the settings of ``conba prune train`` (saved in OUT/prune_training/config.json)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from conba.errors import ConfigError
from conba.utils.cache import cache_key
from conba.utils.config_keys import JsonConfig

SALIENCY_MODES = ("abs", "signed", "neg")
DEFAULT_TRAIN = ("atcoder_train.jsonl", "mbxp_train.jsonl")  # in $CONBA_DATA, when --data is not given
# Settings that change the saliency pass (its layers are checked separately: a pass over more layers
# serves any subset of them); a work folder made with other values is not resumed.
_SALIENCY_KEYS = ("model", "train", "limit", "groups_per_batch", "per_group", "seed",
                  "temperature", "loss", "max_per_group_language")
# Settings that change scorer training (besides the saliency); epochs may grow on a resume.
_SCORER_KEYS = ("layers", "keep_first", "keep_tail", "lr", "saliency", "tau", "w_task", "w_mse", "w_rank",
                "w_distill")


def default_layers(num_layers: int) -> list[int]:
    """Pruning layers for a backbone of this depth: every layer from the middle up.

    6 layers (MiniLM) -> [3, 4, 5]; 12 (BERT-base, CodeBERT) -> [6, ..., 11]. On the shipped MiniLM model,
    at the same remaining work, pruning late cost far less MAP@R than pruning early: [3, 4, 5] at keep
    ratio 0.6 lost 4.5 points where [1..5] at 0.85 lost 10 (docs/BENCHMARKS.md, SDTP schedule sweep).
    """
    if num_layers < 2:
        raise ConfigError(f"SDTP needs a backbone with at least 2 layers, got {num_layers}")
    return list(range(num_layers // 2, num_layers))


@dataclass
class PruneTrainConfig(JsonConfig):
    config_name: ClassVar[str] = "prune training config"
    model: str = "default"
    out: str = ""
    train: list[str] = field(default_factory=list)
    layers: list[int] = field(default_factory=list)  # empty = default_layers(depth)
    keep_ratio: float = 0.7
    keep_first: int = 4
    keep_tail: float = 0.1
    limit: int = 512  # snippets (rows of P×K batches) used for saliency and training
    groups_per_batch: int = 8
    per_group: int = 4
    max_per_group_language: int = 2
    epochs: int = 3
    lr: float = 1e-3
    temperature: float = 0.0  # 0 = the model's training temperature (0.05 when unknown)
    loss: str = "supcon"
    saliency: str = "abs"
    tau: float = 1.0
    w_task: float = 1.0
    w_mse: float = 1.0
    w_rank: float = 1.0
    w_distill: float = 0.0  # extra: 1 - cos(pruned, exact embedding); not part of the SDTP paper's loss
    saliency_from: str = ""  # reuse the saliency pass of another OUT folder (same settings, superset of layers)
    seed: int = 0

    def validate(self) -> PruneTrainConfig:
        if not self.out:
            raise ConfigError("an output folder (--out) is required")
        if not self.train:
            raise ConfigError("no training files")
        if not 0.0 < self.keep_ratio <= 1.0:
            raise ConfigError(f"keep_ratio must be in (0, 1], got {self.keep_ratio}")
        if self.keep_first < 0 or not 0.0 <= self.keep_tail < 1.0:
            raise ConfigError(f"keep_first must be >= 0 and keep_tail in [0, 1), "
                             f"got {self.keep_first}, {self.keep_tail}")
        if self.limit < 2 * self.per_group:
            raise ConfigError(f"limit must be >= {2 * self.per_group} snippets, got {self.limit}")
        if self.groups_per_batch < 2 or self.per_group < 2:
            raise ConfigError("groups_per_batch and per_group must both be >= 2")
        if self.epochs < 0:
            raise ConfigError(f"epochs must be >= 0, got {self.epochs}")
        if self.lr <= 0:
            raise ConfigError(f"lr must be > 0, got {self.lr}")
        if self.temperature < 0:
            raise ConfigError(f"temperature must be >= 0, got {self.temperature}")
        if self.loss not in ("supcon", "simclr"):
            raise ConfigError(f"unknown loss {self.loss!r} (supcon, simclr)")
        if self.saliency not in SALIENCY_MODES:
            raise ConfigError(f"unknown saliency mode {self.saliency!r} (abs, signed, neg)")
        if min(self.w_task, self.w_mse, self.w_rank, self.w_distill) < 0:
            raise ConfigError("loss weights must be >= 0")
        return self

    def saliency_key(self) -> str:
        """Hash of the settings the saliency pass depends on (a changed value means a fresh pass)."""
        part = {k: getattr(self, k) for k in _SALIENCY_KEYS}
        return cache_key(part)

    def scorer_key(self) -> str:
        """Hash of everything scorer training depends on (a changed value means training from scratch)."""
        part = {k: getattr(self, k) for k in _SCORER_KEYS}
        return self.saliency_key() + cache_key(part)
