"""Real embeddings for ``conba bench ivf`` (:mod:`conba_research.bench.ivf`): a random sample of the functions of a
conba index, encoded with a model (default ``default-fast`` on int8 ONNX), written as
``OUT/chunk-NNNNN.npy`` (512 each, float32, L2-normalised); resumable (existing chunks are kept), stop it any time.

The index only needs its units (``conba index SRC --fast --index DIR`` scans, then encodes longest first;
stop it once the scan is done). The functions of the dev run (2026-11-27): torch, numpy, scipy, sklearn,
pandas, networkx, onnx and ray as installed in the venv (``.py``, ``.h``, ``.c``, ``.cpp`` ... copied to a
folder outside the repository, since conba skips virtualenvs)::

    nice -n 15 conba bench ivf-encode --index runs/w6/realidx --out runs/w6/real
"""

from __future__ import annotations

import argparse
import sqlite3
import time
from pathlib import Path

import numpy as np

CHUNK = 512


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--index", type=Path, required=True, help="a conba index folder (its units are sampled)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("-m", "--model", default="default-fast")
    p.add_argument("--engine", default="onnx")
    p.add_argument("--device", help="where the torch engine encodes (auto, cpu, cuda[:N], mps; default the CPU)")
    p.add_argument("--dtype", help="the torch engine's precision (auto, float32, float16, bfloat16; default float32)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    from conba.model import load_model

    db = sqlite3.connect(f"file:{args.index / 'index.sqlite'}?mode=ro", uri=True)
    rows = db.execute("SELECT hash, min(language), min(code) FROM units GROUP BY hash ORDER BY hash").fetchall()
    order = np.random.default_rng(args.seed).permutation(len(rows))
    args.out.mkdir(parents=True, exist_ok=True)
    model = load_model(args.model, device=args.device, dtype=args.dtype)
    done = len(list(args.out.glob("chunk-*.npy")))
    print(f"{len(rows)} distinct functions; {done} chunks already", flush=True)
    t0 = time.time()
    for c in range(done, len(order) // CHUNK):
        pick = [rows[i] for i in order[c * CHUNK:(c + 1) * CHUNK]]
        v = model.encode([r[2] for r in pick], languages=[r[1] for r in pick], batch_size=32,
                         show_progress_bar=False, normalize=True, engine=args.engine)
        tmp = args.out / f".chunk-{c:05d}.npy"
        np.save(tmp, np.asarray(v, dtype=np.float32))
        tmp.rename(args.out / f"chunk-{c:05d}.npy")
        print(f"chunk {c}: {(c + 1 - done) * CHUNK / (time.time() - t0):.1f} functions/s", flush=True)


if __name__ == "__main__":
    main()
