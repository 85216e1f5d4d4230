"""Training the research suite's ConbaLayer heads (plugged in through conba.heads) with the product's
trainer: pooled and over tokens, frozen / top-k backbones, the state / feedback switches and the codes."""

from __future__ import annotations

import pytest

from conba.model import load_model
from conba.train.config import TrainConfig
from conba.train.trainer import Trainer
from helpers.heads import train_and_load


@pytest.mark.parametrize("tune,head,mode", [("none", "conba", "pooled"), ("none", "conba", "tokens"),
                                            ("top-k", "conba-scan", "pooled")])
@pytest.mark.slow
def test_train_modes_produce_loadable_model(tiny_backbone, tiny_data, tmp_path, tune, head, mode):
    loaded, hist = train_and_load(tiny_backbone, tiny_data, tmp_path, tune, head, mode)
    assert type(loaded.head).__module__.startswith("conba_research.heads.")
    assert len(hist["epochs"][0]["control_weight_sample"]) > 0  # the gate's control weight is sampled


@pytest.mark.slow
def test_training_a_token_head_with_the_new_switches(tiny_backbone, tiny_data, tmp_path) -> None:
    train, _ = tiny_data
    cfg = TrainConfig(train=[str(train)], out=str(tmp_path / "out"), backbone=str(tiny_backbone), head="conba",
                      head_mode="tokens", use_feedback=False, groups_per_batch=2, per_group=3, epochs=1,
                      cache_dir=str(tmp_path / "cache"), device="cpu", control_codes="both")
    Trainer(cfg, progress=False, log=lambda m: None, plot_history=False).fit()
    loaded = load_model(tmp_path / "out")
    hc = loaded.head.config
    assert hc.use_state and not hc.use_feedback and hc.residual and hc.code_mode == "both"
    assert hc.state_a == "diag" and loaded.head.A_log is not None
    assert loaded.head.feedback_weight is None and loaded.head.prefix is not None
