"""The conba model: backbone + head (+ optional SDTP pruner), encoding, and its folder format.

* :mod:`conba.model.core` — :class:`ConbaModel` (``encode``, ``similarity``, fingerprints)
* :mod:`conba.model.persist` — save / load a model folder (format version and fingerprint checked)
* :mod:`conba.model.loading` — :func:`load_model` (``default``, ``default-sdtp``, ``default-fast``, ``zero-shot``,
  folders)
* :mod:`conba.model.st_export` — sentence-transformers files beside a saved model
"""

from conba.model.core import (
    CONFIG_NAME,
    DEFAULT_BATCH_TOKENS,
    DEFAULT_FAST_DIR,
    DEFAULT_MODEL_DIR,
    DEFAULT_SDTP_DIR,
    FORMAT_VERSION,
    ConbaModel,
    ModelError,
)
from conba.model.loading import load_model

__all__ = [
    "CONFIG_NAME", "DEFAULT_BATCH_TOKENS", "DEFAULT_FAST_DIR", "DEFAULT_MODEL_DIR", "DEFAULT_SDTP_DIR",
    "FORMAT_VERSION", "ConbaModel", "ModelError", "load_model",
]
