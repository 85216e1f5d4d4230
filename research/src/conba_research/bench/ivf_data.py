"""The data of ``conba bench ivf`` (:mod:`conba_research.bench.ivf`): real embeddings padded with a calibrated
Gaussian-mixture draw, queries, exact truth; and ``realcheck`` (is the pad harder or easier than real code for IVF?)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from conba.utils.io import write_npy_atomic

K = 10


# ---------------------------------------------------------------------- data
class Mixture:
    """Unit vectors from a Gaussian mixture fitted to real ones ``x`` (m, d): k-means centres, one tied
    residual covariance, each component's noise scaled by its own residual spread."""

    def __init__(self, x: np.ndarray, components: int, seed: int):
        import faiss

        km = faiss.Kmeans(x.shape[1], components, niter=20, seed=seed, spherical=False)
        km.train(x)
        _, assign = km.index.search(x, 1)
        assign = assign[:, 0]
        resid = x - km.centroids[assign]
        self.centres = km.centroids.astype(np.float32)
        sizes = np.bincount(assign, minlength=components).astype(np.float64)
        self.prob = sizes / sizes.sum()
        spread = np.array([np.mean(np.sum(resid[assign == c] ** 2, 1)) if sizes[c] > 1 else 0.0
                           for c in range(components)])
        pooled = float(np.mean(np.sum(resid**2, 1)))
        self.scale = np.sqrt(np.where(spread > 0, spread, pooled) / pooled).astype(np.float32)
        w, v = np.linalg.eigh(np.cov(resid.astype(np.float64), rowvar=False))
        self.factor = (v * np.sqrt(np.clip(w, 0, None))).astype(np.float32)
        self.dim = x.shape[1]

    alpha = 1.0  # noise multiplier, calibrated by :meth:`calibrate`

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        c = rng.choice(len(self.centres), size=n, p=self.prob)
        noise = rng.standard_normal((n, self.dim), dtype=np.float32) @ self.factor.T
        y = self.centres[c] + self.alpha * self.scale[c, None] * noise
        return y / np.linalg.norm(y, axis=1, keepdims=True)


def calibrate(mix: Mixture, real: np.ndarray) -> list[tuple[float, float]]:
    """Set ``mix.alpha`` so that as many draws as there are real vectors have the real vectors' median
    nearest-neighbour cosine (a fitted mixture's noise blurs the clusters; this undoes it). Returns the
    (alpha, median) tried."""
    target, m = nn_cos(real), min(len(real), 20_000)
    tried = []
    for alpha in (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4):
        mix.alpha = alpha
        tried.append((alpha, round(nn_cos(mix.draw(np.random.default_rng(5), m)), 4)))
    mix.alpha = min(tried, key=lambda t: abs(t[1] - target))[0]
    return tried


def nn_cos(x: np.ndarray, sample: int = 2000) -> float:
    """Median cosine of a vector to its nearest other vector (first ``sample`` vectors vs all)."""
    s = x[:sample] @ x.T
    np.fill_diagonal(s[:, :sample], -1)
    return float(np.median(s.max(1)))


