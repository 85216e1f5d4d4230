"""The backbone adapter: the one place that knows Hugging Face architectures.

Glossary: b batch, l tokens, d hidden width.

Every other module asks this one, never the model's attributes: which family a model belongs to, its
layer list and how one layer is called, its embedding layer, the config names of its depth and position
table, which class loads it (T5-family encoders without their decoder), its padding side and pad id,
its default pooling, and which of conba's operations it supports:

* ``own-loop``: conba runs the layers itself (:mod:`conba.encoder.layers`): the bit-identical fast
  forward, ONNX segment export, SDTP token pruning, prefix control codes, layer-wise distillation,
  RTD pretraining, ``train --tune top-k`` (cached lower layers)
* ``drop-layers``: a shallower student keeps the first layers (``conba distill``, ``num_layers``)
* ``ffn``: feed-forward blocks narrowed (``ffn_size``)

Families: BERT/RoBERTa/XLM-R/CamemBERT (everything), ModernBERT, decoders (Qwen2/Qwen3/Llama/Mistral/...:
last-token pooling, left padding), T5-family encoders, and anything else through its own HF forward.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from conba.errors import ConfigError

OPERATIONS = {
    "own-loop": "conba's own layer loop",
    "drop-layers": "layer dropping",
    "ffn": "feed-forward narrowing",
}


@dataclass(frozen=True)
class Family:
    """What conba knows about one architecture family."""

    name: str
    model_types: tuple[str, ...]
    layers_path: str          # dotted path of the nn.ModuleList of layers ("" when unknown)
    embeddings_path: str      # dotted path of the embedding module ("" when unknown)
    depth_key: str            # config name of the layer count
    left_padding: bool
    default_pooling: str
    operations: frozenset[str]
    loaders: tuple[tuple[str, str], ...] = ()  # (model_type, transformers class) instead of AutoModel


BERT = Family("bert", ("bert", "roberta", "xlm-roberta", "camembert"), "encoder.layer", "embeddings",
              "num_hidden_layers", False, "mean", frozenset({"own-loop", "drop-layers", "ffn"}))
MODERNBERT = Family("modernbert", ("modernbert",), "layers", "embeddings", "num_hidden_layers", False, "mean",
                    frozenset())
DECODER = Family("decoder", ("qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "llama", "mistral", "gemma", "gemma2",
                             "gemma3_text", "phi3", "olmo2", "starcoder2"),
                 "layers", "embed_tokens", "num_hidden_layers", True, "lasttoken", frozenset())
T5 = Family("t5", ("t5", "mt5", "umt5"), "encoder.block", "shared", "num_layers", False, "mean", frozenset(),
            loaders=(("t5", "T5EncoderModel"), ("mt5", "MT5EncoderModel"), ("umt5", "UMT5EncoderModel")))
GENERIC = Family("generic", (), "", "", "num_hidden_layers", False, "mean", frozenset())
FAMILIES = (BERT, MODERNBERT, DECODER, T5)
OFFSETS = {"roberta": 2, "xlm-roberta": 2, "camembert": 2}  # per model type (not per family): RoBERTa's position ids
# start after the pad id, so its table holds 2 positions fewer than max_position_embeddings


def model_type(config) -> str:
    return str(getattr(config, "model_type", "") or "")


def family(config) -> Family:
    """The family of a transformers config (GENERIC when conba knows nothing special about it: it then
    runs through the model's own forward). A config naming a ``...ForCausalLM`` architecture counts as
    a decoder."""
    mtype = model_type(config)
    for fam in FAMILIES:
        if mtype in fam.model_types:
            return fam
    if any(str(a).endswith("ForCausalLM") for a in (getattr(config, "architectures", None) or [])):
        return DECODER
    return GENERIC


def supports(config, operation: str) -> bool:
    if operation not in OPERATIONS:
        raise ValueError(f"unknown operation {operation!r} ({', '.join(OPERATIONS)})")
    return operation in family(config).operations


LABELS = {"bert": "BERT/RoBERTa-family", "modernbert": "ModernBERT", "decoder": "decoder", "t5": "T5-encoder"}


def require(config, operation: str, what: str) -> None:
    """One-line ConfigError naming the architecture when ``operation`` (an OPERATIONS key) is not
    supported; ``what`` is the user's feature ("SDTP pruning", "train --tune top-k")."""
    if not supports(config, operation):
        fams = [fam for fam in FAMILIES if operation in fam.operations]
        label = " and ".join(LABELS[f.name] for f in fams)
        types = ", ".join(t for f in fams for t in f.model_types)
        raise ConfigError(f"{what} supports {label} backbones ({types}); not model type "
                          f"{model_type(config) or type(config).__name__!r}")


def _attr(obj, path: str):
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def layers(model: nn.Module) -> nn.ModuleList:
    """The model's list of transformer layers."""
    fam = family(model.config)
    found = _attr(model, fam.layers_path) if fam.layers_path else None
    if not isinstance(found, nn.ModuleList):
        raise ConfigError(f"conba does not know the layer list of {type(model).__name__} "
                          f"(model type {model_type(model.config)!r})")
    return found


def set_layers(model: nn.Module, kept: list[nn.Module]) -> None:
    """Replace the layer list (and the config's depth, and a per-layer ``layer_types`` list) in place."""
    fam = family(model.config)
    parent_path, _, name = fam.layers_path.rpartition(".")
    parent = _attr(model, parent_path) if parent_path else model
    setattr(parent, name, nn.ModuleList(kept))
    setattr(model.config, fam.depth_key, len(kept))


def embeddings(model: nn.Module) -> nn.Module:
    """The model's embedding module (its weights are frozen by ``--tune full`` and part of cache keys)."""
    fam = family(model.config)
    found = _attr(model, fam.embeddings_path) if fam.embeddings_path else None
    if isinstance(found, nn.Module):
        return found
    hf: Any = model  # a transformers PreTrainedModel: get_input_embeddings() is its method
    return hf.get_input_embeddings()


def embed(model: nn.Module, input_ids: torch.Tensor) -> torch.Tensor:
    """Token + position embeddings of a BERT-family model (own-loop families only). Args: input_ids:
    (b, l). Returns (b, l, d)."""
    require(model.config, "own-loop", "conba's own layer loop")
    hf: Any = model  # a BERT-family transformers model: its embeddings module takes token_type_ids
    return hf.embeddings(input_ids=input_ids, token_type_ids=torch.zeros_like(input_ids))


def call_layer(layer: nn.Module, hidden: torch.Tensor, attn: torch.Tensor | None) -> torch.Tensor:
    """One BERT-family layer. Args: hidden: (b, l, d); attn: additive mask (b, 1, 1, l) or None."""
    out = layer(hidden, attention_mask=attn)
    return out[0] if isinstance(out, tuple) else out


def num_layers(config) -> int:
    return int(getattr(config, family(config).depth_key, 0) or getattr(config, "num_hidden_layers", 0) or 0)


def hidden_size(config) -> int:
    return int(getattr(config, "hidden_size", None) or config.d_model)


def ffn_width(config) -> int:
    return int(config.intermediate_size)


def set_ffn_width(config, size: int) -> None:
    config.intermediate_size = int(size)


def max_tokens(config) -> int:
    """Longest input the position table allows (T5's relative positions: no limit)."""
    if family(config) is T5:
        return 10**9
    positions = getattr(config, "max_position_embeddings", None) or 10**9
    return int(positions) - OFFSETS.get(model_type(config), 0)


def position_table(config) -> int:
    """Rows of the model's absolute position table (512 when it has none)."""
    return int(getattr(config, "max_position_embeddings", None) or 512)


def loader_name(config) -> str:
    """The transformers class that loads this model for encoding (T5-family: the encoder alone)."""
    return dict(family(config).loaders).get(model_type(config), "AutoModel")


def configure_tokenizer(tokenizer, config) -> None:
    """Padding side and pad token for the family: decoders pad on the left, with their pad token, or
    their end-of-sequence token when they have none."""
    fam = family(config)
    if fam.left_padding:
        tokenizer.padding_side = "left"
    if getattr(tokenizer, "pad_token_id", None) is None and getattr(tokenizer, "eos_token", None) is not None:
        tokenizer.pad_token = tokenizer.eos_token


def left_padding(tokenizer) -> bool:
    return getattr(tokenizer, "padding_side", "right") == "left"


def pad_id(tokenizer) -> int:
    """The tokenizer's pad id, its eos id when it has none, 0 when it has neither (BERT's [PAD])."""
    for name in ("pad_token_id", "eos_token_id"):
        value = getattr(tokenizer, name, None)
        if isinstance(value, int):
            return value
    return 0


def default_pooling(config) -> str:
    return family(config).default_pooling


def frozen_prefixes(model: nn.Module) -> tuple[str, ...]:
    """Parameter name prefixes ``--tune full`` keeps frozen: the embeddings (and BERT's pooler)."""
    fam = family(model.config)
    return tuple(p + "." for p in (fam.embeddings_path or "embeddings", "pooler") if p)


def num_heads(config) -> int:
    return int(getattr(config, "num_attention_heads", None) or config.num_heads)
