"""The backbone adapter is the one place that knows architectures: families, loader classes, padding,
pad ids, default pooling, supported operations; the read-out's pooling maths equals sentence-transformers'
for every mode, padding side and prompt exclusion; no BERT internals outside the adapter."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from conba.encoder import adapter
from conba.encoder.readout import Readout, ReadoutConfig
from conba.errors import ConfigError

SRC = Path(__file__).resolve().parents[2] / "src"
# BERT internals: attribute access to a BERT layer list, token type ids, BERT config names, the embedding call,
# "no pad id means 0". Only the adapter (conba/encoder/adapter*.py) may use them, and these files, each for a reason:
BERT_INTERNALS = re.compile(r"\.encoder\.layer\b|token_type_ids|num_hidden_layers|max_position_embeddings"
                            r"|(?<!adapter)\.embeddings\(|pad_token_id or 0")
ALLOWED = {  # (the test helpers' tiny BERT and the GPU benchmark's stand-in live outside src/ now)
    "conba/pretrain/rtd.py": "the RTD generator is a small BertModel of its own (its config and its layer list)",
}


def test_no_bert_internals_outside_the_adapter():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("conba/encoder/adapter") or rel in ALLOWED:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if BERT_INTERNALS.search(line):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "BERT internals outside conba.encoder.adapter (route them through it):\n" + "\n".join(found)
    assert all((SRC / rel).is_file() for rel in ALLOWED), "an allowed exception no longer exists: drop it"


def _config(model_type: str, **kw):
    from transformers import AutoConfig

    return AutoConfig.for_model(model_type, **kw)


@pytest.mark.parametrize("mtype,fam,loader,pooling,left", [
    ("bert", "bert", "AutoModel", "mean", False), ("roberta", "bert", "AutoModel", "mean", False),
    ("xlm-roberta", "bert", "AutoModel", "mean", False), ("modernbert", "modernbert", "AutoModel", "mean", False),
    ("qwen2", "decoder", "AutoModel", "lasttoken", True), ("qwen3", "decoder", "AutoModel", "lasttoken", True),
    ("llama", "decoder", "AutoModel", "lasttoken", True), ("mistral", "decoder", "AutoModel", "lasttoken", True),
    ("t5", "t5", "T5EncoderModel", "mean", False), ("mt5", "t5", "MT5EncoderModel", "mean", False),
    ("umt5", "t5", "UMT5EncoderModel", "mean", False), ("electra", "generic", "AutoModel", "mean", False),
])
def test_families(mtype, fam, loader, pooling, left):
    config = _config(mtype)
    assert adapter.family(config).name == fam
    assert adapter.loader_name(config) == loader
    assert adapter.default_pooling(config) == pooling
    assert adapter.family(config).left_padding is left
    assert adapter.supports(config, "own-loop") is (fam == "bert")


def test_config_names_positions_and_unknown_decoders():
    assert adapter.max_tokens(_config("roberta", max_position_embeddings=514)) == 512  # RoBERTa's offset of 2
    assert adapter.max_tokens(_config("bert", max_position_embeddings=512)) == 512
    assert adapter.max_tokens(_config("t5")) >= 10**6  # relative positions: no table
    t5 = _config("t5", num_layers=3, d_model=48)
    assert adapter.num_layers(t5) == 3 and adapter.hidden_size(t5) == 48
    custom = _config("gpt2")
    custom.architectures = ["MyOwnForCausalLM"]
    assert adapter.family(custom).name == "decoder"  # a ...ForCausalLM architecture is a decoder
    with pytest.raises(ConfigError, match=r"SDTP pruning supports BERT/RoBERTa-family backbones \(bert, roberta, "
                                          r"xlm-roberta, camembert\); not model type 'qwen2'"):
        adapter.require(_config("qwen2"), "own-loop", "SDTP pruning")


def test_pad_id_and_padding_side():
    class Tok:
        pad_token_id = None
        eos_token_id = 7
        eos_token = "</s>"
        padding_side = "right"
        pad_token = None

    tok = Tok()
    assert adapter.pad_id(tok) == 7  # no pad token: the eos token
    adapter.configure_tokenizer(tok, _config("qwen2"))
    assert tok.padding_side == "left" and tok.pad_token == "</s>" and adapter.left_padding(tok)
    bert = Tok()
    bert.eos_token_id = None
    assert adapter.pad_id(bert) == 0


def _st_pool(modes, x, mask, prompt_length=None):
    from sentence_transformers.models import Pooling

    pooling = Pooling(x.shape[-1], pooling_mode=tuple(modes), include_prompt=prompt_length is None)
    features = {"token_embeddings": x, "attention_mask": mask}
    if prompt_length is not None:
        features["prompt_length"] = prompt_length
    return pooling(features)["sentence_embedding"]


@pytest.mark.parametrize("modes", [["cls"], ["mean"], ["max"], ["lasttoken"], ["weightedmean"],
                                   ["mean_sqrt_len_tokens"], ["cls", "mean"]])
@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("prompt", [None, 2])
def test_readout_pooling_equals_sentence_transformers(modes, left, prompt):
    torch.manual_seed(0)
    lengths = [5, 3, 7, 1 + (prompt or 0)]
    x = torch.randn(len(lengths), 7, 6)
    mask = torch.zeros(len(lengths), 7, dtype=torch.long)
    for row, n in enumerate(lengths):
        if left:
            mask[row, 7 - n:] = 1
        else:
            mask[row, :n] = 1
    readout = Readout(ReadoutConfig(pooling=modes, include_prompt=prompt is None), 6)
    readout.prompt_length = prompt or 0
    assert int(mask.sum()) == sum(lengths)
    assert torch.allclose(readout(x, mask), _st_pool(modes, x, mask, prompt), atol=1e-6)


def test_readout_dense_normalize_truncate_and_bad_configs():
    cfg = ReadoutConfig(pooling=["cls"], dense=[{"in": 6, "out": 4, "activation": "Tanh"}], normalize=True,
                        truncate_dim=3)
    readout = Readout(cfg, 6)
    assert readout.out_dim == 3
    y = readout(torch.randn(2, 4, 6), torch.ones(2, 4, dtype=torch.long))
    assert y.shape == (2, 3) and float(y.norm(dim=1).max()) <= 1.0 + 1e-6
    with pytest.raises(ConfigError, match="activation 'Softmax'"):
        Readout(ReadoutConfig(dense=[{"in": 6, "out": 4, "activation": "Softmax"}]), 6)
    with pytest.raises(ConfigError, match="pooling must be one or more"):
        Readout(ReadoutConfig(pooling=["median"]), 6)
    with pytest.raises(ConfigError, match="default_prompt_name 'q' is not one of the prompts"):
        Readout(ReadoutConfig(prompts={"query": "q: "}, default_prompt_name="q"), 6)
    prompts = ReadoutConfig(prompts={"query": "q: ", "passage": "p: "})
    assert prompts.document_prompt() == "p: " and prompts.query_prompt_name() == "query"
