"""Pieces shared by conba's training loops (``conba train``, ``conba pretrain``, ``conba prune train``).

* :func:`autocast`: bfloat16 autocast on CUDA when asked for, else nothing (CPU runs stay float32).
* :func:`warmup_lr`: linear warm-up of a learning rate, 1/w of the rate at the first step.

Schedules are kept as plain functions of the global step rather than ``torch`` / ``transformers``
scheduler objects: the step is already in every checkpoint, so a resumed run gets the same rate
without a scheduler state to save, and ``transformers.get_linear_schedule_with_warmup`` starts the
warm-up at 0 instead of 1/w, which would change every trained model.
"""

from __future__ import annotations

import contextlib

import torch


def autocast(device: torch.device, enabled: bool) -> contextlib.AbstractContextManager:
    """bfloat16 autocast on a CUDA ``device`` when ``enabled``; a no-op context otherwise."""
    if enabled and device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def warmup_lr(base: float, step: int, warmup_steps: int) -> float:
    """Learning rate at optimisation step ``step`` (0-based) of a linear warm-up over ``warmup_steps``."""
    return base * min(1.0, (step + 1) / max(warmup_steps, 1))
