import numpy as np
import pytest
import torch

from conba.encoder.backbone import Backbone, BackboneConfig, BackboneError
from conba.errors import ConfigError
from conba.heads import HeadConfig
from conba.model import ConbaModel, ModelError, load_model

CODES = ["def add(a, b):\n    return a + b\n", "x", "static int add(int a, int b) { return a + b; }",
         "function add(a, b) { return a + b; }"]


@pytest.fixture()
def model(tiny_backbone):
    torch.manual_seed(0)
    return ConbaModel.create(str(tiny_backbone),
                             HeadConfig(kind="linear", languages=["python", "java"], code_mode="prefix"))


def test_backbone_split_equals_forward(tiny_backbone):
    bb = Backbone(BackboneConfig(name_or_path=str(tiny_backbone)))
    enc = bb.tokenize(CODES)
    full = bb(enc["input_ids"], enc["attention_mask"])
    assert torch.allclose(bb.lower(enc["input_ids"], enc["attention_mask"], 2), full, atol=1e-6)
    low = bb.lower(enc["input_ids"], enc["attention_mask"], 1)
    assert torch.allclose(bb.upper(low, enc["attention_mask"], 1), full, atol=1e-6)


def test_truncation_length(tiny_backbone):
    bb = Backbone(BackboneConfig(name_or_path=str(tiny_backbone), max_length=12))
    assert bb.tokenize(["a " * 100])["input_ids"].shape[1] == 12
    assert bb.token_lengths(["a " * 100, "a"]) == [12, 3]


@pytest.mark.slow
def test_encode_shapes_order_and_batching(model):
    e1 = model.encode(CODES, languages=["python", "java", "java", "javascript"], batch_size=1)
    e4 = model.encode(CODES, languages=["python", "java", "java", "javascript"], batch_size=4)
    assert e1.shape == (4, model.dim) and e1.dtype == np.float32
    assert np.allclose(e1, e4, atol=1e-5)  # padding and length sorting never change an embedding
    assert np.allclose(np.linalg.norm(e1, axis=1), 1, atol=1e-5)
    single = model.encode(CODES[2], languages="java")
    assert np.allclose(single, e1[2], atol=1e-5)
    raw = model.encode(CODES, normalize=False, convert_to_tensor=True)
    assert isinstance(raw, torch.Tensor)
    assert model.encode([]).shape == (0, model.dim)


def test_encode_bad_input(model):
    with pytest.raises(ValueError, match="2 codes but 1 languages"):
        model.encode(["a", "b"], languages=["python"])
    with pytest.raises(TypeError):
        model.encode([1, 2])
    with pytest.raises(ValueError, match="batch_size"):
        model.encode(["a"], batch_size=0)


@pytest.mark.slow
def test_similarity(model):
    s = model.similarity(CODES[:2], CODES)
    assert s.shape == (2, 4)
    assert s[0, 0] == pytest.approx(1.0, abs=1e-5)
    emb = model.encode(CODES)
    assert np.allclose(model.similarity(emb, emb), emb @ emb.T, atol=1e-5)


@pytest.mark.parametrize("kind", ["linear", "none"])  # the research heads: research/tests/test_heads_saved.py
def test_save_load_bit_exact(tiny_backbone, tmp_path, kind):
    torch.manual_seed(1)
    m = ConbaModel.create(str(tiny_backbone), HeadConfig(kind=kind))
    with torch.no_grad():  # make the backbone differ from its base so it must be saved
        m.backbone.layers[1].output.dense.weight.add_(0.01)
    m.threshold = 0.42
    m.save(tmp_path / "m")
    m2 = load_model(tmp_path / "m")
    assert m2.threshold == 0.42
    assert m2.fingerprint() == m.fingerprint()
    for (k, a), (k2, b) in zip(m.state_dict().items(), m2.state_dict().items()):
        assert k == k2 and torch.equal(a, b), k
    assert np.array_equal(m.encode(CODES), m2.encode(CODES))


