"""TrainConfig: every knob of ``conba train`` in one dataclass (saved with each run)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from conba.constants import HEAD_KINDS, HEAD_MODES, STATE_AS  # noqa: F401  (re-exported: the CLI's choices)
from conba.errors import ConfigError
from conba.utils.config_keys import JsonConfig
from conba.utils.head_kinds import check_kind

TUNE_MODES = ("none", "top-k", "full")
LOSSES = ("supcon", "simclr")
CONTROL_CODES = ("none", "offset", "prefix", "both")
HEADS = HEAD_KINDS  # the product's; --head also takes the installed plug-ins' (conba.utils.head_kinds)
SAVE_DTYPES = ("float32", "float16")
LR_SCHEDULES = ("constant", "linear")  # conba.train.loop.scheduled_lr


@dataclass
class TrainConfig(JsonConfig):
    config_name: ClassVar[str] = "train config"
    train: list[str] = field(default_factory=list)
    dev: list[str] = field(default_factory=list)
    out: str = "conba-model"
    backbone: str = "default"
    max_length: int = 256
    split_identifiers: bool = False
    pooling: str = ""              # "": the backbone's own read-out; else that pooling (conba.encoder.readout)
    trust_remote_code: bool = False  # let the backbone run code from its folder (recorded with the model)
    head: str = "linear"           # linear | none | a plugged-in kind (the research suite: conba | conba-scan)
    head_mode: str = "pooled"      # conba: pooled | tokens (this key and the next six: the ConbaLayer heads)
    state_dim: int = 16
    use_control: bool = True
    use_feedback: bool = True      # feedback_weight (False: the state is added unweighted)
    use_state: bool = True         # the state A/B (conba-scan: the SSM); False: no state, feedback term 0
    state_a: str = "diag"          # conba over tokens: diag (parallel scan) | dense (sequential loop)
    residual: bool = True          # ConbaLayer heads start as the identity: pool(x) + fc2(...), fc2 = 0
    control_codes: str = "none"    # none | offset (control_weight) | prefix (code after CLS) | both
    tune: str = "none"             # none | top-k | full
    top_k: int = 2
    loss: str = "supcon"
    temperature: float = 0.05
    groups_per_batch: int = 16     # P
    per_group: int = 4             # K
    epochs: int = 10
    steps_per_epoch: int = 0       # 0 = one pass over the data; else N batches per epoch (a dev check every N)
    lr_head: float = 1e-3
    lr_backbone: float = 3e-5
    weight_decay: float = 0.01
    patience: int = 3
    hard_negatives: bool = False
    monolingual_apart: bool = True  # one-language groups (mined pairs) are batched per language (sampler)
    max_per_group_language: int = 0  # 0 = all; else cap snippets per (group, language)
    dev_limit: int = 0             # 0 = all dev records for early stopping; else a group-stratified subset
    seed: int = 0
    batch_size: int = 32           # encoding batch size
    cache_dir: str = ""            # "" = $CONBA_CACHE or ~/.cache/conba
    save_dtype: str = "float32"
    checkpoint_every: int = 200    # steps between mid-epoch checkpoints
    device: str = "auto"           # auto (cuda when available) | cpu | cuda | cuda:N
    amp: bool = True               # bf16 autocast for the backbone on CUDA (ignored on CPU)
    time_budget: float = 0.0       # seconds of training before stopping like early stopping; 0 = none
    warmup_steps: int = 100        # linear warm-up of the backbone learning rate
    view: str = "raw"              # input view of train/dev snippets, saved with the model (conba.syntax.view)
    init: str = ""                 # start from this conba model's backbone weights (name or folder); "" = backbone
    keep: list[str] = field(default_factory=list)  # JSONL whose code keeps the untuned similarities (distillation)
    keep_weight: float = 0.0       # weight of that term (conba.train.keep_similarities); 0 = off
    keep_limit: int = 4000         # snippets drawn from ``keep`` (0: all)
    keep_batch: int = 32           # keep snippets per step

    def __post_init__(self) -> None:
        if isinstance(self.control_codes, bool):  # the old boolean flag meant the offset codes
            self.control_codes = "offset" if self.control_codes else "none"

    def validate(self) -> TrainConfig:
        if self.control_codes not in CONTROL_CODES:
            raise ValueError(f"control_codes must be one of {CONTROL_CODES}, got {self.control_codes!r}")
        if self.state_a not in STATE_AS:
            raise ValueError(f"state_a must be one of {STATE_AS}, got {self.state_a!r}")
        check_kind(self.head)  # a research head without the research suite: one line naming what to install
        if not self.train:
            raise ConfigError("no training data given")
        if self.tune not in TUNE_MODES:
            raise ConfigError(f"tune must be one of {TUNE_MODES}, got '{self.tune}'")
        if self.loss not in LOSSES:
            raise ConfigError(f"loss must be one of {LOSSES}, got '{self.loss}'")
        if self.temperature <= 0:
            raise ConfigError("temperature must be > 0")
        if self.max_length < 8:
            raise ConfigError(f"max_length must be >= 8 tokens, got {self.max_length}")
        if min(self.lr_head, self.lr_backbone) < 0:
            raise ConfigError(f"learning rates must be >= 0, got lr_head {self.lr_head}, "
                              f"lr_backbone {self.lr_backbone}")
        if self.steps_per_epoch < 0:
            raise ConfigError("steps_per_epoch must be >= 0")
        if self.epochs < 1:
            raise ConfigError("epochs must be >= 1")
        if self.groups_per_batch < 2 or self.per_group < 2:
            raise ConfigError("groups_per_batch (P) and per_group (K) must be >= 2")
        if self.time_budget < 0 or self.warmup_steps < 0:
            raise ConfigError("time_budget and warmup_steps must be >= 0")
        if self.keep_weight < 0 or self.keep_batch < 2 or self.keep_limit < 0:
            raise ConfigError("keep_weight and keep_limit must be >= 0, keep_batch >= 2")
        if self.keep_weight > 0 and not self.keep:
            raise ConfigError("keep_weight > 0 needs keep: the files whose code keeps its similarities")
        if self.save_dtype not in SAVE_DTYPES:
            raise ConfigError("save_dtype must be float32 or float16")
        from conba.syntax.view import check_view

        check_view(self.view)
        return self

    @classmethod
    def upgrade(cls, data: dict) -> dict:
        """Configs saved before ``use_state`` existed: their ``use_feedback=False`` removed the whole
        state path, and their heads had no residual and a dense A; their ``control_codes`` was a boolean
        (true: the offset codes)."""
        if isinstance(data.get("control_codes"), bool):
            data["control_codes"] = "offset" if data["control_codes"] else "none"
        if "use_state" not in data:
            data["use_state"] = data.get("use_feedback", True)
            data.setdefault("residual", False)
            data.setdefault("state_a", "dense")
        return data

    def run_signature(self) -> dict:
        """What must match for a checkpoint to be resumed (epochs/patience may change)."""
        d = self.to_dict()
        for key in ("epochs", "patience", "out", "checkpoint_every", "batch_size", "cache_dir", "device",
                    "time_budget"):
            d.pop(key)
        for key in ("pooling", "trust_remote_code"):  # unset: as checkpoints written before they existed
            if not d[key]:
                d.pop(key)
        return d
