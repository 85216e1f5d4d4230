"""Tokenize once, sort by token length, and cut padded batches with little padding waste.

Glossary: n snippets, b batch size, l tokens in a batch (its longest snippet).

``ConbaModel.encode`` used to tokenize every snippet twice (once for the lengths, once per batch);
here the fast tokenizer runs once over all snippets without padding, the ids are sorted by length
(longest first, ties by input index, so the order is deterministic) and each batch is padded only to
its own longest snippet. The padded tensors are the same as ``tokenizer(..., padding=True)`` would
give for that batch (right padding, pad id, 0/1 mask), so embeddings do not change.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:  # torch loads with the first torch batch: the ONNX query encoder pads with numpy only
    import torch

CPU_BATCH_SIZE = 32       # snippets per batch on a CPU (sentence-transformers' default too)
CPU_BATCH_TOKENS = 4096   # padded tokens per batch on a CPU (measured on 2 cores; docs/BENCHMARKS.md)
GPU_BATCH_SIZE = 256      # snippets per batch on a GPU (issue 36: batch 256 was fastest on an H100)
GPU_BATCH_TOKENS = 256 * 512  # padded tokens per batch on a GPU: 256 snippets at a 512-token cap
AUTO = "auto"
# How encode makes a snippet's vector independent of its batch (issue 49): batches of one token length,
# so no snippet is ever padded (padding changes the kernels' shapes, and so the float sums); and on the
# dynamic int8 ONNX engine, whose activation scales are per tensor (the batch's largest value), one
# snippet per run. The cost in throughput: docs/determinism.md.
DETERMINISTIC = True


@dataclass
class Batch:
    """One padded batch. ``index``: positions of its snippets in the input; ids/mask: shape (b, l)."""

    index: list[int]
    input_ids: torch.Tensor
    attention_mask: torch.Tensor


def tokenize_ids(backbone, codes: Sequence[str]) -> list[list[int]]:
    """Token ids of every snippet (special tokens added, truncated to ``backbone.max_length``), unpadded."""
    enc = backbone.tokenizer([backbone.preprocess(c) for c in codes], truncation=True,
                             max_length=backbone.max_length, padding=False)
    return list(enc["input_ids"])


def pad_batch(ids: Sequence[Sequence[int]], pad_id: int, left: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad (``left``: left-pad, as decoders need) a list of id lists. Returns input_ids (b, l) int64
    and attention_mask (b, l) int64."""
    import torch

    out, mask = pad_arrays(ids, pad_id, left)
    return torch.from_numpy(out), torch.from_numpy(mask)


def pad_arrays(ids: Sequence[Sequence[int]], pad_id: int, left: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pad_batch` as numpy arrays: input_ids (b, l) int64 and attention_mask (b, l) int64."""
    if not ids:
        raise ValueError("pad_batch needs at least one snippet")
    width = max(len(x) for x in ids)
    out = np.full((len(ids), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for row, x in enumerate(ids):
        cols = slice(width - len(x), width) if left else slice(0, len(x))
        out[row, cols] = x
        mask[row, cols] = 1
    return out, mask


def length_sorted_batches(ids: Sequence[Sequence[int]], batch_size: int, pad_id: int,
                          max_tokens: int | None = None, left: bool = False,
                          same_length: bool = False) -> Iterator[Batch]:
    """Yield padded batches, longest first (ties: input order), of at most ``batch_size`` snippets and,
    when ``max_tokens`` is set, at most ``max_tokens`` padded tokens (rows x longest snippet; a snippet
    longer than the budget gets a batch of its own). Long snippets thus run in small batches (their
    attention maps stay cache-sized) and short ones in full batches. ``same_length``: a batch holds
    snippets of one token length only (no padding), so a snippet's vector cannot depend on what else
    was encoded with it (:data:`DETERMINISTIC`)."""
    for index in length_sorted_rows(ids, batch_size, max_tokens, same_length):
        input_ids, mask = pad_batch([ids[i] for i in index], pad_id, left)
        yield Batch(index, input_ids, mask)


def length_sorted_rows(ids: Sequence[Sequence[int]], batch_size: int, max_tokens: int | None = None,
                       same_length: bool = False) -> Iterator[list[int]]:
    """The input positions of each batch of :func:`length_sorted_batches`, unpadded."""
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    if max_tokens is not None and max_tokens < 1:
        raise ValueError("max_tokens must be >= 1 (or None for no token budget)")
    order = sorted(range(len(ids)), key=lambda i: (-len(ids[i]), i))
    start = 0
    while start < len(order):
        rows = batch_size
        if max_tokens is not None:  # the first snippet of a batch is its longest
            rows = max(1, min(batch_size, max_tokens // max(1, len(ids[order[start]]))))
        index = order[start:start + rows]
        if same_length:
            index = [i for i in index if len(ids[i]) == len(ids[index[0]])]
            rows = len(index)
        yield index
        start += rows


class BatchPlan(NamedTuple):
    """How ``encode`` cuts batches: at most ``batch_size`` snippets and ``max_tokens`` padded tokens
    (None: no token budget)."""

    batch_size: int
    max_tokens: int | None


def plan_batches(device: torch.device | str, batch_size: int | None = None,
                 max_tokens: int | None | str = AUTO) -> BatchPlan:
    """The batch plan for ``device``: on a CPU small batches under a small token budget (long snippets'
    attention maps stay cache-sized; :data:`CPU_BATCH_SIZE`, :data:`CPU_BATCH_TOKENS`), on a GPU (CUDA,
    MPS) large length-sorted batches (:data:`GPU_BATCH_SIZE`, :data:`GPU_BATCH_TOKENS`: bounded memory
    for long windows). An explicit ``batch_size`` or ``max_tokens`` (None: no budget) wins."""
    import torch

    gpu = torch.device(device).type != "cpu"
    if batch_size is None:
        batch_size = GPU_BATCH_SIZE if gpu else CPU_BATCH_SIZE
    if isinstance(max_tokens, str):
        if max_tokens != AUTO:
            raise ValueError(f"max_tokens must be a number, None or {AUTO!r}, got {max_tokens!r}")
        max_tokens = GPU_BATCH_TOKENS if gpu else CPU_BATCH_TOKENS
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    if max_tokens is not None and max_tokens < 1:
        raise ValueError("max_tokens must be >= 1 (or None for no token budget)")
    return BatchPlan(int(batch_size), max_tokens)


def pad_token_id(tokenizer) -> int:
    """The tokenizer's pad id: its pad token, else its eos token, else 0 (BERT's [PAD]). One rule with
    the backbone's own padding (:func:`conba.encoder.adapter.pad_id`)."""
    from conba.encoder.adapter import pad_id

    return pad_id(tokenizer)
