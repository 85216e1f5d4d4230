"""Scorer-training checkpoints: scorer weights + AdamW state + position, saved after every batch.

Files in the work folder: ``scorers/`` (prune_config.json + prune.safetensors), ``optimizer.safetensors``
(the AdamW moments and step counts) and ``scorers.json`` (settings key, epoch, batches done in it,
running sums, finished epochs' history). Each file is written atomically; the JSON is written last,
so it never points at weights newer or older than itself by more than the batch being written.
"""

from __future__ import annotations

from pathlib import Path

import torch

from conba.encoder.sdtp.scorer import PruneModule, load_pruner, save_pruner
from conba.utils.io import atomic_write, read_json, write_json_atomic

STATE = "scorers.json"
WEIGHTS = "scorers"
OPTIMIZER = "optimizer.safetensors"


def save_checkpoint(work: Path, pruner: PruneModule, opt: torch.optim.Optimizer, state: dict) -> None:
    from safetensors.torch import save_file

    save_pruner(pruner, work / WEIGHTS)
    tensors = {}
    for idx, st in opt.state_dict()["state"].items():
        for name, value in st.items():
            tensors[f"{idx}.{name}"] = torch.as_tensor(value).detach().cpu().contiguous().clone()
    atomic_write(work / OPTIMIZER, lambda tmp: save_file(tensors, str(tmp)))
    write_json_atomic(work / STATE, state)


def load_checkpoint(work: Path, pruner: PruneModule, opt: torch.optim.Optimizer, key: str) -> dict | None:
    """Restore weights and optimizer state in place; returns the saved state dict, or None when there is
    no checkpoint for these settings."""
    from safetensors.torch import load_file

    if not (work / STATE).exists() or not (work / WEIGHTS / "prune.safetensors").exists():
        return None
    state = read_json(work / STATE)
    if state.get("key") != key:
        return None
    pruner.load_state_dict(load_pruner(work / WEIGHTS).state_dict())
    if (work / OPTIMIZER).exists():
        flat = load_file(str(work / OPTIMIZER))
        sd = opt.state_dict()
        restored: dict[int, dict] = {}
        for name, value in flat.items():
            idx, field = name.split(".", 1)
            restored.setdefault(int(idx), {})[field] = value
        sd["state"] = restored
        opt.load_state_dict(sd)
    return state
