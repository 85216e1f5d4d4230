"""Trainer options added for GPU training: device choice, time budget, warm-up; the sweep script."""

import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from conba.cli.main import cli
from conba.settings import resolve_device
from conba.train.config import TrainConfig
from conba.train.loop import scheduled_lr, warmup_lr
from conba.train.trainer import Trainer

ROOT = Path(__file__).resolve().parents[2]


def test_warmup_lr_is_linear_then_flat():
    assert warmup_lr(1e-4, 0, 100) == pytest.approx(1e-6)
    assert warmup_lr(1e-4, 49, 100) == pytest.approx(5e-5)
    assert warmup_lr(1e-4, 99, 100) == pytest.approx(1e-4)
    assert warmup_lr(1e-4, 5000, 100) == pytest.approx(1e-4)
    assert warmup_lr(1e-4, 0, 0) == pytest.approx(1e-4)  # no warm-up


def test_scheduled_lr_warms_up_then_holds_or_decays_to_zero():
    rates = [scheduled_lr(1e-4, s, 10, 110, "linear") for s in range(110)]
    assert rates[:10] == [pytest.approx(warmup_lr(1e-4, s, 10)) for s in range(10)]  # the same warm-up
    assert rates[10] == pytest.approx(1e-4) and rates[60] == pytest.approx(5e-5)
    assert rates[-1] == pytest.approx(1e-6) and all(a > b for a, b in zip(rates[10:], rates[11:]))
    assert scheduled_lr(1e-4, 110, 10, 110, "linear") == 0.0  # past the last step: nothing left
    assert [scheduled_lr(1e-4, s, 10, 110) for s in (9, 50, 500)] == [pytest.approx(1e-4)] * 3  # constant
    assert scheduled_lr(1e-4, 0, 0, 1, "linear") == pytest.approx(1e-4)  # one step, no warm-up
    with pytest.raises(ValueError, match="lr schedule must be one of constant, linear"):
        scheduled_lr(1e-4, 0, 10, 100, "cosine")


def test_resolve_device(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto").type == "cpu"
    assert resolve_device("cpu").type == "cpu"
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        resolve_device("cuda")


def test_config_rejects_negative_budget():
    with pytest.raises(ValueError, match="time_budget"):
        TrainConfig(train=["x"], time_budget=-1).validate()
    sig = TrainConfig(train=["x"], device="cuda", time_budget=5).run_signature()
    assert "device" not in sig and "time_budget" not in sig  # a run may resume on another device


@pytest.mark.slow
def test_time_budget_stops_training(tiny_backbone, tiny_data, tmp_path):
    train, dev = tiny_data
    logs = []
    c = TrainConfig(train=[str(train)], dev=[str(dev)], out=str(tmp_path / "out"), backbone=str(tiny_backbone),
                    groups_per_batch=2, per_group=2, epochs=50, patience=50, cache_dir=str(tmp_path / "c"),
                    time_budget=1e-6, tune="full", head="linear")
    model = Trainer(c, progress=False, log=logs.append).fit()
    hist = json.loads((tmp_path / "out" / "training" / "history.json").read_text())
    assert [e["epoch"] for e in hist["epochs"]] == [0, 1]  # stopped after the first step's epoch
    assert any("time budget" in m for m in logs)
    assert model.device.type == "cpu"


def test_cli_device_errors_are_one_line(tiny_backbone, tiny_data, tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    train, dev = tiny_data
    r = CliRunner().invoke(cli, ["eval", str(dev), "-m", str(tiny_backbone), "--device", "cuda", "--no-tfidf"])
    assert r.exit_code == 1 and "CUDA is not available" in r.output
    r = CliRunner().invoke(cli, ["train", str(train), "-o", str(tmp_path / "o"), "--backbone", str(tiny_backbone),
                                 "--device", "cuda", "-P", "2", "-K", "2"])
    assert r.exit_code == 1 and "CUDA is not available" in r.output






