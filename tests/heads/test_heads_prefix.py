"""Prefix control codes (CTRL): a learned language code inserted after CLS at the backbone's input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conba.heads import HeadConfig, PrefixCodes
from conba.model import ConbaModel, load_model
from conba.prune import PruneConfig, PruneModule

CODES = ["def add(a, b):\n    return a + b\n", "static int add(int a, int b) { return a + b; }", "x"]
LANGS = ["python", "java", "javascript"]


@pytest.fixture(scope="module")
def prefix_model(tiny_backbone) -> ConbaModel:
    torch.manual_seed(0)
    return ConbaModel.create(str(tiny_backbone), HeadConfig(kind="linear", languages=LANGS, code_mode="prefix"),
                             max_length=64)


def test_insert_and_remove_around_the_first_real_token() -> None:
    prefix = PrefixCodes(2, 3)
    hidden = torch.arange(2 * 4 * 3, dtype=torch.float32).view(2, 4, 3)
    mask = torch.tensor([[1, 1, 1, 0], [0, 0, 1, 1]])  # right and left padding
    ids = torch.tensor([2, 0])
    new, new_mask = prefix.insert(hidden, mask, ids)
    assert new.shape == (2, 5, 3)
    assert new_mask.tolist() == [[1, 1, 1, 1, 0], [0, 0, 1, 1, 1]]
    codes = prefix.codes.weight.detach()
    torch.testing.assert_close(new[0, 1], codes[2])  # right after CLS at position 0
    torch.testing.assert_close(new[1, 3], codes[0])  # right after the first real token at position 2
    torch.testing.assert_close(new[0, [0, 2, 3, 4]], hidden[0])
    torch.testing.assert_close(new[1, [0, 1, 2, 4]], hidden[1])
    assert torch.equal(prefix.remove(new, mask), hidden)
    with pytest.raises(ValueError, match="lang_ids"):
        prefix.insert(hidden, mask, torch.tensor([1]))


def test_prefix_codes_condition_the_whole_backbone(prefix_model: ConbaModel) -> None:
    head = prefix_model.head
    assert head.prefix is not None and head.config.uses_prefix_codes and head.depends_on_language
    same = [CODES[0]] * 2
    py_java = prefix_model.encode(same, languages=["python", "java"])
    assert not np.allclose(py_java[0], py_java[1], atol=1e-4)  # the same code in two languages differs
    shared = prefix_model.encode(same + [CODES[0]], languages=["cobol", "", None])  # unknown: shared code 0
    assert np.allclose(shared[0], shared[1], atol=1e-6) and np.allclose(shared[0], shared[2], atol=1e-6)
    assert not np.allclose(shared[0], py_java[0], atol=1e-4)
    # batching and padding do not change a snippet's vector
    alone = np.stack([prefix_model.encode(c, languages="java") for c in CODES])
    assert np.allclose(prefix_model.encode(CODES, languages="java", batch_size=3), alone, atol=1e-5)
    # the code changes the output: with it zeroed out of the attention nothing would differ
    plain = ConbaModel(prefix_model.backbone, head.__class__(HeadConfig.from_dict(
        {**head.config.to_dict(), "languages": []})))
    plain.head.load_state_dict({k: v for k, v in head.state_dict().items() if not k.startswith("prefix.")})
    assert not np.allclose(plain.encode(CODES[:1]), py_java[:1], atol=1e-4)


def test_save_load_round_trip_is_bit_exact(prefix_model: ConbaModel, tmp_path) -> None:
    with torch.no_grad():
        prefix_model.head.prefix.codes.weight.add_(torch.randn_like(prefix_model.head.prefix.codes.weight))
    prefix_model.save(tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    assert loaded.head.config == prefix_model.head.config
    assert torch.equal(loaded.head.prefix.codes.weight, prefix_model.head.prefix.codes.weight)
    assert loaded.fingerprint() == prefix_model.fingerprint()
    langs = ["python", "java", "cobol"]
    assert np.array_equal(loaded.encode(CODES, languages=langs), prefix_model.encode(CODES, languages=langs))


def test_onnx_and_sdtp_refuse_prefix_models(prefix_model: ConbaModel) -> None:
    for engine in ("onnx", "onnx-fp32"):
        with pytest.raises(ValueError, match="does not support prefix control codes"):
            prefix_model.encode(CODES, engine=engine)
    prefix_model.pruner = PruneModule(PruneConfig(layers=[1], keep_ratio=0.5, dim=32, num_layers=2))
    try:
        with pytest.raises(ValueError, match="SDTP pruning does not support prefix"):
            prefix_model.encode(CODES)
        prefix_model.use_pruning = False
        assert prefix_model.encode(CODES).shape == (3, 32)
    finally:
        prefix_model.pruner, prefix_model.use_pruning = None, True
