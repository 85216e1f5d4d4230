"""Cached backbone token states for cheap training.

Glossary: n snippets, t total tokens over all snippets, l tokens in a batch, d hidden width.

With tuning ``none`` the final-layer states are cached; with ``top-k`` the states after layer
L−k. States are stored ragged (no padding) in float16 chunks (:class:`conba.utils.cache.ChunkedArrays`,
with each chunk's lengths written last), each written atomically, so an interrupted caching pass resumes
where it stopped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from conba.encoder import adapter
from conba.encoder.backbone import Backbone
from conba.utils.cache import ChunkedArrays, sequence_key

CHUNK = 512


def _tensor_bytes(t: torch.Tensor) -> bytes:
    """The raw bytes of a tensor (any dtype, bf16 included), with its dtype and shape."""
    t = t.detach().cpu().contiguous()
    return f"{t.dtype}{tuple(t.shape)}".encode() + t.reshape(-1).view(torch.uint8).numpy().tobytes()


def backbone_key(backbone: Backbone, layer: int) -> str:
    """Cache key of the backbone's first ``layer`` layers: a hash of the exact bytes of every weight.

    Deterministic (no float reductions, so it does not depend on the thread count); any change to a
    weight that reaches the cached states changes the key.
    """
    h = hashlib.sha256()
    cfg = backbone.config
    h.update(f"{cfg.name_or_path}|{cfg.max_length}|{cfg.split_identifiers}|".encode())
    if backbone.supports("own-loop"):
        state = adapter.embeddings(backbone.model).state_dict()
        for i in range(layer):
            state.update({f"l{i}.{k}": v for k, v in backbone.layers[i].state_dict().items()})
    else:  # its own forward: every weight reaches the states (only layer == all layers is cached)
        state = {f"{layer}.{k}": v for k, v in backbone.model.state_dict().items()}
    for key in sorted(state):
        h.update(key.encode())
        h.update(_tensor_bytes(state[key]))
    return h.hexdigest()[:16]


class TokenStates:
    """Ragged token states: ``states`` (t, d) float16, ``offsets`` (n+1,)."""

    def __init__(self, states: torch.Tensor, offsets: torch.Tensor):
        self.states, self.offsets = states, offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def lengths(self) -> np.ndarray:
        return (self.offsets[1:] - self.offsets[:-1]).numpy()

    def batch(self, idx: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """Returns x: (b, l, d) float32 right-padded, mask: (b, l) bool."""
        lens = [int(self.offsets[i + 1] - self.offsets[i]) for i in idx]
        width = max(lens)
        x = torch.zeros(len(idx), width, self.states.shape[1])
        mask = torch.zeros(len(idx), width, dtype=torch.bool)
        for row, (i, n) in enumerate(zip(idx, lens)):
            start = int(self.offsets[i])
            x[row, :n] = self.states[start:start + n].float()
            mask[row, :n] = True
        return x, mask

    def pooled(self) -> np.ndarray:
        """Masked mean of each snippet's states: (n, d) float32."""
        sums = torch.zeros(len(self), self.states.shape[1])
        seg = torch.repeat_interleave(torch.arange(len(self)), torch.as_tensor(self.lengths()))
        sums.index_add_(0, seg, self.states.float())
        return (sums / torch.as_tensor(self.lengths()).clamp(min=1)[:, None]).numpy()


@torch.inference_mode()
def compute_states(backbone: Backbone, codes: Sequence[str], layer: int, cache_dir: Path | None = None,
                   batch_size: int = 32, desc: str = "cache", progress: bool = True, tag: str = "") -> TokenStates:
    """States after ``layer`` layers (0 = embeddings only, L = final) for every snippet. ``tag`` (e.g.
    the input view) is part of the cache key besides the codes themselves (empty: keys as before)."""
    from tqdm.auto import tqdm

    codes = list(codes)
    folder = None
    if cache_dir is not None:
        folder = Path(cache_dir) / f"{sequence_key(codes, prefix=tag)}-{backbone_key(backbone, layer)}-L{layer}"
        folder.mkdir(parents=True, exist_ok=True)
    cached_states = ChunkedArrays(folder, "states", CHUNK, np.float16)
    cached_lengths = ChunkedArrays(folder, "lengths", CHUNK, np.int64)  # written last: the chunk is whole
    n_chunks = (len(codes) + CHUNK - 1) // CHUNK
    parts: list[torch.Tensor] = []
    lengths: list[int] = []
    backbone.eval()
    bar = tqdm(total=len(codes), desc=desc, unit="snippet", disable=not progress)
    for c in range(n_chunks):
        stored = cached_lengths.load(c * CHUNK)
        if stored is not None:
            parts.append(torch.from_numpy(cached_states.load(c * CHUNK)))
            lengths.extend(stored.tolist())
            bar.update(len(stored))
            continue
        chunk = codes[c * CHUNK:(c + 1) * CHUNK]
        tok_len = backbone.token_lengths(chunk)
        order = sorted(range(len(chunk)), key=lambda i: -tok_len[i])
        out: list[torch.Tensor | None] = [None] * len(chunk)
        device = next(backbone.model.parameters()).device
        for s in range(0, len(order), batch_size):
            idx = order[s:s + batch_size]
            enc = backbone.tokenize([chunk[i] for i in idx])
            h = backbone.lower(enc["input_ids"].to(device), enc["attention_mask"].to(device), layer).cpu()
            real = enc["attention_mask"].bool()  # the real tokens, on either padding side
            for row, i in enumerate(idx):
                out[i] = h[row][real[row]].to(torch.float16).clone()
            bar.update(len(idx))
        states = torch.cat(out)  # type: ignore[arg-type]
        lens = torch.tensor([t.shape[0] for t in out], dtype=torch.int64)  # type: ignore[union-attr]
        cached_states.save(c * CHUNK, states.numpy())
        cached_lengths.save(c * CHUNK, lens.numpy())
        parts.append(states)
        lengths.extend(lens.tolist())
    bar.close()
    offsets = torch.zeros(len(lengths) + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(torch.tensor(lengths, dtype=torch.int64), 0)
    return TokenStates(torch.cat(parts) if parts else torch.zeros(0, backbone.hidden_size), offsets)
