"""Narrower feed-forward blocks (conba.encoder.ffn): slicing, neuron ranking, the student's folder, the CLI."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch

from conba.encoder.backbone import BackboneConfig
from conba.encoder.ffn import ffn_importance, ffn_size, narrow_ffn
from conba.errors import ConfigError
from conba.model import ConbaModel, ModelError, load_model
from conba.train.distill import DistillConfig, make_student
from helpers import run_distill

CODES = ["def add(a, b):\n    return a + b\n", "int add(int a, int b) { return a + b; }",
         "function biggest(xs) { return max(xs); }", "print ( x )"]


@pytest.fixture()
def model(tiny_backbone) -> ConbaModel:
    torch.manual_seed(0)
    return ConbaModel.create(str(tiny_backbone), max_length=64, view="code")


def _tokens(model: ConbaModel) -> dict:
    return model.backbone.tokenize(CODES)


def test_narrowing_equals_silencing_the_dropped_neurons(model):
    """Cutting neurons out gives exactly what the full model gives with those neurons' output columns zeroed."""
    hf = model.backbone.model
    f = ffn_size(hf)
    keep = [torch.tensor([5, 0, 17, 3, 40, 9, 22, 63]), torch.arange(8) * 8]
    silenced = copy.deepcopy(hf)
    with torch.no_grad():
        for layer, k in zip(silenced.encoder.layer, keep):
            dropped = torch.ones(f, dtype=torch.bool)
            dropped[k] = False
            layer.output.dense.weight[:, dropped] = 0
    narrow = narrow_ffn(copy.deepcopy(hf), 8, keep=keep)
    assert ffn_size(narrow) == 8 and ffn_size(hf) == f
    for layer in narrow.encoder.layer:
        assert layer.intermediate.dense.weight.shape == (8, 32) and layer.intermediate.dense.bias.shape == (8,)
        assert layer.output.dense.weight.shape == (32, 8) and layer.output.dense.bias.shape == (32,)
    enc = _tokens(model)
    with torch.no_grad():
        a = narrow(**enc).last_hidden_state
        b = silenced(**enc).last_hidden_state
    assert torch.allclose(a, b, atol=1e-5)
    assert narrow_ffn(narrow, 8) is narrow and ffn_size(narrow) == 8  # already that wide: unchanged


@pytest.mark.parametrize("size", [0, 65, -3])
def test_narrow_refuses_bad_widths(model, size):
    with pytest.raises(ConfigError, match=r"feed-forward width must be in 1\.\.64"):
        narrow_ffn(copy.deepcopy(model.backbone.model), size)


def test_narrow_refuses_encoders_of_another_shape():
    with pytest.raises(ConfigError, match="feed-forward narrowing supports BERT/RoBERTa-family backbones"):
        narrow_ffn(torch.nn.Linear(4, 4), 2)


def test_narrow_refuses_bad_keep_lists(model):
    with pytest.raises(ConfigError, match="need 2 index lists of 8 neurons"):
        narrow_ffn(copy.deepcopy(model.backbone.model), 8, keep=[torch.arange(8)])
    with pytest.raises(ConfigError, match="need 2 index lists of 8 neurons"):
        narrow_ffn(copy.deepcopy(model.backbone.model), 8, keep=[torch.arange(8), torch.arange(7)])


def test_importance_follows_activation_and_output_norm(model):
    layer = model.backbone.model.encoder.layer[1]
    with torch.no_grad():
        layer.output.dense.weight[:, 4] = 0          # a neuron that moves nothing
        layer.output.dense.weight[:, 9] *= 50        # one that moves a lot
    scores = ffn_importance(model.backbone, CODES, batch_size=3)
    assert [s.shape for s in scores] == [(64,), (64,)]
    assert all(bool((s >= 0).all()) for s in scores)
    assert float(scores[1][4]) == 0.0 and int(scores[1].argmax()) == 9
    # padding does not count: one batch or one snippet at a time give the same means
    assert all(torch.allclose(a, b, rtol=1e-4) for a, b in zip(scores, ffn_importance(model.backbone, CODES, 1)))
    with pytest.raises(ConfigError, match="no code"):
        ffn_importance(model.backbone, [])


def test_narrow_student_keeps_the_important_neurons(model):
    with torch.no_grad():
        model.backbone.model.encoder.layer[1].output.dense.weight[:, 33] *= 50
    student = make_student(model, [0, 1], ffn_size=16, codes=CODES)
    assert student.backbone.config.ffn_size == 16 and ffn_size(student.backbone.model) == 16
    assert ffn_size(model.backbone.model) == 64  # the teacher is untouched
    kept = student.backbone.model.encoder.layer[1].output.dense.weight
    assert any(torch.equal(kept[:, j], model.backbone.model.encoder.layer[1].output.dense.weight[:, 33])
               for j in range(16))
    assert student.encode(CODES).shape == model.encode(CODES).shape
    with pytest.raises(ConfigError, match="needs code to rank"):
        make_student(model, [0, 1], ffn_size=16)


