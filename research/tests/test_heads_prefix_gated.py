"""Prefix control codes (conba.heads.prefix, the product's) with the research suite's ConbaLayer heads, alone
(prefix) or with their offset codes (both)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conba.heads import HeadConfig
from conba.model import ConbaModel

CODES = ["def add(a, b):\n    return a + b\n", "static int add(int a, int b) { return a + b; }", "x"]
LANGS = ["python", "java", "javascript"]


@pytest.mark.parametrize("kind, mode", [("conba", "both"), ("conba-scan", "prefix")])
def test_prefix_with_conba_heads_and_both_modes(tiny_backbone, kind: str, mode: str) -> None:
    torch.manual_seed(1)
    model = ConbaModel.create(str(tiny_backbone), HeadConfig(kind=kind, languages=LANGS, code_mode=mode,
                                                              state_dim=4), max_length=64)
    assert model.head.prefix is not None and (model.head.codes is not None) == (mode == "both")
    out = model.encode(CODES, languages=["python", "java", "rust"])
    assert out.shape == (3, 32) and np.isfinite(out).all()
