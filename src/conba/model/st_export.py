"""sentence-transformers files beside a saved conba model, so ``SentenceTransformer(folder)`` loads it.

A conba model whose head is pooled ``none`` or ``linear`` is exactly a sentence-transformers
pipeline: Transformer (the backbone) -> Pooling (mean or CLS) -> Dense (the linear head, identity
activation) -> Normalize. ``ConbaModel.save(folder, sentence_transformers=True)`` writes::

    modules.json                         the pipeline; the Transformer module lives in backbone/
    config_sentence_transformers.json    similarity function (cosine), versions
    backbone/sentence_bert_config.json   max_seq_length (conba's token cap)
    1_Pooling/config.json
    2_Dense/config.json + model.safetensors   (linear heads only)
    3_Normalize/

A backbone with its own read-out (:mod:`conba.encoder.readout`) writes its pooling modes, Dense layers,
Normalize, prompts (the document prompt as ``default_prompt_name``) and ``truncate_dim`` the same way.
The files sit next to conba's own files (``conba_config.json``, ``head/``, ``backbone/``), sharing the backbone's
weights. The layout is the classic one (``sentence_transformers.models.*`` module names) that every
sentence-transformers from 2.x to 6.x reads. The backbone must be stored full (a delta over the
embedded MiniLM is not a Hugging Face folder). Heads with ConbaLayer gates, token-level heads,
identifier splitting and SDTP token pruning have no sentence-transformers equivalent: such a model
is refused with a :class:`ModelError` naming the reason.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from torch import nn

from conba.encoder.st_modules import LEGACY_POOLING
from conba.model.core import ModelError
from conba.utils.io import write_json_atomic
from conba.utils.versions import package_version

POOLING_DIR = "1_Pooling"
CLASSIC_KEYS = list(LEGACY_POOLING)[:4]  # cls, max, mean, mean_sqrt_len: every sentence-transformers since 2.x
# reads these; the others are written when used
ST_FILES = ("modules.json", "config_sentence_transformers.json")
IDENTITY = "torch.nn.modules.linear.Identity"


def unsupported_reason(model: Any) -> str | None:
    """Why ``model`` cannot be written as a sentence-transformers pipeline, or None if it can."""
    head = model.head.config
    if head.kind not in ("none", "linear"):
        return f"its head is '{head.kind}' (only pooled 'none' and 'linear' heads have an equivalent)"
    if head.mode != "pooled":
        return f"its head runs in '{head.mode}' mode (only 'pooled' has an equivalent)"
    readout = model.backbone.readout
    if readout is not None:
        if any(spec.get("residual") for spec in readout.config.dense):
            return "its backbone's read-out has a Dense layer with a residual connection"
        if readout.config.truncate_dim and head.kind == "linear":
            return "its read-out truncates the vector before the linear head (sentence-transformers truncates last)"
    if model.backbone.config.split_identifiers:
        return "it splits identifiers before tokenizing (sentence-transformers would not)"
    if model.pruner is not None and model.use_pruning:
        return "it prunes tokens (SDTP); load it with prune=False or drop model.pruner to export the exact model"
    return None


def check(model: Any, directory: str | Path, storage: str) -> None:
    """Raise ModelError when ``model`` saved with ``storage`` cannot be loaded by sentence-transformers."""


    if storage != "full":
        raise ModelError(f"{directory}: sentence-transformers needs the full backbone; save with storage='full'")
    reason = unsupported_reason(model)
    if reason:
        raise ModelError(f"{directory}: cannot be loaded by sentence-transformers: {reason}")


def remove_files(directory: Path) -> None:
    """Remove the files :func:`write_files` writes (a model re-saved without them)."""
    for name in ST_FILES:
        (directory / name).unlink(missing_ok=True)
    for folder in directory.glob("[0-9]*_*"):
        if folder.is_dir() and folder.name.split("_", 1)[1] in ("Pooling", "Dense", "Normalize"):
            shutil.rmtree(folder, ignore_errors=True)


def _document_prompt_name(rcfg) -> str | None:
    """The prompt sentence-transformers should use by default: the one conba encodes documents with."""
    if rcfg is None:
        return None
    if rcfg.default_prompt_name:
        return rcfg.default_prompt_name
    from conba.encoder.readout import DOCUMENT_PROMPTS

    return next((n for n in DOCUMENT_PROMPTS if n in rcfg.prompts and rcfg.prompts[n]), None)


def _versions() -> dict[str, str]:
    names = {"sentence_transformers": "sentence-transformers", "transformers": "transformers", "pytorch": "torch"}
    return {key: v for key, dist in names.items() if (v := package_version(dist))}


def write_files(model: Any, directory: str | Path, backbone_dir: str = "backbone") -> None:
    """Write the sentence-transformers files of ``model`` into ``directory`` (whose ``backbone_dir``
    already holds the full Hugging Face backbone). Raises ModelError when it has no equivalent."""
    from safetensors.torch import save_file

    check(model, directory, "full")
    directory = Path(directory)
    remove_files(directory)
    head = model.head.config
    readout = model.backbone.readout
    rcfg = readout.config if readout is not None else None
    write_json_atomic(directory / backbone_dir / "sentence_bert_config.json",
                      {"max_seq_length": model.backbone.max_length, "do_lower_case": False})
    modes = rcfg.pooling if rcfg is not None else [head.pooling]
    pooling = {"word_embedding_dimension": model.backbone.hidden_size,
               **{key: mode in modes for key, mode in LEGACY_POOLING.items()
                  if mode in modes or key in CLASSIC_KEYS}}
    if rcfg is not None and not rcfg.include_prompt:
        pooling["include_prompt"] = False
    write_json_atomic(directory / POOLING_DIR / "config.json", pooling)
    modules = [("0", backbone_dir, "Transformer"), ("1", POOLING_DIR, "Pooling")]

    def add(kind: str, linear: nn.Linear | None = None, act: nn.Module | None = None) -> None:
        path = f"{len(modules)}_{kind}"
        (directory / path).mkdir(parents=True, exist_ok=True)
        if linear is not None:
            name = type(act).__module__ + "." + type(act).__name__ if act is not None else IDENTITY
            write_json_atomic(directory / path / "config.json", {
                "in_features": linear.in_features, "out_features": linear.out_features,
                "bias": linear.bias is not None, "activation_function": name})
            weights = {"linear.weight": linear.weight.detach().float().cpu().contiguous()}
            if linear.bias is not None:
                weights["linear.bias"] = linear.bias.detach().float().cpu().contiguous()
            save_file(weights, str(directory / path / "model.safetensors"))
        modules.append((str(len(modules)), path, kind))

    if readout is not None:  # the backbone's own Dense layers and Normalize (conba.encoder.readout)
        for linear, act in zip(readout.dense, readout._acts):
            add("Dense", linear, act)
        if rcfg is not None and rcfg.normalize and head.kind == "linear":
            add("Normalize")
    if head.kind == "linear":
        add("Dense", model.head.fc)
    add("Normalize")
    write_json_atomic(directory / "config_sentence_transformers.json", {
        "__version__": _versions(), "prompts": dict(rcfg.prompts) if rcfg else {},
        "default_prompt_name": _document_prompt_name(rcfg), "similarity_fn_name": "cosine",
        **({"truncate_dim": rcfg.truncate_dim} if rcfg is not None and rcfg.truncate_dim else {})})
    entries = [{"idx": int(i), "name": i, "path": path, "type": f"sentence_transformers.models.{kind}"}
               for i, path, kind in modules]
    write_json_atomic(directory / "modules.json", entries)  # last: a half-written export has none
