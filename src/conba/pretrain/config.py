"""PretrainConfig: every knob of ``conba pretrain`` (saved with the run, checked when resuming).

``max_chunks_per_file`` is the file-format name of ``max_windows_per_file`` (the code once said chunks for
windows): the saved config and the run signature keep it, so runs saved before resume and match."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from conba.errors import ConfigError
from conba.utils.config_keys import JsonConfig

OBJECTIVES = ("mlm", "rtd", "both")
CONFIG_NAME = "pretrain_config.json"
FILE_KEY = "max_chunks_per_file"  # the file-format name of max_windows_per_file


@dataclass
class PretrainConfig(JsonConfig):
    config_name: ClassVar[str] = "pretrain config"
    file_keys: ClassVar[dict[str, str]] = {"max_windows_per_file": FILE_KEY}
    data: list[str] = field(default_factory=list)  # folders of code files and/or JSONL files
    out: str = "pretrained-backbone"
    backbone: str = "default"          # HF name or folder; 'default' = embedded all-MiniLM-L6-v2
    objective: str = "mlm"             # mlm | rtd | both
    steps: int = 1000
    max_length: int = 128              # tokens per training window (code longer than this is cut into windows)
    max_windows_per_file: int = 0      # 0 = every window of a file; else only the first N
    batch_size: int = 16
    lr: float = 5e-5
    weight_decay: float = 0.01
    warmup: float = 0.06               # fraction of steps with linear warm-up, then linear decay to 0
    mask_prob: float = 0.15            # fraction of (non-special) tokens chosen per step
    mask_token_prob: float = 0.8       # chosen tokens replaced by [MASK] ...
    random_token_prob: float = 0.1     # ... by a random token (the rest stay as they are)
    generator_size: float = 0.25       # RTD generator width as a fraction of the backbone width (ELECTRA)
    generator_layers: int = 0          # 0 = as many layers as the backbone
    rtd_weight: float = 50.0           # λ of the discriminator loss (ELECTRA)
    mlm_weight: float = 1.0            # weight of the backbone's own MLM loss (objective mlm / both)
    seed: int = 0
    device: str = "auto"               # auto (CUDA when available) | cpu | cuda | cuda:N
    amp: bool = True                   # bf16 autocast on CUDA
    checkpoint_every: int = 200

    def validate(self) -> PretrainConfig:
        if not self.data:
            raise ConfigError("no pretraining data given (a folder of code files or a JSONL file)")
        if self.objective not in OBJECTIVES:
            raise ConfigError(f"objective must be one of {', '.join(OBJECTIVES)}, got '{self.objective}'")
        if self.steps < 1 or self.batch_size < 1:
            raise ConfigError("steps and batch_size must be >= 1")
        if self.max_length < 8:
            raise ConfigError(f"max_length must be >= 8, got {self.max_length}")
        if not 0.0 < self.mask_prob < 1.0:
            raise ConfigError(f"mask_prob must be in (0, 1), got {self.mask_prob}")
        if self.mask_token_prob < 0 or self.random_token_prob < 0 or self.mask_token_prob + self.random_token_prob > 1:
            raise ConfigError("mask_token_prob and random_token_prob must be >= 0 and add up to at most 1")
        if not 0.0 < self.generator_size <= 1.0 or self.generator_layers < 0:
            raise ConfigError("generator_size must be in (0, 1] and generator_layers >= 0")
        if self.lr <= 0 or not 0.0 <= self.warmup < 1.0 or self.rtd_weight < 0 or self.mlm_weight < 0:
            raise ConfigError("lr must be > 0, warmup in [0, 1), rtd_weight and mlm_weight >= 0")
        if self.max_windows_per_file < 0 or self.checkpoint_every < 0:
            raise ConfigError("max_windows_per_file and checkpoint_every must be >= 0")
        return self

    def run_signature(self) -> dict:
        """What must match for a checkpoint to be resumed."""
        d = self.to_dict()
        for key in ("out", "device", "checkpoint_every"):
            d.pop(key)
        return d
