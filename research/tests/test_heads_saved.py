"""The research suite's heads saved and loaded through the product's save_head / load_head (kinds plugged in
through the conba.heads entry points): bit-exact round trips, and configs saved before keys were added."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from conba.heads import HeadConfig, load_head, save_head
from helpers.heads import check_round_trip, perturbed_head

CONFIGS = [
    dict(kind="conba", dim=8, out_dim=5),
    dict(kind="conba", dim=8, mode="tokens", languages=["python", "java"], code_dim=3),
    dict(kind="conba", dim=8, use_control=False, use_feedback=False),
    dict(kind="conba-scan", dim=8, state_dim=4, dt_rank=2, languages=["go"], out_dim=6),
    dict(kind="conba", dim=8, mode="tokens", state_a="dense", residual=False, use_feedback=False),
    dict(kind="conba-scan", dim=8, state_dim=4, use_state=False, languages=["go", "c"], code_mode="both"),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c['kind']}-{c.get('mode', '')}")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_round_trip_is_bit_exact(cfg: dict, dtype: torch.dtype, tmp_path: Path) -> None:
    _, loaded = check_round_trip(cfg, dtype, tmp_path / "head")
    assert type(loaded).__module__.startswith("conba_research.heads.")



OLD_KEYS = {"kind", "dim", "out_dim", "mode", "pooling", "state_dim", "dt_rank", "use_control", "use_feedback",
            "languages", "code_dim"}


@pytest.mark.parametrize("use_feedback", [True, False])
def test_configs_saved_before_the_new_keys_load_with_their_old_meaning(use_feedback: bool, tmp_path: Path) -> None:
    """A head saved before residual / state_a / use_state / code_mode existed: no residual, a dense A,
    and use_feedback=False meaning the whole state path was removed."""
    legacy = HeadConfig(kind="conba", dim=8, mode="tokens", residual=False, state_a="dense",
                        use_feedback=use_feedback, use_state=use_feedback, languages=["go"])
    head = perturbed_head(legacy.to_dict())
    save_head(head, tmp_path)
    old = {k: v for k, v in legacy.to_dict().items() if k in OLD_KEYS}
    (tmp_path / "head_config.json").write_text(json.dumps(old), encoding="utf-8")
    loaded = load_head(tmp_path)
    assert loaded.config == legacy
    assert ("A.weight" in loaded.state_dict()) == use_feedback
    x, mask = torch.randn(2, 5, 8), torch.tensor([[1] * 5, [1, 1, 0, 0, 0]])
    with torch.no_grad():
        assert torch.equal(loaded(x, mask, torch.tensor([1, 0])), head(x, mask, torch.tensor([1, 0])))
    # the fingerprint dict of a legacy config is what its to_dict() was before the new keys
    assert loaded.config.fingerprint_dict() == old
    assert set(HeadConfig(kind="conba").fingerprint_dict()) == OLD_KEYS | {"residual", "state_a"}