def test_narrow_student_round_trip_is_bit_exact(model, tmp_path):
    student = make_student(model, [1], ffn_size=12, codes=CODES)
    student.save(tmp_path / "s", dtype="float16")
    config = json.loads((tmp_path / "s" / "conba_config.json").read_text())
    assert config["backbone"]["ffn_size"] == 12 and config["backbone"]["num_layers"] == 1
    back = load_model(tmp_path / "s")
    assert ffn_size(back.backbone.model) == 12 and back.fingerprint() == student.fingerprint()
    assert np.array_equal(back.encode(CODES), student.encode(CODES))


def test_a_folder_asking_for_a_wider_ffn_than_its_backbone_is_refused(model, tmp_path):
    model.save(tmp_path / "m")
    path = tmp_path / "m" / "conba_config.json"
    config = json.loads(path.read_text())
    config["backbone"]["ffn_size"] = 100
    path.write_text(json.dumps(config))
    with pytest.raises(ModelError, match="asks for a feed-forward width of 100"):
        load_model(tmp_path / "m")


def test_ffn_size_is_saved_only_when_set():
    assert "ffn_size" not in BackboneConfig().to_dict()  # older folders keep their fingerprint
    assert BackboneConfig(ffn_size=512).to_dict()["ffn_size"] == 512
    with pytest.raises(ConfigError, match="ffn_size must be >= 0"):
        BackboneConfig.from_dict({"ffn_size": -1})


def test_ffn_size_is_in_the_run_signature_only_when_set():
    plain = DistillConfig(data=["x"]).signature()
    assert "ffn_size" not in plain and "ffn_sample" not in plain  # runs made before it still resume
    assert DistillConfig(data=["x"], ffn_size=512).signature()["ffn_size"] == 512
    assert DistillConfig(data=["x"], ffn_size=512).signature()["ffn_sample"] == 256
    with pytest.raises(ConfigError, match="ffn_size must be >= 0"):
        DistillConfig(data=["x"], ffn_size=-1).validate()
    with pytest.raises(ConfigError, match="ffn_sample must be >= 1"):
        DistillConfig(data=["x"], ffn_size=8, ffn_sample=0).validate()


@pytest.mark.slow
def test_narrow_student_of_the_embedded_backbone_saves_as_a_delta(tmp_path):
    teacher = ConbaModel.create("default")
    student = make_student(teacher, [0, 5], ffn_size=256, codes=CODES)
    student.save(tmp_path / "d", dtype="float16")
    assert not (tmp_path / "d" / "backbone").exists() and (tmp_path / "d" / "backbone_delta.safetensors").is_file()
    back = load_model(tmp_path / "d")
    assert ffn_size(back.backbone.model) == 256 and back.fingerprint() == student.fingerprint()
    assert np.array_equal(back.encode(CODES), student.encode(CODES))


@pytest.mark.slow
def test_narrow_student_exports_to_onnx(model):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    student = make_student(model, [0, 1], ffn_size=16, codes=CODES)
    exact = student.encode(CODES)
    assert np.abs(student.encode(CODES, engine="onnx-fp32") - exact).max() < 1e-5


def _distill(teacher: str, data, out, *extra: str):
    return run_distill(teacher, data, out, "-e", "1", *extra, layers="0,1")


@pytest.mark.slow
def test_cli_ffn_size_trains_a_narrow_student(model, tiny_data, tmp_path):
    teacher = str(model.save(tmp_path / "teacher"))
    res = _distill(teacher, tiny_data, tmp_path / "narrow", "--ffn-size", "16", "--ffn-sample", "5")
    assert res.exit_code == 0, res.output
    assert "16 feed-forward neurons" in res.output
    student = load_model(tmp_path / "narrow")
    assert ffn_size(student.backbone.model) == 16 and student.info["distill"]["ffn_size"] == 16
    # continuing it needs the same width; a full-width run cannot start from it
    res = _distill(teacher, tiny_data, tmp_path / "more", "--init", str(tmp_path / "narrow"))
    assert res.exit_code == 1 and "feed-forward blocks of 16 neurons, but the run asks for 64" in res.output
    assert "can be narrowed, not widened" in res.output
    res = _distill(teacher, tiny_data, tmp_path / "more", "--init", str(tmp_path / "narrow"), "--ffn-size", "16")
    assert res.exit_code == 0, res.output
    # a full-width student is narrowed (by its own neurons' importance) before training goes on
    assert _distill(teacher, tiny_data, tmp_path / "full").exit_code == 0
    res = _distill(teacher, tiny_data, tmp_path / "cut", "--init", str(tmp_path / "full"), "--ffn-size", "8")
    assert res.exit_code == 0, res.output
    cut = load_model(tmp_path / "cut")
    assert ffn_size(cut.backbone.model) == 8 and cut.backbone.config.ffn_size == 8
    assert ffn_size(load_model(tmp_path / "full").backbone.model) == 64  # the earlier student is untouched
    res = _distill(teacher, tiny_data, tmp_path / "wide", "--ffn-size", "65")
    assert res.exit_code == 1 and "ffn_size 65: the teacher's feed-forward blocks have 64 neurons" in res.output
