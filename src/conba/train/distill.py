"""``conba distill``: a shallower student of a conba model, for speed.

Glossary: b batch, l tokens, d embedding width, f feed-forward width, L transformer layers.

The student is the teacher with fewer transformer layers, initialised by *layer dropping*: it keeps
the teacher's embeddings (frozen) and the layers ``layers`` (e.g. 0, 2, 4 of MiniLM's 6), in order,
with the teacher's head, pooling and input view; with ``ffn_size`` each kept layer's feed-forward block is
also narrowed to its most important neurons (:mod:`conba.encoder.ffn`). It then learns to reproduce the
teacher's vectors on unlabelled code (the ``code`` of training JSONL files and functions from real repositories):

    loss = (1 - cos(s_i, t_i)).mean()  +  sim_weight * KL(softmax(T T^T / tau) || softmax(S S^T / tau))

the first term matches each vector, the second the in-batch similarity structure (what retrieval
ranks on), both on L2-normalised vectors S (b, d) of the student and T (b, d) of the teacher.
``hidden_weight`` and ``attention_weight`` add layer-wise terms (token states of every kept layer; the
last layer's attention and value relations: :mod:`conba.train.layer_distill`); the teacher then runs
beside the student in each step.

After every epoch the student is scored on the dev files (mean cross-language MAP@R over them, the
same subset each time); the best epoch is kept in ``OUT/distill/best`` and, at the end, saved as
``OUT`` itself (a conba model folder, a delta over the embedded backbone when the teacher is one),
as ``conba train`` does; the run's files (teacher vectors, checkpoint, distill.json) are in
``OUT/distill``. A checkpoint every ``checkpoint_every`` steps (and at
the end of each epoch) lets a killed run resume where it stopped; ``--restart`` discards it.
"""

from __future__ import annotations

import copy
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from conba.errors import ConfigError
from conba.train.distill_config import DistillConfig
from conba.utils.io import replace_dir, write_json_atomic

__all__ = ["DistillConfig", "Distiller", "cut_student", "distill", "distill_loss", "dev_score", "make_student",
           "start_student"]


def make_student(teacher, layers: list[int], ffn_size: int = 0, codes: list[str] | None = None):
    """A copy of ``teacher`` keeping only the transformer ``layers`` (layer dropping); no pruner, no
    thresholds (they belong to the teacher's similarities: calibrate the student). The student scores
    as its teacher does: same lexical weight (the fused score's share of the identifier-word cosine).

    ``ffn_size`` (0: the teacher's) also narrows every kept layer's feed-forward block to that many
    neurons, the most important ones on ``codes`` (:func:`conba.encoder.ffn.ffn_importance`)."""
    from conba.encoder.backbone import Backbone, keep_layers
    from conba.model import ConbaModel

    hf = copy.deepcopy(teacher.backbone.model)
    keep_layers(hf, list(layers))
    cfg = copy.deepcopy(teacher.backbone.config)
    cfg.num_layers = len(layers)
    backbone = Backbone(cfg, tokenizer=teacher.backbone.tokenizer, model=hf)
    if ffn_size:
        narrow_student(backbone, ffn_size, codes)
    student = ConbaModel(backbone, copy.deepcopy(teacher.head), view=teacher.view)
    student.max_windows = teacher.max_windows
    student.lexical_weight = teacher.lexical_weight
    return student


def narrow_student(backbone, size: int, codes: list[str] | None) -> None:
    """Narrow ``backbone``'s feed-forward blocks to their ``size`` most important neurons on ``codes``, in
    place; its config records the width (:mod:`conba.encoder.ffn`)."""
    from conba.encoder.ffn import ffn_importance, narrow_ffn

    if not codes:
        raise ConfigError("a narrower student needs code to rank its feed-forward neurons on")
    scores = ffn_importance(backbone, codes)
    narrow_ffn(backbone.model, size, keep=[s.topk(size).indices for s in scores])
    backbone.config.ffn_size = size


def distill_loss(s: torch.Tensor, t: torch.Tensor, temperature: float, sim_weight: float) -> torch.Tensor:
    """Args: s, t: L2-normalised student / teacher vectors, shape (b, d). Returns the scalar loss."""
    loss = (1 - (s * t).sum(-1)).mean()
    if sim_weight and s.shape[0] > 1:
        log_p = F.log_softmax(s @ s.T / temperature, dim=-1)   # (b, b)
        q = F.softmax(t @ t.T / temperature, dim=-1)           # (b, b)
        loss = loss + sim_weight * F.kl_div(log_p, q, reduction="batchmean")
    return loss


