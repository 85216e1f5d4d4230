"""The runs of the GPU sweep and their time budget.

Every run trains all six encoder layers of the untuned MiniLM (``--tune full``, embeddings frozen)
contrastively on atcoder_train + mbxp_train, with the same steps, batch (P groups × K snippets),
learning rates and input view; only the head and the control codes change:

    mean                      masked mean pooling (the baseline: the shipped default's read-out)
    ctrl                      mean pooling with CTRL-style language codes in front of the input (after CLS)
    conba-tokens              the seed's ConbaLayer over the token states
    conba-tokens-no-control   the same without control_weight
    conba-tokens-no-feedback  the same without feedback_weight
    conba-scan                conba-scan (Mamba S6) over the token states

The arithmetic (:func:`estimate_seconds`): 150 full-backbone steps × 64 snippets took 11 s on the GPU
(0.073 s a step, mean pooling). The heads over tokens cost more per step; the factors are the
per-epoch GPU times of the sweeps behind docs/BENCHMARKS.md (ConbaLayer over tokens 2.8×, conba-scan
5× the pooled heads). At 200 steps: mean and ctrl ~15 s, each ConbaLayer-over-tokens run ~41 s,
conba-scan ~73 s; 225 s of training a seed, 450 s for two, run three at a time on the one GPU.
Each run's evaluation on the GPU (atcoder_dev and mbxp_dev, ~7,150 snippets in float32, with model load
and view; more where faiss lets the repository sets run there too) is estimated at 25 s, its process
start at 10 s: 12 runs × 35 s = 420 s more, so ~870 s of work in all, ~400 s of
wall clock three at a time, inside the 510 s of the sweep's deadline (the last 60 s of the 9.5 minutes
left to runs still evaluating and to the export of the best checkpoints), which stops
launching runs whose estimate no longer fits.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

STEP_SECONDS = 11.0 / 150  # one full-backbone step of 64 snippets on the GPU, mean pooling (measured)
EVAL_SECONDS = 25.0        # the dev sets of one run on the GPU (an estimate)
START_SECONDS = 10.0       # a run's process: imports, model load (an estimate)

VARIANTS: dict[str, dict] = {
    "mean": {"head": "none"},
    "ctrl": {"head": "none", "control_codes": "prefix"},
    "conba-tokens": {"head": "conba", "head_mode": "tokens"},
    "conba-tokens-no-control": {"head": "conba", "head_mode": "tokens", "use_control": False},
    "conba-tokens-no-feedback": {"head": "conba", "head_mode": "tokens", "use_feedback": False},
    "conba-scan": {"head": "conba-scan"},
}
STEP_COST = {"mean": 1.0, "ctrl": 1.05, "conba-tokens": 2.8, "conba-tokens-no-control": 2.8,
             "conba-tokens-no-feedback": 2.8, "conba-scan": 5.0}
ORDER = ("conba-scan", "conba-tokens", "mean", "ctrl", "conba-tokens-no-control", "conba-tokens-no-feedback")


@dataclass
class SweepPlan:
    """The sweep's settings. ``steps`` optimiser steps a run, a dev check every ``steps // checks``;
    ``deadline`` seconds after the start no run is launched whose estimate does not fit, and training
    stops so that the evaluation still fits."""

    variants: list[str] = field(default_factory=lambda: list(ORDER))
    seeds: list[int] = field(default_factory=lambda: [0, 1])
    steps: int = 200
    checks: int = 4
    groups_per_batch: int = 16
    per_group: int = 4
    max_length: int = 512
    lr_backbone: float = 1e-4
    lr_head: float = 1e-3
    warmup_steps: int = 20
    dev_limit: int = 1000
    view: str = "code+docs"
    parallel: int = 3
    deadline: float = 510.0
    step_seconds: float = STEP_SECONDS
    eval_seconds: float = EVAL_SECONDS
    start_seconds: float = START_SECONDS

    def check(self) -> SweepPlan:
        unknown = [v for v in self.variants if v not in VARIANTS]
        if unknown:
            raise ValueError(f"unknown variant {unknown[0]!r}; choose from {', '.join(VARIANTS)}")
        if self.steps < 1 or self.checks < 1 or self.parallel < 1 or not self.seeds:
            raise ValueError("steps, checks and parallel must be >= 1, and one seed at least")
        return self

    def to_dict(self) -> dict:
        return asdict(self)


def runs(plan: SweepPlan) -> list[tuple[str, str, int]]:
    """(name, variant, seed) in launch order: every variant of the first seed, then the next seed."""
    return [(f"{v}-s{seed}", v, seed) for seed in plan.seeds for v in plan.variants]


def train_options(plan: SweepPlan, variant: str, seed: int) -> dict:
    """The TrainConfig fields of one run (besides the data, the backbone and the output folder)."""
    per_check = max(1, plan.steps // plan.checks)
    return {"tune": "full", "max_length": plan.max_length, "groups_per_batch": plan.groups_per_batch,
            "per_group": plan.per_group, "epochs": max(1, plan.steps // per_check), "steps_per_epoch": per_check,
            "patience": plan.checks + 1, "lr_backbone": plan.lr_backbone, "lr_head": plan.lr_head,
            "warmup_steps": plan.warmup_steps, "seed": seed, "save_dtype": "float16", "view": plan.view,
            "batch_size": 128, "checkpoint_every": 0, **VARIANTS[variant]}


def train_seconds(plan: SweepPlan, variant: str) -> float:
    return plan.steps * plan.step_seconds * STEP_COST[variant] * plan.groups_per_batch * plan.per_group / 64


def estimate_seconds(plan: SweepPlan, variant: str) -> float:
    """A run's wall clock alone on the GPU: start, training, evaluation."""
    return plan.start_seconds + train_seconds(plan, variant) + plan.eval_seconds
