"""Embedding precision as sentence-transformers names it: float32, int8, uint8, binary, ubinary.

``binary`` / ``ubinary`` pack the sign bits, 8 dimensions per byte (``binary`` shifted by -128 into
int8), exactly as ``sentence_transformers.quantization.quantize_embeddings`` does; written here
because it is two lines. ``int8`` / ``uint8`` need per-dimension ranges calibrated on the batch, and
are left to sentence-transformers' own function so the numbers match it (``pip install
sentence-transformers``).

Glossary: n snippets, d dimensions.
"""

from __future__ import annotations

import numpy as np

from conba.errors import ConfigError

PRECISIONS = ("float32", "int8", "uint8", "binary", "ubinary")


def quantize(embeddings: np.ndarray, precision: str) -> np.ndarray:
    """Args: embeddings float (n, d) or (d,). Returns float32 (n, d), int8/uint8 (n, d) or packed
    bits int8/uint8 (n, ceil(d / 8)); a single (d,) vector gives a single row back."""
    if precision not in PRECISIONS:
        raise ConfigError(f"unknown precision {precision!r} ({', '.join(PRECISIONS)})")
    emb = np.asarray(embeddings, dtype=np.float32)
    single = emb.ndim == 1
    emb = emb[None] if single else emb
    out: np.ndarray
    if precision == "float32":
        out = emb
    elif precision.endswith("binary"):
        packed = np.packbits(emb > 0, axis=-1)
        out = (packed.astype(np.int16) - 128).astype(np.int8) if precision == "binary" else packed
    else:
        try:
            from sentence_transformers.quantization import quantize_embeddings
        except ImportError:
            raise ConfigError(f"precision={precision!r} needs sentence-transformers (its calibration): "
                              "pip install sentence-transformers") from None
        try:
            out = quantize_embeddings(emb, precision=precision)
        except ValueError as exc:  # e.g. ranges cannot be calibrated on one snippet
            raise ConfigError(f"precision={precision!r}: {exc}") from None
    return out[0] if single else out
