"""Bring your own model: tiny random models of six families (BERT with CLS pooling, RoBERTa, ModernBERT, a
Qwen2 decoder with last-token pooling and left padding, a T5 encoder, a sentence-transformers folder with
CLS pooling + Dense + prompts), built in a temporary folder from the embedded MiniLM tokenizer, no network.

Each must give sentence-transformers' own vectors, index / search / clone / map through the CLI, train two
steps, and save and load back bit-exact; what a family does not support is a one-line error naming it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from conba.cli.main import cli
from conba.errors import ConbaError
from helpers import train_config

pytestmark = pytest.mark.slow  # every test here needs the six tiny models (about 5 s of CPU to build)

CODES = ["def add(a, b):\n    return a + b", "int add(int a, int b) { return a + b; }",
         "func gcd(a, b int) int {\n\tfor b != 0 {\n\t\ta, b = b, a%b\n\t}\n\treturn a\n}",
         "fn main() { println!(\"hi\"); }", "x"]
LANGS = ["python", "java", "go", "rust", "python"]
PROMPTS = {"query": "Represent this query for searching code: ", "document": "code: "}
SMALL = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}
# name: (pooling, dense, prompts, padding side)
FAMILIES = {
    "bert-cls": ("cls", False, False, "right"),
    "roberta-mean": ("mean", False, False, "right"),
    "modernbert-mean": ("mean", False, False, "right"),
    "qwen2-lasttoken": ("lasttoken", False, False, "left"),
    "t5enc-mean": ("mean", False, False, "right"),
    "st-cls-dense-prompts": ("cls", True, True, "right"),
}


def _hf_model(name: str, vocab: int):
    import transformers as tf

    if name.startswith("roberta"):
        return tf.RobertaModel(tf.RobertaConfig(vocab_size=vocab, max_position_embeddings=514, **SMALL))
    if name.startswith("modernbert"):
        return tf.ModernBertModel(tf.ModernBertConfig(vocab_size=vocab, pad_token_id=0, cls_token_id=101,
                                                      sep_token_id=102, bos_token_id=101, eos_token_id=102, **SMALL))
    if name.startswith("qwen2"):
        return tf.Qwen2Model(tf.Qwen2Config(vocab_size=vocab, num_key_value_heads=1, **SMALL))
    if name.startswith("t5"):
        return tf.T5EncoderModel(tf.T5Config(vocab_size=vocab, d_model=32, num_layers=2, num_heads=2, d_ff=64, d_kv=16))
    return tf.BertModel(tf.BertConfig(vocab_size=vocab, **SMALL))


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    """name -> a sentence-transformers folder of that family (its own read-out in modules.json)."""
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer

    from conba.encoder.backbone import embedded_model_path

    root = tmp_path_factory.mktemp("byo")
    out = {}
    for n, (name, (pooling, dense, prompts, side)) in enumerate(FAMILIES.items()):
        torch.manual_seed(n)
        tok = AutoTokenizer.from_pretrained(str(embedded_model_path()))
        hf_dir = root / f"{name}-hf"
        _hf_model(name, tok.vocab_size).save_pretrained(hf_dir)
        tok.padding_side = side
        tok.save_pretrained(hf_dir)
        word = models.Transformer(str(hf_dir), max_seq_length=128)
        mods = [word, models.Pooling(32, pooling_mode=pooling, include_prompt=not prompts)]
        if dense:
            mods.append(models.Dense(32, 16))
        mods.append(models.Normalize())
        SentenceTransformer(modules=mods, device="cpu", prompts=PROMPTS if prompts else None).save(str(root / name))
        out[name] = root / name
    return out


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FAMILIES))
def test_encode_equals_sentence_transformers(folders, name):
    from sentence_transformers import SentenceTransformer

    import conba

    st = SentenceTransformer(str(folders[name]), device="cpu")
    model = conba.load_model(folders[name])
    prompts = FAMILIES[name][2]
    ref = st.encode(CODES, normalize_embeddings=True, **({"prompt_name": "document"} if prompts else {}))
    got = model.encode(CODES, languages=LANGS, view="raw")  # no prompt named: the document prompt
    assert got.shape == ref.shape
    assert float((got * ref).sum(1).min()) > 0.9999
    if prompts:
        query = st.encode(CODES, normalize_embeddings=True, prompt_name="query")
        assert float((model.encode_query(CODES, view="raw") * query).sum(1).min()) > 0.9999
        assert float((got * query).sum(1).min()) < 0.9999  # the prompt changes the vectors
        text = st.encode(CODES, normalize_embeddings=True, prompt="any: ")
        assert float((model.encode(CODES, prompt="any: ", view="raw") * text).sum(1).min()) > 0.9999
    if FAMILIES[name][3] == "left":
        assert model.backbone.left_padding and model.backbone.readout.config.pooling == ["lasttoken"]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FAMILIES))
def test_save_load_bit_exact_and_two_training_steps(folders, name, tiny_data, tmp_path):
    import conba
    from conba.model import ConbaModel
    from conba.train.config import TrainConfig
    from conba.train.trainer import Trainer

    model = conba.load_model(folders[name])
    saved = model.save(tmp_path / "saved")
    back = ConbaModel.load(saved)
    assert back.fingerprint() == model.fingerprint()
    assert np.array_equal(back.encode(CODES, view="raw"), model.encode(CODES, view="raw"))
    assert (saved / "readout").is_dir() == (model.backbone.readout is not None)
    train, _ = tiny_data
    cfg = TrainConfig(train=[str(train)], dev=[], out=str(tmp_path / "trained"), backbone=str(folders[name]),
                      head="conba" if FAMILIES[name][1] else "linear", tune="full", groups_per_batch=2, per_group=2,
                      epochs=1, steps_per_epoch=2,
                      cache_dir=str(tmp_path / "cache"), device="cpu", max_length=64)
    trained = Trainer(cfg, progress=False, log=lambda m: None, plot_history=False).fit()
    assert trained.fingerprint() != model.fingerprint()
    again = ConbaModel.load(tmp_path / "trained")
    assert again.fingerprint() == trained.fingerprint()
    assert np.array_equal(again.encode(CODES), trained.encode(CODES))
    from conba.merge import merge

    halfway = merge(again, alpha=0.5)  # with its untuned counterpart: the same backbone and read-out
    assert halfway.encode(CODES).shape == trained.encode(CODES).shape


def _tree(root: Path) -> tuple[Path, Path]:
    from helpers import write_tree

    py = ("def add(a, b):\n    total = a + b\n    return total\n\n\n"
          "def biggest(xs):\n    best = xs[0]\n    for x in xs:\n        if x > best:\n            best = x\n"
          "    return best\n")
    java = "\n".join([
        "class M {", "    static int add(int a, int b) {", "        int total = a + b;", "        return total;",
        "    }", "", "    static int biggest(int[] xs) {", "        int best = xs[0];", "        for (int x : xs) {",
        "            if (x > best) best = x;", "        }", "        return best;", "    }", "}", ""])
    return write_tree(root / "src", {"m.py": py}), write_tree(root / "tgt", {"M.java": java})


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FAMILIES))
def test_index_search_clones_map(folders, name, tmp_path):
    src, tgt = _tree(tmp_path)
    model, idx = str(folders[name]), str(tmp_path / "idx")
    res = run("index", str(src), str(tgt), "--index", idx, "--model", model, "--json")
    assert res.exit_code == 0 and json.loads(res.output)["units_total"] == 4, res.output
    res = run("search", "--code", "def add(a, b): return a + b", "--index", idx, "-k", "2")
    rows = [json.loads(line) for line in res.output.splitlines()]
    assert res.exit_code == 0 and len(rows) == 2 and all(-1.001 <= r["score"] <= 1.001 for r in rows)
    res = run("clones", "--index", idx, "--threshold", "-1", "--min-lines", "1")
    assert res.exit_code == 0 and json.loads(res.stdout.splitlines()[-1])["stats"]["units"] == 4
    res = run("map", str(src), str(tgt), "-i", idx, "-m", model, "-t", "-1")
    rows = [json.loads(line) for line in res.output.splitlines() if line.startswith("{")]
    assert res.exit_code == 0, res.output
    assert {r["source"]["name"] for r in rows if r["type"] == "function"} == {"add", "biggest"}


def test_pooling_override_and_trust_remote_code_recorded(folders, tmp_path):
    import conba
    from conba.model import ConbaModel, ModelError

    hf = folders["qwen2-lasttoken"].parent / "qwen2-lasttoken-hf"
    bare = conba.load_model(hf)  # a bare decoder: last token, left padding
    assert bare.backbone.readout.config.pooling == ["lasttoken"] and bare.backbone.left_padding
    mean = conba.load_model(hf, pooling="mean")
    assert mean.backbone.readout is None and mean.fingerprint() != bare.fingerprint()
    with pytest.raises(ModelError, match="--pooling applies to a bare"):
        conba.load_model("default", pooling="cls")
    with pytest.raises(ConbaError, match="pooling must be one"):
        conba.load_model(hf, pooling="median")
    trusted = conba.load_model(hf, trust_remote_code=True)
    assert trusted.backbone.config.to_dict()["trust_remote_code"] is True
    assert "trust_remote_code" not in bare.backbone.config.to_dict()  # off: not recorded, fingerprints as before
    assert trusted.fingerprint() == bare.fingerprint()  # the opt-in changes no vector
    saved = trusted.save(tmp_path / "trusted")
    with pytest.raises(ModelError, match="saved with --trust-remote-code"):
        ConbaModel.load(saved)
    assert ConbaModel.load(saved, trust_remote_code=True).fingerprint() == trusted.fingerprint()


def test_unsupported_operations_name_the_architecture(folders):
    import conba
    from conba.heads import HeadConfig, build_head
    from conba.model import ConbaModel

    qwen = conba.load_model(folders["qwen2-lasttoken"])
    with pytest.raises(ConbaError, match="train --tune top-k supports BERT/RoBERTa-family .*not model type 'qwen2'"):
        qwen.backbone.set_trainable("top-k", 1)
    with pytest.raises(ConbaError, match="SDTP pruning supports .*; not model type 't5'"):
        from conba.encoder.layers import require_own_loop

        require_own_loop(conba.load_model(folders["t5enc-mean"]).backbone, "SDTP pruning")
    with pytest.raises(ConbaError, match="layer dropping supports .*not model type 'modernbert'"):
        from conba.encoder.backbone import keep_layers

        keep_layers(conba.load_model(folders["modernbert-mean"]).backbone.model, [0])
    with pytest.raises(ConbaError, match="reads every token state.*own read-out"):
        ConbaModel(qwen.backbone, build_head(HeadConfig(kind="conba", mode="tokens", dim=32)))
    with pytest.raises(ConbaError, match="no prompt 'passage'"):
        qwen.encode(["x"], prompt_name="passage")


def test_cli_pooling_and_trust_remote_code_flags(folders, tmp_path):
    import conba

    hf = str(folders["bert-cls"].parent / "bert-cls-hf")  # a bare BERT: mean pooling unless told otherwise
    code = "def add(a, b):\n    return a + b\n"
    res = CliRunner().invoke(cli, ["encode", "-", "-l", "python", "-m", hf, "--pooling", "cls"], input=code)
    assert res.exit_code == 0, res.output
    got = np.asarray(json.loads(res.output.splitlines()[-1])["embedding"], dtype=np.float32)
    want = conba.load_model(hf, pooling="cls").encode([code], languages=["python"])[0]
    mean = conba.load_model(hf).encode([code], languages=["python"])[0]
    assert np.allclose(got, want, atol=1e-6) and not np.allclose(got, mean, atol=1e-3)
    src, tgt = _tree(tmp_path)
    idx = str(tmp_path / "idx")
    res = run("index", str(src), "--index", idx, "-m", hf, "--pooling", "cls", "--trust-remote-code")
    assert res.exit_code == 0, res.output
    res = run("search", "--code", code, "--index", idx, "-m", hf, "--pooling", "cls", "-k", "1")
    assert res.exit_code == 0 and json.loads(res.output)["name"] == "add", res.output
    res = CliRunner().invoke(cli, ["search", "--code", code, "--index", idx, "-m", hf, "-k", "1"])
    assert res.exit_code != 0 and "Traceback" not in res.output  # mean pooling: not the index's vectors
    res = CliRunner().invoke(cli, ["encode", "-", "-m", "default", "--pooling", "cls"], input=code)
    assert res.exit_code != 0 and "--pooling applies to a bare" in res.output and "Traceback" not in res.output


def test_cached_states_of_a_left_padded_decoder_give_its_vectors(folders):
    """``train --tune none`` caches final states through the model's own forward; left padding is undone."""
    import conba
    from conba.train.features import compute_states

    model = conba.load_model(folders["qwen2-lasttoken"])
    bb = model.backbone
    states = compute_states(bb, CODES, bb.num_layers, batch_size=2, progress=False)
    assert list(states.lengths()) == bb.token_lengths(CODES)
    x, mask = states.batch(list(range(len(CODES))))  # right-padded again
    vectors = torch.nn.functional.normalize(model.head(*bb.read_out(x, mask), None), dim=-1)
    assert np.allclose(vectors.detach().numpy(), model.encode(CODES, view="raw"), atol=2e-3)


