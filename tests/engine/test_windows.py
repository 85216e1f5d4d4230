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


def test_one_window_is_truncation(tiny_model):
    m = load_model(tiny_model)
    codes = [LONG, "def add(a, b): return a + b", ""]
    assert window_ids(m.backbone, codes, 1).ids == tokenize_ids(m.backbone, codes)
    assert np.allclose(m.encode(codes, max_windows=1), m.encode(codes), atol=1e-6)  # model default: 1


def test_long_snippet_gets_several_windows(tiny_model):
    m = load_model(tiny_model)
    prefix, suffix = special_template(m.backbone.tokenizer)
    cut = window_ids(m.backbone, [LONG, "x = 1"], 8)
    assert cut.owner.count(0) > 1 and cut.owner.count(1) == 1
    assert all(len(ids) <= m.backbone.max_length for ids in cut.ids)
    assert all(ids[:len(prefix)] == prefix and ids[len(ids) - len(suffix):] == suffix for ids in cut.ids)
    short = m.encode(["x = 1"], max_windows=8)
    assert np.allclose(short, m.encode(["x = 1"], max_windows=1), atol=1e-6)  # short input: unchanged
    assert not np.allclose(m.encode([LONG], max_windows=8), m.encode([LONG], max_windows=1), atol=1e-3)


def test_tail_change_is_seen_only_with_windows(tiny_model):
    m = load_model(tiny_model)
    other = LONG.replace("return a\n", "return sum(range(b)) * max(a, b) - min(a, b)\n")
    trunc = m.encode([LONG, other], max_windows=1)
    windowed = m.encode([LONG, other], max_windows=8)
    assert np.allclose(trunc[0], trunc[1], atol=1e-6)  # the tail is cut off
    assert not np.allclose(windowed[0], windowed[1], atol=1e-4)


def test_pool_windows_weighted_mean():
    emb = torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    pooled = pool_windows(emb, Windowed([[1], [2], [3]], [0, 0, 1], [3, 1, 5]), 2)
    assert torch.allclose(pooled, torch.tensor([[0.75, 0.25], [2.0, 2.0]]))


def test_max_windows_saved_and_fingerprinted(tiny_model, tmp_path):
    m = load_model(tiny_model)
    base = m.embedding_fingerprint()
    m.max_windows = 4
    assert m.embedding_fingerprint() != base  # an index built with truncation refuses windowed vectors
    back = ConbaModel.load(m.save(tmp_path / "m"))
    assert back.max_windows == 4
    assert np.array_equal(back.encode([LONG]), m.encode([LONG]))


@pytest.mark.parametrize("bad", [0, -1, 2.5, "8"])
def test_bad_max_windows(tiny_model, bad):
    with pytest.raises(ValueError, match="max_windows"):
        load_model(tiny_model).encode(["x"], max_windows=bad)


def test_bad_max_windows_in_config(tiny_model, tmp_path):
    import json

    folder = load_model(tiny_model).save(tmp_path / "m")
    cfg = json.loads((folder / "conba_config.json").read_text())
    cfg["max_chunks"] = 0  # the file-format name of max_windows
    (folder / "conba_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match="max_windows"):
        ConbaModel.load(folder)


def test_old_names_still_work(tiny_model, tmp_path):
    """The Python names from before the word was window: ``max_chunks=`` / ``model.max_chunks`` /
    ``model.fragment_head`` warn once and mean max_windows / window_head."""
    from helpers.window_head import with_head

    m = with_head(tiny_model)
    with pytest.warns(DeprecationWarning, match="max_chunks is now max_windows"):
        old = m.encode([LONG, "x = 1"], max_chunks=1)
    assert np.array_equal(old, m.encode([LONG, "x = 1"], max_windows=1))
    with pytest.raises(ValueError, match="pass max_windows only"), pytest.warns(DeprecationWarning):
        m.encode(["x"], max_chunks=1, max_windows=2)
    with pytest.warns(DeprecationWarning, match="fragment_head is now window_head"):
        assert m.fragment_head is m.window_head
    head = m.window_head
    with pytest.warns(DeprecationWarning, match="max_chunks is now max_windows"):
        m.max_chunks = 3
    with pytest.warns(DeprecationWarning, match="fragment_head is now window_head"):
        m.fragment_head = None
    assert m.max_windows == 3 and m.window_head is None and "fragment_head" not in dict(m.named_children())
    m.window_head = head
    assert "window_head" in dict(m.named_children())


def test_config_key_is_max_chunks_on_disk(tiny_model, tmp_path):
    """The saved key stays ``max_chunks`` (the file-format name: older conba versions read the folder);
    a file that says ``max_windows`` loads too, one with both is a one-line error."""
    import json

    m = load_model(tiny_model)
    m.max_windows = 4
    folder = m.save(tmp_path / "m")
    cfg = json.loads((folder / "conba_config.json").read_text())
    assert cfg["max_chunks"] == 4 and "max_windows" not in cfg
    cfg["max_windows"] = cfg.pop("max_chunks")
    (folder / "conba_config.json").write_text(json.dumps(cfg))
    assert ConbaModel.load(folder).max_windows == 4
    cfg["max_chunks"] = 4
    (folder / "conba_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="both 'max_windows' and its file-format name 'max_chunks'"):
        ConbaModel.load(folder)
