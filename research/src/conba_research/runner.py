"""Training and evaluating head variants for the experiments, on shared cached states.

A run is identified by a hash of everything that changes its result (the TrainConfig signature, epochs,
patience, the token window and steps); its folder ``WORK/runs/<variant>-s<seed>-t<τ>-<hash>`` holds the
model and ``training/`` (history.json, curves.png). A finished run is reused, an interrupted one
resumes (the core trainer's checkpoint), so a killed suite picks up where it stopped and two
experiments that need the same model (e.g. the ablation's reference and the temperature sweep at the
same τ) train it once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from conba.errors import ConfigError
from conba.heads import HeadConfig
from conba.model import ConbaModel
from conba.settings import apply_threads, resolve_device
from conba.train.config import TrainConfig
from conba.train.trainer import Trainer
from conba.utils.cache import cache_key
from conba.utils.io import read_json, write_json_atomic
from conba_research.config import ExperimentConfig
from conba_research.data import Prepared
from conba_research.metrics import score_embeddings
from conba_research.states import StatesProvider, embed_records, head_reads_pooled_mean


@dataclass(frozen=True)
class Variant:
    """One head configuration of the ablation (``trained=False``: evaluated as is, no training)."""

    name: str
    label: str
    head: str = "conba"
    head_mode: str = "pooled"
    use_control: bool = True
    use_feedback: bool = True   # feedback_weight only (the state stays)
    use_state: bool = True      # the state A/B (conba-scan: the SSM)
    control_codes: str = "none"  # none | offset | prefix | both
    trained: bool = True
    short: bool = False      # train with the over-tokens heads' budget (token_steps, token_epochs, P)

    @property
    def token_head(self) -> bool:
        return self.head == "conba-scan" or (self.head == "conba" and self.head_mode == "tokens")

    @property
    def limited(self) -> bool:
        """Trained with the (small) over-tokens budget instead of the pooled heads' epochs."""
        return self.token_head or self.short

    def head_config(self, languages: list[str]) -> HeadConfig:
        coded = self.control_codes != "none"
        return HeadConfig(kind=self.head, mode=self.head_mode, use_control=self.use_control,
                          use_feedback=self.use_feedback, use_state=self.use_state,
                          languages=languages if coded else [], code_mode=self.control_codes if coded else "offset")


def select_named(variants: Sequence[Variant], names: Sequence[str] | None, what: str) -> list[Variant]:
    """``variants`` named in ``names`` (all of them when empty), in the order given; ConfigError on a typo."""
    if not names:
        return list(variants)
    by_name = {v.name: v for v in variants}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ConfigError(f"unknown {what}(s) {unknown}; choose from {list(by_name)}")
    return [by_name[n] for n in names]


# The recipe of the shipped default model: seed ConbaLayer on the pooled vector + language control codes.
REFERENCE = Variant("conba_codes", "ConbaLayer (pooled) + control codes", control_codes="offset")


@dataclass
class RunResult:
    variant: str
    seed: int
    temperature: float
    run_dir: str
    seconds: float
    reused: bool
    best_epoch: int
    history: dict

    def summary(self) -> dict:
        d = asdict(self)
        d.pop("history")
        return d


class ExperimentTrainer(Trainer):
    """The core Trainer, reading token states from a shared StatesProvider: pooled vectors for heads
    that mean-pool first, the first T token states for over-tokens heads.

    Its curves.png is drawn once at the end of the run (``plot=True``) instead of after every epoch.
    """

    def __init__(self, config: TrainConfig, provider: StatesProvider, head_tokens: int = 0, steps: int = 0,
                 progress: bool = True, log=print, plot: bool = True):
        super().__init__(config, progress=progress, log=log, max_steps_per_epoch=steps, plot_history=False)
        self.provider, self.head_tokens, self.plot = provider, head_tokens, plot

    def _states(self, records, desc):
        head = self.model.head
        tokens = -1 if head_reads_pooled_mean(head) else (self.head_tokens if head.needs_tokens else 0)
        return self.provider.get(self.model.backbone, [r.code for r in records], self.start_layer, tokens, desc)

    def fit(self, restart: bool = False) -> ConbaModel:
        model = super().fit(restart=restart)
        if self.plot:
            self.history.plot(self.run_dir)
        return model