@pytest.mark.slow
def test_cli_train_with_pooling_and_remote_code_opt_in(folders, tiny_data, tmp_path):
    from conba.model import ConbaModel, ModelError

    hf = str(folders["bert-cls"].parent / "bert-cls-hf")
    out = tmp_path / "m"
    res = run("train", str(tiny_data[0]), "-o", str(out), "--backbone", hf, "--pooling", "cls", "--trust-remote-code",
              "--head", "linear", "-P", "2", "-K", "2", "-e", "1", "--max-length", "64", "--no-progress",
              "--config", train_config(tmp_path, steps_per_epoch=2, cache_dir=tmp_path / "c"), "--device", "cpu")
    assert res.exit_code == 0, res.output
    with pytest.raises(ModelError, match="saved with --trust-remote-code"):
        ConbaModel.load(out)
    model = ConbaModel.load(out, trust_remote_code=True)
    assert model.backbone.readout.config.pooling == ["cls"] and model.backbone.config.pooling == "cls"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["qwen2-lasttoken", "st-cls-dense-prompts"])
def test_a_saved_byo_model_loads_in_sentence_transformers(folders, name, tmp_path):
    """save(sentence_transformers=True) writes the read-out back as modules (Pooling, Dense, Normalize, prompts)."""
    from sentence_transformers import SentenceTransformer

    import conba

    model = conba.load_model(folders[name])
    saved = model.save(tmp_path / "st", sentence_transformers=True)
    st = SentenceTransformer(str(saved), device="cpu")
    assert float((st.encode(CODES, normalize_embeddings=True) * model.encode(CODES, view="raw")).sum(1).min()) > 0.9999
    if FAMILIES[name][2]:
        query = st.encode(CODES, normalize_embeddings=True, prompt_name="query")
        assert float((model.encode_query(CODES, view="raw") * query).sum(1).min()) > 0.9999
