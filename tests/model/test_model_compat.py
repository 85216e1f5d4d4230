"""conba.model.compat: the truncation fingerprint of a model with a long-input read-out, and which snippets fit
one window (those get the vectors the model gave before it read long inputs over several windows)."""

from __future__ import annotations

import numpy as np
import torch

from conba.heads.window_head import WindowHeadConfig, build_window_head
from conba.model import ConbaModel
from conba.model.compat import single_window, truncation_fingerprint

SHORT = "def add(a, b):\n    return a + b\n"
LONG = "def walk(xs):\n" + "".join(f"    y{i} = xs[{i}] * {i}\n" for i in range(20)) + "    return y0\n"


def test_truncation_fingerprint_and_single_window(tiny_backbone):
    model = ConbaModel.create(str(tiny_backbone), max_length=32)
    plain = model.embedding_fingerprint()
    assert truncation_fingerprint(model) is None  # it truncates already
    assert single_window(model, [SHORT, LONG]).tolist() == [True, True]  # max_windows 1: every snippet is cut
    before = model.encode([SHORT, LONG])

    torch.manual_seed(0)
    head = build_window_head(WindowHeadConfig(reader="linear", dim=model.dim))
    with torch.no_grad():
        head.linear.weight.add_(0.3 * torch.randn_like(head.linear.weight))
    model.window_head, model.max_windows = head, 4
    assert model.embedding_fingerprint() != plain
    assert truncation_fingerprint(model) == plain
    assert model.window_head is head and model.max_windows == 4  # restored
    fits = single_window(model, [SHORT, LONG], ["python", "python"])
    assert fits.tolist() == [True, False]
    after = model.encode([SHORT, LONG])
    assert np.array_equal(after[0], before[0]) and not np.allclose(after[1], before[1], atol=1e-3)

    model.window_head = None  # the plain mean of the windows: the same one-window vectors, up to rounding
    assert truncation_fingerprint(model) == plain
    assert np.allclose(model.encode([SHORT])[0], before[0], atol=1e-6)

    model.window_head, model.max_windows = head, 4
    model.half()  # cast since loading: the fingerprint without the read-out is unknown
    assert truncation_fingerprint(model) is None
