"""Cached backbone token states shared by every variant and seed of an experiment, and embedding from them.

Glossary: n snippets, b batch, l tokens, d hidden width, T the head's token window.

``StatesProvider`` keeps the states of the last few record lists in memory (the train states of the
dev-sized runs are about 1.3 GB) on top of the trainer's on-disk cache, so the ablation's 20-odd
training runs load them once. ``window`` keeps the first T states of each snippet: over-tokens heads
on a CPU read only those. ``pooled_states`` turns every snippet into ONE state, its masked mean over
all its tokens: heads that mean-pool first (none, linear, ConbaLayer pooled) compute exactly the same
function on it (the mean of one state is that state), and each training step then moves a (b, 1, d)
batch instead of a padded (b, l, d) one, which is what makes multi-seed ablations affordable on a CPU.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from conba.heads.prefix import run_prefixed
from conba.settings import default_cache_dir, torch_threads
from conba.train.features import TokenStates, backbone_key, compute_states
from conba.utils.cache import sequence_key


def window(states: TokenStates, tokens: int) -> TokenStates:
    """The first ``tokens`` states of every snippet (all of them when tokens is 0)."""
    lens = states.lengths()
    if tokens <= 0 or int(lens.max(initial=0)) <= tokens:
        return states
    keep = np.minimum(lens, tokens)
    starts = states.offsets[:-1].numpy()
    idx = np.concatenate([np.arange(s, s + k) for s, k in zip(starts, keep)]) if len(keep) else np.zeros(0, int)
    offsets = torch.zeros(len(keep) + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(torch.as_tensor(keep, dtype=torch.int64), 0)
    return TokenStates(states.states[torch.as_tensor(idx, dtype=torch.int64)], offsets)


def pooled_states(states: TokenStates) -> TokenStates:
    """One state per snippet: the masked mean of its token states (float32), offsets 0, 1, 2, ..."""
    vectors = torch.from_numpy(states.pooled())
    return TokenStates(vectors, torch.arange(len(states) + 1, dtype=torch.int64))


def head_reads_pooled_mean(head) -> bool:
    """True when ``head`` only sees the masked mean of the token states (so pooled_states is exact).

    Never with prefix control codes: those heads read the embedding layer's states (layer 0) and run
    the backbone with the language code inserted."""
    return not head.needs_tokens and head.config.pooling == "mean" and getattr(head, "prefix", None) is None


class StatesProvider:
    """Memoised ``compute_states``: one entry per (codes, backbone weights, layer, view).

    ``tokens``: 0 = every token state, T > 0 = the first T of each snippet, -1 = the pooled mean.
    ``key_threads``: the torch thread count under which cache keys (and missing states) are computed.
    The on-disk cache key sums the backbone's weights in float64, and that sum's last digits depend on
    the thread count, so a run with ``--threads 1`` must still key the cache like a default run.
    """

    def __init__(self, cache_dir: str | Path | None = None, batch_size: int = 64, progress: bool = True,
                 keep: int = 6, key_threads: int = 0):
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.batch_size = batch_size
        self.progress = progress
        self.keep = keep
        self.key_threads = key_threads
        self._memo: OrderedDict[tuple, TokenStates] = OrderedDict()

    def get(self, backbone, codes: Sequence[str], layer: int | None = None, tokens: int = 0,
            desc: str = "states") -> TokenStates:
        layer = backbone.num_layers if layer is None else layer
        with torch_threads(self.key_threads):
            base_key = (sequence_key(codes, length=64), backbone_key(backbone, layer), layer)
        key = (*base_key, tokens)
        if key in self._memo:
            self._memo.move_to_end(key)
            return self._memo[key]
        base = self._memo.get((*base_key, 0))
        if base is None:
            with torch_threads(self.key_threads):
                base = compute_states(backbone, list(codes), layer, self.cache_dir, self.batch_size, desc=desc,
                                      progress=self.progress)
            self._put((*base_key, 0), base)
        out = pooled_states(base) if tokens < 0 else window(base, tokens)
        self._put(key, out)
        return out

    def _put(self, key: tuple, value: TokenStates) -> None:
        self._memo[key] = value
        self._memo.move_to_end(key)
        while len(self._memo) > self.keep:
            self._memo.popitem(last=False)


@torch.inference_mode()
def embed_states(model, states: TokenStates, languages: Sequence[str], batch_size: int = 64,
                 device: str | torch.device = "cpu") -> np.ndarray:
    """L2-normalised embeddings (n, out_dim) of ``model.head`` over cached final-layer states (with prefix
    control codes: over cached embedding-layer states, run through the backbone with the codes)."""
    head = model.head
    back = model.device
    moved = model if head.prefix is not None else head
    moved.eval()
    moved.to(device)
    order = np.argsort(-states.lengths(), kind="stable")
    out = torch.zeros(len(states), model.dim)
    for s in range(0, len(order), batch_size):
        idx = [int(i) for i in order[s:s + batch_size]]
        x, mask = states.batch(idx)
        lang_ids = head.language_ids([languages[i] for i in idx]).to(device)
        x, mask = x.to(device), mask.to(device)
        if head.prefix is not None:
            x = run_prefixed(model.backbone, head.prefix, x, mask.long(), lang_ids)
        out[idx] = head(x, mask, lang_ids).float().cpu()
    moved.to(back)
    return torch.nn.functional.normalize(out, dim=-1).numpy()


def embed_records(model, records, provider: StatesProvider, tokens: int = 0, batch_size: int = 64,
                  device: str | torch.device = "cpu", desc: str = "states") -> np.ndarray:
    """Embeddings of ``records`` by ``model`` through cached states (its backbone's final layer).

    ``tokens`` is the head's token window; it only applies to heads that read every token state
    (mean-pooling heads get the pooled vectors).
    """
    tokens = -1 if head_reads_pooled_mean(model.head) else (tokens if model.head.needs_tokens else 0)
    layer = 0 if model.head.prefix is not None else None
    states = provider.get(model.backbone, [r.code for r in records], layer, tokens=tokens, desc=desc)
    return embed_states(model, states, [r.language for r in records], batch_size, device)