def test_float16_save_is_exact_after_rounding(tiny_backbone, tmp_path):
    m = ConbaModel.create(str(tiny_backbone), HeadConfig(kind="linear"))
    with torch.no_grad():
        m.head.fc.weight.add_(torch.randn_like(m.head.fc.weight) * 1e-3)
    before = m.head.fc.weight.clone()
    m.save(tmp_path / "h", dtype="float16")
    assert not torch.equal(before, m.head.fc.weight)  # rounded to float16 precision in place
    assert torch.equal(m.head.fc.weight, m.head.fc.weight.half().float())
    m2 = load_model(tmp_path / "h")
    assert np.array_equal(m.encode(CODES), m2.encode(CODES))


@pytest.mark.slow
def test_delta_storage_only_stores_changed_tensors(tmp_path):
    from safetensors.torch import load_file

    m = ConbaModel.create("default", HeadConfig(kind="none"))
    with torch.no_grad():
        m.backbone.layers[5].output.dense.bias.add_(0.001)
    m.save(tmp_path / "d", dtype="float16")
    delta = load_file(str(tmp_path / "d" / "backbone_delta.safetensors"))
    assert list(delta) == ["encoder.layer.5.output.dense.bias"]
    m2 = load_model(tmp_path / "d")
    assert torch.equal(m2.backbone.layers[5].output.dense.bias, m.backbone.layers[5].output.dense.bias)
    assert m2.fingerprint() == m.fingerprint()


def test_load_errors(tmp_path, tiny_backbone, monkeypatch):
    monkeypatch.setenv("CONBA_OFFLINE", "1")  # fail fast instead of waiting on the unreachable hub
    with pytest.raises(ModelError, match="neither a conba model folder"):
        load_model(tmp_path)
    m = ConbaModel.create(str(tiny_backbone))
    m.save(tmp_path / "m")
    (tmp_path / "m" / "conba_config.json").write_text("{broken")
    with pytest.raises(ModelError, match="corrupt"):
        load_model(tmp_path / "m")
    m.save(tmp_path / "n")
    (tmp_path / "n" / "backbone" / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(ModelError, match="missing or corrupt"):
        load_model(tmp_path / "n")
    with pytest.raises(ModelError, match="local folder"):
        load_model("some-org/not-a-real-model-xyz")
    with pytest.raises(BackboneError, match="not found"):
        Backbone(BackboneConfig(name_or_path="./no/such/folder"))


def test_zero_shot_matches_sentence_transformers_pooling():
    """The embedded backbone with mean pooling is all-MiniLM-L6-v2's own recipe."""
    from transformers import AutoModel, AutoTokenizer

    from conba.encoder.backbone import embedded_model_path

    m = load_model("zero-shot")
    path = str(embedded_model_path())
    tok, hf = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path)
    enc = tok(CODES, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        h = hf(**enc).last_hidden_state
    mask = enc["attention_mask"][..., None].float()
    ref = torch.nn.functional.normalize((h * mask).sum(1) / mask.sum(1), dim=-1).numpy()
    assert np.allclose(m.encode(CODES), ref, atol=1e-5)


def test_max_length_capped_by_position_table(tiny_backbone):
    bb = Backbone(BackboneConfig(name_or_path=str(tiny_backbone), max_length=1000))
    assert bb.max_length == 128  # the tiny BERT has 128 positions
    long_code = "a " * 400
    enc = bb.tokenize([long_code])
    assert enc["input_ids"].shape[1] == 128
    bb(enc["input_ids"], enc["attention_mask"])  # no index error


def test_config_loaders_refuse_unknown_keys():
    from conba.encoder.backbone import BackboneConfig
    from conba.pretrain.config import PretrainConfig
    from conba.prune.train_config import PruneTrainConfig

    for cls, what in [(BackboneConfig, "backbone config"), (PretrainConfig, "pretrain config"),
                      (PruneTrainConfig, "prune training config")]:
        with pytest.raises(ConfigError, match=rf"^unknown {what} keys 'bogus', 'zz' in cfg.json \(known: "):
            cls.from_dict({"zz": 1, "bogus": 2}, source="cfg.json")
    assert BackboneConfig.from_dict({"max_length": 64}).max_length == 64
