"""One save/load protocol for a module kept as ``<config>.json`` + ``<weights>.safetensors`` in a folder
(heads, SDTP scorers; the model's backbone delta uses :func:`write_tensors` / :func:`read_tensors`).

Both files are written atomically (temporary file, then ``os.replace``), weights first, so a crash
never leaves a config pointing at missing weights. Loading names the file at fault in a one-line
error: FileNotFoundError for a missing file, :class:`FormatError` for corrupt JSON or weights or
weights that do not fit the module, :class:`ConfigError` for an unknown config key.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import torch
from torch import nn

from conba.errors import ConfigError, FormatError
from conba.utils.config_keys import JsonConfig
from conba.utils.io import atomic_write, read_json

ModuleT = TypeVar("ModuleT", bound=nn.Module)


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split())[:300]


def write_tensors(path: str | Path, tensors: dict[str, torch.Tensor], metadata: dict[str, str] | None = None) -> None:
    """Atomically write ``tensors`` (copied to contiguous CPU tensors) as safetensors."""
    from safetensors.torch import save_file

    data = {k: v.detach().cpu().contiguous().clone() for k, v in tensors.items()}
    atomic_write(path, lambda tmp: save_file(data, str(tmp), metadata={"format": "pt", **(metadata or {})}))


def read_tensors(path: str | Path) -> dict[str, torch.Tensor]:
    """Read a safetensors file; FileNotFoundError / FormatError name it."""
    from safetensors.torch import load_file

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: weights missing")
    try:
        return load_file(str(path))
    except Exception as err:  # safetensors raises its own error types for corrupt files
        raise FormatError(f"{path}: corrupt weights ({_one_line(err)})") from None


def save_module(directory: str | os.PathLike[str], module: nn.Module, config: JsonConfig, config_name: str,
                weights_name: str, metadata: dict[str, str] | None = None) -> Path:
    """Write ``module.state_dict()`` to ``directory/weights_name`` and ``config`` to ``directory/config_name``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_tensors(directory / weights_name, module.state_dict(), metadata)
    config.save(directory / config_name)
    return directory


def read_config(directory: str | Path, config_cls: type[JsonConfig], config_name: str, upgrade: Any = None):
    """``config_cls`` from ``directory/config_name`` (``upgrade``: a function applied to the raw dict first)."""
    path = Path(directory) / config_name
    if not path.is_file():
        raise FileNotFoundError(f"{path}: config missing")
    raw = read_json(path)
    if upgrade is not None and isinstance(raw, dict):
        raw = upgrade(raw)
    return config_cls.from_dict(raw, source=path)


def load_state(module: ModuleT, directory: str | os.PathLike[str], weights_name: str, config_name: str) -> ModuleT:
    """Load ``directory/weights_name`` into ``module`` (strict), cast to the saved float dtype."""
    path = Path(directory) / weights_name
    state = read_tensors(path)
    float_dtypes = {t.dtype for t in state.values() if t.is_floating_point()}
    if len(float_dtypes) == 1:
        module.to(float_dtypes.pop())
    try:
        module.load_state_dict(state, strict=True)
    except RuntimeError as err:
        raise FormatError(f"{path}: weights do not match {Path(directory) / config_name} ({_one_line(err)})") from None
    return module


def load_built(directory: str | os.PathLike[str], config_cls: type[JsonConfig], config_name: str, weights_name: str,
               build: Callable[[Any], ModuleT], upgrade: Any = None) -> ModuleT:
    """:func:`read_config`, ``build(config)`` (its ConfigError names the config file), then :func:`load_state`."""
    directory = Path(directory)
    config = read_config(directory, config_cls, config_name, upgrade=upgrade)
    try:
        module = build(config)
    except ConfigError as err:
        raise ConfigError(f"{err} in {directory / config_name}") from None
    return load_state(module, directory, weights_name, config_name)
