"""Build, save and load heads.

A head's kind picks its class: the product's (``linear``, ``none``) or one an installed distribution plugs in
through the ``conba.heads`` entry points (``conba.utils.head_kinds``; the research suite's ConbaLayer heads). A
saved head of a kind that is not installed fails in one line naming the kind and what to install.

A saved head is a folder with ``head_config.json`` (``HeadConfig.to_dict()``) and ``head.safetensors``
(the state dict), written and read by :mod:`conba.utils.saved` (atomic writes, one-line errors naming
the file). A config saved before keys were added loads with their legacy meaning
(``conba.heads.config.upgrade_legacy``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from conba.errors import ConfigError
from conba.heads.base import Head
from conba.heads.baselines import LinearHead, PoolingHead
from conba.heads.config import HeadConfig, upgrade_legacy
from conba.utils.head_kinds import ENTRY_POINT_GROUP, check_kind, plugin_kinds
from conba.utils.saved import load_built, save_module

CONFIG_NAME = "head_config.json"
WEIGHTS_NAME = "head.safetensors"

_HEAD_CLASSES: dict[str, type[Head]] = {  # the product's kinds (conba.constants.HEAD_KINDS)
    "linear": LinearHead,
    "none": PoolingHead,
}


def head_class(kind: str) -> type[Head]:
    """The Head subclass of ``kind``: the product's, or the class an installed ``conba.heads`` entry point names
    (imported now); a one-line ConfigError when the kind is not installed or the entry point is no Head."""
    if kind in _HEAD_CLASSES:
        return _HEAD_CLASSES[kind]
    check_kind(kind)
    point = plugin_kinds()[kind]
    cls = point.load()
    if not (isinstance(cls, type) and issubclass(cls, Head)):
        raise ConfigError(f"entry point {point.name} = {point.value} (group {ENTRY_POINT_GROUP}) is not a "
                          f"conba.heads.Head subclass")
    return cls


def build_head(config: HeadConfig | Mapping[str, Any]) -> Head:
    """A freshly initialised head for ``config`` (a HeadConfig or its dict form)."""
    cfg = config if isinstance(config, HeadConfig) else HeadConfig.from_dict(config)
    cfg.validate()
    return head_class(cfg.kind)(cfg)


def save_head(head: Head, directory: str | os.PathLike[str]) -> None:
    """Write ``head_config.json`` and ``head.safetensors`` into ``directory`` (created if needed)."""
    save_module(directory, head, head.config, CONFIG_NAME, WEIGHTS_NAME, {"conba_head_kind": head.config.kind})


def load_head(directory: str | os.PathLike[str], device: str | torch.device = "cpu") -> Head:
    """Restore a head saved by ``save_head`` (bit-exact: same tensors, same dtype)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"head directory not found: {directory}")
    return load_built(directory, HeadConfig, CONFIG_NAME, WEIGHTS_NAME, build_head, upgrade=upgrade_legacy).to(device)
