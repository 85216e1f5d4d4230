"""The research reference of the shipped long-input read-out: ``encode_fragments``
(conba_research.fragment_encode) gives the windows that ``ConbaModel.encode`` reads through the fragment head."""

from __future__ import annotations

import numpy as np
import torch

from conba.heads.fragments import FragmentConfig, build_fragment_head
from conba.model import ConbaModel, load_model
from conba_research.fragment_encode import encode_fragments

LONG = "def f(a, b):\n" + "    a = a + b * 2 - 1\n" * 60 + "    return a\n"  # several 64-token windows
SHORT = ["def add(a, b): return a + b", "x = 1"]


def _with_head(path: str, reader: str = "linear", seed: int = 0) -> ConbaModel:
    m = load_model(path)
    torch.manual_seed(seed)
    head = build_fragment_head(FragmentConfig(reader=reader, dim=m.dim))
    for p in head.parameters():  # away from the identity start, so the head visibly acts
        p.data.add_(0.05 * torch.randn_like(p))
    m.fragment_head, m.max_chunks = head.eval(), 8
    return m


def test_long_input_goes_through_the_head(tiny_model):
    m = _with_head(tiny_model)
    codes = [SHORT[0], LONG, SHORT[1]]
    got = m.encode(codes, normalize=False)
    fr = encode_fragments(m, codes, max_fragments=8)
    assert fr.count.tolist() == [1, int(fr.count[1]), 1] and fr.count[1] > 1
    with torch.no_grad():
        want = m.fragment_head(torch.from_numpy(fr.vectors), torch.from_numpy(fr.mask),
                               torch.from_numpy(fr.weight)).numpy()
    np.testing.assert_allclose(got, want, atol=1e-5)
    mean = fr.weighted_mean()[1]
    assert not np.allclose(got[1], mean, atol=1e-3)  # not the plain mean of the windows
    assert not np.allclose(got[1], m.encode(LONG, max_chunks=1, normalize=False), atol=1e-3)  # nor truncation
