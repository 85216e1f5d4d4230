"""Window vectors: the vector of every window of a long snippet, before any pooling (the research
reference of the shipped long-input read-out, and the input of the window-head experiments).

Glossary: n snippets, f windows per snippet at most, d model width, c windows in all.

``ConbaModel.encode`` averages a long snippet's windows (``max_windows`` > 1) or keeps the first
(``max_windows`` 1). :func:`encode_windows` runs the same tokenisation, windows and batches but returns
each window's head output on its own, in source order, with a mask and the window's content-token
count, so a window head (:mod:`conba.heads.window_head`) can read the sequence. The token-weighted mean
of a snippet's windows is exactly what ``encode(max_windows=f, normalize=False)`` returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from conba.errors import ConfigError


@dataclass
class WindowVectors:
    """``vectors`` (n, f, d) float32, zero where ``mask`` (n, f) is False; ``weight`` (n, f) float32:
    the content tokens of each window (0 where there is none). Windows are in source order."""

    vectors: np.ndarray
    mask: np.ndarray
    weight: np.ndarray

    @property
    def count(self) -> np.ndarray:
        """Windows per snippet, shape (n,); more than 1 = longer than one backbone window."""
        return self.mask.sum(axis=1)

    def weighted_mean(self) -> np.ndarray:
        """The token-weighted mean of each snippet's windows, shape (n, d) (what encode pools)."""
        w = self.weight[..., None]
        return (self.vectors * w).sum(axis=1) / np.maximum(w.sum(axis=1), 1.0)

    @staticmethod
    def pack(vectors: np.ndarray, owner: Sequence[int], weight: Sequence[int], n: int, f: int) -> WindowVectors:
        """Scatter window rows (c, d) into (n, f, d) by their snippet ``owner`` (windows in order)."""
        out = WindowVectors(np.zeros((n, f, vectors.shape[1]), np.float32), np.zeros((n, f), bool),
                        np.zeros((n, f), np.float32))
        slot = np.zeros(n, np.int64)
        for row, (o, w) in enumerate(zip(owner, weight)):
            k = slot[o]
            out.vectors[o, k], out.mask[o, k], out.weight[o, k] = vectors[row], True, float(w)
            slot[o] += 1
        return out


@torch.inference_mode()
def encode_windows(model, codes: Sequence[str], languages: Sequence[str] | None = None,
                   max_windows: int = 8, batch_size: int = 32, max_batch_tokens: int | None = 4096,
                   view: str | None = None, show_progress_bar: bool = False) -> WindowVectors:
    """The unnormalised vectors of up to ``max_windows`` windows per snippet (torch engine).

    Args:
        model: a ConbaModel (its backbone, head, input view)
        codes: n snippets; languages: n names (or None) for the view and control codes
    Returns:
        WindowVectors with vectors (n, max_windows, d)
    """
    from conba.engine.windows import window_ids
    from conba.settings import apply_threads
    from conba.syntax.view import apply_views, check_view

    if not isinstance(max_windows, int) or max_windows < 1:
        raise ConfigError(f"max_windows must be a whole number >= 1, got {max_windows!r}")
    codes = list(codes)
    langs = [lang or "" for lang in (languages if languages is not None else [""] * len(codes))]
    if len(langs) != len(codes):
        raise ConfigError(f"got {len(codes)} codes but {len(langs)} languages")
    view = check_view(view or model.view)
    if view != "raw":
        codes, _ = apply_views(codes, langs, view)
    model.eval()
    apply_threads()
    cut = window_ids(model.backbone, codes, max_windows, prompt=model.backbone.prompt())
    windows = model._embed_windows(cut, langs, batch_size, max_batch_tokens, "torch", show_progress_bar,
                                   desc="windows")
    return WindowVectors.pack(windows.numpy(), cut.owner, cut.weight, len(codes), max_windows)


def encode_read_out(model, codes: Sequence[str], head, languages: Sequence[str] | None = None,
                    max_windows: int = 8, normalize: bool = True, **kwargs) -> np.ndarray:
    """Embed ``codes`` with a window head (:class:`conba.heads.window_head.WindowHead`) over their
    windows instead of truncation. A snippet of one window keeps the vector ``model.encode`` gives it
    (every head with ``single="identity"``); a longer one gets the head's read-out of its windows.

    Returns:
        float32 (n, d), L2-normalised unless ``normalize`` is False
    """
    fr = encode_windows(model, codes, languages, max_windows, **kwargs)
    with torch.no_grad():
        out = head(torch.from_numpy(fr.vectors), torch.from_numpy(fr.mask), torch.from_numpy(fr.weight)).float()
    if normalize:
        out = torch.nn.functional.normalize(out, dim=-1)
    return out.numpy()
