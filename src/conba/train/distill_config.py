"""DistillConfig: the settings of ``conba distill`` (saved in the run's distill.json); no torch here, so the
command line can take its defaults from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from conba.errors import ConfigError
from conba.train.config import LR_SCHEDULES
from conba.utils.config_keys import JsonConfig


@dataclass
class DistillConfig(JsonConfig):
    config_name: ClassVar[str] = "distill config"
    teacher: str = "default"
    out: str = "runs/student"
    layers: list[int] = field(default_factory=lambda: [0, 2, 4])  # teacher layers the student starts from
    init: str | None = None    # a student to continue from (name or folder) instead of layer dropping
    data: list[str] = field(default_factory=list)   # grouped JSONL files (only their code is used)
    source: list[str] = field(default_factory=list)  # folders / files of real source code
    source_limit: int = 4000   # functions taken from ``source`` at most (0: all)
    limit: int = 0             # records sampled from ``data`` (0: all)
    dev: list[str] = field(default_factory=list)
    dev_limit: int = 800       # records per dev file (whole groups); 0: all
    epochs: int = 2
    batch_size: int = 32
    max_batch_tokens: int = 8192  # padded tokens per training batch
    max_length: int = 0        # tokens the student reads (training, dev and after); 0: the teacher's window
    ffn_size: int = 0          # feed-forward neurons kept per layer (conba.encoder.ffn); 0: the teacher's width
    ffn_sample: int = 256      # training snippets the neurons' importance is measured on (with ffn_size)
    lr: float = 1e-4
    warmup_steps: int = 50
    lr_schedule: str = "constant"  # after the warm-up: "constant", or "linear" decay to 0 at the last epoch's end
    weight_decay: float = 0.01
    temperature: float = 0.05
    sim_weight: float = 1.0
    hidden_weight: float = 0.0     # layer-wise token states (conba.train.layer_distill); 0: off
    attention_weight: float = 0.0  # last layer's attention + value relations (MiniLM); 0: off
    checkpoint_every: int = 50
    time_budget: float = 0.0   # seconds of training at most (0: none); the epoch in progress is then scored
    seed: int = 0

    def validate(self) -> DistillConfig:
        for name in ("epochs", "batch_size", "checkpoint_every"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.layers:
            raise ConfigError("layers: name at least one teacher layer to keep, e.g. 0,2,4")
        if self.lr <= 0 or self.temperature <= 0:
            raise ConfigError("lr and temperature must be > 0")
        if self.max_length and self.max_length < 8:
            raise ConfigError(f"max_length must be >= 8 tokens (0: the teacher's window), got {self.max_length}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise ConfigError(f"lr_schedule must be one of {', '.join(LR_SCHEDULES)}, got {self.lr_schedule!r}")
        if self.ffn_size < 0:
            raise ConfigError(f"ffn_size must be >= 0 (0: the teacher's width), got {self.ffn_size}")
        if self.ffn_sample < 1:
            raise ConfigError(f"ffn_sample must be >= 1, got {self.ffn_sample}")
        for name in ("sim_weight", "hidden_weight", "attention_weight"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not self.data and not self.source:
            raise ConfigError("nothing to learn from: pass --data FILE.jsonl and/or --source DIR")
        for path in [*self.data, *self.dev]:
            if not Path(path).is_file():
                raise FileNotFoundError(f"{path}: data file not found")
        return self

    def signature(self) -> dict:
        """What must match to resume a checkpoint (everything but where and how long)."""
        d = self.to_dict()
        for k in ("out", "checkpoint_every", "time_budget", "epochs"):
            d.pop(k)
        for k in ("hidden_weight", "attention_weight", "max_length", "ffn_size"):  # off: as runs made before
            if not d[k]:                                                          # these existed
                d.pop(k)
        if self.lr_schedule == "constant":
            d.pop("lr_schedule")
        else:  # a linear decay ends at the last epoch: more epochs are another schedule
            d["epochs"] = self.epochs
        if not self.ffn_size:
            d.pop("ffn_sample")
        return d

    @property
    def layer_terms(self) -> bool:
        """True when a layer-wise term is on (the teacher then runs beside the student)."""
        return bool(self.hidden_weight or self.attention_weight)
