"""SaliencyStore: the saliency pass's results, per P×K batch, saved after every batch (resumable).

Glossary: n rows (snippet occurrences), t tokens over all rows, B batches.

One safetensors file holds ``records`` (n,) record indices, ``ids`` (t,) token ids, ``offsets``
(n+1,) row starts in ``ids``, ``batch_offsets`` (B+1,) batch starts in rows and, per pruning layer p,
``sal_p`` (t,) raw saliency; its metadata holds the settings key, so a changed setting is noticed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from conba.utils.io import atomic_write


class SaliencyStore:
    def __init__(self, layers: list[int], key: str):
        self.layers = list(layers)
        self.key = key
        self.batches: list[tuple[list[int], list[list[int]], dict[int, list[np.ndarray]]]] = []

    def __len__(self) -> int:
        return len(self.batches)

    def subset(self, layers: list[int]) -> SaliencyStore:
        """The same batches with only ``layers`` (each must be in this store)."""
        missing = sorted(set(layers) - set(self.layers))
        if missing:
            raise ValueError(f"saliency store has no layers {missing}")
        out = SaliencyStore(list(layers), self.key)
        out.batches = [(r, ids, {p: s[p] for p in layers}) for r, ids, s in self.batches]
        return out

    def add(self, records: list[int], ids: list[list[int]], saliency: dict[int, list[np.ndarray]]) -> None:
        if len(records) != len(ids) or any(len(saliency[p]) != len(ids) for p in self.layers):
            raise ValueError("records, ids and saliency rows must have the same count")
        self.batches.append((list(records), [list(x) for x in ids], {p: list(saliency[p]) for p in self.layers}))

    def save(self, path: str | Path) -> None:
        from safetensors.torch import save_file

        recs: list = []
        rows: list = []
        sal: dict[int, list] = {p: [] for p in self.layers}
        batch_offsets = [0]
        for r, ids, s in self.batches:
            recs += r
            rows += ids
            for p in self.layers:
                sal[p] += s[p]
            batch_offsets.append(len(recs))
        lengths = [len(x) for x in rows]
        tensors = {
            "records": torch.tensor(recs, dtype=torch.int64),
            "ids": torch.tensor([t for x in rows for t in x], dtype=torch.int64),
            "offsets": torch.tensor(np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]), dtype=torch.int64),
            "batch_offsets": torch.tensor(batch_offsets, dtype=torch.int64),
        }
        for p in self.layers:
            flat = np.concatenate(sal[p]) if sal[p] else np.zeros(0, np.float32)
            tensors[f"sal_{p}"] = torch.from_numpy(flat.astype(np.float32))
        meta = {"key": self.key, "layers": ",".join(str(p) for p in self.layers)}
        atomic_write(path, lambda tmp: save_file(tensors, str(tmp), metadata=meta))

    @classmethod
    def load(cls, path: str | Path) -> SaliencyStore:
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
            t = {k: f.get_tensor(k) for k in f.keys()}
        layers = [int(x) for x in meta.get("layers", "").split(",") if x]
        store = cls(layers, meta.get("key", ""))
        offsets, bo = t["offsets"].tolist(), t["batch_offsets"].tolist()
        recs, ids = t["records"].tolist(), t["ids"].tolist()
        for b in range(len(bo) - 1):
            rows = range(bo[b], bo[b + 1])
            store.add([recs[i] for i in rows], [ids[offsets[i]:offsets[i + 1]] for i in rows],
                      {p: [t[f"sal_{p}"][offsets[i]:offsets[i + 1]].numpy() for i in rows] for p in layers})
        return store
