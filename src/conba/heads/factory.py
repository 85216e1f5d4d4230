"""Build, save and load heads.

A saved head is a folder with ``head_config.json`` (``HeadConfig.to_dict()``) and ``head.safetensors``
(the state dict). A config saved before keys were added loads with their legacy meaning
(``conba.heads.config.upgrade_legacy``). Both are written to a temporary file in the same folder and
moved into place with ``os.replace``, so a crash never leaves a half-written file under the final name.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from conba.errors import FormatError
from conba.heads.base import Head
from conba.heads.baselines import LinearHead, PoolingHead
from conba.heads.config import HeadConfig, upgrade_legacy
from conba.heads.seed_layer import ConbaLayer
from conba.heads.selective_scan import ConbaScan
from conba.utils.io import atomic_write

CONFIG_NAME = "head_config.json"
WEIGHTS_NAME = "head.safetensors"

_HEAD_CLASSES: dict[str, type[Head]] = {
    "conba": ConbaLayer,
    "conba-scan": ConbaScan,
    "linear": LinearHead,
    "none": PoolingHead,
}


def build_head(config: HeadConfig | Mapping[str, Any]) -> Head:
    """A freshly initialised head for ``config`` (a HeadConfig or its dict form)."""
    if not isinstance(config, HeadConfig):
        config = HeadConfig.from_dict(config)
    config.validate()
    return _HEAD_CLASSES[config.kind](config)


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split())


def save_head(head: Head, directory: str | os.PathLike[str]) -> None:
    """Write ``head_config.json`` and ``head.safetensors`` into ``directory`` (created if needed)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().cpu().contiguous().clone() for k, v in head.state_dict().items()}
    text = json.dumps(head.config.to_dict(), indent=2, sort_keys=True) + "\n"

    def write_config(tmp: Path) -> None:
        Path(tmp).write_text(text, encoding="utf-8")

    def write_weights(tmp: Path) -> None:
        save_file(tensors, tmp, metadata={"format": "pt", "conba_head_kind": head.config.kind})

    atomic_write(directory / WEIGHTS_NAME, write_weights)
    atomic_write(directory / CONFIG_NAME, write_config)


def load_head(directory: str | os.PathLike[str], device: str | torch.device = "cpu") -> Head:
    """Restore a head saved by ``save_head`` (bit-exact: same tensors, same dtype)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"head directory not found: {directory}")
    config_path, weights_path = directory / CONFIG_NAME, directory / WEIGHTS_NAME
    for path in (config_path, weights_path):
        if not path.is_file():
            raise FileNotFoundError(f"head file missing: {path}")
    try:
        raw = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise FormatError(f"corrupt head config {config_path}: {_one_line(err)}") from err
    try:
        config = HeadConfig.from_dict(upgrade_legacy(raw) if isinstance(raw, dict) else raw)
    except (TypeError, ValueError) as err:
        raise FormatError(f"bad head config {config_path}: {_one_line(err)}") from err
    try:
        state = load_file(str(weights_path))
    except Exception as err:  # safetensors raises its own error types for corrupt files
        raise FormatError(f"corrupt head weights {weights_path}: {_one_line(err)}") from err
    head = build_head(config)
    float_dtypes = {t.dtype for t in state.values() if t.is_floating_point()}
    if len(float_dtypes) == 1:
        head.to(float_dtypes.pop())
    try:
        head.load_state_dict(state, strict=True)
    except RuntimeError as err:
        raise FormatError(f"head weights {weights_path} do not match {config_path}: {_one_line(err)}") from err
    return head.to(device)
