"""Layer-wise distillation terms of ``conba distill`` (conba.train.layer_distill): token states per layer
(TinyBERT) and the last layer's attention and value relations (MiniLM)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch

from conba.errors import ConfigError
from conba.heads import HeadConfig
from conba.model import ConbaModel, load_model
from conba.train.distill import DistillConfig, make_student
from conba.train.layer_distill import (
    attention_relations,
    hidden_distance,
    layer_loss,
    layer_trace,
    relation_kl,
)
from helpers import run_distill

CODES = ["def add(a, b):\n    return a + b\n", "int add(int a, int b) { return a + b; }"]


@pytest.fixture(scope="module")
def teacher(tmp_path_factory) -> ConbaModel:
    from helpers import make_tiny_backbone

    bb = make_tiny_backbone(tmp_path_factory.mktemp("bb3"), layers=3)
    model = ConbaModel.create(str(bb), max_length=64, view="code")
    model.eval()
    return model


def _enc(model: ConbaModel) -> dict:
    enc = model.backbone.tokenize(CODES)  # two lengths: the shorter snippet is padded
    assert not bool(enc["attention_mask"].all())
    return enc


def test_trace_has_every_layer_and_ends_in_the_models_states(teacher):
    enc = _enc(teacher)
    trace = layer_trace(teacher.backbone, enc["input_ids"], enc["attention_mask"])
    assert len(trace.outputs) == 3 and trace.outputs[0].shape == (2, enc["input_ids"].shape[1], 32)
    with torch.no_grad():
        states = teacher.backbone(enc["input_ids"], enc["attention_mask"])  # (b, l, d) from the HF forward
    real = enc["attention_mask"].bool()
    assert torch.allclose(trace.outputs[-1][real], states[real], atol=1e-5)
    assert torch.equal(trace.last_input, trace.outputs[1])


def test_hidden_distance_is_zero_for_equal_states_and_ignores_padding():
    torch.manual_seed(0)
    t = torch.randn(2, 5, 8)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    assert float(hidden_distance(t, t, mask)) == pytest.approx(0, abs=1e-6)
    s = t.clone()
    s[1, 3:] = -t[1, 3:]  # only padding differs
    assert float(hidden_distance(s, t, mask)) == pytest.approx(0, abs=1e-6)
    s[0, 0] = -t[0, 0]  # one real token opposite: distance 2 over 8 real tokens
    assert float(hidden_distance(s, t, mask)) == pytest.approx(2 / 8, abs=1e-5)
    assert float(hidden_distance(2 * t, t, mask)) == pytest.approx(0, abs=1e-6)  # scale-free


def test_attention_relations_are_the_models_attention(teacher):
    enc = _enc(teacher)
    ids, mask = enc["input_ids"], enc["attention_mask"]
    with torch.no_grad():
        trace = layer_trace(teacher.backbone, ids, mask)
        log_att, log_val = attention_relations(teacher.backbone.layers[-1], trace.last_input, mask)
    assert log_att.shape == log_val.shape == (2, 4, ids.shape[1], ids.shape[1])  # (b, h, l, l), 4 heads
    att = log_att.exp()
    assert torch.allclose(att.sum(-1), torch.ones(2, 4, ids.shape[1]), atol=1e-5)
    short = int(mask.sum(-1).argmin())  # the padded snippet
    assert float(att[short][..., ~mask[short].bool()].max()) == 0.0  # no attention on padding keys
    hf = copy.deepcopy(teacher.backbone.model)
    hf.set_attn_implementation("eager")
    with torch.no_grad():
        out = hf(input_ids=ids, attention_mask=mask, output_attentions=True)
    real = mask.bool()
    for b in range(2):  # real query rows over real keys: HF's own attention probabilities
        ours = att[b][:, real[b]][:, :, real[b]]
        theirs = out.attentions[-1][b][:, real[b]][:, :, real[b]]
        assert torch.allclose(ours, theirs, atol=1e-5)


def test_relation_kl_is_zero_only_for_the_same_distributions():
    torch.manual_seed(0)
    mask = torch.tensor([[1, 1, 1, 0]])
    keys = mask.bool()[:, None, None, :]
    t = torch.log_softmax(torch.randn(1, 2, 4, 4).masked_fill(~keys, -1e9), -1)
    s = torch.log_softmax(torch.randn(1, 2, 4, 4).masked_fill(~keys, -1e9), -1)
    assert float(relation_kl(t, t, mask)) == pytest.approx(0, abs=1e-6)
    assert float(relation_kl(s, t, mask)) > 0.01
    s2 = t.clone()
    s2[:, :, 3] = s[:, :, 3]  # the padding query row differs: not counted
    assert float(relation_kl(s2, t, mask)) == pytest.approx(0, abs=1e-6)


def test_layer_loss_is_zero_for_the_teacher_itself_and_trains_only_the_student(teacher):
    enc = _enc(teacher)
    ids, mask = enc["input_ids"], enc["attention_mask"]
    same = make_student(teacher, [0, 1, 2])
    t_trace = layer_trace(teacher.backbone, ids, mask)
    loss = layer_loss(layer_trace(same.backbone, ids, mask), t_trace, [0, 1, 2], same.backbone,
                      teacher.backbone, mask, 1.0, 1.0)
    assert float(loss.detach()) == pytest.approx(0, abs=1e-5)
    student = make_student(teacher, [0, 2])
    student.backbone.set_trainable("full")
    teacher.backbone.set_trainable("none")
    loss = layer_loss(layer_trace(student.backbone, ids, mask), t_trace, [0, 2], student.backbone,
                      teacher.backbone, mask, 1.0, 1.0)
    assert float(loss.detach()) > 0
    loss.backward()
    grads = [p.grad for p in student.backbone.layers[-1].parameters()]
    assert all(g is not None for g in grads) and any(float(g.abs().sum()) > 0 for g in grads)
    assert all(p.grad is None for p in teacher.backbone.parameters())
    only_hidden = layer_loss(layer_trace(student.backbone, ids, mask), t_trace, [0, 2], student.backbone,
                             teacher.backbone, mask, 1.0, 0.0)
    assert 0 < float(only_hidden.detach()) < float(loss.detach())


def test_config_weights_and_signature():
    with pytest.raises(ConfigError, match="hidden_weight must be >= 0"):
        DistillConfig(data=["x"], hidden_weight=-1).validate()
    with pytest.raises(ConfigError, match="attention_weight must be >= 0"):
        DistillConfig(data=["x"], attention_weight=-0.5).validate()
    off = DistillConfig(data=["x"])
    # off, the signature is that of a run made before the layer-wise terms existed: its checkpoint resumes
    assert "hidden_weight" not in off.signature() and "attention_weight" not in off.signature()
    assert not off.layer_terms
    on = DistillConfig(data=["x"], hidden_weight=1.0)
    assert on.layer_terms and on.signature()["hidden_weight"] == 1.0 and on.signature() != off.signature()


def _run(teacher_dir: str, tiny_data, out: Path, *extra: str):
    return run_distill(teacher_dir, tiny_data, out, "-e", "1", *extra)


@pytest.mark.slow
def test_cli_distils_with_layer_terms(teacher, tiny_data, tmp_path):
    teacher_dir = str(teacher.save(tmp_path / "teacher"))
    out = tmp_path / "run"
    res = _run(teacher_dir, tiny_data, out, "--hidden-weight", "1", "--attention-weight", "0.5")
    assert res.exit_code == 0, res.output
    report = json.loads((out / "distill" / "distill.json").read_text())
    assert report["config"]["hidden_weight"] == 1.0 and report["config"]["attention_weight"] == 0.5
    plain = tmp_path / "plain"
    assert _run(teacher_dir, tiny_data, plain).exit_code == 0
    loss_on = report["history"][1]["train_loss"]
    loss_off = json.loads((plain / "distill" / "distill.json").read_text())["history"][1]["train_loss"]
    assert loss_on > loss_off > 0  # the same batches, with the layer terms added
    assert load_model(out).backbone.num_layers == 2
    res = _run(teacher_dir, tiny_data, out, "--hidden-weight", "2")  # other settings: refused, not mixed
    assert res.exit_code != 0 and "hidden_weight: 1.0 saved, 2.0 now); use --restart" in res.output


def test_cli_layer_terms_refuse_a_prefix_head(tiny_backbone, tiny_data, tmp_path):
    model = ConbaModel.create(str(tiny_backbone), HeadConfig(kind="linear", languages=["python", "java"],
                                                             code_mode="prefix"), max_length=64)
    res = _run(str(model.save(tmp_path / "prefixed")), tiny_data, tmp_path / "run", "-L", "0,1",
               "--hidden-weight", "1")
    assert res.exit_code == 1 and "layer-wise distillation needs plain token states" in res.output
    res = _run(str(tmp_path / "prefixed"), tiny_data, tmp_path / "run2", "-L", "0,1", "--attention-weight", "-1")
    assert res.exit_code == 1 and "attention_weight must be >= 0" in res.output


def test_cli_layer_terms_refuse_a_backbone_without_conbas_layer_loop(teacher, tiny_data, tmp_path, monkeypatch):
    teacher_dir = str(teacher.save(tmp_path / "teacher"))
    import dataclasses

    from conba.encoder import adapter

    # as if conba could not run BERT's layers itself (it still drops them, for the student)
    bert = dataclasses.replace(adapter.BERT, model_types=("bert",), operations=frozenset({"drop-layers"}))
    roberta = dataclasses.replace(adapter.BERT, model_types=("roberta",))
    monkeypatch.setattr(adapter, "FAMILIES", (bert, roberta, *adapter.FAMILIES[1:]))
    out = tmp_path / "run"
    res = _run(teacher_dir, tiny_data, out, "--hidden-weight", "1")
    assert res.exit_code == 1 and "layer-wise distillation" in res.output and "not model type 'bert'" in res.output
    assert not (out / "distill" / "teacher").exists()  # refused before the teacher's vectors were encoded