def dev_score(model, dev_sets: list[list]) -> dict[str, float]:
    """Mean cross-language MAP@R per dev set and their mean (``"mean"``)."""
    from conba.eval.metrics import records_map_at_r

    scores: dict[str, Any] = {}
    for records in dev_sets:
        emb = model.encode([r.code for r in records], [r.language for r in records], show_progress_bar=False)
        scores[records[0].source or f"dev{len(scores)}"] = records_map_at_r(emb, records)
    scores["mean"] = float(np.mean(list(scores.values()))) if scores else float("nan")
    return scores


class Distiller:
    def __init__(self, cfg: DistillConfig, log: Callable[[str], None] = print, progress: bool = True,
                 device: str = "cpu"):
        from conba.settings import resolve_device

        self.device = resolve_device(device)  # teacher and student run here, in float32
        self.cfg = cfg.validate()
        self.log = log
        self.progress = progress
        self.out = Path(cfg.out)
        self.run_dir = self.out / "distill"  # the run's files; the student itself is saved in OUT

    def run(self, restart: bool = False):
        from tqdm.auto import tqdm

        from conba.data import load_records, subset_groups
        from conba.model import load_model
        from conba.train.checkpoint import (
            CheckpointMismatch,
            check_checkpoint,
            load_checkpoint,
            remove_checkpoint,
            save_checkpoint,
        )
        from conba.train.distill_data import collect_snippets, length_batches, teacher_vectors
        from conba.train.loop import optimizer_step, progress_line, scheduled_lr

        cfg, out = self.cfg, self.run_dir
        out.mkdir(parents=True, exist_ok=True)
        if restart:
            remove_checkpoint(out / "checkpoint")
        try:  # before the teacher encodes anything
            check_checkpoint(out / "checkpoint", cfg.signature())
        except CheckpointMismatch as exc:
            if exc.settings == ("epochs",):  # only a linear schedule keeps its epochs in the signature
                raise CheckpointMismatch(f"{exc}; a linear schedule ends at its last epoch, so train on in a new "
                                         f"run that starts from this one: --init {out} -o NEW_DIR",
                                         exc.settings) from None
            raise
        teacher = load_model(cfg.teacher, prune=False)
        teacher.eval()
        if max(cfg.layers) >= teacher.backbone.num_layers:
            raise ConfigError(f"layers {cfg.layers}: the teacher has layers 0..{teacher.backbone.num_layers - 1}")
        snippets = collect_snippets(cfg.data, cfg.source, teacher.view, cfg.limit, cfg.source_limit, cfg.seed)
        self.log(f"{len(snippets)} training snippets ({snippets.from_source} of them functions cut from --source), "
                 f"view {teacher.view}")
        student = start_student(cfg, teacher, snippets.codes).to(self.device)  # cut (and ranked) on the CPU
        teacher.to(self.device)
        if cfg.max_length:  # a shorter window: cheaper steps; the teacher's vectors stay those of its own window
            student.backbone.config.max_length = cfg.max_length
        if cfg.layer_terms:  # refused here, before the teacher's vectors are encoded, not at the first step
            from conba.encoder.layers import require_own_loop

            require_own_loop(teacher.backbone, "layer-wise distillation (--hidden-weight, --attention-weight)")
            if student.head.prefix is not None:
                raise ConfigError("--hidden-weight / --attention-weight: the model puts a language code before "
                                  "the tokens (a prefix head); layer-wise distillation needs plain token states")
        targets = torch.from_numpy(teacher_vectors(teacher, snippets, out / "teacher", log=self.log))
        dev_sets = [subset_groups(load_records(p), cfg.dev_limit, cfg.seed) for p in cfg.dev]
        if cfg.layer_terms:
            teacher.backbone.set_trainable("none")  # it runs beside the student in every step
        else:
            del teacher
        student.backbone.set_trainable("full")
        params = [p for p in student.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        lengths = student.backbone.token_lengths(snippets.codes)
        state = load_checkpoint(out / "checkpoint", cfg.signature(), modules={"student": student}, optimizer=opt,
                                trainable_only=True)
        if state is None:
            base = dev_score(student, dev_sets) if dev_sets else {}
            note = "layer dropping, before distillation" if cfg.init is None else f"{cfg.init}, before this run"
            state = {"epoch": 0, "batch": 0, "step": 0, "best": None, "history": [
                {"epoch": 0, "dev": base, "note": note}]}
            self.log(f"student {cfg.layers} before distillation: dev {_fmt(base)}")
        else:
            self.log(f"resuming at epoch {state['epoch'] + 1}, batch {state['batch']}")
        total_steps = sum(len(length_batches(lengths, cfg.batch_size, cfg.max_batch_tokens, cfg.seed + e))
                          for e in range(cfg.epochs)) if cfg.lr_schedule != "constant" else 0
        t0 = time.time()
        out_of_time = False
        while state["epoch"] < cfg.epochs and not out_of_time:
            batches = length_batches(lengths, cfg.batch_size, cfg.max_batch_tokens, cfg.seed + state["epoch"])
            bar = tqdm(total=len(batches), initial=state["batch"], desc=f"epoch {state['epoch'] + 1}/{cfg.epochs}",
                       unit="batch", disable=not self.progress)
            student.train()
            losses = []
            for idx in batches[state["batch"]:]:
                enc = student.backbone.tokenize([snippets.codes[i] for i in idx])
                enc = {k: v.to(self.device) for k, v in enc.items()}
                target = targets[idx].to(self.device)
                if cfg.layer_terms:
                    loss = _layer_step_loss(cfg, student, teacher, enc, target)
                else:
                    s = F.normalize(student.embed_tokens(enc["input_ids"], enc["attention_mask"]), dim=-1)
                    loss = distill_loss(s, target, cfg.temperature, cfg.sim_weight)
                for group in opt.param_groups:
                    group["lr"] = scheduled_lr(cfg.lr, state["step"], cfg.warmup_steps, total_steps, cfg.lr_schedule)
                optimizer_step(opt, loss, params)
                losses.append(float(loss.detach()))
                state["step"] += 1
                state["batch"] += 1
                bar.update(1)
                bar.set_postfix(loss=f"{np.mean(losses[-20:]):.4f}")
                if state["step"] % cfg.checkpoint_every == 0:
                    save_checkpoint(out / "checkpoint", cfg.signature(), state, modules={"student": student},
                                    optimizer=opt, trainable_only=True)
                    if not self.progress:  # no bar (a log file, a background job): one line per checkpoint
                        self.log(progress_line(f"{state['epoch'] + 1}/{cfg.epochs}", state["batch"], len(batches),
                                               losses, opt.param_groups[0]["lr"], time.time() - t0))
                if cfg.time_budget and time.time() - t0 > cfg.time_budget:
                    out_of_time = True
                    self.log(f"time budget of {cfg.time_budget:g} s reached at batch {state['batch']}")
                    break
            bar.close()
            student.eval()
            scores = dev_score(student, dev_sets) if dev_sets else {}
            entry = {"epoch": state["epoch"] + 1, "batches": state["batch"], "train_loss": float(np.mean(losses))
                     if losses else None, "dev": scores}
            state["history"].append(entry)
            self.log(f"epoch {state['epoch'] + 1}: loss {entry['train_loss']}, dev {_fmt(scores)}")
            if not dev_sets or state["best"] is None or scores["mean"] > state["best"]["dev"]["mean"]:
                state["best"] = entry
                self._save_best(student, entry)
            if not out_of_time:
                state["epoch"] += 1
                state["batch"] = 0
            save_checkpoint(out / "checkpoint", cfg.signature(), state, modules={"student": student},
                            optimizer=opt, trainable_only=True)
        write_json_atomic(out / "distill.json", {"config": cfg.to_dict(), "snippets": len(snippets),
                                                 "history": state["history"], "best": state["best"]})
        from conba.model import ConbaModel

        best = ConbaModel.load(out / "best")
        best.save(self.out, dtype="float16")  # as stored in best (already rounded): the same weights
        return ConbaModel.load(self.out)

    def _save_best(self, student, entry: dict) -> None:
        cfg = self.cfg
        student.info = {"distilled_from": cfg.teacher, "teacher_layers": list(cfg.layers),
                        "distill": {k: v for k, v in cfg.to_dict().items() if k not in ("out",)},
                        "epoch": entry["epoch"], "dev_map_at_r": entry["dev"]}
        tmp = self.run_dir / "best.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        copy.deepcopy(student).cpu().save(tmp, dtype="float16")  # a copy: float16 rounds in place
        replace_dir(tmp, self.run_dir / "best")  # a crash at any moment leaves best or best.old


def _layer_step_loss(cfg: DistillConfig, student, teacher, enc: dict, targets: torch.Tensor) -> torch.Tensor:
    """The vector loss plus the layer-wise terms (conba.train.layer_distill) of one batch; the teacher runs
    on the same tokens. Args: targets: the teacher's cached vectors (b, d)."""
    from conba.train.layer_distill import layer_loss, layer_trace

    ids, mask = enc["input_ids"], enc["attention_mask"]
    trace = layer_trace(student.backbone, ids, mask)
    s = F.normalize(student.head(*student.backbone.read_out(trace.outputs[-1], mask.bool()), None), dim=-1)
    with torch.no_grad():
        t_trace = layer_trace(teacher.backbone, ids, mask)
    return distill_loss(s, targets, cfg.temperature, cfg.sim_weight) + layer_loss(
        trace, t_trace, list(cfg.layers), student.backbone, teacher.backbone, mask, cfg.hidden_weight,
        cfg.attention_weight)


def _ffn_sample(cfg: DistillConfig, codes: list[str]) -> list[str] | None:
    """The seeded sample of ``ffn_sample`` training snippets the neurons are ranked on (None: no narrowing)."""
    if not cfg.ffn_size:
        return None
    picks = np.random.default_rng(cfg.seed).permutation(len(codes))[:cfg.ffn_sample]
    return [codes[i] for i in sorted(picks)]


def start_student(cfg: DistillConfig, teacher, codes: list[str]):
    """The student a run starts from: ``cfg.init`` (narrowed to ``ffn_size`` if that is set and smaller) or,
    without it, a fresh cut of ``teacher`` (:func:`cut_student`). ``codes``: the training snippets."""
    return cut_student(cfg, teacher, codes) if cfg.init is None else _init_student(cfg, teacher, codes)


def cut_student(cfg: DistillConfig, teacher, codes: list[str]):
    """The student made by layer dropping (and, with ``ffn_size``, narrowing, its neurons ranked on a seeded
    sample of ``ffn_sample`` of the training snippets ``codes``)."""
    from conba.encoder.ffn import ffn_size

    if cfg.ffn_size > ffn_size(teacher.backbone.model):
        raise ConfigError(f"ffn_size {cfg.ffn_size}: the teacher's feed-forward blocks have "
                          f"{ffn_size(teacher.backbone.model)} neurons")
    return make_student(teacher, cfg.layers, cfg.ffn_size, _ffn_sample(cfg, codes))


def _init_student(cfg: DistillConfig, teacher, codes: list[str]):
    """The student of ``cfg.init`` (a saved model with ``len(cfg.layers)`` layers and the teacher's width),
    to train further: a run that extends an earlier one with new data or more epochs. With ``ffn_size``
    below its feed-forward width, it is narrowed first (as a fresh cut would be)."""
    from conba.encoder.ffn import ffn_size
    from conba.model import load_model

    assert cfg.init is not None  # the caller resumes from a student folder
    student = load_model(cfg.init, prune=False)
    if student.backbone.num_layers != len(cfg.layers) or student.dim != teacher.dim:
        raise ConfigError(f"--init {cfg.init}: {student.backbone.num_layers} layers of width {student.dim}, but "
                          f"-L {','.join(map(str, cfg.layers))} asks for {len(cfg.layers)} of width {teacher.dim}")
    has, wanted = ffn_size(student.backbone.model), cfg.ffn_size or ffn_size(teacher.backbone.model)
    if cfg.ffn_size and has > wanted:
        narrow_student(student.backbone, wanted, _ffn_sample(cfg, codes))
    elif has != wanted:
        raise ConfigError(f"--init {cfg.init}: feed-forward blocks of {has} neurons, but the run asks for {wanted}"
                          f" (--ffn-size; a student can be narrowed, not widened)")
    if student.view != teacher.view:
        raise ConfigError(f"--init {cfg.init}: input view {student.view!r}, the teacher's is {teacher.view!r}")
    # its thresholds were calibrated for the weights it had; training moves its similarities, so the new
    # student starts without them, as a student made by layer dropping does (`conba calibrate` it)
    student.threshold, student.clone_threshold = None, None
    return student


def _fmt(scores: dict) -> str:
    return ", ".join(f"{k} {v:.4f}" for k, v in scores.items()) or "(no dev files)"


def distill(cfg: DistillConfig, restart: bool = False, log: Callable[[str], None] = print, progress: bool = True,
            device: str = "cpu"):
    """Train a student (see the module docstring); returns the best student, loaded from ``OUT``."""
    return Distiller(cfg, log, progress, device).run(restart)
