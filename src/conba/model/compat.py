"""Which older vectors a model reproduces: a model that reads long inputs over several windows (``max_windows``
other than 1, with or without a window head) gives every snippet that fits one backbone window the vector
that the same model truncating to one window gave.

Glossary: n snippets, c windows in all.

A model with a long-input read-out (:attr:`ConbaModel.window_head`, ``max_windows`` > 1) has another embedding
fingerprint than the same weights without it, so an index built before the read-out was added refuses it. Its
**truncation fingerprint** (:func:`truncation_fingerprint`) is the embedding fingerprint of the same model with
no window head and ``max_windows`` 1: an index that records it holds vectors the model still gives, except
for the snippets longer than one window (:func:`single_window` tells them apart without running the
backbone), so only those need encoding again (:mod:`conba.index.model.upgrade`). With a window head the
one-window vectors are bit for bit the same (:func:`conba.model.window_readout.read_out_windows`); with the plain
window mean (no window head) they are the same up to float rounding, as between two batchings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["single_window", "truncation_fingerprint"]
TOKENIZE_BATCH = 2048  # snippets per tokenizer call


def truncation_fingerprint(model: Any) -> str | None:
    """The embedding fingerprint of ``model`` (a :class:`~conba.model.ConbaModel`) without its long-input
    read-out: no window head, ``max_windows`` 1. None when the model truncates already (``max_windows`` 1 and
    no window head: nothing older to reproduce), or when it was cast to another precision since loading
    (its fingerprint is then the one recorded at the cast, and the one without the read-out is unknown)."""
    head = getattr(model, "window_head", None)
    windows = getattr(model, "max_windows", 1)
    if head is None and windows == 1:
        return None
    cast_from = getattr(model, "cast_from", None)
    if cast_from is not None and cast_from != model.dtype:
        return None
    model.window_head, model.max_windows = None, 1
    try:
        return str(model.embedding_fingerprint())
    finally:
        model.window_head, model.max_windows = head, windows


def single_window(model: Any, codes: Sequence[str], languages: Sequence[str] | None = None,
                  view: str | None = None) -> np.ndarray:
    """(n,) bool: whether each snippet fits one window of ``model``, as ``model.encode(codes, languages,
    view=view)`` cuts it (the input view, default the model's, then the document prompt and the model's
    ``max_windows``; :func:`conba.engine.windows.window_ids`), counted with the tokenizer alone. Those get the
    vector the model gave before it read long inputs over several windows."""
    from conba.engine.windows import check_max_windows, window_ids
    from conba.syntax.view import apply_views, check_view

    codes = list(codes)
    langs = [""] * len(codes) if languages is None else list(languages)
    view = check_view(view or getattr(model, "view", None) or "raw")
    if view != "raw":
        codes, _ = apply_views(codes, langs, view)
    max_windows = check_max_windows(model.max_windows)
    prompt = model.backbone.prompt(None, None)
    out = np.ones(len(codes), dtype=bool)
    if max_windows == 1:
        return out  # every snippet is cut to its first window
    for start in range(0, len(codes), TOKENIZE_BATCH):
        part = codes[start:start + TOKENIZE_BATCH]
        cut = window_ids(model.backbone, part, max_windows, prompt=prompt)
        windows = np.bincount(np.asarray(cut.owner, dtype=np.int64), minlength=len(part))
        out[start:start + len(windows)] = windows <= 1
    return out
