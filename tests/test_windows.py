"""Long inputs: windows over the token ids, pooled back into one vector per snippet."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conba.engine import tokenize_ids
from conba.engine.windows import Windowed, pool_windows, special_template, window_ids, window_starts
from conba.model import ConbaModel, ModelError, load_model

LONG = "def f(a, b):\n" + "    a = a + b * 2 - 1\n" * 60 + "    return a\n"  # far over 64 tokens


def test_window_starts_cover_and_balance():
    assert window_starts(10, 20, 8) == [(0, 10)]
    spans = window_starts(101, 50, None)
    assert spans == [(0, 34), (34, 68), (68, 101)]  # near-equal windows, not 50 + 50 + 1
    assert all(e - s <= 50 for s, e in spans)
    assert window_starts(101, 50, 1) == [(0, 50)]  # truncation
    spread = window_starts(1000, 50, 3)
    assert spread == [(0, 50), (475, 525), (950, 1000)]  # first and last window kept


def test_window_starts_bad_width():
    with pytest.raises(ValueError):
        window_starts(10, 0, None)


def test_one_chunk_is_truncation(tiny_model):
    m = load_model(tiny_model)
    codes = [LONG, "def add(a, b): return a + b", ""]
    assert window_ids(m.backbone, codes, 1).ids == tokenize_ids(m.backbone, codes)
    assert np.allclose(m.encode(codes, max_windows=1), m.encode(codes), atol=1e-6)  # model default: 1


def test_long_snippet_gets_several_windows(tiny_model):
    m = load_model(tiny_model)
    prefix, suffix = special_template(m.backbone.tokenizer)
    chunks = window_ids(m.backbone, [LONG, "x = 1"], 8)
    assert chunks.owner.count(0) > 1 and chunks.owner.count(1) == 1
    assert all(len(ids) <= m.backbone.max_length for ids in chunks.ids)
    assert all(ids[:len(prefix)] == prefix and ids[len(ids) - len(suffix):] == suffix for ids in chunks.ids)
    short = m.encode(["x = 1"], max_windows=8)
    assert np.allclose(short, m.encode(["x = 1"], max_windows=1), atol=1e-6)  # short input: unchanged
    assert not np.allclose(m.encode([LONG], max_windows=8), m.encode([LONG], max_windows=1), atol=1e-3)


def test_tail_change_is_seen_only_with_chunks(tiny_model):
    m = load_model(tiny_model)
    other = LONG.replace("return a\n", "return sum(range(b)) * max(a, b) - min(a, b)\n")
    trunc = m.encode([LONG, other], max_windows=1)
    chunked = m.encode([LONG, other], max_windows=8)
    assert np.allclose(trunc[0], trunc[1], atol=1e-6)  # the tail is cut off
    assert not np.allclose(chunked[0], chunked[1], atol=1e-4)


def test_pool_chunks_weighted_mean():
    emb = torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    pooled = pool_windows(emb, Windowed([[1], [2], [3]], [0, 0, 1], [3, 1, 5]), 2)
    assert torch.allclose(pooled, torch.tensor([[0.75, 0.25], [2.0, 2.0]]))


def test_max_chunks_saved_and_fingerprinted(tiny_model, tmp_path):
    m = load_model(tiny_model)
    base = m.embedding_fingerprint()
    m.max_windows = 4
    assert m.embedding_fingerprint() != base  # an index built with truncation refuses chunked vectors
    back = ConbaModel.load(m.save(tmp_path / "m"))
    assert back.max_windows == 4
    assert np.array_equal(back.encode([LONG]), m.encode([LONG]))


@pytest.mark.parametrize("bad", [0, -1, 2.5, "8"])
def test_bad_max_chunks(tiny_model, bad):
    with pytest.raises(ValueError, match="max_windows"):
        load_model(tiny_model).encode(["x"], max_windows=bad)


def test_bad_max_chunks_in_config(tiny_model, tmp_path):
    import json

    folder = load_model(tiny_model).save(tmp_path / "m")
    cfg = json.loads((folder / "conba_config.json").read_text())
    cfg["max_chunks"] = 0
    (folder / "conba_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match="max_windows"):
        ConbaModel.load(folder)
