"""Inference engines and CPU settings for ``ConbaModel.encode``.

* ``torch`` (default): length-sorted batches from one tokenizer pass, ``torch.inference_mode``,
  ``CONBA_THREADS`` intra-op threads.
* ``onnx`` / ``onnx-fp32``: the backbone exported to ONNX (in segments between SDTP pruning layers)
  and run by ONNX Runtime, ``onnx`` with dynamic int8 quantisation of the weights. Optional:
  ``pip install 'conba[onnx]'``.
* the query encoder (:mod:`conba.engine.query_encoder`): a whole model exported once to one float32 ONNX
  graph, run with ONNX Runtime and ``tokenizers`` only, so commands that encode a query or two start without
  torch (docs/speed.md).

The names below load on first use: ``import conba.engine.query_encoder`` must not import torch.
"""

from __future__ import annotations

from typing import Any

from conba.constants import ENGINES

__all__ = [
    "ENGINES",
    "THREADS_ENV",
    "Batch",
    "apply_threads",
    "length_sorted_batches",
    "pad_batch",
    "pad_token_id",
    "requested_threads",
    "tokenize_ids",
]

_BATCHING = ("Batch", "length_sorted_batches", "pad_batch", "pad_token_id", "tokenize_ids")
_SETTINGS = ("THREADS_ENV", "apply_threads", "requested_threads")


def __getattr__(name: str) -> Any:
    if name in _BATCHING:
        from conba.engine import batching

        return getattr(batching, name)
    if name in _SETTINGS:
        from conba import settings

        return getattr(settings, name)
    raise AttributeError(f"module 'conba.engine' has no attribute {name!r}")
