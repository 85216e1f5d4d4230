"""Inference engines and CPU settings for ``ConbaModel.encode``.

* ``torch`` (default): length-sorted batches from one tokenizer pass, ``torch.inference_mode``,
  ``CONBA_THREADS`` intra-op threads.
* ``onnx`` / ``onnx-fp32``: the backbone exported to ONNX (in segments between SDTP pruning layers)
  and run by ONNX Runtime, ``onnx`` with dynamic int8 quantisation of the weights. Optional:
  ``pip install 'conba[onnx]'``.
"""

from conba.constants import ENGINES
from conba.engine.batching import Batch, length_sorted_batches, pad_batch, pad_token_id, tokenize_ids
from conba.settings import THREADS_ENV, apply_threads, requested_threads

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