def data(args: argparse.Namespace) -> dict:
    import faiss

    files = sorted(Path(args.real).glob("chunk-*.npy"))
    real = np.concatenate([np.load(f) for f in files]).astype(np.float32)
    real = real[np.unique(real.round(5), axis=0, return_index=True)[1]]  # distinct contents only
    rng = np.random.default_rng(args.seed)
    real = real[rng.permutation(len(real))]
    held, real = real[: args.queries // 2], real[args.queries // 2:]
    mix = Mixture(real, args.components, args.seed)
    tried = calibrate(mix, real[:20_000])
    n = args.n
    base = np.lib.format.open_memmap(args.out / "base.npy", mode="w+", dtype=np.float32, shape=(n, real.shape[1]))
    base[: len(real)] = real
    for s in range(len(real), n, 100_000):
        e = min(n, s + 100_000)
        base[s:e] = mix.draw(np.random.default_rng([args.seed, s]), e - s)
    base.flush()
    order = np.random.default_rng(args.seed + 1).permutation(n)  # real and synthetic interleaved in the files
    write_npy_atomic(args.out / "order.npy", order)
    src = rng.choice(n, args.queries - len(held), replace=False)
    noise = rng.standard_normal((len(src), real.shape[1]), dtype=np.float32) @ mix.factor.T
    noise *= np.sqrt(1 / 0.9**2 - 1) / np.sqrt(np.mean(np.sum(noise**2, 1)))
    pert = base[np.sort(src)] + noise
    queries = np.concatenate([held, pert / np.linalg.norm(pert, axis=1, keepdims=True)]).astype(np.float32)
    write_npy_atomic(args.out / "queries.npy", queries)
    truth = exact(base, queries)
    write_npy_atomic(args.out / "truth.npy", truth)
    synth = mix.draw(np.random.default_rng(99), min(len(real), 20_000))
    faiss.omp_set_num_threads(2)
    return {"n": n, "real": int(len(real)), "synthetic": int(n - len(real)), "held_out_real_queries": len(held),
            "perturbed_queries": int(len(src)), "components": args.components,
            "nn_cos_median_real": round(nn_cos(real[:20_000]), 4), "alpha": mix.alpha, "alpha_tried": tried,
            "nn_cos_median_synthetic_same_count": round(nn_cos(synth), 4), "real_files": len(files)}


def exact(base: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Exact top-K rows (nq, K) over ``base`` (n, d), chunk by chunk."""
    import faiss

    heap = faiss.ResultHeap(len(queries), K, keep_max=True)
    for s in range(0, len(base), 200_000):
        flat = faiss.IndexFlatIP(base.shape[1])
        flat.add(np.ascontiguousarray(base[s:s + 200_000]))
        d, i = flat.search(queries, K)
        heap.add_result(d, i + s)
    heap.finalize()
    return heap.I


def realcheck(args: argparse.Namespace) -> dict:
    """Is the synthetic pad harder or easier than real code for IVF? All real vectors of ``--real`` vs as
    many mixture draws (fitted and calibrated the same way): recall@10 of conba's IVF structure (re-rank 64)
    probing 1/64, 1/32, 1/16 of the lists, with conba's nlist rule and with ``--nlists``; FAISS HNSW32
    (efConstruction 80) at efSearch 64 / 128 beside it."""
    import tempfile

    import faiss

    from conba.index.vectors import ivf as ann_ivf

    real = np.concatenate([np.load(f) for f in sorted(Path(args.real).glob("chunk-*.npy"))]).astype(np.float32)
    real = real[np.unique(real.round(5), axis=0, return_index=True)[1]]
    real = real[np.random.default_rng(args.seed).permutation(len(real))]
    mix = Mixture(real, args.components, args.seed)
    calibrate(mix, real)
    out: dict = {"vectors": int(len(real)), "queries": 250, "alpha": mix.alpha}
    for name, x in (("real", real), ("synthetic", mix.draw(np.random.default_rng(3), len(real)))):
        queries, base = x[:250], x[250:]
        truth = np.argsort(-(queries @ base.T), axis=1)[:, :K]
        for nlist in [ann_ivf.nlist_for(len(base)), *args.nlists]:
            with tempfile.TemporaryDirectory() as tmp:
                ann = ann_ivf.build(Path(tmp), lambda b=base: iter([(np.arange(len(b)), b)]), len(base),
                                    base.shape[1], 0, nlist=nlist)
                searcher = ann_ivf.load(Path(tmp), ann, base.shape[1])
                for share in (64, 32, 16):
                    searcher.ivf.nprobe = max(1, nlist // share)
                    out[f"{name}_ivf{nlist}_probing_1/{share}"] = _recall(searcher.search(queries, K)[1], truth)
        hnsw = faiss.IndexHNSWFlat(base.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = 80
        hnsw.add(base)
        for ef in (64, 128):
            hnsw.hnsw.efSearch = ef
            out[f"{name}_hnsw32_ef{ef}"] = _recall(hnsw.search(queries, K)[1], truth)
        out[f"{name}_nn_cos_median"] = round(nn_cos(base), 4)
    return out


def _recall(found: np.ndarray, truth: np.ndarray) -> float:
    return round(float(np.mean([len(set(f) & set(t)) / K for f, t in zip(found, truth)])), 4)
