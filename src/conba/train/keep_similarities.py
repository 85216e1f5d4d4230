"""The distillation term of ``conba train`` (``keep`` in its --config): keep a reference model's similarities
on real code.

Glossary: b batch, d embedding width, n snippets of the keep set.

Contrastive training on curated pairs moves the vectors of *all* code, and on real repositories the
untuned backbone's similarities were better than the tuned model's. This term anchors them: on a
batch of unlabelled snippets (the ``code`` of grouped JSONL files, e.g. functions mined from real
code), the student's in-batch similarity distribution is pulled towards the reference's,

    keep_loss = KL( softmax(T Tᵀ / τ) ‖ softmax(S Sᵀ / τ) )      S, T: (b, d), L2-normalised

so only the *relations* between snippets are kept, not the vectors themselves (the student may
start from another point, e.g. the shipped default, whose space is not the reference's).

The reference is the untuned backbone the model was built on (``TrainConfig.backbone``), mean-pooled
through the same input view and token cap; its vectors are computed once and cached on disk, keyed
by the snippets and the backbone's weights.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from conba.data import CodeRecord


def similarity_kl(s: torch.Tensor, t: torch.Tensor, temperature: float) -> torch.Tensor:
    """KL(softmax(t tᵀ/τ) ‖ softmax(s sᵀ/τ)), batch mean. Args: s, t: (b, d) L2-normalised. Returns a scalar."""
    if s.shape != t.shape:
        raise ValueError(f"shape mismatch: student {tuple(s.shape)}, reference {tuple(t.shape)}")
    log_p = F.log_softmax(s @ s.T / temperature, dim=-1)   # (b, b)
    q = F.softmax(t @ t.T / temperature, dim=-1)           # (b, b)
    return F.kl_div(log_p, q, reduction="batchmean")


def keep_records(files: list[str], limit: int, seed: int) -> list[CodeRecord]:
    """The snippets of ``files`` (grouped JSONL; groups ignored), deduplicated by code, ``limit`` drawn
    at random with ``seed`` (0: all)."""
    from conba.data import load_many

    seen: set[str] = set()
    records = []
    for r in load_many(files):
        if r.code not in seen:
            seen.add(r.code)
            records.append(r)
    if limit and len(records) > limit:
        rng = np.random.default_rng(seed)
        keep = sorted(rng.choice(len(records), size=limit, replace=False).tolist())
        records = [records[i] for i in keep]
    return records


def reference_vectors(backbone_config, codes: list[str], cache_dir: Path, batch_size: int,
                      progress: bool = True) -> np.ndarray:
    """Mean-pooled, L2-normalised vectors (n, d) of the untuned backbone ``backbone_config`` names,
    cached as ``.npy`` under ``cache_dir`` (key: the codes and the backbone's weights)."""
    from conba.model import ConbaModel
    from conba.train.features import backbone_key
    from conba.utils.cache import sequence_key
    from conba.utils.io import atomic_write

    ref = ConbaModel.create(backbone_config)
    ref.max_windows = 1
    key = f"keep-{sequence_key(codes)}-{backbone_key(ref.backbone, ref.backbone.num_layers)}"
    path = Path(cache_dir) / f"{key}.npy"
    if path.is_file():
        return np.load(path, allow_pickle=False)
    vectors = ref.encode(codes, batch_size=batch_size, show_progress_bar=progress, normalize_embeddings=True)
    vectors = np.asarray(vectors, dtype=np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            np.save(f, vectors, allow_pickle=False)

    atomic_write(path, write)
    return vectors


def keep_batch(n: int, size: int, seed: int, step: int) -> list[int]:
    """``size`` distinct indices of ``n`` snippets for global step ``step`` (the same on a resumed run)."""
    rng = np.random.default_rng([seed, step])
    return sorted(rng.choice(n, size=min(size, n), replace=False).tolist())
