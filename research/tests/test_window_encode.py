"""The research reference of the shipped long-input read-out: ``encode_windows``
(conba_research.window_encode) gives the windows that ``ConbaModel.encode`` reads through the window head."""

from __future__ import annotations

import numpy as np
import torch

from conba_research.window_encode import encode_windows
from helpers.window_head import LONG, SHORT, with_head


def test_long_input_goes_through_the_head(tiny_model):
    m = with_head(tiny_model)
    codes = [SHORT[0], LONG, SHORT[1]]
    got = m.encode(codes, normalize=False)
    fr = encode_windows(m, codes, max_windows=8)
    assert fr.count.tolist() == [1, int(fr.count[1]), 1] and fr.count[1] > 1
    with torch.no_grad():
        want = m.window_head(torch.from_numpy(fr.vectors), torch.from_numpy(fr.mask),
                               torch.from_numpy(fr.weight)).numpy()
    np.testing.assert_allclose(got, want, atol=1e-5)
    mean = fr.weighted_mean()[1]
    assert not np.allclose(got[1], mean, atol=1e-3)  # not the plain mean of the windows
    assert not np.allclose(got[1], m.encode(LONG, max_windows=1, normalize=False), atol=1e-3)  # nor truncation