class Runner:
    """Trains and evaluates variants of one ExperimentConfig on one Prepared data set."""

    def __init__(self, cfg: ExperimentConfig, prepared: Prepared, progress: bool = True, log=print):
        import torch

        self.cfg, self.prepared, self.progress, self.log = cfg, prepared, progress, log
        default_threads = torch.get_num_threads()
        apply_threads(cfg.threads)
        self.provider = StatesProvider(cfg.cache_dir or None, cfg.batch_size, progress, key_threads=default_threads)
        self.device = resolve_device(cfg.device)
        self.languages = sorted({r.language for r in prepared.train_records})

    # ------------------------------------------------------------------ training
    def train_config(self, v: Variant, seed: int, temperature: float | None = None) -> tuple[TrainConfig, dict]:
        c = self.cfg
        tc = TrainConfig(
            train=[self.prepared.train_path], dev=[self.prepared.select.path], out="", backbone=c.backbone,
            max_length=c.max_length, head=v.head, head_mode=v.head_mode, use_control=v.use_control,
            use_feedback=v.use_feedback, use_state=v.use_state, control_codes=v.control_codes, tune="none",
            temperature=c.temperature if temperature is None else temperature,
            groups_per_batch=c.token_groups_per_batch if v.limited else c.groups_per_batch,
            per_group=c.per_group, epochs=c.token_epochs if v.limited else c.epochs, patience=c.patience,
            seed=seed, batch_size=c.batch_size, cache_dir=c.cache_dir, device=c.device)
        extra = {"head_tokens": c.head_tokens if v.token_head else 0,
                 "token_steps": c.token_steps if v.limited else 0}
        return tc, extra

    def run_dir(self, v: Variant, seed: int, temperature: float | None = None) -> Path:
        tc, extra = self.train_config(v, seed, temperature)
        sig = {**tc.run_signature(), "epochs": tc.epochs, "patience": tc.patience, **extra}
        digest = cache_key(sig, length=10)
        return Path(self.cfg.work) / "runs" / f"{v.name}-s{seed}-t{tc.temperature:g}-{digest}"

    def train(self, v: Variant, seed: int, temperature: float | None = None) -> tuple[ConbaModel, RunResult]:
        """Train ``v`` with ``seed`` (or reuse the finished run) and return the best model."""
        tc, extra = self.train_config(v, seed, temperature)
        out = self.run_dir(v, seed, temperature)
        tc.out = str(out)
        meta_path = out / "experiment_run.json"
        reused = meta_path.exists() and (out / "training" / "result.json").exists()
        if reused:
            model = ConbaModel.load(out)
            meta = read_json(meta_path)
            seconds = float(meta["seconds"])
            self.log(f"{v.name} seed {seed} τ={tc.temperature:g}: reusing {out}")
        else:
            self.log(f"{v.name} seed {seed} τ={tc.temperature:g}: training -> {out}")
            t0 = time.time()
            model = self.make_trainer(tc, extra).fit()
            seconds = time.time() - t0
            write_json_atomic(meta_path, {"variant": v.name, "seed": seed, "temperature": tc.temperature,
                                          "seconds": round(seconds, 1), **extra, "config": tc.to_dict()})
        result = read_json(out / "training" / "result.json")
        history = read_json(out / "training" / "history.json")
        return model, RunResult(v.name, seed, tc.temperature, str(out), seconds, reused,
                                int(result["best_epoch"]), history)

    def make_trainer(self, tc: TrainConfig, extra: dict) -> ExperimentTrainer:
        return ExperimentTrainer(tc, self.provider, extra["head_tokens"], extra["token_steps"],
                                 progress=self.progress, log=self.log, plot=self.cfg.run_plots)

    def untrained(self, v: Variant) -> ConbaModel:
        """``v``'s head freshly built (for kind none: plain pooling of the backbone)."""
        from conba.encoder.backbone import BackboneConfig
        from conba.train.trainer import canonical_backbone

        bcfg = BackboneConfig(name_or_path=canonical_backbone(self.cfg.backbone), max_length=self.cfg.max_length)
        return ConbaModel.create(bcfg, v.head_config(self.languages))

    # ------------------------------------------------------------------ evaluation
    def embed(self, model: ConbaModel, records, token_head: bool | None = None) -> np.ndarray:
        token_head = model.head.needs_tokens if token_head is None else token_head
        tokens = self.cfg.head_tokens if token_head else 0
        return embed_records(model, records, self.provider, tokens, self.cfg.batch_size, self.device)

    def evaluate(self, model: ConbaModel) -> dict:
        """``{eval set name: score_embeddings(...)}`` for every evaluation set."""
        return {s.name: score_embeddings(self.embed(model, s.records), s.records) for s in self.prepared.eval_sets}
