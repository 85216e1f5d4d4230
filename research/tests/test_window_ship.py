"""conba_research.window_ship: a trained window head put into a model folder, the rest untouched."""

from __future__ import annotations

import json
import shutil

import numpy as np
import torch

from conba.heads.window_head import WindowHeadConfig, build_window_head, save_window_head
from conba.model import ConbaModel, load_model
from conba_research.window_ship import main

LONG = "def f(a, b):\n" + "    a = a + b * 2 - 1\n" * 60 + "    return a\n"


def test_ship_into_a_float16_folder(tiny_model, tmp_path):
    folder = load_model(tiny_model).save(tmp_path / "m", dtype="float16")
    before = json.loads((folder / "conba_config.json").read_text())
    delta = sorted(p.name for p in folder.iterdir())
    torch.manual_seed(0)
    head = build_window_head(WindowHeadConfig(reader="linear", dim=load_model(folder).dim))
    head.linear.weight.data.add_(0.01 * torch.randn_like(head.linear.weight))
    save_window_head(head, tmp_path / "h")
    main([str(tmp_path / "h"), str(folder), "--note", "trained_on=tiny"])
    after = json.loads((folder / "conba_config.json").read_text())
    assert after["max_chunks"] == 8 and after["info"]["fragment_head"]["trained_on"] == "tiny"
    assert list(after) == list(before)  # keys kept in their order, none added at the top level
    assert sorted(p.name for p in folder.iterdir()) == sorted([*delta, "fragment_head"])
    m = ConbaModel.load(folder)  # checks the stated fingerprint
    assert m.fingerprint() == after["fingerprint"] != before["fingerprint"]
    w = m.window_head.linear.weight
    assert torch.equal(w, w.half().float())  # rounded like the rest of a float16 folder
    assert not np.allclose(m.encode([LONG]), load_model(tiny_model).encode([LONG], max_windows=8), atol=1e-4)
    shutil.rmtree(tmp_path / "h")
