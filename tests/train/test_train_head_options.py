"""Head options of training: control codes (offset / prefix / both), the state / feedback switches, the
diagonal or dense A, the residual (options of ``conba experiment train``; ``conba train`` points there);
old saved train configs keep their meaning."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from conba.cli.main import cli
from conba.model import load_model
from conba.train.config import TrainConfig
from conba.train.trainer import Trainer


def test_old_train_configs_keep_their_meaning() -> None:
    old = TrainConfig.from_dict({"train": ["x"], "control_codes": True, "use_feedback": False, "head": "conba"})
    assert old.control_codes == "offset" and not old.use_state and not old.use_feedback
    assert not old.residual and old.state_a == "dense"
    assert TrainConfig(train=["x"], control_codes=False).control_codes == "none"
    new = TrainConfig.from_dict(TrainConfig(train=["x"], use_feedback=False).to_dict())
    assert new.use_state and not new.use_feedback and new.residual and new.state_a == "diag"
    for bad, field in [({"control_codes": "suffix"}, "control_codes"), ({"state_a": "full"}, "state_a")]:
        with pytest.raises(ValueError, match=field):
            TrainConfig(train=["x"], **bad).validate()


@pytest.mark.parametrize("flag", ["--control-codes", "--no-feedback", "--no-state", "--no-state-path",
                                  "--no-residual", "--no-control", "--head-mode", "--state-dim", "--state-a"])
def test_the_research_knobs_point_to_experiment_train(flag: str, tmp_path) -> None:
    res = CliRunner().invoke(cli, ["train", str(tmp_path / "t.jsonl"), flag, "-o", "o"])
    assert res.exit_code == 2
    assert f"Error: {flag} moved to `conba experiment train` (the research suite: pip install -e research/)" \
        in res.output


@pytest.mark.slow
def test_training_with_prefix_codes(tiny_backbone, tiny_data, tmp_path) -> None:
    """Frozen backbone (--tune none): layer-0 states are cached, every step runs the layers with the
    code inserted, the gradient reaches the codes through the frozen layers, only head and codes train."""
    from conba.train.losses import in_batch_loss

    train, _ = tiny_data
    cfg = TrainConfig(train=[str(train)], out=str(tmp_path / "out"), backbone=str(tiny_backbone), head="linear",
                      control_codes="prefix", groups_per_batch=2, per_group=3, epochs=1,
                      cache_dir=str(tmp_path / "cache"), device="cpu")
    trainer = Trainer(cfg, progress=False, log=lambda m: None, plot_history=False)
    head = trainer.model.head
    assert trainer.start_layer == 0 and head.prefix is not None
    records = trainer.train_records
    states = trainer._states(records, "cache")
    idx = [i for i, r in enumerate(records) if r.group in ("add", "max")][:6]
    emb = trainer._embed(records, states, idx)
    in_batch_loss(emb, torch.tensor([records[i].group == "add" for i in idx]).long(), 0.05, "supcon").backward()
    grad = head.prefix.codes.weight.grad
    used = sorted({int(j) for j in head.language_ids([records[i].language for i in idx])})
    assert all(grad[j].abs().sum() > 0 for j in used) and grad[0].abs().sum() == 0
    assert all(p.grad is None for p in trainer.model.backbone.parameters())
    head.zero_grad()
    trainer.fit()
    loaded = load_model(tmp_path / "out")
    assert loaded.head.config.code_mode == "prefix" and loaded.head.config.languages == ["java", "javascript",
                                                                                          "python"]
    out = loaded.encode(["def f(): pass"] * 2, languages=["python", "java"])
    assert np.isfinite(out).all() and not np.allclose(out[0], out[1], atol=1e-5)
