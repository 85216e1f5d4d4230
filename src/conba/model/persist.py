"""Save and load a ConbaModel folder.

A saved model is a folder::

    conba_config.json        format, format_version, backbone config, thresholds, fingerprint, view, info
    head/                    head_config.json + head.safetensors
    prune/                   SDTP scorers (optional): prune_config.json + prune.safetensors
    readout/                 the backbone's own read-out (optional: pooling other than the mean, Dense,
                             prompts; conba.encoder.readout): readout_config.json + readout.safetensors
    fragment_head/           the window head, the read-out of a long snippet's windows (optional;
                             conba.heads.window_head): fragment_config.json + fragment_head.safetensors, used
                             when max_windows != 1
    backbone/                full Hugging Face folder (safetensors + tokenizer), or
    backbone_delta.safetensors   only the tensors that differ from an always-available base model

Loading refuses a ``format_version`` newer than this conba writes and checks that the weights it
read hash to the stored ``fingerprint`` (float16 saves round the weights before hashing, so they
round-trip exactly). A backbone saved with ``trust_remote_code`` loads only with that opt-in again.

File-format names: a long snippet is cut into *windows*, read by the *window head* (the code once said chunks
and fragments). The files keep the old names, so that folders saved before load unchanged, older conba versions
read new folders, and no stored file or fingerprint changes: ``fragment_head/`` (with ``fragment_config.json``
and ``fragment_head.safetensors``) is the window head's folder, and the ``conba_config.json`` key ``max_chunks``
is ``max_windows`` (:class:`conba.model.config.ModelConfig` reads ``max_windows`` too, and writes ``max_chunks``).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from conba.encoder import adapter
from conba.encoder.backbone import Backbone, BackboneConfig, BackboneError, apply_shape, is_embedded, load_hf
from conba.encoder.readout import load_readout, save_readout
from conba.errors import ConfigError, FormatError
from conba.heads import load_head, save_head
from conba.lexical.fusion import check_weight
from conba.model import st_export
from conba.model.config import MODEL_FORMAT, ModelConfig
from conba.model.core import CONFIG_NAME, FORMAT_VERSION, ModelError
from conba.syntax.view import VIEWS
from conba.utils.io import existing_dir, read_json, replace_dir
from conba.utils.saved import read_tensors, write_tensors

if TYPE_CHECKING:
    from conba.model.core import ConbaModel

HEAD_FOLDER = "fragment_head"  # the window head's folder: its file-format name (see the module docstring)


def round_to(dtype: torch.dtype, tensors: Sequence[torch.Tensor]) -> None:
    """Round tensors in place to ``dtype`` precision (kept float32), so what is saved loads back exact."""
    with torch.no_grad():
        for t in tensors:
            t.copy_(t.to(dtype).to(t.dtype))


def _save_backbone(model: ConbaModel, directory: Path, storage: str, dtype: str) -> None:
    base = model.backbone.config.name_or_path
    if storage == "delta":
        if not is_embedded(base):
            raise ModelError("delta storage needs the embedded backbone as base; use storage='full'")
        _, base_model = load_hf(base)
        base_state = base_model.state_dict()
        state = model.backbone.model.state_dict()
        changed = [k for k, v in state.items() if k not in base_state or not torch.equal(v, base_state[k])]
        if dtype == "float16":
            round_to(torch.float16, [state[k] for k in changed])
        delta = {k: state[k].to(getattr(torch, dtype)) for k in changed}
        write_tensors(directory / "backbone_delta.safetensors", delta)
        shutil.rmtree(directory / "backbone", ignore_errors=True)
    elif storage == "full":
        if dtype == "float16":
            round_to(torch.float16, list(model.backbone.model.parameters()))
        tmpdir = directory / ".backbone.tmp"
        shutil.rmtree(tmpdir, ignore_errors=True)
        hf: Any = model.backbone.model  # a transformers PreTrainedModel
        hf.save_pretrained(tmpdir, safe_serialization=True)
        model.backbone.tokenizer.save_pretrained(tmpdir)
        replace_dir(tmpdir, directory / "backbone")
        (directory / "backbone_delta.safetensors").unlink(missing_ok=True)
    else:
        raise ConfigError(f"unknown storage '{storage}' (auto, full, delta)")


def save_model(model: ConbaModel, directory: str | Path, storage: str = "auto", dtype: str = "float32",
               sentence_transformers: bool = False) -> Path:
    """:meth:`ConbaModel.save`."""
    from conba.encoder.sdtp.scorer import save_pruner

    directory = Path(directory)
    if storage == "auto":
        storage = "delta" if is_embedded(model.backbone.config.name_or_path) and not sentence_transformers else "full"
    if sentence_transformers:
        st_export.check(model, directory, storage)
    directory.mkdir(parents=True, exist_ok=True)
    if dtype not in ("float32", "float16"):
        raise ConfigError("dtype must be float32 or float16")
    _save_backbone(model, directory, storage, dtype)
    readout = model.backbone.readout
    if dtype == "float16":
        round_to(torch.float16, list(model.head.parameters()) + list(readout.parameters() if readout else [])
                 + list(model.window_head.parameters() if model.window_head is not None else []))
    save_head(model.head, directory / "head")
    if readout is not None:
        save_readout(readout, directory / "readout")
    else:
        shutil.rmtree(directory / "readout", ignore_errors=True)
    if model.window_head is not None:
        from conba.heads.window_head import save_window_head

        save_window_head(model.window_head, directory / HEAD_FOLDER)
    else:
        shutil.rmtree(directory / HEAD_FOLDER, ignore_errors=True)
    if model.pruner is not None:
        save_pruner(model.pruner, directory / "prune")
    else:
        shutil.rmtree(directory / "prune", ignore_errors=True)
    ModelConfig(format_version=FORMAT_VERSION, backbone=model.backbone.config.to_dict(), backbone_storage=storage,
                dtype=dtype, threshold=model.threshold, max_windows=model.max_windows,
                clone_threshold=model.clone_threshold or None, fingerprint=model.fingerprint(), view=model.view,
                lexical_weight=model.lexical_weight, info=model.info).save(directory / CONFIG_NAME)
    if sentence_transformers:
        st_export.write_files(model, directory)
    else:
        st_export.remove_files(directory)
    return directory


def read_config(directory: Path) -> ModelConfig:
    """``conba_config.json`` of a model folder, checked: format, format_version, view, no unknown keys
    (ConfigError naming the key and the file)."""
    cfg_path = directory / CONFIG_NAME
    if not cfg_path.exists():
        raise ModelError(f"{directory}: not a conba model folder (no {CONFIG_NAME})")
    try:
        config = read_json(cfg_path)
    except ValueError as exc:
        raise ModelError(f"{exc}; the model folder is corrupt, re-save or re-train it") from None
    if not isinstance(config, dict) or config.get("format") != MODEL_FORMAT:
        raise ModelError(f"{cfg_path}: not a conba model config")
    version = config.get("format_version", 1)
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ModelError(f"{cfg_path}: format_version {version!r} is newer than this conba reads "
                         f"({FORMAT_VERSION}); upgrade conba")
    view = config.get("view", "raw")  # folders saved before views existed: raw, as they behaved
    if view not in VIEWS:
        raise ModelError(f"{cfg_path}: unknown input view {view!r} (valid: {', '.join(VIEWS)})")
    return ModelConfig.from_dict(config, source=cfg_path)


def _load_backbone(directory: Path, config: ModelConfig, trust_remote_code: bool = False) -> Backbone:
    from safetensors import SafetensorError  # transformers' own loading raises it for a corrupt folder

    bcfg = BackboneConfig.from_dict(config.backbone, source=directory / CONFIG_NAME)
    if bcfg.trust_remote_code and not trust_remote_code:
        raise ModelError(f"{directory}: its backbone runs code from its model folder (saved with --trust-remote-code); "
                         "load it with --trust-remote-code (trust_remote_code=True) if you trust it")
    try:
        if config.backbone_storage == "full":
            tokenizer, hf = load_hf(str(existing_dir(directory / "backbone")), bcfg.trust_remote_code)
        else:
            tokenizer, hf = load_hf(bcfg.name_or_path, bcfg.trust_remote_code)
            apply_shape(hf, bcfg)  # a student's layers and width, before its weights go over the base's
            delta = read_tensors(directory / "backbone_delta.safetensors")
            state = hf.state_dict()
            for k, v in delta.items():
                if k not in state:
                    raise ModelError(f"{directory}: delta tensor '{k}' not in base model {bcfg.name_or_path}")
                state[k] = v.to(state[k].dtype)
            hf.load_state_dict(state)
        readout = None
        if (directory / "readout").is_dir():
            readout = load_readout(directory / "readout", adapter.hidden_size(hf.config))
        return Backbone(bcfg, tokenizer=tokenizer, model=hf, readout=readout)
    except (SafetensorError, FormatError, FileNotFoundError, OSError) as exc:
        raise ModelError(f"{directory}: backbone weights missing or corrupt ({exc})") from None
    except ConfigError as exc:
        raise ModelError(f"{directory}: {exc}") from None
    except BackboneError as exc:
        raise ModelError(f"{directory}: {exc}") from None


def _load_window_head(folder: Path, dim: int):
    """The saved read-out of long snippets' windows, checked against the model's width (ModelError)."""
    from conba.heads.window_head import load_window_head

    try:
        head = load_window_head(folder)
    except (FileNotFoundError, ValueError, FormatError) as exc:  # ConfigError is a ValueError
        raise ModelError(f"{folder}: window head unusable ({exc})") from None
    if head.config.dim != dim:
        raise ModelError(f"{folder}: the window head is {head.config.dim} wide but the model's vectors are {dim}")
    return head.eval()


def load_folder(cls: type[ConbaModel], directory: str | Path, trust_remote_code: bool = False) -> ConbaModel:
    """:meth:`ConbaModel.load`."""
    from conba.encoder.sdtp.scorer import load_pruner
    from conba.engine.windows import check_max_windows

    directory = existing_dir(directory)  # NAME.old when a crash mid-swap left only that (replace_dir)
    cfg_path = directory / CONFIG_NAME
    config = read_config(directory)
    backbone = _load_backbone(directory, config, trust_remote_code)
    head = load_head(directory / "head")
    model = cls(backbone, head, threshold=config.threshold, info=config.info, view=config.view)
    if (directory / HEAD_FOLDER).is_dir():
        model.window_head = _load_window_head(directory / HEAD_FOLDER, model.dim)
    stored = config.fingerprint
    if stored and model.fingerprint() != stored:
        raise ModelError(f"{directory}: the weights do not match the fingerprint in {CONFIG_NAME} "
                         f"({model.fingerprint()} != {stored}); the folder was changed or is corrupt, re-save it")
    try:
        model.max_windows = check_max_windows(config.max_windows, "max_windows ('max_chunks')")  # old folders: 1
    except ValueError as exc:
        raise ModelError(f"{cfg_path}: {exc}") from None
    try:
        model.lexical_weight = check_weight(config.lexical_weight)
    except ConfigError as exc:
        raise ModelError(f"{cfg_path}: {exc}") from None
    calibrated = model.clone_threshold = config.clone_threshold
    value = calibrated.get("value") if isinstance(calibrated, dict) else None
    if calibrated is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool)
                                       and -1.0 <= value <= 1.0):
        raise ModelError(f"{cfg_path}: 'clone_threshold' must be an object with a 'value' in [-1, 1]; "
                         "re-run `conba calibrate --write`")
    if config.threshold is not None and not -1.0 <= config.threshold <= 1.0:  # scores are cosines
        raise ModelError(f"{cfg_path}: 'threshold' must be in [-1, 1] or null, got {config.threshold}")
    if (directory / "prune").is_dir():
        try:
            model.pruner = load_pruner(directory / "prune")
        except (FileNotFoundError, ValueError, FormatError) as exc:
            raise ModelError(f"{directory}: SDTP pruning module unusable ({exc})") from None
    model.eval()
    return model
