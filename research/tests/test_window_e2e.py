"""conba_research.window_e2e: read-outs of cached windows, one-window snippets untouched."""

from __future__ import annotations

import numpy as np
import torch

from conba.heads.window_head import WindowHeadConfig, build_window_head
from conba_research.window_e2e import read_outs


def test_read_outs_keep_single_windows_and_read_long_ones():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(3, 4, 6)).astype(np.float32)
    weight = np.array([[5, 0, 0, 0], [3, 3, 2, 0], [1, 1, 1, 1]], np.float32)
    vectors[weight == 0] = 0.0
    lin = build_window_head(WindowHeadConfig(reader="linear", dim=6))
    torch.nn.init.normal_(lin.linear.weight)
    out = read_outs(None, vectors, weight, {"lin": lin})
    assert set(out) == {"mean", "max", "first", "lin"}
    unit = vectors[0, 0] / np.linalg.norm(vectors[0, 0])
    for emb in out.values():
        assert np.allclose(emb[0], unit, atol=1e-6) and np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    mean = (vectors[1] * weight[1, :, None]).sum(0) / weight[1].sum()
    assert np.allclose(out["mean"][1], mean / np.linalg.norm(mean), atol=1e-5)
    assert not np.allclose(out["lin"][1], out["mean"][1], atol=1e-3)
