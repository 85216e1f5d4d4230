"""A model's window head: long inputs read through it (encode, any engine path), short ones unchanged,
saved in fragment_head/ (its file-format name) and restored bit for bit, part of the fingerprint, bad folders a
one-line error."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from conba.engine.windows import window_ids
from conba.heads.window_head import WindowHeadConfig, build_window_head
from conba.model import ConbaModel, load_model
from conba.model.core import ModelError
from conba.model.window_readout import read_out_windows
from helpers.window_head import LONG, SHORT, with_head


def test_short_input_is_bit_identical(tiny_model):
    plain = load_model(tiny_model)
    m = with_head(tiny_model)
    assert np.array_equal(m.encode(SHORT), plain.encode(SHORT))
    mixed = m.encode([SHORT[0], LONG, SHORT[1]])
    alone = m.encode(SHORT)
    np.testing.assert_allclose(mixed[[0, 2]], alone, atol=1e-6)  # batching apart: the same vectors


def test_truncation_ignores_the_head(tiny_model):
    plain = load_model(tiny_model)
    m = with_head(tiny_model)
    assert np.array_equal(m.encode([LONG], max_windows=1), plain.encode([LONG], max_windows=1))


def test_read_out_windows_keeps_single_windows():
    head = build_window_head(WindowHeadConfig(reader="mean", dim=2))
    windows = torch.tensor([[1.0, 2.0], [0.0, 4.0], [2.0, 0.0], [5.0, 5.0]])
    out = read_out_windows(head, windows, [0, 1, 1, 2], [3, 1, 3, 7], 3)
    assert torch.equal(out[0], windows[0]) and torch.equal(out[2], windows[3])
    assert torch.allclose(out[1], torch.tensor([1.5, 1.0]))
    with pytest.raises(ValueError, match="at least one window"):
        read_out_windows(head, windows, [0, 0, 2, 2], [1, 1, 1, 1], 3)


def test_save_load_round_trip_and_fingerprint(tiny_model, tmp_path):
    plain = load_model(tiny_model)
    m = with_head(tiny_model)
    assert m.fingerprint() != plain.fingerprint()
    assert m.embedding_fingerprint() != plain.embedding_fingerprint()
    other = with_head(tiny_model, seed=1)
    assert other.fingerprint() != m.fingerprint()
    back = ConbaModel.load(m.save(tmp_path / "m"))
    assert back.fingerprint() == m.fingerprint() and back.max_windows == 8
    assert back.window_head.config.reader == "linear"
    for k, v in m.window_head.state_dict().items():
        assert torch.equal(back.window_head.state_dict()[k], v)
    codes = [LONG, SHORT[0]]
    assert np.array_equal(back.encode(codes), m.encode(codes))
    back.window_head = None  # re-saved without it: the folder loses fragment_head/
    again = ConbaModel.load(back.save(tmp_path / "m"))
    assert again.window_head is None and not (tmp_path / "m" / "fragment_head").exists()
    assert again.fingerprint() == plain.fingerprint()


def test_float16_save_round_trip(tiny_model, tmp_path):
    m = with_head(tiny_model)
    back = ConbaModel.load(m.save(tmp_path / "m", dtype="float16"))
    assert back.fingerprint() == m.fingerprint()  # rounded before hashing: exact
    assert np.array_equal(back.encode([LONG]), m.encode([LONG]))


def test_onnx_engine_reads_long_inputs_through_the_head(tiny_model):
    pytest.importorskip("onnxruntime")
    m = with_head(tiny_model)
    fp32 = m.encode([LONG, SHORT[0]], engine="onnx-fp32")
    np.testing.assert_allclose(fp32, m.encode([LONG, SHORT[0]]), atol=1e-4)
    cut = window_ids(m.backbone, [LONG], 8)
    assert len(cut.ids) > 1


@pytest.mark.parametrize("breakage, match", [
    ("reader", "WindowHeadConfig.reader"),
    ("dim", "weights do not match"),
    ("mean-dim", "7 wide"),
    ("weights", "weights"),
    ("tamper", "fingerprint"),
])
def test_bad_window_head_folder_is_a_one_line_error(tiny_model, tmp_path, breakage, match):
    folder = with_head(tiny_model).save(tmp_path / "m")
    cfg_path = folder / "fragment_head" / "fragment_config.json"
    cfg = json.loads(cfg_path.read_text())
    if breakage == "reader":
        cfg["reader"] = "lstm"
    elif breakage == "dim":
        cfg["dim"] = 7
    elif breakage == "mean-dim":  # a head without weights, of the wrong width
        cfg.update(reader="mean", dim=7)
    cfg_path.write_text(json.dumps(cfg))
    if breakage == "mean-dim":
        from safetensors.torch import save_file

        save_file({}, str(folder / "fragment_head" / "fragment_head.safetensors"))
    if breakage == "weights":
        (folder / "fragment_head" / "fragment_head.safetensors").write_bytes(b"not safetensors")
    if breakage == "tamper":
        shutil.rmtree(folder / "fragment_head")
        m = with_head(tiny_model, seed=3)
        from conba.heads.window_head import save_window_head

        save_window_head(m.window_head, folder / "fragment_head")
    with pytest.raises(ModelError, match=match) as err:
        ConbaModel.load(folder)
    assert "\n" not in str(err.value)
