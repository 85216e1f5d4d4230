"""The feature-cache key (``train.features._backbone_key``): deterministic, and exact in the weights."""

import pytest
import torch

from conba.encoder.backbone import Backbone, BackboneConfig
from conba.train.features import _backbone_key


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
    one = _with_threads(1, lambda: _backbone_key(backbone, 2))
    two = _with_threads(2, lambda: _backbone_key(backbone, 2))
    assert one == two == _backbone_key(backbone, 2)
    assert len(one) == 16


def test_key_changes_with_a_tiny_weight_change(backbone):
    before = _backbone_key(backbone, 2)
    w = backbone.layers[1].output.dense.weight
    with torch.no_grad():
        w[-1, -1] = torch.nextafter(w[-1, -1], torch.tensor(float("inf")))  # one ulp, far past any prefix
    assert _backbone_key(backbone, 2) != before


def test_key_changes_when_weights_are_permuted(backbone):
    before = _backbone_key(backbone, 2)
    w = backbone.layers[1].intermediate.dense.weight
    with torch.no_grad():
        a, b = w[-1, -1].clone(), w[-1, -2].clone()
        assert a != b
        w[-1, -1], w[-1, -2] = b, a  # same sum, same prefix: only the bytes tell
    assert _backbone_key(backbone, 2) != before


def test_key_covers_only_the_layers_below(backbone):
    k1, k2 = _backbone_key(backbone, 1), _backbone_key(backbone, 2)
    assert k1 != k2
    with torch.no_grad():
        backbone.layers[1].output.dense.weight.add_(1.0)
    assert _backbone_key(backbone, 1) == k1 and _backbone_key(backbone, 2) != k2


def test_key_of_a_bf16_backbone(backbone):
    before = _backbone_key(backbone, 2)
    backbone.model.to(torch.bfloat16)  # numpy has no bfloat16: the bytes must be read another way
    key = _backbone_key(backbone, 2)
    assert len(key) == 16 and key != before
