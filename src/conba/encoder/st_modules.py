"""Read a sentence-transformers model's own read-out from its folder (or hub repository).

Glossary: d hidden width, e read-out width.

``modules.json`` lists the modules: Transformer (the backbone, in the folder itself), Pooling
(``1_Pooling/config.json``), Dense (``config.json`` + ``model.safetensors``; an old
``pytorch_model.bin`` is read with ``weights_only=True``), Normalize; ``config_sentence_transformers.json``
holds ``prompts``, ``default_prompt_name`` and ``truncate_dim``. Any other module is a one-line error
naming it. A bare Hugging Face model gets the adapter's default pooling (decoders: the last token), or
``BackboneConfig.pooling``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from conba.encoder import adapter
from conba.encoder.readout import ACTIVATIONS, POOLINGS, Readout, ReadoutConfig
from conba.errors import ConfigError, FormatError
from conba.utils.io import read_json

LEGACY_POOLING = {"pooling_mode_cls_token": "cls", "pooling_mode_max_tokens": "max",
                  "pooling_mode_mean_tokens": "mean", "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
                  "pooling_mode_weightedmean_tokens": "weightedmean", "pooling_mode_lasttoken": "lasttoken"}
ST_FILES = ["modules.json", "config_sentence_transformers.json", "*Pooling/*", "*Dense/*"]


def source_readout(path: str | None, pooling: str, hf_config) -> Readout | None:
    """The read-out of the backbone at ``path`` (a folder or hub name; None: the embedded default): its
    sentence-transformers modules when it has them, else the family's default pooling; ``pooling``
    overrides the pooling either way. None when that is plain mean pooling (conba's own, in the head)."""
    dense: dict[str, Any]
    if path is None:
        rcfg, dense = ReadoutConfig(), {}
    else:
        folder = _st_folder(path)
        found = read_modules(folder) if folder is not None else None
        rcfg, dense = found if found is not None else (ReadoutConfig(pooling=[adapter.default_pooling(hf_config)]), {})
    if pooling:
        rcfg.pooling = [pooling]
        rcfg.source = (rcfg.source + " " if rcfg.source else "") + "--pooling"
    if trivial(rcfg):
        return None
    readout = Readout(rcfg, adapter.hidden_size(hf_config))
    if dense:
        readout.load_state_dict(dense, strict=True)
    return readout


def trivial(config: ReadoutConfig) -> bool:
    """Mean pooling and nothing else (a final Normalize aside: ``encode`` normalises anyway)."""
    return (config.pooling == ["mean"] and config.include_prompt and not config.dense and not config.truncate_dim
            and not config.prompts)


def _st_folder(path: str) -> Path | None:
    """The local folder with ``modules.json`` (a hub name: its read-out files, fetched or cached)."""
    local = Path(path)
    if local.is_dir():
        return local if (local / "modules.json").is_file() else None
    if "/" not in path or path.startswith((".", "/")):
        return None
    from conba import settings

    try:
        from huggingface_hub import snapshot_download

        got = Path(snapshot_download(path, allow_patterns=ST_FILES, local_files_only=settings.offline()))
    except Exception:  # no such repository, offline without a cache: a bare model
        return None
    return got if (got / "modules.json").is_file() else None


def read_modules(folder: Path) -> tuple[ReadoutConfig, dict[str, torch.Tensor]] | None:
    """(read-out config, Dense weights by readout state-dict key) of a sentence-transformers folder."""
    modules = read_json(folder / "modules.json")
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        raise FormatError(f"{folder / 'modules.json'}: not a list of modules")
    cfg = ReadoutConfig(source=str(folder))
    weights: dict[str, torch.Tensor] = {}
    for n, module in enumerate(modules):
        kind = str(module.get("type", "")).rsplit(".", 1)[-1]
        sub = folder / str(module.get("path", ""))
        where = f"{folder / 'modules.json'} module {n} ({kind})"
        if kind == "Transformer":
            if n != 0 or str(module.get("path", "")) not in ("", "."):
                raise ConfigError(f"{where}: conba reads the Transformer module from the folder itself only")
        elif kind == "Pooling":
            cfg.pooling, cfg.include_prompt = _pooling(read_json(sub / "config.json"), where)
        elif kind == "Dense":
            spec, state = _dense(sub, where)
            i = len(cfg.dense)
            cfg.dense.append(spec)
            weights.update({f"dense.{i}.{k.removeprefix('linear.')}": v for k, v in state.items()
                            if k.startswith("linear.")})
            if "residual.weight" in state:
                weights[f"residual.{i}.weight"] = state["residual.weight"]
        elif kind == "Normalize":
            cfg.normalize = True
        else:
            raise ConfigError(f"{where}: conba reads Transformer, Pooling, Dense and Normalize modules, not {kind!r}")
    extra = folder / "config_sentence_transformers.json"
    if extra.is_file():
        meta = read_json(extra)
        cfg.prompts = dict(meta.get("prompts") or {})
        cfg.default_prompt_name = meta.get("default_prompt_name") or None
        cfg.truncate_dim = meta.get("truncate_dim") or None
    try:
        return cfg.checked(), weights
    except ConfigError as exc:
        raise ConfigError(f"{folder}: {exc}") from None


def _pooling(raw: Any, where: str) -> tuple[list[str], bool]:
    if not isinstance(raw, dict):
        raise FormatError(f"{where}: config.json is not an object")
    mode = raw.get("pooling_mode")
    if mode is None:
        mode = [m for key, m in LEGACY_POOLING.items() if raw.get(key)] or ["mean"]
    modes = [mode] if isinstance(mode, str) else list(mode)
    bad = [m for m in modes if m not in POOLINGS]
    if bad:
        raise ConfigError(f"{where}: pooling {bad[0]!r} is not one of {', '.join(POOLINGS)}")
    return modes, bool(raw.get("include_prompt", True))


def _dense(sub: Path, where: str) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    raw = read_json(sub / "config.json")
    act = str(raw.get("activation_function") or "torch.nn.modules.linear.Identity")
    name = act.rsplit(".", 1)[-1]
    if not act.startswith("torch.") or name not in ACTIVATIONS:
        raise ConfigError(f"{where}: activation {act!r} is not one of torch.nn's {', '.join(ACTIVATIONS)}")
    spec = {"in": int(raw["in_features"]), "out": int(raw["out_features"]), "bias": bool(raw.get("bias", True)),
            "activation": name}
    if raw.get("use_residual"):
        spec["residual"] = True
    if (sub / "model.safetensors").is_file():
        from conba.utils.saved import read_tensors

        state = read_tensors(sub / "model.safetensors")
    elif (sub / "pytorch_model.bin").is_file():
        state = torch.load(sub / "pytorch_model.bin", map_location="cpu", weights_only=True)
    else:
        raise FileNotFoundError(f"{where}: no model.safetensors in {sub}")
    return spec, state
