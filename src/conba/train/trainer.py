"""The contrastive trainer behind ``conba train``.

Tuning modes: ``none`` caches the final backbone states once and trains only the head; ``top-k``
caches the states below the top k layers and trains those layers and the head; ``full`` trains every
encoder layer (embeddings stay frozen). Early stopping on dev MAP@R; the best model is kept; a
checkpoint every ``checkpoint_every`` steps and at each epoch end lets an interrupted run resume.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np
import torch

from conba.constants import MODEL_CONFIG_NAME
from conba.data import CodeRecord, cap_records, load_many, subset_groups
from conba.encoder.backbone import BackboneConfig
from conba.errors import UsageError
from conba.eval.metrics import records_map_at_r
from conba.eval.pairs import balanced_pairs, calibrate_threshold, require_clone_pairs
from conba.heads import HeadConfig, run_prefixed
from conba.model import ConbaModel
from conba.settings import default_cache_dir, resolve_device
from conba.train.checkpoint import load_checkpoint, save_checkpoint
from conba.train.config import TrainConfig
from conba.train.features import TokenStates, compute_states
from conba.train.history import History
from conba.train.loop import autocast, optimizer_step, progress_line, warmup_lr
from conba.train.losses import in_batch_loss
from conba.train.sampler import GroupBatchSampler, nearest_groups
from conba.utils.io import replace_dir, write_json_atomic


class Trainer:
    """``max_steps_per_epoch``: cap the batches of every epoch (0: no cap; the experiments' quick runs).
    ``plot_history``: draw ``training/curves.png`` after every epoch (off: call ``history.plot`` once)."""

    def __init__(self, config: TrainConfig, progress: bool = True, log=print, *, max_steps_per_epoch: int = 0,
                 plot_history: bool = True):
        self.cfg = config.validate()
        self.progress = progress
        self.log = log
        self.max_steps_per_epoch = max_steps_per_epoch or config.steps_per_epoch
        self.plot_history = plot_history
        self.out = Path(config.out)
        self.run_dir = self.out / "training"
        torch.manual_seed(config.seed)
        self.train_records = cap_records(load_many(config.train), config.max_per_group_language, config.seed)
        dev = load_many(config.dev) if config.dev else []
        self.dev_records = subset_groups(dev, config.dev_limit, config.seed)
        if self.dev_records:  # the saved model's threshold is calibrated on them: fail now, not after training
            require_clone_pairs([r.group for r in self.dev_records], [r.language for r in self.dev_records],
                                ", ".join(config.dev))
        if config.view != "raw":  # the model learns on what encode() will show it
            self.train_records = self._viewed(self.train_records, "train")
            self.dev_records = self._viewed(self.dev_records, "dev")
        langs = sorted({r.language for r in self.train_records})
        head_cfg = HeadConfig(
            kind=config.head, mode=config.head_mode, state_dim=config.state_dim,
            use_control=config.use_control, use_feedback=config.use_feedback, use_state=config.use_state,
            state_a=config.state_a, residual=config.residual,
            languages=langs if config.control_codes != "none" else [],
            code_mode=config.control_codes if config.control_codes != "none" else "offset",
        )
        bcfg = BackboneConfig(name_or_path=canonical_backbone(config.backbone), max_length=config.max_length,
                              split_identifiers=config.split_identifiers, pooling=config.pooling,
                              trust_remote_code=config.trust_remote_code).checked()
        self.model = ConbaModel.create(bcfg, head_cfg, view=config.view)
        self.model.info = {"trained_on": [Path(p).name for p in config.train], "train_config": config.to_dict()}
        if config.init:
            self._start_from(config.init)
        bb = self.model.backbone
        self.start_layer = {"none": bb.num_layers, "top-k": bb.num_layers - config.top_k, "full": 0}[config.tune]
        if self.model.head.prefix is not None:  # the code enters at the embedding layer: cache layer 0
            self.start_layer = 0
        bb.set_trainable(config.tune, config.top_k)
        self.device = resolve_device(config.device)
        self.model.to(self.device)
        self.history = History()

    def _start_from(self, name: str) -> None:
        """Copy the backbone weights of the conba model ``name`` (same architecture) into the new model."""
        from conba.model import load_model

        src = load_model(name, prune=False, trust_remote_code=self.cfg.trust_remote_code)
        mine, theirs = self.model.backbone, src.backbone
        if (theirs.config.name_or_path, theirs.num_layers) != (mine.config.name_or_path, mine.num_layers):
            raise UsageError(f"--init {name}: its backbone is {theirs.config.name_or_path} with "
                             f"{theirs.num_layers} layers; this run's is {mine.config.name_or_path} with "
                             f"{mine.num_layers}")
        mine.model.load_state_dict(theirs.model.state_dict())
        self.model.info["init"] = name
        self.log(f"backbone weights from {name} (fingerprint {src.fingerprint()})")

    def _viewed(self, records: list[CodeRecord], name: str) -> list[CodeRecord]:
        from dataclasses import replace

        from conba.syntax.view import apply_views

        codes, stats = apply_views([r.code for r in records], [r.language for r in records], self.cfg.view)
        self.log(f"view {self.cfg.view} on {name}: {stats.chars_before} -> {stats.chars_after} chars, "
                 f"{stats.helpers_dropped} helpers dropped, {stats.fallbacks} of {stats.snippets} snippets raw")
        return [replace(r, code=c) for r, c in zip(records, codes)]

    def _autocast(self):
        return autocast(self.device, self.cfg.amp)

    # ------------------------------------------------------------------ features
    def _states(self, records: list[CodeRecord], desc: str) -> TokenStates | None:
        if self.cfg.tune == "full" and self.model.head.prefix is None:
            return None
        cache = Path(self.cfg.cache_dir) if self.cfg.cache_dir else default_cache_dir()
        tag = "" if self.cfg.view == "raw" else f"view={self.cfg.view}"  # raw keeps the old cache keys
        return compute_states(self.model.backbone, [r.code for r in records], self.start_layer, cache,
                              self.cfg.batch_size, desc=desc, progress=self.progress, tag=tag)

    def _embed(self, records: list[CodeRecord], states: TokenStates | None, idx: list[int]) -> torch.Tensor:
        """Embeddings (b, out_dim) of records ``idx``; the backbone may run in bf16, the head runs in fp32.

        With prefix control codes the cached states are the embedding layer's (layer 0) and every layer
        runs with the language code inserted after CLS (the frozen layers pass its gradient through)."""
        bb, head, dev = self.model.backbone, self.model.head, self.device
        lang_ids = head.language_ids([records[i].language for i in idx]).to(dev)
        if head.prefix is not None and states is not None:
            x, mask = states.batch(idx)
            x, mask = x.to(dev), mask.to(dev)
            with self._autocast():
                x = run_prefixed(bb, head.prefix, x, mask.long(), lang_ids)
            return head(*bb.read_out(x.float(), mask), lang_ids)
        if states is None:
            enc = bb.tokenize([records[i].code for i in idx])
            mask = enc["attention_mask"].to(dev)
            with self._autocast():
                x = bb(enc["input_ids"].to(dev), mask)
            return head(*bb.read_out(x.float(), mask.bool()), lang_ids)
        x, mask = states.batch(idx)
        x, mask = x.to(dev), mask.to(dev)
        if self.cfg.tune == "top-k":
            with self._autocast():
                x = bb.upper(x, mask.long(), self.start_layer)
        return head(*bb.read_out(x.float(), mask), lang_ids)

    @torch.inference_mode()
    def embed_all(self, records: list[CodeRecord], states: TokenStates | None) -> np.ndarray:
        self.model.eval()
        lengths = states.lengths() if states is not None else [len(r.code) for r in records]
        order = list(np.argsort(-np.asarray(lengths), kind="stable"))
        out = torch.zeros(len(records), self.model.dim)
        for s in range(0, len(order), self.cfg.batch_size):
            idx = [int(i) for i in order[s:s + self.cfg.batch_size]]
            out[idx] = self._embed(records, states, idx).float().cpu()
        return torch.nn.functional.normalize(out, dim=-1).numpy()

    def dev_score(self, dev_states: TokenStates | None) -> float:
        return records_map_at_r(self.embed_all(self.dev_records, dev_states), self.dev_records)

    # ------------------------------------------------------------------ keeping the untuned similarities
    def _keep_setup(self) -> tuple[list[CodeRecord], TokenStates | None, torch.Tensor] | None:
        """The keep set (records, their cached states, the reference vectors (n, d)) or None when off."""
        from conba.train.keep_similarities import keep_records, reference_vectors

        cfg = self.cfg
        if cfg.keep_weight <= 0:
            return None
        records = keep_records(cfg.keep, cfg.keep_limit, cfg.seed)
        if cfg.view != "raw":
            records = self._viewed(records, "keep")
        states = self._states(records, "cache keep")
        ref_cfg = BackboneConfig(name_or_path=canonical_backbone(cfg.backbone), max_length=cfg.max_length,
                                 split_identifiers=cfg.split_identifiers, pooling=cfg.pooling,
                                 trust_remote_code=cfg.trust_remote_code)
        cache = Path(cfg.cache_dir) if cfg.cache_dir else default_cache_dir()
        self.log(f"keep: the untuned similarities of {len(records)} snippets, weight {cfg.keep_weight}")
        targets = reference_vectors(ref_cfg, [r.code for r in records], cache, cfg.batch_size, self.progress)
        return records, states, torch.from_numpy(targets).to(self.device)

    def _keep_loss(self, keep: tuple, step: int) -> torch.Tensor:
        from conba.train.keep_similarities import keep_batch, similarity_kl

        records, states, targets = keep
        idx = keep_batch(len(records), self.cfg.keep_batch, self.cfg.seed, step)
        s = torch.nn.functional.normalize(self._embed(records, states, idx).float(), dim=-1)
        return similarity_kl(s, targets[idx], self.cfg.temperature)

    # ------------------------------------------------------------------ checkpoints
    def _save_checkpoint(self, opt: torch.optim.Optimizer, state: dict) -> None:
        save_checkpoint(self.run_dir / "checkpoint", self.cfg.run_signature(),
                        {**state, "history": self.history.to_dict()}, modules={"model": self.model},
                        optimizer=opt, trainable_only=True)

    def _load_checkpoint(self, opt: torch.optim.Optimizer) -> dict | None:
        state = load_checkpoint(self.run_dir / "checkpoint", self.cfg.run_signature(),
                                modules={"model": self.model}, optimizer=opt, trainable_only=True)
        if state is not None:
            self.history = History.from_dict(state.pop("history"))
        return state

    def _save_best(self) -> None:
        tmp = self.run_dir / "best.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        self.model.to("cpu")  # saving compares with the (CPU) base model; parameters keep their identity
        self.model.save(tmp, dtype="float32")
        self.model.to(self.device)
        replace_dir(tmp, self.run_dir / "best")  # a crash at any moment leaves best or best.old

    # ------------------------------------------------------------------ main loop
    def fit(self, restart: bool = False) -> ConbaModel:
        from tqdm.auto import tqdm

        cfg = self.cfg
        if self.out.is_dir() and any(self.out.iterdir()) and not (self.run_dir.exists()
                                                                   or (self.out / MODEL_CONFIG_NAME).exists()):
            raise UsageError(f"{self.out}: folder exists and is not a conba model or run; choose another --out")
        if restart:
            shutil.rmtree(self.run_dir, ignore_errors=True)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.run_dir / "train_config.json", cfg.to_dict())
        self.log(f"train: {len(self.train_records)} snippets, "
                 f"{len({r.group for r in self.train_records})} groups; dev: {len(self.dev_records)} snippets; "
                 f"tune={cfg.tune} head={cfg.head}/{cfg.head_mode} loss={cfg.loss} τ={cfg.temperature}")
        train_states = self._states(self.train_records, "cache train")
        dev_states = self._states(self.dev_records, "cache dev") if self.dev_records else None
        keep = self._keep_setup()
        neighbours = None
        if cfg.hard_negatives:
            vecs = train_states.pooled() if train_states is not None else self.model.encode(
                [r.code for r in self.train_records])
            neighbours = nearest_groups(np.asarray(vecs), [r.group for r in self.train_records])
        sampler = GroupBatchSampler([r.group for r in self.train_records],
                                    [r.language for r in self.train_records],
                                    cfg.groups_per_batch, cfg.per_group, cfg.seed, neighbours,
                                    monolingual_apart=cfg.monolingual_apart)
        head_params = list(self.model.head.parameters())
        bb_params = [p for p in self.model.backbone.parameters() if p.requires_grad]
        groups_opt = [{"params": head_params, "lr": cfg.lr_head}]
        if bb_params:
            groups_opt.append({"params": bb_params, "lr": cfg.lr_backbone})
        opt = torch.optim.AdamW(groups_opt, weight_decay=cfg.weight_decay)
        # Linear warm-up of the backbone learning rate (a fresh head would otherwise push large
        # gradients into pretrained layers); the head starts at full rate.
        def set_backbone_lr(global_step: int) -> None:
            if bb_params:
                opt.param_groups[1]["lr"] = warmup_lr(cfg.lr_backbone, global_step, cfg.warmup_steps)
        state = self._load_checkpoint(opt) if not restart else None
        if state is None:
            state = {"epoch": 0, "step": 0, "best": -1.0, "best_epoch": -1, "bad_epochs": 0}
            if self.dev_records:
                score = self.dev_score(dev_states)
                self.history.log_epoch(0, None, score, self.model.head.control_weight_snapshot())
                self.log(f"epoch 0 (before training): dev MAP@R {score:.4f}")
            self._save_best()
            state["best"] = self.history.epochs[-1]["dev_map_at_r"] if self.dev_records else -1e9
            state["best_epoch"] = 0
        else:
            self.log(f"resumed from {self.run_dir / 'checkpoint'} at epoch {state['epoch'] + 1}, "
                     f"step {state['step']}")
        gid = {g: i for i, g in enumerate(sorted({r.group for r in self.train_records}))}
        group_ids = [gid[r.group] for r in self.train_records]
        t_start = time.time()
        out_of_time = False
        while state["epoch"] < cfg.epochs and state["bad_epochs"] < cfg.patience and not out_of_time:
            epoch = state["epoch"] + 1
            batches = sampler.epoch(epoch)
            if self.max_steps_per_epoch > 0:
                batches = batches[:self.max_steps_per_epoch]
            self.model.train()
            t0, losses = time.time(), []
            bar = tqdm(total=len(batches), initial=state["step"], desc=f"epoch {epoch}", unit="batch",
                       disable=not self.progress)
            for step in range(state["step"], len(batches)):
                idx = batches[step]
                emb = self._embed(self.train_records, train_states, idx)
                labels = torch.tensor([group_ids[i] for i in idx], device=self.device)
                loss = in_batch_loss(emb, labels, cfg.temperature, cfg.loss)
                if keep is not None:
                    loss = loss + cfg.keep_weight * self._keep_loss(keep, state.get("global_step", 0))
                set_backbone_lr(state.get("global_step", 0))
                optimizer_step(opt, loss, head_params + bb_params)
                state["global_step"] = state.get("global_step", 0) + 1
                losses.append(loss.item())
                self.history.log_step(losses[-1])
                bar.update(1)
                bar.set_postfix(loss=f"{np.mean(losses[-20:]):.3f}")
                state["step"] = step + 1
                if cfg.checkpoint_every and state["step"] % cfg.checkpoint_every == 0:
                    self._save_checkpoint(opt, state)
                    if not self.progress:  # no bar (a log file, a background job): one line per checkpoint
                        self.log(progress_line(f"{epoch}/{cfg.epochs}", state["step"], len(batches), losses,
                                               opt.param_groups[-1]["lr"], time.time() - t0))
                if cfg.time_budget and time.time() - t_start > cfg.time_budget:
                    out_of_time = True
                    self.log(f"time budget of {cfg.time_budget:.0f}s used up at epoch {epoch}, "
                             f"step {state['step']}/{len(batches)}: stopping")
                    break
            bar.close()
            train_loss = float(np.mean(losses)) if losses else None
            score = self.dev_score(dev_states) if self.dev_records else -float(train_loss or 0.0)
            self.history.log_epoch(epoch, train_loss, score if self.dev_records else None,
                                   self.model.head.control_weight_snapshot(), seconds=time.time() - t0)
            improved = score > state["best"]
            if improved:
                state.update(best=score, best_epoch=epoch, bad_epochs=0)
                self._save_best()
            else:
                state["bad_epochs"] += 1
            self.log(f"epoch {epoch}: loss {train_loss:.4f}" + (f", dev MAP@R {score:.4f}" if self.dev_records
                     else "") + (" (best)" if improved else "") + f", {time.time() - t0:.0f}s")
            state.update(epoch=epoch, step=0)
            self._save_checkpoint(opt, state)
            self.history.save(self.run_dir, plot=self.plot_history)
        return self._finish(state, dev_states)

    def _finish(self, state: dict, dev_states: TokenStates | None) -> ConbaModel:
        best = ConbaModel.load(self.run_dir / "best", trust_remote_code=self.cfg.trust_remote_code)
        best.info = {**self.model.info, "best_epoch": state["best_epoch"], "dev_map_at_r": state["best"]}
        self.model = best.to(self.device)
        if self.dev_records:
            emb = self.embed_all(self.dev_records, dev_states)
            i, j, labels = balanced_pairs([r.group for r in self.dev_records],
                                          [r.language for r in self.dev_records], seed=self.cfg.seed)
            best.threshold = float(calibrate_threshold(np.sum(emb[i] * emb[j], axis=1), labels))
        self.history.save(self.run_dir, plot=self.plot_history)
        best.to("cpu")
        best.save(self.out, dtype=self.cfg.save_dtype)
        write_json_atomic(self.run_dir / "result.json", {"best_epoch": state["best_epoch"],
                                                         "dev_map_at_r": state["best"],
                                                         "threshold": best.threshold})
        self.log(f"saved {self.out} (best epoch {state['best_epoch']}, dev MAP@R {state['best']:.4f}, "
                 f"threshold {best.threshold})")
        return best


def canonical_backbone(name: str) -> str:
    """The embedded default backbone's one name for any of its aliases; other names unchanged."""
    from conba.encoder.backbone import EMBEDDED_NAME, is_embedded

    return EMBEDDED_NAME if is_embedded(name) else name


def train(config: TrainConfig, restart: bool = False, progress: bool = True, log=print) -> ConbaModel:
    return Trainer(config, progress=progress, log=log).fit(restart=restart)

