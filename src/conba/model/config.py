"""``conba_config.json``, the config of a saved model folder, read strictly like every other config:
an unknown key is a one-line error naming the key and the file.

``max_chunks`` is the file-format name of ``max_windows`` (windows per long snippet; the code once said
chunks): it is what the file holds and what :meth:`ModelConfig.to_dict` writes, so that every saved folder,
the shipped ones included, stays byte for byte as it was and older conba versions read new folders. A file
that says ``max_windows`` is read as well."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from conba.utils.config_keys import JsonConfig

MODEL_FORMAT = "conba-model"
FILE_KEY = "max_chunks"  # the file-format name of ``max_windows``


@dataclass
class ModelConfig(JsonConfig):
    """What ``ConbaModel.save`` writes beside the weights. The defaults are what a folder saved before
    a key existed meant (``view`` raw, ``max_windows`` 1 = truncation, ``backbone_storage`` full)."""

    config_name: ClassVar[str] = "model config"
    file_keys: ClassVar[dict[str, str]] = {"max_windows": FILE_KEY}

    format: str = MODEL_FORMAT
    format_version: int = 1
    backbone: dict[str, Any] = field(default_factory=dict)  # BackboneConfig.to_dict()
    backbone_storage: str = "full"                            # full | delta
    dtype: str = "float32"                                    # float32 | float16 (the saved weights)
    threshold: float | None = None                            # F1 threshold on balanced pairs
    max_windows: int | None = 1                               # None: no limit (file key: max_chunks)
    clone_threshold: dict[str, Any] | None = None             # conba calibrate --write; {"value": T, ...}
    fingerprint: str | None = None                            # of the weights, checked on load
    view: str = "raw"                                         # input view
    lexical_weight: float = 0.0                               # lexical share of the fused score (0: dense)
    info: dict[str, Any] | None = None                        # free-form provenance

    def to_dict(self) -> dict[str, Any]:
        """As saved: ``max_windows`` under its file-format name ``max_chunks`` (in its old place), and
        ``clone_threshold`` and ``lexical_weight`` only when the model has them."""
        d = super().to_dict()
        if d["clone_threshold"] is None:
            del d["clone_threshold"]
        if not d["lexical_weight"]:
            del d["lexical_weight"]
        return d
