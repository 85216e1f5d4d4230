"""Heads and their training for the product's and the research suite's tests: a perturbed head, the bit-exact
save/load check every head kind must pass, the trainer configuration on the tiny data, and one training run
checked end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from conba.heads import Head, HeadConfig, build_head, load_head, save_head
from conba.model import ConbaModel, load_model
from conba.train.config import TrainConfig
from conba.train.trainer import Trainer


def perturbed_head(cfg: dict, dtype: torch.dtype = torch.float32) -> Head:
    """A head of ``cfg`` whose every parameter is moved off its initial value (seeded)."""
    torch.manual_seed(0)
    head = build_head(HeadConfig(**cfg)).to(dtype)
    with torch.no_grad():
        for p in head.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return head


def check_round_trip(cfg: dict, dtype: torch.dtype, folder: Path) -> tuple[Head, Head]:
    """Save a perturbed head of ``cfg`` into ``folder`` and load it: same type, config, tensors (dtype and
    values) and outputs. Returns (saved, loaded) for the caller's own checks."""
    head = perturbed_head(cfg, dtype)
    save_head(head, folder)
    loaded = load_head(folder)
    assert type(loaded) is type(head) and loaded.config == head.config
    a, b = head.state_dict(), loaded.state_dict()
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and torch.equal(a[k], b[k]), k
    x = torch.randn(3, 6, 8, dtype=dtype)
    mask = torch.tensor([[1] * 6, [1] * 2 + [0] * 4, [0, 1, 1, 1, 1, 1]])
    ids = torch.tensor([0, 1, 2 if len(cfg.get("languages", [])) > 1 else 1])
    with torch.no_grad():
        assert torch.equal(head(x, mask, ids), loaded(x, mask, ids))
    return head, loaded


def tiny_train_config(tiny_backbone: Path, tiny_data: tuple[Path, Path], tmp_path: Path, **kw: Any) -> TrainConfig:
    """A TrainConfig over the tiny backbone and data (2 groups × 3 per batch, 2 epochs), ``kw`` on top."""
    train, dev = tiny_data
    base = dict(train=[str(train)], dev=[str(dev)], out=str(tmp_path / "out"), backbone=str(tiny_backbone),
                groups_per_batch=2, per_group=3, epochs=2, cache_dir=str(tmp_path / "cache"), patience=5)
    return TrainConfig(**{**base, **kw})  # type: ignore[arg-type]


def train_and_load(tiny_backbone: Path, tiny_data: tuple[Path, Path], tmp_path: Path, tune: str, head: str,
                   mode: str) -> tuple[ConbaModel, dict]:
    """Train a head of kind ``head`` (``tune``, ``mode``, control codes on) for 2 epochs on the tiny data and load
    the saved model: a threshold, the trained fingerprint, a history of epochs 0..2 and its curves. Returns
    (loaded model, history)."""
    c = tiny_train_config(tiny_backbone, tiny_data, tmp_path, tune=tune, top_k=1, head=head, head_mode=mode,
                          control_codes=True)
    model = Trainer(c, progress=False, log=lambda m: None).fit()
    out = tmp_path / "out"
    loaded = load_model(out)
    assert loaded.threshold is not None
    assert loaded.fingerprint() == model.fingerprint()
    hist = json.loads((out / "training" / "history.json").read_text())
    assert [e["epoch"] for e in hist["epochs"]] == [0, 1, 2]
    assert (out / "training" / "curves.png").stat().st_size > 1000
    return loaded, hist
