"""The continued-pretraining loop behind ``conba pretrain``: MLM, RTD or both, with checkpoints.

Glossary: b batch, l tokens, d backbone width.

Every step draws its batch from a seeded per-epoch permutation of the token windows and a fresh
mask (dynamic masking); masks, samples and dropout are seeded by (seed, step), so a resumed run
continues exactly where it stopped. The result is a plain Hugging Face backbone folder
(``config.json``, ``model.safetensors``, tokenizer files) that ``conba train --backbone OUT`` loads,
plus ``pretrain_config.json``, ``pretrain_history.json``, ``pretrain_curves.png`` and
``pretrain_result.json`` (written last: its presence marks a finished run).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import cast

import numpy as np
import torch

from conba.encoder import adapter
from conba.encoder.backbone import BACKBONE_DIR
from conba.errors import ConfigError, UsageError
from conba.pretrain.config import CONFIG_NAME, PretrainConfig
from conba.pretrain.corpus import read_texts, windows
from conba.pretrain.masking import mask_tokens, replaced_token_labels, special_tokens_mask
from conba.pretrain.mlm import MLMHead, mlm_loss
from conba.pretrain.rtd import DiscriminatorHead, Generator, discriminator_loss, generator_step
from conba.train.checkpoint import load_checkpoint, remove_checkpoint, save_checkpoint
from conba.train.loop import autocast, optimizer_step, progress_line
from conba.utils.io import read_json, replace_dir, write_json_atomic

RESULT_NAME = "pretrain_result.json"
LOG_EVERY = 10


class Pretrainer:
    def __init__(self, config: PretrainConfig, progress: bool = True, log=print):
        from conba.encoder.backbone import BackboneError, load_hf
        from conba.settings import resolve_device

        self.cfg = cfg = config.validate()
        self.progress, self.log = progress, log
        self.out = Path(cfg.out)
        self.ck_dir = self.out / ".checkpoint"
        self.device = resolve_device(cfg.device)
        self.tokenizer, self.model = load_hf(cfg.backbone)
        try:  # the generator shares the backbone's embedding layer, conba runs its layers
            adapter.require(self.model.config, "own-loop", "MLM/RTD pretraining")
        except ConfigError as exc:
            raise BackboneError(str(exc)) from None
        if self.tokenizer.mask_token_id is None:
            raise BackboneError(f"the tokenizer of '{cfg.backbone}' has no mask token; MLM/RTD need one")
        self.max_length = min(cfg.max_length, adapter.max_tokens(self.model.config))
        self.windows = windows(read_texts(cfg.data), self.tokenizer, self.max_length, cfg.max_windows_per_file)
        self.vocab = min(len(self.tokenizer), self.model.get_input_embeddings().num_embeddings)
        # [CLS], [SEP], [PAD]... are never chosen; [UNK] may be, as in BERT
        self.special_ids = [i for i in self.tokenizer.all_special_ids if i != self.tokenizer.unk_token_id]
        torch.manual_seed(cfg.seed)
        width = int(self.model.config.hidden_size)
        emb = self.model.get_input_embeddings()
        self.heads: dict[str, torch.nn.Module] = {}
        if cfg.objective in ("mlm", "both"):
            self.heads["mlm_head"] = MLMHead(width, emb)
        if cfg.objective in ("rtd", "both"):
            self.heads["generator"] = Generator(self.model, cfg.generator_size, cfg.generator_layers)
            self.heads["disc_head"] = DiscriminatorHead(width)
        self.model.to(self.device).train()
        for head in self.heads.values():
            head.to(self.device).train()
        self.opt = self._optimizer()
        self.history: list[dict] = []
        self._perms: dict[int, np.ndarray] = {}

    # ------------------------------------------------------------------ set-up
    def _modules(self) -> dict[str, torch.nn.Module]:
        return {"backbone": self.model, **self.heads}

    def _optimizer(self) -> torch.optim.Optimizer:
        decay: list[torch.nn.Parameter] = []
        no_decay: list[torch.nn.Parameter] = []
        seen: set[int] = set()
        for module in self._modules().values():
            for name, p in module.named_parameters():
                if id(p) in seen:
                    continue
                seen.add(id(p))
                (no_decay if p.ndim < 2 or "norm" in name.lower() else decay).append(p)
        return torch.optim.AdamW([{"params": decay, "weight_decay": self.cfg.weight_decay},
                                  {"params": no_decay, "weight_decay": 0.0}], lr=self.cfg.lr)

    def lr_at(self, step: int) -> float:
        """Linear warm-up over ``warmup`` × steps, then linear decay to 0."""
        warm = int(self.cfg.warmup * self.cfg.steps)
        if step < warm:
            return self.cfg.lr * (step + 1) / warm
        return self.cfg.lr * max(0.0, (self.cfg.steps - step) / max(1, self.cfg.steps - warm))

    def batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Token ids and attention mask (b, l) of step ``step``: consecutive slices of per-epoch permutations."""
        n, b = len(self.windows), self.cfg.batch_size
        rows = []
        for k in range(step * b, step * b + b):
            epoch, pos = divmod(k, n)
            if epoch not in self._perms:
                self._perms = {epoch: np.random.default_rng([self.cfg.seed, epoch]).permutation(n)}
            rows.append(self.windows[int(self._perms[epoch][pos])])
        width = max(len(r) for r in rows)
        pad = adapter.pad_id(self.tokenizer)
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, :len(r)] = torch.tensor(r)
            mask[i, :len(r)] = 1
        return ids, mask

    def _data_epoch(self, steps: int) -> str:
        """``2/3``: the pass over the windows that step ``steps`` (1-based) draws from, of the run's passes."""
        n, b = len(self.windows), self.cfg.batch_size
        return f"{(steps * b - 1) // n + 1}/{-(-self.cfg.steps * b // n)}"

    def _autocast(self):
        return autocast(self.device, self.cfg.amp)

    # ------------------------------------------------------------------ one step
    def train_step(self, step: int) -> dict:
        cfg = self.cfg
        torch.manual_seed(cfg.seed * 1_000_003 + step)  # dropout and generator sampling
        gen = torch.Generator().manual_seed(cfg.seed * 1_000_003 + step)
        ids, attn = self.batch(step)
        special = special_tokens_mask(ids, attn, self.special_ids)
        masked, labels, chosen = mask_tokens(ids, special, vocab_size=self.vocab,
                                             mask_token_id=self.tokenizer.mask_token_id, mask_prob=cfg.mask_prob,
                                             mask_token_prob=cfg.mask_token_prob,
                                             random_token_prob=cfg.random_token_prob, generator=gen)
        ids, attn, masked, labels, chosen = (t.to(self.device) for t in (ids, attn, masked, labels, chosen))
        stats: dict = {}
        total = torch.zeros((), device=self.device)
        with self._autocast():
            if "mlm_head" in self.heads:
                hidden = self.model(input_ids=masked, attention_mask=attn).last_hidden_state
                loss, _ = mlm_loss(cast(MLMHead, self.heads["mlm_head"]), hidden, labels)
                total = total + cfg.mlm_weight * loss
                stats["mlm"] = loss.item()
            if "generator" in self.heads:
                gen_loss, sampled = generator_step(cast(Generator, self.heads["generator"]), masked, attn, labels)
                corrupted, rtd_labels = replaced_token_labels(ids, chosen, sampled)
                hidden = self.model(input_ids=corrupted, attention_mask=attn).last_hidden_state
                disc, acc = discriminator_loss(self.heads["disc_head"](hidden), rtd_labels, attn)
                total = total + gen_loss + cfg.rtd_weight * disc
                stats.update(gen=gen_loss.item(), disc=disc.item(), disc_acc=acc,
                             replaced=float(rtd_labels[attn.bool()].float().mean()))
        for group in self.opt.param_groups:
            group["lr"] = self.lr_at(step)
        optimizer_step(self.opt, total, [p for g in self.opt.param_groups for p in g["params"]])
        stats["loss"] = total.item()
        stats["tokens"] = int(attn.sum())
        return stats

    # ------------------------------------------------------------------ checkpoints
    def _save_checkpoint(self, step: int) -> None:
        save_checkpoint(self.ck_dir, self.cfg.run_signature(), {"step": step, "history": self.history},
                        modules=self._modules(), optimizer=self.opt)

    def _load_checkpoint(self) -> int:
        state = load_checkpoint(self.ck_dir, self.cfg.run_signature(), modules=self._modules(), optimizer=self.opt)
        if state is None:
            return 0
        self.history = state["history"]
        return int(state["step"])

    # ------------------------------------------------------------------ main loop
    def fit(self, restart: bool = False) -> Path:
        from tqdm.auto import tqdm

        cfg = self.cfg
        if self.out.is_dir() and any(self.out.iterdir()) and not (
                self.ck_dir.exists() or (self.out / CONFIG_NAME).exists()):
            raise UsageError(f"{self.out}: folder exists and is not a pretraining run; choose another --out")
        if restart:
            remove_checkpoint(self.ck_dir)
            (self.out / RESULT_NAME).unlink(missing_ok=True)
        elif (self.out / RESULT_NAME).exists():
            done = read_json(self.out / RESULT_NAME)
            if done.get("signature") == cfg.run_signature():
                self.log(f"{self.out}: already finished ({done.get('steps')} steps); --restart to train again")
                return self.out
            raise UsageError(f"{self.out}: holds a finished run with other settings; use --restart or another --out")
        self.out.mkdir(parents=True, exist_ok=True)
        cfg.save(self.out / CONFIG_NAME)
        start = self._load_checkpoint()
        self.log(f"pretrain {cfg.objective}: {len(self.windows)} windows of ≤ {self.max_length} tokens, "
                 f"{cfg.steps} steps × {cfg.batch_size}, device {self.device}"
                 + (f"; resumed at step {start}" if start else ""))
        bar = tqdm(total=cfg.steps, initial=start, desc=f"pretrain {cfg.objective}", unit="step",
                   disable=not self.progress)
        recent: list[dict] = []
        losses: list[float] = []  # the last 20 total losses, for the line logged at a checkpoint without a bar
        every = max(1, min(LOG_EVERY, cfg.steps // 20))  # short runs log every step
        t0, tokens = time.time(), 0
        for step in range(start, cfg.steps):
            stats = self.train_step(step)
            recent.append(stats)
            losses = [*losses[-19:], stats["loss"]]
            tokens += stats["tokens"]
            bar.update(1)
            bar.set_postfix({k: f"{np.mean([r[k] for r in recent[-every:]]):.3f}"
                             for k in ("loss", "mlm", "gen", "disc", "disc_acc") if k in stats})
            if (step + 1) % every == 0 or step + 1 == cfg.steps:
                keys = [k for k in stats if k != "tokens"]
                self.history.append({"step": step + 1, "lr": self.lr_at(step),
                                     **{k: float(np.mean([r[k] for r in recent])) for k in keys}})
                recent = []
            if cfg.checkpoint_every and (step + 1) % cfg.checkpoint_every == 0 and step + 1 < cfg.steps:
                self._save_checkpoint(step + 1)
                if not self.progress:  # no bar (a log file, a background job): one line per checkpoint
                    self.log(progress_line(self._data_epoch(step + 1), step + 1, cfg.steps, losses,
                                           self.lr_at(step), time.time() - t0))
        bar.close()
        seconds = time.time() - t0
        self._finish(seconds, tokens, cfg.steps - start)
        return self.out

    def _finish(self, seconds: float, tokens: int, steps_run: int) -> None:
        # The backbone goes to OUT/backbone in one crash-safe swap (utils.io.replace_dir: a crash leaves
        # the previous backbone or its .old copy, which loading falls back to); `--backbone OUT` finds it.
        tmp = self.out / ".backbone.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        self.model.save_pretrained(tmp, safe_serialization=True)
        self.tokenizer.save_pretrained(tmp)
        replace_dir(tmp, self.out / BACKBONE_DIR)
        write_json_atomic(self.out / "pretrain_history.json", self.history)
        _plot(self.history, self.out / "pretrain_curves.png", self.cfg)
        last = self.history[-1] if self.history else {}
        result = {"steps": self.cfg.steps, "objective": self.cfg.objective, "windows": len(self.windows),
                  "seconds_this_run": round(seconds, 1), "steps_this_run": steps_run,
                  "tokens_per_second": round(tokens / max(seconds, 1e-9), 1), "device": str(self.device),
                  "final": last, "signature": self.cfg.run_signature()}
        write_json_atomic(self.out / RESULT_NAME, result)
        remove_checkpoint(self.ck_dir)
        self.log(f"saved backbone to {self.out} ({steps_run} steps in {seconds:.0f}s); "
                 f"use it with: conba train ... --backbone {self.out}")


def _plot(history: list[dict], path: Path, cfg: PretrainConfig) -> None:
    import importlib.util

    if not history or importlib.util.find_spec("matplotlib") is None:  # optional: pip install 'conba[plots]'
        return
    import matplotlib

    from conba.utils.io import atomic_write

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k in ("loss", "mlm", "gen", "disc", "disc_acc") if k in history[0]]
    cols = min(3, len(keys))
    rows = -(-len(keys) // cols)
    fig, grid = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
    axes = grid.ravel()
    for ax in axes[len(keys):]:
        ax.axis("off")
    steps = [h["step"] for h in history]
    names = {"loss": "total loss", "mlm": "backbone MLM loss", "gen": "generator MLM loss",
             "disc": "discriminator BCE", "disc_acc": "discriminator accuracy"}
    for ax, key in zip(axes, keys):
        ax.plot(steps, [h[key] for h in history], marker="o" if len(steps) <= 30 else None, ms=3, label=key)
        ax.set_title(names[key])
        ax.set_xlabel("step (mean over the logged interval)")
        ax.set_ylabel(key)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"conba pretrain --objective {cfg.objective} (batch {cfg.batch_size}, ≤{cfg.max_length} tokens)")
    fig.tight_layout()
    atomic_write(path, lambda p: fig.savefig(p, dpi=90, format="png", bbox_inches="tight"))
    plt.close(fig)


def pretrain(config: PretrainConfig, restart: bool = False, progress: bool = True, log=print) -> Path:
    return Pretrainer(config, progress=progress, log=log).fit(restart=restart)
