"""One config base (strict JSON) and one save/load protocol; model folders check format_version and fingerprint."""

import json

import pytest
import torch

from conba.encoder.backbone import BackboneConfig
from conba.encoder.sdtp import PruneConfig, PruneModule, load_pruner, save_pruner
from conba.errors import ConfigError, FormatError
from conba.heads import HeadConfig, build_head, load_head, save_head
from conba.model import CONFIG_NAME, ConbaModel, ModelError, load_model
from conba.model.config import ModelConfig
from conba.pretrain.config import PretrainConfig
from conba.prune.train_config import PruneTrainConfig
from conba.train.config import TrainConfig
from conba.utils.config_keys import JsonConfig

CONFIGS = [BackboneConfig, HeadConfig, PruneConfig, TrainConfig, PretrainConfig, PruneTrainConfig, ModelConfig]


@pytest.mark.parametrize("cls", CONFIGS)
def test_every_config_refuses_an_unknown_key_naming_it_and_the_file(cls, tmp_path):
    assert issubclass(cls, JsonConfig)
    good = cls(layers=[1], num_layers=4, dim=32) if cls is PruneConfig else cls()
    path = tmp_path / "c.json"
    good.save(path)
    assert cls.load(path) == good  # round trip
    path.write_text(json.dumps({**good.to_dict(), "colour": "red"}))
    with pytest.raises(ConfigError, match=rf"^unknown {cls.config_name} key 'colour' in {path} \(known: ") as err:
        cls.load(path)
    assert "\n" not in str(err.value)


def test_train_config_still_reads_configs_saved_before_use_state(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"train": ["x"], "use_feedback": False}))
    old = TrainConfig.load(path)
    assert not old.use_state and not old.residual and old.state_a == "dense"


def test_heads_and_scorers_share_the_save_protocol(tmp_path):
    head = build_head(HeadConfig(kind="linear", dim=8))
    save_head(head, tmp_path / "h")
    assert torch.equal(load_head(tmp_path / "h").fc.weight, head.fc.weight)
    pruner = PruneModule(PruneConfig(layers=[1, 2], num_layers=4, dim=32))
    save_pruner(pruner, tmp_path / "p")
    loaded = load_pruner(tmp_path / "p")
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), pruner.state_dict().values()))
    (tmp_path / "p" / "prune.safetensors").write_bytes(b"\x00junk")
    with pytest.raises(FormatError, match=r"p/prune.safetensors: corrupt weights"):
        load_pruner(tmp_path / "p")


@pytest.fixture()
def saved(tiny_backbone, tmp_path):
    m = ConbaModel.create(str(tiny_backbone), HeadConfig(kind="linear"), max_length=32)
    return m, m.save(tmp_path / "m")


def test_model_load_refuses_a_newer_format_version(saved):
    _, folder = saved
    cfg = json.loads((folder / CONFIG_NAME).read_text())
    (folder / CONFIG_NAME).write_text(json.dumps({**cfg, "format_version": cfg["format_version"] + 1}))
    with pytest.raises(ModelError, match="format_version 2 is newer than this conba reads"):
        load_model(folder)


def test_model_load_refuses_an_unknown_key_in_conba_config_naming_it_and_the_file(saved):
    _, folder = saved
    path = folder / CONFIG_NAME
    cfg = json.loads(path.read_text())
    assert ModelConfig.load(path).to_dict() == cfg  # what save() wrote, key for key
    path.write_text(json.dumps({**cfg, "treshold": 0.5}))
    with pytest.raises(ConfigError, match=rf"^unknown model config key 'treshold' in {path} \(known: format, "):
        load_model(folder)


def test_the_shipped_model_configs_read_strictly():
    from conba.model import DEFAULT_FAST_DIR, DEFAULT_MODEL_DIR

    for folder in (DEFAULT_MODEL_DIR, DEFAULT_FAST_DIR):
        raw = json.loads((folder / CONFIG_NAME).read_text())
        assert ModelConfig.load(folder / CONFIG_NAME).to_dict() == raw


def test_model_load_checks_the_weights_against_the_fingerprint(saved):
    m, folder = saved
    assert load_model(folder).fingerprint() == m.fingerprint()
    with torch.no_grad():
        m.head.fc.weight.add_(0.01)
    save_head(m.head, folder / "head")  # weights changed behind the model's back
    with pytest.raises(ModelError, match="do not match the fingerprint"):
        load_model(folder)


@pytest.mark.slow
def test_float16_delta_round_trips_through_the_fingerprint_check(tmp_path):
    m = ConbaModel.create("default", HeadConfig(kind="linear"))
    with torch.no_grad():
        m.backbone.layers[5].output.dense.bias.add_(1e-3)
        m.head.fc.weight.add_(torch.randn_like(m.head.fc.weight) * 1e-3)
    m.save(tmp_path / "d", dtype="float16")
    assert load_model(tmp_path / "d").fingerprint() == m.fingerprint()


@pytest.mark.parametrize("cls,key,bad,words", [
    (BackboneConfig, "max_length", "x", "must be an integer, got \"x\""),
    (BackboneConfig, "max_length", True, "must be an integer, got true"),
    (ModelConfig, "threshold", "high", "must be a number or null, got \"high\""),
    (ModelConfig, "view", 3, "must be a string, got 3"),
    (TrainConfig, "lr_head", [1], "must be a number, got list"),
    (HeadConfig, "use_control", "yes", "must be true or false, got \"yes\""),
])
def test_every_config_refuses_a_value_of_the_wrong_type_naming_it_and_the_file(cls, key, bad, words, tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({**cls().to_dict(), key: bad}))
    with pytest.raises(ConfigError, match=f"^{cls.config_name} field '{key}' {words} in {path}$"):
        cls.load(path)
    path.write_text(json.dumps({**cls().to_dict(), "threshold": None} if cls is ModelConfig else cls().to_dict()))
    cls.load(path)  # null where null is allowed, ints where floats go: fine
