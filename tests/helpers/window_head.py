"""A tiny model with a window head that visibly acts, and inputs longer and shorter than one window, for the
window-head tests (tests/model/test_model_window_head.py and the lab's research reference test)."""

from __future__ import annotations

import torch

from conba.heads.window_head import WindowHeadConfig, build_window_head
from conba.model import ConbaModel, load_model

LONG = "def f(a, b):\n" + "    a = a + b * 2 - 1\n" * 60 + "    return a\n"  # several 64-token windows
SHORT = ["def add(a, b): return a + b", "x = 1"]


def with_head(path: str, reader: str = "linear", seed: int = 0) -> ConbaModel:
    """The model at ``path`` reading long inputs (up to 8 windows) through a seeded window head."""
    m = load_model(path)
    torch.manual_seed(seed)
    head = build_window_head(WindowHeadConfig(reader=reader, dim=m.dim))
    for p in head.parameters():  # away from the identity start, so the head visibly acts
        p.data.add_(0.05 * torch.randn_like(p))
    m.window_head, m.max_windows = head.eval(), 8
    return m
