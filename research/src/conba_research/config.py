"""ExperimentConfig: the shared settings of every ``conba experiment`` subcommand (saved with each run).

The suite trains heads with ``--tune none`` (the backbone's final token states are cached once and
reused by every variant and seed), so its cost is dominated by the heads. Over-tokens heads (ConbaLayer
over tokens, conba-scan) are slow on a CPU, so they get their own knobs: ``head_tokens`` (they read only
the first T cached token states), ``token_steps`` (batches per epoch) and ``token_epochs``.

``quick`` settings (:meth:`ExperimentConfig.quick_preset`) are for CI-sized smoke runs: tiny data
subsets, 2 seeds, 2 epochs, every experiment still exercised.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

from conba.errors import ConfigError
from conba.utils.config_keys import JsonConfig

DEFAULT_TEMPERATURES = (0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
QUICK_TEMPERATURES = (0.05, 0.2, 1.0)


@dataclass
class ExperimentConfig(JsonConfig):
    config_name: ClassVar[str] = "experiment config"
    train: list[str] = field(default_factory=list)  # training files (*_train.jsonl)
    dev: list[str] = field(default_factory=list)    # dev files; the first one is used for early stopping
    work: str = "runs/experiments"                  # trained models, data subsets, caches of this suite
    backbone: str = "default"
    max_length: int = 256
    cap: int = 2                 # max snippets per (group, language) of the training files; 0 = all
    train_limit: int = 0         # then about N training snippets (whole groups); 0 = all
    dev_limit: int = 1500        # about N records (whole groups) of each dev file; 0 = all
    data_seed: int = 0           # the subsets above do not depend on the training seeds
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    epochs: int = 8
    patience: int = 3
    groups_per_batch: int = 32   # P
    per_group: int = 4           # K
    temperature: float = 0.05
    head_tokens: int = 32        # over-tokens heads read the first T token states; 0 = all
    token_steps: int = 20        # batches per epoch for over-tokens heads; 0 = a full epoch
    token_epochs: int = 1
    token_groups_per_batch: int = 16
    temperatures: list[float] = field(default_factory=lambda: list(DEFAULT_TEMPERATURES))
    temperature_seeds: int = 1   # how many of ``seeds`` the temperature sweep uses
    classifier_pairs: int = 4000  # training pairs for the pair classifiers (sampled from the train subset)
    classifier_epochs: int = 15
    tsne_groups: int = 12
    noise_limit: int = 300       # dev records (whole groups) for the noise experiment
    batch_size: int = 64
    cache_dir: str = ""          # "" = $CONBA_CACHE or ~/.cache/conba
    device: str = "auto"
    threads: int = 0             # torch CPU threads; 0 = torch's default (1 is much faster on a busy CPU)
    run_plots: bool = True       # draw each run's training/curves.png (once, at the end of the run)
    quick: bool = False

    def validate(self) -> ExperimentConfig:
        if not self.train:
            raise ConfigError("no training data: give --data DIR (with *_train.jsonl) or --train FILE")
        if not self.dev:
            raise ConfigError("no dev data: give --data DIR (with *_dev.jsonl) or --dev FILE")
        for p in [*self.train, *self.dev]:
            if not Path(p).is_file():
                raise ConfigError(f"{p}: file not found")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ConfigError(f"seeds must be distinct and non-empty, got {self.seeds}")
        for name in ("epochs", "token_epochs", "batch_size", "temperature_seeds"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("cap", "train_limit", "dev_limit", "head_tokens", "token_steps", "noise_limit", "threads"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.groups_per_batch < 2 or self.per_group < 2 or self.token_groups_per_batch < 2:
            raise ConfigError("groups per batch (P) and per group (K) must be >= 2")
        if not self.temperatures or any(t <= 0 for t in self.temperatures):
            raise ConfigError(f"temperatures must be > 0, got {self.temperatures}")
        if self.temperature <= 0:
            raise ConfigError("temperature must be > 0")
        if self.max_length < 8:
            raise ConfigError("max_length must be >= 8")
        if self.classifier_pairs < 20 or self.classifier_epochs < 1:
            raise ConfigError("classifier_pairs must be >= 20 and classifier_epochs >= 1")
        return self

    @classmethod
    def quick_preset(cls, **overrides) -> ExperimentConfig:
        """Tiny, CI-sized settings that still exercise every experiment."""
        base = cls(max_length=128, cap=1, train_limit=600, dev_limit=300, seeds=[0, 1], epochs=2, patience=2,
                   groups_per_batch=16, head_tokens=16, token_steps=4, token_epochs=1, token_groups_per_batch=8,
                   temperatures=list(QUICK_TEMPERATURES), classifier_pairs=600, classifier_epochs=10,
                   tsne_groups=8, noise_limit=60, quick=True)
        return replace(base, **overrides)



def discover(data_dir: str | Path) -> tuple[list[str], list[str]]:
    """``(train files, dev files)`` of a data folder: grouped ``*_train.jsonl`` and ``*_dev.jsonl``, sorted."""
    d = Path(data_dir)
    if not d.is_dir():
        raise ConfigError(f"{d}: not a folder (--data takes a folder with *_train.jsonl and *_dev.jsonl)")
    from conba.data.records import detect_format

    # Files in the older research pair format (e.g. pairs_java_python_dev.jsonl) repeat grouped
    # records in another shape; only grouped files are used.
    train = sorted(str(p) for p in d.glob("*_train.jsonl") if detect_format(p) == "grouped")
    dev = sorted(str(p) for p in d.glob("*_dev.jsonl") if detect_format(p) == "grouped")
    if not train or not dev:
        raise ConfigError(f"{d}: needs at least one *_train.jsonl and one *_dev.jsonl file")
    return train, dev
