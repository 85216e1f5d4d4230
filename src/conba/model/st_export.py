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

next to conba's own files (``conba_config.json``, ``head/``, ``backbone/``), sharing the backbone's
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

from conba.model.core import ModelError
from conba.utils.io import write_json_atomic
from conba.utils.versions import package_version

POOLING_DIR, DENSE_DIR = "1_Pooling", "2_Dense"
NORMALIZE_DIRS = ("2_Normalize", "3_Normalize")
ST_FILES = ("modules.json", "config_sentence_transformers.json")
IDENTITY = "torch.nn.modules.linear.Identity"


def unsupported_reason(model: Any) -> str | None:
    """Why ``model`` cannot be written as a sentence-transformers pipeline, or None if it can."""
    head = model.head.config
    if head.kind not in ("none", "linear"):
        return f"its head is '{head.kind}' (only pooled 'none' and 'linear' heads have an equivalent)"
    if head.mode != "pooled":
        return f"its head runs in '{head.mode}' mode (only 'pooled' has an equivalent)"
    if model.backbone.readout is not None:
        return (f"its backbone has its own read-out ({model.backbone.readout.config.describe()}); the "
                "sentence-transformers folder it came from loads as it is")
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
    for name in (POOLING_DIR, DENSE_DIR, *NORMALIZE_DIRS):
        shutil.rmtree(directory / name, ignore_errors=True)


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
    width = model.backbone.hidden_size
    write_json_atomic(directory / backbone_dir / "sentence_bert_config.json",
                      {"max_seq_length": model.backbone.max_length, "do_lower_case": False})
    write_json_atomic(directory / POOLING_DIR / "config.json", {
        "word_embedding_dimension": width, "pooling_mode_cls_token": head.pooling == "cls",
        "pooling_mode_mean_tokens": head.pooling == "mean", "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False})
    modules = [("0", backbone_dir, "Transformer"), ("1", POOLING_DIR, "Pooling")]
    if head.kind == "linear":
        fc = model.head.fc
        write_json_atomic(directory / DENSE_DIR / "config.json", {
            "in_features": fc.in_features, "out_features": fc.out_features, "bias": fc.bias is not None,
            "activation_function": IDENTITY})
        weights = {"linear.weight": fc.weight.detach().float().cpu().contiguous()}
        if fc.bias is not None:
            weights["linear.bias"] = fc.bias.detach().float().cpu().contiguous()
        save_file(weights, str(directory / DENSE_DIR / "model.safetensors"))
        modules.append(("2", DENSE_DIR, "Dense"))
    normalize = NORMALIZE_DIRS[len(modules) - 2]
    (directory / normalize).mkdir(parents=True, exist_ok=True)
    modules.append((str(len(modules)), normalize, "Normalize"))
    write_json_atomic(directory / "config_sentence_transformers.json", {
        "__version__": _versions(), "prompts": {}, "default_prompt_name": None, "similarity_fn_name": "cosine"})
    entries = [{"idx": int(i), "name": i, "path": path, "type": f"sentence_transformers.models.{kind}"}
               for i, path, kind in modules]
    write_json_atomic(directory / "modules.json", entries)  # last: a half-written export has none
