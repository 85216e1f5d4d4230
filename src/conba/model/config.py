"""``conba_config.json``, the config of a saved model folder, read strictly like every other config:
an unknown key is a one-line error naming the key and the file."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from conba.utils.config_keys import JsonConfig

MODEL_FORMAT = "conba-model"


@dataclass
class ModelConfig(JsonConfig):
    """What ``ConbaModel.save`` writes beside the weights. The defaults are what a folder saved before
    a key existed meant (``view`` raw, ``max_chunks`` 1 = truncation, ``backbone_storage`` full)."""

    config_name: ClassVar[str] = "model config"

    format: str = MODEL_FORMAT
    format_version: int = 1
    backbone: dict[str, Any] = field(default_factory=dict)  # BackboneConfig.to_dict()
    backbone_storage: str = "full"                            # full | delta
    dtype: str = "float32"                                    # float32 | float16 (the saved weights)
    threshold: float | None = None                            # F1 threshold on balanced pairs
    max_chunks: int | None = 1                                # None: no limit
    clone_threshold: dict[str, Any] | None = None             # conba calibrate --write; {"value": T, ...}
    fingerprint: str | None = None                            # of the weights, checked on load
    view: str = "raw"                                         # input view
    lexical_weight: float = 0.0                               # lexical share of the fused score (0: dense)
    info: dict[str, Any] | None = None                        # free-form provenance

    def to_dict(self) -> dict[str, Any]:
        """As saved: ``clone_threshold`` and ``lexical_weight`` only when the model has them."""
        d = asdict(self)
        if d["clone_threshold"] is None:
            del d["clone_threshold"]
        if not d["lexical_weight"]:
            del d["lexical_weight"]
        return d
