"""Identity start: at step 0 every head (the research suite's ConbaLayer heads and the product's linear one)
returns the untuned model's vector (the mean-pooled backbone)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conba.heads import HeadConfig, build_head
from conba.heads.pooling import masked_mean
from conba.model import ConbaModel

CODES = ["def add(a, b):\n    return a + b\n", "x", "static int add(int a, int b) { return a + b; }",
         "function biggest(xs) {\n  return Math.max(...xs);\n}\n" * 3]
LANGS = ["python", "java"]
HEADS = {
    "linear": dict(kind="linear"),
    "conba-pooled": dict(kind="conba"),
    "conba-pooled-cls": dict(kind="conba", pooling="cls"),
    "conba-pooled-codes": dict(kind="conba", languages=LANGS),
    "conba-pooled-no-state": dict(kind="conba", use_state=False),
    "conba-tokens-diag": dict(kind="conba", mode="tokens"),
    "conba-tokens-dense": dict(kind="conba", mode="tokens", state_a="dense"),
    "conba-tokens-no-feedback": dict(kind="conba", mode="tokens", use_feedback=False, languages=LANGS),
    "conba-tokens-no-control": dict(kind="conba", mode="tokens", use_control=False),
    "conba-scan": dict(kind="conba-scan", state_dim=4),
    "conba-scan-codes": dict(kind="conba-scan", state_dim=4, languages=LANGS),
    "conba-scan-no-state": dict(kind="conba-scan", use_state=False),
}


@pytest.fixture(scope="module")
def none_model(tiny_backbone) -> ConbaModel:
    return ConbaModel.create(str(tiny_backbone), HeadConfig(kind="none"), max_length=64)


def _with_head(base: ConbaModel, **cfg) -> ConbaModel:
    torch.manual_seed(3)
    return ConbaModel(base.backbone, build_head(HeadConfig(dim=base.backbone.hidden_size, **cfg)))


@pytest.mark.parametrize("name", HEADS)
def test_every_head_starts_as_the_pooled_backbone(none_model: ConbaModel, name: str) -> None:
    cfg = HEADS[name]
    reference = none_model if cfg.get("pooling", "mean") == "mean" else _with_head(none_model, kind="none",
                                                                                   pooling="cls")
    model = _with_head(none_model, **cfg)
    languages = ["python", "java", "cobol", ""]
    got, ref = model.encode(CODES, languages=languages), reference.encode(CODES)
    cosines = np.sum(got * ref, axis=1)  # both L2-normalised
    assert np.all(np.abs(cosines - 1.0) < 1e-5), cosines
    assert np.allclose(got, ref, atol=1e-6)


def test_without_the_residual_the_start_is_random(none_model: ConbaModel) -> None:
    model = _with_head(none_model, kind="conba", residual=False)
    cosines = np.sum(model.encode(CODES) * none_model.encode(CODES), axis=1)
    assert np.all(cosines < 0.99)


def test_residual_skip_for_another_output_width() -> None:
    head = build_head(HeadConfig(kind="conba-scan", dim=8, out_dim=5, state_dim=2))
    x, mask = torch.randn(2, 4, 8), torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]])
    with torch.no_grad():
        torch.testing.assert_close(head(x, mask), head.skip(masked_mean(x, mask)))
    assert head.skip.weight.shape == (5, 8)
