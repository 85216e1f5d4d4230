"""WiSE-FT weight-space merging of a fine-tuned model with its untuned counterpart."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conba.heads import HeadConfig
from conba.merge import merge
from conba.model import ConbaModel, ModelError

CODES = ["def add(a, b):\n    return a + b\n", "static int add(int a, int b) { return a + b; }"]


@pytest.fixture()
def pair(tiny_backbone):
    base = ConbaModel.create(str(tiny_backbone), head=HeadConfig(kind="linear"), max_length=64)
    tuned = ConbaModel.create(str(tiny_backbone), head=HeadConfig(kind="linear"), max_length=64)
    torch.manual_seed(1)
    with torch.no_grad():
        for p in list(tuned.backbone.model.parameters()) + list(tuned.head.parameters()):
            p.add_(0.05 * torch.randn_like(p))
    return tuned, base


def test_alpha_ends(pair):
    tuned, base = pair
    assert np.allclose(merge(tuned, base, 1.0).encode(CODES), tuned.encode(CODES), atol=1e-6)
    assert np.allclose(merge(tuned, base, 0.0).encode(CODES), base.encode(CODES), atol=1e-6)


def test_midpoint_is_the_mean_of_the_weights(pair):
    tuned, base = pair
    mid = merge(tuned, base, 0.5)
    key = "encoder.layer.0.attention.self.query.weight"
    want = (tuned.backbone.model.state_dict()[key] + base.backbone.model.state_dict()[key]) / 2
    assert torch.allclose(mid.backbone.model.state_dict()[key], want, atol=1e-7)
    assert mid.info["merged"]["alpha"] == 0.5
    assert tuned.backbone.model.state_dict()[key] is not mid.backbone.model.state_dict()[key]


def test_default_base_is_untuned_with_identity_head(pair, tiny_backbone):
    tuned, _ = pair
    zero = merge(tuned, alpha=0.0)
    plain = ConbaModel.create(str(tiny_backbone), max_length=64)  # mean pooling, no head
    assert np.allclose(zero.encode(CODES), plain.encode(CODES), atol=1e-5)


def test_bad_alpha_and_mismatch(pair, tiny_backbone):
    tuned, base = pair
    with pytest.raises(ValueError, match="alpha"):
        merge(tuned, base, 1.5)
    other = ConbaModel.create(str(tiny_backbone), head=HeadConfig(kind="linear", out_dim=8), max_length=64)
    with pytest.raises(ModelError, match="different tensors"):
        merge(tuned, other, 0.5)


def test_merge_cli(pair, tmp_path):
    from click.testing import CliRunner

    from conba.cli.main import cli
    from conba.model import load_model

    tuned, _ = pair
    src = tuned.save(tmp_path / "tuned", storage="full")
    res = CliRunner().invoke(cli, ["merge", str(src), "-a", "1", "-o", str(tmp_path / "out"), "--max-windows", "3"])
    assert res.exit_code == 0, res.output
    out = load_model(tmp_path / "out")
    assert out.max_windows == 3 and out.threshold is None
    assert np.allclose(out.encode(CODES, max_windows=1), tuned.encode(CODES), atol=1e-6)
    res = CliRunner().invoke(cli, ["merge", str(src), "-a", "1", "-o", str(tmp_path / "v"), "--view", "code",
                                   "--save-dtype", "float16"])
    assert res.exit_code == 0, res.output
    viewed = load_model(tmp_path / "v")
    assert viewed.view == "code" and viewed.embedding_fingerprint() != out.embedding_fingerprint()
    bad = CliRunner().invoke(cli, ["merge", str(src), "-a", "2", "-o", str(tmp_path / "x")])
    assert bad.exit_code != 0 and "alpha" in bad.output.lower()


def test_merge_cli_head_none_mean_pools_the_merged_backbone(pair, tmp_path):
    from click.testing import CliRunner

    from conba.cli.main import cli
    from conba.model import load_model

    tuned, base = pair
    src = tuned.save(tmp_path / "tuned", storage="full")
    res = CliRunner().invoke(cli, ["merge", str(src), "-a", "0.5", "-o", str(tmp_path / "nohead"), "--head", "none"])
    assert res.exit_code == 0, res.output
    out = load_model(tmp_path / "nohead")
    assert out.head.config.kind == "none"
    merged = merge(tuned, base, 0.5)
    expected = ConbaModel(merged.backbone, out.head).encode(CODES)  # the merged backbone, mean-pooled
    assert np.allclose(out.encode(CODES), expected, atol=1e-6)
    assert not np.allclose(out.encode(CODES), merged.encode(CODES), atol=1e-3)  # the linear head did matter
    bad = CliRunner().invoke(cli, ["merge", str(src), "-a", "0.5", "-o", str(tmp_path / "y"), "--head", "mlp"])
    assert bad.exit_code == 2


def test_merge_dtype_is_a_deprecated_alias_of_save_dtype(pair, tmp_path):
    """--dtype means the precision a model runs in everywhere else; merge's storage precision is --save-dtype."""
    from click.testing import CliRunner

    from conba.cli.main import cli
    from conba.model import load_model

    tuned, _ = pair
    src = tuned.save(tmp_path / "tuned", storage="full")
    res = CliRunner().invoke(cli, ["merge", str(src), "-a", "1", "-o", str(tmp_path / "old"), "--dtype", "float16"])
    assert res.exit_code == 0, res.output
    assert "--dtype is deprecated" in res.output and "--save-dtype" in res.output
    res = CliRunner().invoke(cli, ["merge", str(src), "-a", "1", "-o", str(tmp_path / "new"),
                                   "--save-dtype", "float16"])
    assert res.exit_code == 0 and "deprecated" not in res.output, res.output
    assert load_model(tmp_path / "old").fingerprint() == load_model(tmp_path / "new").fingerprint()
    assert load_model(tmp_path / "new").fingerprint() != load_model(src).fingerprint()  # rounded to float16
