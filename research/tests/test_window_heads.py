"""Window heads: one vector from a sequence of window vectors (b, f, d) with a mask."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conba.errors import ConfigError
from conba.heads.window_head import READERS, WindowHeadConfig, build_window_head, load_window_head, save_window_head
from conba.model import load_model
from conba_research.window_encode import WindowVectors, encode_windows

D = 8


def _batch(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 4, D, generator=g)
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1]], dtype=torch.bool)
    weight = torch.tensor([[10.0, 10, 5, 0], [7, 0, 0, 0], [1, 2, 3, 4]])
    return x, mask, weight


@pytest.mark.parametrize("reader", READERS)
def test_padding_does_not_change_the_result(reader):
    torch.manual_seed(0)
    head = build_window_head(WindowHeadConfig(reader=reader, dim=D))
    for p in head.parameters():  # move every trained head away from its identity start
        p.data.add_(0.1 * torch.randn_like(p))
    x, mask, weight = _batch()
    out = head(x, mask, weight)
    assert out.shape == (3, D)
    garbage = x.clone()
    garbage[~mask] = 99.0
    assert torch.allclose(head(garbage, mask, weight), out, atol=1e-5)
    assert torch.allclose(head(x[:, :3], mask[:, :3], weight[:, :3])[:2], out[:2], atol=1e-5)


def test_fresh_heads_start_as_the_mean():
    x, mask, weight = _batch()
    mean = build_window_head(WindowHeadConfig(reader="mean", dim=D))(x, mask, weight)
    expected = (x * weight[..., None]).sum(1) / weight.sum(1, keepdim=True)
    assert torch.allclose(mean, expected, atol=1e-6)
    for reader in ("linear", "attention"):
        assert torch.allclose(build_window_head(WindowHeadConfig(reader=reader, dim=D))(x, mask, weight), mean,
                              atol=1e-5)
    plain = x.masked_fill(~mask[..., None], 0).sum(1) / mask.sum(1, keepdim=True)
    for reader in ("conba", "conba-scan"):  # fc2 starts at zero: the (unweighted) mean of the windows
        out = build_window_head(WindowHeadConfig(reader=reader, dim=D))(x, mask, weight)
        assert torch.allclose(out, plain, atol=1e-5)


def test_baselines_and_single_window_identity():
    x, mask, weight = _batch()
    assert torch.equal(build_window_head(WindowHeadConfig(reader="first", dim=D))(x, mask), x[:, 0])
    mx = build_window_head(WindowHeadConfig(reader="max", dim=D))(x, mask)
    assert torch.equal(mx[0], x[0, :3].amax(0)) and torch.equal(mx[1], x[1, 0])
    head = build_window_head(WindowHeadConfig(reader="conba", dim=D))
    for p in head.parameters():
        p.data.add_(0.3)
    assert torch.equal(head(x, mask)[1], x[1, 0])  # one window: returned as it is
    other = build_window_head(WindowHeadConfig(reader="conba", dim=D, single="head"))
    other.load_state_dict(head.state_dict())
    assert not torch.allclose(other(x, mask)[1], x[1, 0])


def test_the_recurrence_depends_on_order_and_ablations_drop_parameters():
    torch.manual_seed(1)
    head = build_window_head(WindowHeadConfig(reader="conba", dim=D))
    for p in head.parameters():
        p.data.add_(0.2 * torch.randn_like(p))
    head.inner.A_log.data.fill_(0.5)  # fast decay: the state remembers mostly the last windows
    x, mask, _ = _batch()
    rev = x.clone()
    rev[2] = x[2].flip(0)
    assert not torch.allclose(head(x, mask)[2], head(rev, mask)[2], atol=1e-4)
    names = {n for n, _ in build_window_head(WindowHeadConfig(reader="conba", dim=D)).named_parameters()}
    assert {"inner.A_log", "inner.B.weight", "inner.control_weight", "inner.feedback_weight"} <= names
    for flag, gone in (("use_control", "inner.control_weight"), ("use_feedback", "inner.feedback_weight"),
                       ("use_state", "inner.B.weight")):
        cfg = WindowHeadConfig(reader="conba", dim=D, **{flag: False})
        assert gone not in {n for n, _ in build_window_head(cfg).named_parameters()}


def test_save_load_bit_exact(tmp_path):
    torch.manual_seed(2)
    head = build_window_head(WindowHeadConfig(reader="conba-scan", dim=D, use_feedback=False))
    for p in head.parameters():
        p.data.add_(0.1 * torch.randn_like(p))
    save_window_head(head, tmp_path / "h")
    back = load_window_head(tmp_path / "h")
    assert back.config == head.config
    x, mask, weight = _batch()
    assert torch.equal(back(x, mask, weight), head(x, mask, weight))


def test_bad_config_and_shapes(tmp_path):
    with pytest.raises(ConfigError, match="reader"):
        WindowHeadConfig(reader="lstm")
    with pytest.raises(ConfigError, match="single"):
        WindowHeadConfig(single="drop")
    head = build_window_head(WindowHeadConfig(reader="mean", dim=D))
    with pytest.raises(ValueError, match="mask shape"):
        head(torch.zeros(2, 3, D), torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"\(b, f, d\)"):
        head(torch.zeros(2, D))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "fragment_config.json").write_text('{"reader": "conba", "colour": 1}')
    with pytest.raises(ConfigError, match="colour"):
        load_window_head(tmp_path / "bad")


def test_encode_windows_matches_encode(tiny_model):
    m = load_model(tiny_model)
    long = "def f(a, b):\n" + "    a = a + b * 2 - 1\n" * 40 + "    return a\n"
    codes, langs = [long, "def add(a, b): return a + b"], ["python", "python"]
    fr = encode_windows(m, codes, langs, max_windows=4)
    assert fr.vectors.shape == (2, 4, m.dim) and fr.count.tolist()[1] == 1 and fr.count[0] > 1
    assert np.allclose(fr.weighted_mean(), m.encode(codes, langs, max_windows=4, normalize=False), atol=1e-5)
    one = encode_windows(m, codes, langs, max_windows=1)
    assert np.allclose(one.vectors[:, 0], m.encode(codes, langs, normalize=False), atol=1e-5)  # truncation
    assert not fr.vectors[~fr.mask].any()
    with pytest.raises(ConfigError, match="max_windows"):
        encode_windows(m, codes, langs, max_windows=0)


def test_pack_keeps_source_order():
    fr = WindowVectors.pack(np.arange(8, dtype=np.float32).reshape(4, 2), [0, 0, 0, 1], [3, 3, 2, 5], n=2, f=3)
    assert fr.mask.tolist() == [[True, True, True], [True, False, False]]
    assert fr.vectors[0, 2].tolist() == [4.0, 5.0] and fr.weight[1].tolist() == [5.0, 0.0, 0.0]


def test_encode_read_out_keeps_short_snippets_and_reads_long_ones(tiny_model):
    from conba_research.window_encode import encode_read_out

    m = load_model(tiny_model)
    long = "def f(a, b):\n" + "    a = a + b * 2 - 1\n" * 40 + "    return a\n"
    codes, langs = ["def add(a, b): return a + b", long], ["python", "python"]
    mean = encode_read_out(m, codes, build_window_head(WindowHeadConfig(reader="mean", dim=m.dim)), langs, 4)
    assert np.allclose(mean, m.encode(codes, langs, max_windows=4), atol=1e-5)
    torch.manual_seed(0)
    head = build_window_head(WindowHeadConfig(reader="linear", dim=m.dim))
    head.linear.weight.data.add_(0.2 * torch.randn_like(head.linear.weight))
    out = encode_read_out(m, codes, head, langs, 4)
    assert np.allclose(out[0], m.encode(codes[:1], langs[:1])[0], atol=1e-5)  # one window: as encode gives it
    assert not np.allclose(out[1], mean[1], atol=1e-3) and np.isclose(np.linalg.norm(out[1]), 1.0)
