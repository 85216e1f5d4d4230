"""Pieces shared by conba's training loops (``conba train``, ``conba pretrain``, ``conba prune train``).

* :func:`autocast`: bfloat16 autocast on CUDA when asked for, else nothing (CPU runs stay float32).
* :func:`warmup_lr`: linear warm-up of a learning rate, 1/w of the rate at the first step.
* :func:`scheduled_lr`: the warm-up, then the rate held (``constant``) or decayed linearly to 0 at the
  run's last step (``linear``).
* :func:`optimizer_step`: zero the gradients, backward, clip (when asked), step.
* :func:`progress_line`: the line a loop logs at each checkpoint when no progress bar is shown (a log
  file, a background job), so that a long CPU run says how far it is.
* Checkpoints (weights, optimizer, RNG, position, settings key): :mod:`conba.train.checkpoint`.

Schedules are kept as plain functions of the global step rather than ``torch`` / ``transformers``
scheduler objects: the step is already in every checkpoint, so a resumed run gets the same rate
without a scheduler state to save, and ``transformers.get_linear_schedule_with_warmup`` starts the
warm-up at 0 instead of 1/w, which would change every trained model.

The outer loops stay with their commands: they iterate different things (epochs of P×K batches with a
dev evaluation, early stopping and a time budget; one global step count over seeded windows; saliency
batches reshuffled per epoch, checkpointed after every batch), seed their randomness differently and
log differently. A shared skeleton would take each loop's control flow apart into callbacks without
removing a line, and any change to the order of seeding, stepping and saving would change trained
results; what they do identically (autocast, warm-up, the optimiser step, checkpoints) is shared here.
"""

from __future__ import annotations

import contextlib

import torch

from conba.train.config import LR_SCHEDULES


def autocast(device: torch.device, enabled: bool) -> contextlib.AbstractContextManager:
    """bfloat16 autocast on a CUDA ``device`` when ``enabled``; a no-op context otherwise."""
    if enabled and device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def warmup_lr(base: float, step: int, warmup_steps: int) -> float:
    """Learning rate at optimisation step ``step`` (0-based) of a linear warm-up over ``warmup_steps``."""
    return base * min(1.0, (step + 1) / max(warmup_steps, 1))


def scheduled_lr(base: float, step: int, warmup_steps: int, total_steps: int, schedule: str = "constant") -> float:
    """Learning rate at optimisation step ``step`` (0-based) of a run of ``total_steps``: the linear warm-up
    of :func:`warmup_lr`, then ``base`` (``constant``) or a linear decay from ``base`` after the warm-up to 0
    after the last step (``linear``)."""
    if schedule not in LR_SCHEDULES:
        raise ValueError(f"lr schedule must be one of {', '.join(LR_SCHEDULES)}, got {schedule!r}")
    rate = warmup_lr(base, step, warmup_steps)
    if schedule == "linear" and step >= warmup_steps:
        span = max(total_steps - warmup_steps, 1)
        rate = base * max(0.0, (total_steps - step) / span)
    return rate


def progress_line(epoch: str, batch: int, batches: int, losses: list[float], lr: float, seconds: float) -> str:
    """``epoch 2/4, batch 150/636: loss 0.0612, lr 5.00e-05, 840 s; checkpoint saved`` (loss: the mean of
    the last 20 steps)."""
    loss = f"{sum(losses[-20:]) / len(losses[-20:]):.4f}" if losses else "-"
    return f"epoch {epoch}, batch {batch}/{batches}: loss {loss}, lr {lr:.2e}, {seconds:.0f} s; checkpoint saved"


def optimizer_step(opt: torch.optim.Optimizer, loss: torch.Tensor,
                   clip_params: list[torch.nn.Parameter] | None = None, max_norm: float = 1.0) -> None:
    """``loss.backward()`` into freshly zeroed gradients, clip their global norm over ``clip_params`` to
    ``max_norm`` (no clipping when None), ``opt.step()``."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if clip_params is not None:
        torch.nn.utils.clip_grad_norm_(clip_params, max_norm)
    opt.step()
