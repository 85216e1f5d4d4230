"""HeadConfig validation, build_head, and the save_head / load_head round trip of the product's heads (the
research suite's ConbaLayer heads: research/tests/test_heads_saved.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from conba.heads import HEAD_KINDS, HeadConfig, build_head, load_head, save_head
from conba.heads.pooling import masked_mean
from conba.model import DEFAULT_MODEL_DIR
from helpers.heads import check_round_trip, perturbed_head

CONFIGS = [
    dict(kind="none", dim=8),
    dict(kind="linear", dim=8, out_dim=5, pooling="cls"),
    dict(kind="linear", dim=8, languages=["go", "c"], code_mode="prefix"),
    dict(kind="none", dim=8, languages=["go"], code_mode="both", pooling="cls"),
    # the ConbaLayer-only fields are kept (and ignored) by the product's heads
    dict(kind="linear", dim=8, mode="tokens", state_dim=4, use_control=False, residual=False),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c['kind']}-{c.get('mode', '')}")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_round_trip_is_bit_exact(cfg: dict, dtype: torch.dtype, tmp_path: Path) -> None:
    check_round_trip(cfg, dtype, tmp_path / "head")
    assert sorted(p.name for p in (tmp_path / "head").iterdir()) == ["head.safetensors", "head_config.json"]



def test_save_overwrites_and_build_accepts_a_dict(tmp_path: Path) -> None:
    save_head(perturbed_head(CONFIGS[1]), tmp_path)
    head = build_head(CONFIGS[4])
    save_head(head, tmp_path)
    assert load_head(tmp_path).config == head.config
    assert json.loads((tmp_path / "head_config.json").read_text())["mode"] == "tokens"


def test_config_dict_round_trip() -> None:
    cfg = HeadConfig(kind="linear", dim=16, out_dim=4, languages=["python"], dt_rank=None)
    assert HeadConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg
    assert cfg.resolved_dt_rank == 1 and cfg.resolved_out_dim == 4
    assert HeadConfig(dim=384).resolved_dt_rank == 24 and HeadConfig(dim=384).resolved_out_dim == 384
    assert set(HeadConfig().to_dict()) == {"kind", "dim", "out_dim", "mode", "pooling", "state_dim",
                                           "dt_rank", "use_control", "use_feedback", "languages", "code_dim",
                                           "residual", "state_a", "use_state", "code_mode"}
    assert HeadConfig().kind == "linear" and HeadConfig().mode == "pooled" and HEAD_KINDS == ("linear", "none")


def test_head_keeps_a_private_copy_of_its_config() -> None:
    cfg = HeadConfig(kind="linear", dim=8)
    head = build_head(cfg)
    cfg.dim = 16
    assert head.config.dim == 8


@pytest.mark.parametrize("bad, field", [
    ({"kind": "mamba"}, "kind"),
    ({"dim": 0}, "dim"),
    ({"dim": True}, "dim"),
    ({"dim": 8.0}, "dim"),
    ({"out_dim": -1}, "out_dim"),
    ({"kind": "none", "dim": 8, "out_dim": 4}, "out_dim"),
    ({"mode": "sequence"}, "mode"),
    ({"pooling": "max"}, "pooling"),
    ({"state_dim": 0}, "state_dim"),
    ({"dt_rank": 0}, "dt_rank"),
    ({"use_control": "yes"}, "use_control"),
    ({"languages": "python"}, "languages"),
    ({"languages": ["python", "Python"]}, "languages"),
    ({"languages": [""]}, "languages"),
    ({"code_dim": 0}, "code_dim"),
    ({"state_a": "full"}, "state_a"),
    ({"code_mode": "suffix"}, "code_mode"),
    ({"residual": 1}, "residual"),
    ({"use_state": None}, "use_state"),
    ({"colour": "red"}, "unknown head config key"),
])
def test_bad_config_values_raise(bad: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        HeadConfig.from_dict(bad)
    cfg = HeadConfig()
    if "colour" not in bad:
        for k, v in bad.items():
            setattr(cfg, k, v)
        with pytest.raises(ValueError, match=field):
            build_head(cfg)


def test_from_dict_needs_a_mapping() -> None:
    with pytest.raises(ValueError, match="mapping"):
        HeadConfig.from_dict(["kind", "conba"])  # type: ignore[arg-type]


def test_missing_and_corrupt_files_raise_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="head directory not found: .*nowhere"):
        load_head(tmp_path / "nowhere")
    d = tmp_path / "h"
    save_head(perturbed_head(CONFIGS[1]), d)
    weights, config = d / "head.safetensors", d / "head_config.json"
    good_weights, good_config = weights.read_bytes(), config.read_text()

    weights.unlink()
    with pytest.raises(FileNotFoundError, match=f"{weights}: weights missing"):
        load_head(d)
    weights.write_bytes(b"\x00garbage")
    with pytest.raises(ValueError, match=f"{weights}: corrupt weights") as err:
        load_head(d)
    assert "\n" not in str(err.value)
    weights.write_bytes(good_weights)

    config.write_text("{not json")
    with pytest.raises(ValueError, match=f"{config}:1: invalid JSON"):
        load_head(d)
    config.write_text(json.dumps({**json.loads(good_config), "pooling": "max"}))
    with pytest.raises(ValueError, match=f"pooling.* in {config}"):
        load_head(d)
    config.write_text(json.dumps({**json.loads(good_config), "dim": 16}))
    with pytest.raises(ValueError, match=f"{weights}: weights do not match {config}") as err:
        load_head(d)
    assert "\n" not in str(err.value)
    config.unlink()
    with pytest.raises(FileNotFoundError, match=f"{config}: config missing"):
        load_head(d)


def test_default_model_head_is_the_masked_mean() -> None:
    """The shipped default has no trained head (kind none: the masked mean of the backbone states), and
    its saved config holds the fingerprint dict it loads with (so indexes and the shipped SDTP pruner
    match the default model)."""
    raw = json.loads((DEFAULT_MODEL_DIR / "head" / "head_config.json").read_text())
    head = load_head(DEFAULT_MODEL_DIR / "head")
    assert head.config.kind == "none" and head.config.fingerprint_dict().items() <= raw.items()
    x = torch.randn(3, 7, 384)
    mask = torch.tensor([[1] * 7, [1] * 3 + [0] * 4, [0, 0] + [1] * 5])
    with torch.no_grad():
        assert torch.equal(head(x, mask), masked_mean(x, mask))
