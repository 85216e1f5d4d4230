"""The feature-cache key (``train.features.backbone_key``): deterministic, and exact in the weights."""

import pytest
import torch

from conba.encoder.backbone import Backbone, BackboneConfig
from conba.train.features import backbone_key


@pytest.fixture()
def backbone(tiny_backbone):
    return Backbone(BackboneConfig(name_or_path=str(tiny_backbone), max_length=32))


def _with_threads(n, fn):
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        return fn()
    finally:
        torch.set_num_threads(old)


def test_key_does_not_depend_on_thread_count(backbone):
    one = _with_threads(1, lambda: backbone_key(backbone, 2))
    two = _with_threads(2, lambda: backbone_key(backbone, 2))
    assert one == two == backbone_key(backbone, 2)
    assert len(one) == 16


def test_key_changes_with_a_tiny_weight_change(backbone):
    before = backbone_key(backbone, 2)
    w = backbone.layers[1].output.dense.weight
    with torch.no_grad():
        w[-1, -1] = torch.nextafter(w[-1, -1], torch.tensor(float("inf")))  # one ulp, far past any prefix
    assert backbone_key(backbone, 2) != before


@pytest.mark.slow
def test_key_changes_when_weights_are_permuted(backbone):
    before = backbone_key(backbone, 2)
    w = backbone.layers[1].intermediate.dense.weight
    with torch.no_grad():
        a, b = w[-1, -1].clone(), w[-1, -2].clone()
        assert a != b
        w[-1, -1], w[-1, -2] = b, a  # same sum, same prefix: only the bytes tell
    assert backbone_key(backbone, 2) != before


@pytest.mark.slow
def test_key_covers_only_the_layers_below(backbone):
    k1, k2 = backbone_key(backbone, 1), backbone_key(backbone, 2)
    assert k1 != k2
    with torch.no_grad():
        backbone.layers[1].output.dense.weight.add_(1.0)
    assert backbone_key(backbone, 1) == k1 and backbone_key(backbone, 2) != k2


def test_key_of_a_bf16_backbone(backbone):
    before = backbone_key(backbone, 2)
    backbone.model.to(torch.bfloat16)  # numpy has no bfloat16: the bytes must be read another way
    key = backbone_key(backbone, 2)
    assert len(key) == 16 and key != before
