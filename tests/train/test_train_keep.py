"""``conba train --init`` (start from a saved model's backbone) and ``--keep`` (the distillation term that
keeps the untuned backbone's in-batch similarities)."""

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from conba.cli.main import cli
from conba.model import ConbaModel, load_model
from conba.train.config import TrainConfig
from conba.train.keep_similarities import keep_batch, keep_records, similarity_kl
from conba.train.trainer import Trainer


def cfg(tiny_backbone, tiny_data, tmp_path, **kw):
    train, dev = tiny_data
    base = dict(train=[str(train)], dev=[str(dev)], out=str(tmp_path / "out"), backbone=str(tiny_backbone),
                groups_per_batch=2, per_group=3, epochs=1, cache_dir=str(tmp_path / "cache"), patience=5)
    return TrainConfig(**{**base, **kw})


def test_similarity_kl_is_zero_for_equal_relations_and_positive_otherwise():
    torch.manual_seed(0)
    t = torch.nn.functional.normalize(torch.randn(6, 8), dim=-1)
    rot, _ = torch.linalg.qr(torch.randn(8, 8))  # a rotation keeps every similarity
    assert similarity_kl(t @ rot, t, 0.05).item() == pytest.approx(0.0, abs=1e-5)
    s = torch.nn.functional.normalize(torch.randn(6, 8), dim=-1)
    assert similarity_kl(s, t, 0.05).item() > 0.01
    with pytest.raises(ValueError, match="shape mismatch"):
        similarity_kl(s[:3], t, 0.05)


def test_keep_records_dedup_and_limit(tiny_data):
    train, _ = tiny_data
    all_ = keep_records([str(train)], 0, 0)
    assert len({r.code for r in all_}) == len(all_)  # copies=3 in the file: duplicates dropped
    few = keep_records([str(train)], 3, 0)
    assert len(few) == 3 and few == keep_records([str(train)], 3, 0)  # seeded


def test_keep_batch_is_reproducible_per_step():
    assert keep_batch(100, 8, 0, 5) == keep_batch(100, 8, 0, 5)
    assert keep_batch(100, 8, 0, 5) != keep_batch(100, 8, 0, 6)
    assert len(set(keep_batch(5, 8, 0, 1))) == 5


def test_keep_config_validation():
    with pytest.raises(ValueError, match="keep_weight > 0 needs keep"):
        TrainConfig(train=["x"], keep_weight=1.0).validate()
    with pytest.raises(ValueError, match="keep_batch"):
        TrainConfig(train=["x"], keep=["y"], keep_weight=1.0, keep_batch=1).validate()


def test_init_copies_the_backbone_of_a_saved_model(tiny_backbone, tiny_data, tmp_path):
    src = ConbaModel.create(str(tiny_backbone))
    with torch.no_grad():
        for p in src.backbone.model.encoder.parameters():
            p.add_(0.01)
    src.save(tmp_path / "src")
    t = Trainer(cfg(tiny_backbone, tiny_data, tmp_path, init=str(tmp_path / "src")), progress=False,
                log=lambda m: None)
    for (name, a), b in zip(t.model.backbone.model.named_parameters(), src.backbone.model.parameters()):
        assert torch.equal(a, b), name
    fresh = Trainer(cfg(tiny_backbone, tiny_data, tmp_path / "f"), progress=False, log=lambda m: None)
    assert not torch.equal(next(fresh.model.backbone.model.encoder.parameters()),
                           next(t.model.backbone.model.encoder.parameters()))


def test_init_refuses_another_architecture(tiny_backbone, tiny_data, tmp_path):
    other = ConbaModel.create(str(tiny_backbone))
    other.backbone.config.name_or_path = "somewhere/else"
    other.save(tmp_path / "other", storage="full")
    with pytest.raises(RuntimeError, match="--init .*backbone is"):
        Trainer(cfg(tiny_backbone, tiny_data, tmp_path, init=str(tmp_path / "other")), progress=False,
                log=lambda m: None)


@pytest.mark.slow
def test_keep_term_trains_top_k_and_caches_the_reference(tiny_backbone, tiny_data, tmp_path):
    train, _ = tiny_data
    logs = []
    c = cfg(tiny_backbone, tiny_data, tmp_path, tune="top-k", top_k=1, head="none", keep=[str(train)],
            keep_weight=1.0, keep_batch=4)
    Trainer(c, progress=False, log=logs.append).fit()
    assert any(m.startswith("keep: the untuned similarities of") for m in logs)
    cached = list((tmp_path / "cache").glob("keep-*.npy"))
    assert len(cached) == 1
    ref = np.load(cached[0])
    assert ref.shape[1] == load_model(tmp_path / "out").dim
    assert np.allclose(np.linalg.norm(ref, axis=1), 1.0, atol=1e-4)


def test_cli_train_keep_options(tiny_backbone, tiny_data, tmp_path):
    train, dev = tiny_data
    config = tmp_path / "train.json"
    config.write_text('{"keep_weight": 1}')
    r = CliRunner().invoke(cli, ["train", str(train), "-D", str(dev), "-o", str(tmp_path / "o"), "--backbone",
                                 str(tiny_backbone), "--config", str(config), "--no-progress"])
    assert r.exit_code != 0 and "keep_weight > 0 needs keep" in r.output and str(config) in r.output


@pytest.mark.slow
def test_steps_per_epoch(tiny_backbone, tiny_data, tmp_path):
    with pytest.raises(ValueError, match="steps_per_epoch"):
        TrainConfig(train=["x"], steps_per_epoch=-1).validate()
    t = Trainer(cfg(tiny_backbone, tiny_data, tmp_path, steps_per_epoch=1, epochs=2, dev=[]), progress=False,
                log=lambda m: None)
    assert t.max_steps_per_epoch == 1
    t.fit()
    import json

    hist = json.loads((tmp_path / "out" / "training" / "history.json").read_text())
    assert len(hist["step_loss"]) == 2  # one step in each of the two epochs
