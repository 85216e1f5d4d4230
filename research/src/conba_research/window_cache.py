"""Window vectors of a data set, computed once with a frozen model and cached in chunks.

Glossary: n snippets, f windows per snippet at most, d model width.

The records are put in a seeded order of whole groups (a group's snippets stay together), so the
chunks written first are a random subset of whole groups: a pass cut short (``limit``) still gives a
usable training set. Each chunk holds (rows, f, d + 1): the window vectors and, in the last column,
the window's content-token count (0 = no window). The cache folder's name carries the model's
embedding fingerprint, the data's hash, f and the order seed, so a change of any of them misses.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import numpy as np

from conba.data.records import CodeRecord, load_records
from conba.settings import default_cache_dir
from conba.utils.cache import ChunkedArrays, cache_key, sequence_key

CHUNK = 256  # snippets per cached chunk


LONG_CHARS = 1500  # a rough "longer than one window" for the training order only (about 510 tokens)


def group_order(records: list[CodeRecord], seed: int, long_first: bool = False) -> list[CodeRecord]:
    """``records`` with their groups in a seeded random order, each group's snippets together in file order.

    ``long_first`` (training sets): a first pass over the groups takes from each its snippets over
    LONG_CHARS characters and as many shorter ones (seeded choice), a second pass the rest, so a
    prefix holds more groups and more long snippets, with short partners for each."""
    groups: dict[str, list[CodeRecord]] = {}
    for r in records:
        groups.setdefault(r.group, []).append(r)
    names = sorted(groups)
    rng = random.Random(seed)
    rng.shuffle(names)
    if not long_first:
        return [r for g in names for r in groups[g]]
    first: list[CodeRecord] = []
    rest: list[CodeRecord] = []
    for g in names:
        members = groups[g]
        long = [r for r in members if len(r.code) > LONG_CHARS]
        short = [r for r in members if len(r.code) <= LONG_CHARS]
        rng.shuffle(short)
        first += long + short[:len(long)]
        rest += short[len(long):]
    return first + rest


def window_fingerprint(model) -> str:
    """The embedding fingerprint of ``model``'s windows: without its window head and truncating, what
    the cached window vectors depend on (a model shipped with a window head reuses the same cache)."""
    head, windows = model.window_head, model.max_windows
    model.window_head, model.max_windows = None, 1
    try:
        return model.embedding_fingerprint()
    finally:
        model.window_head, model.max_windows = head, windows


def vector_cache(model, records: list[CodeRecord], name: str, max_windows: int, seed: int,
                 folder: Path | None = None) -> ChunkedArrays:
    """The chunked cache of ``records`` (already in order) for ``model``'s windows."""
    key = cache_key(window_fingerprint(model), sequence_key((r.code for r in records), prefix=name),
                    sequence_key(r.language for r in records), max_windows, seed, length=12)
    return ChunkedArrays((folder or default_cache_dir() / "fragments")  # the cache folder's old name, kept
                          / f"{name}-{key}", "part", CHUNK)


def load_window_set(model, path: str | Path, max_windows: int = 8, seed: int = 0, limit: int | None = None,
                    long_first: bool = False, log=print) -> tuple[list[CodeRecord], np.ndarray, np.ndarray]:
    """Records (in group order) and their windows: vectors (n, f, d) float32, weight (n, f) float32.

    Missing chunks are encoded and stored (resumable); ``limit`` stops after the chunk that reaches
    that many snippets (a random subset of whole groups, but for the last group, which is cut)."""
    from conba_research.window_encode import encode_windows

    records = group_order(load_records(path, on_unknown="ignore"), seed, long_first)
    name = Path(path).stem + ("-long-first" if long_first else "")
    cache = vector_cache(model, records, name, max_windows, seed)
    n = len(records) if limit is None else min(limit, len(records))
    n = min(len(records), -(-n // CHUNK) * CHUNK)
    t0, todo = time.time(), cache.missing(n)

    def compute(start: int, end: int) -> np.ndarray:
        part = records[start:end]
        fr = encode_windows(model, [r.code for r in part], [r.language for r in part], max_windows)
        return np.concatenate([fr.vectors, fr.weight[..., None]], axis=-1)

    def done(start: int, end: int, hit: bool) -> None:
        if not hit:
            log(f"{name}: {end}/{n} snippets ({time.time() - t0:.0f} s, {todo} chunks to compute)")
            sys.stdout.flush()

    rows, _ = cache.rows(n, compute, done)
    return records[:n], np.ascontiguousarray(rows[..., :-1]), np.ascontiguousarray(rows[..., -1])


def load_truncated(model, records: list[CodeRecord], long: np.ndarray, name: str, seed: int = 0) -> np.ndarray:
    """Today's default read-out of the ``long`` records (n,) bool: the first 512 tokens only
    (``max_windows`` 1), shape (long.sum(), d) in record order, cached like the windows."""
    from conba_research.window_encode import encode_windows

    chosen = [r for r, keep in zip(records, long) if keep]
    cache = vector_cache(model, chosen, f"{name}-truncated", 1, seed)

    def compute(start: int, end: int) -> np.ndarray:
        part = chosen[start:end]
        return encode_windows(model, [r.code for r in part], [r.language for r in part], 1).vectors[:, 0]

    rows, _ = cache.rows(len(chosen), compute)
    return rows


def main(argv: list[str] | None = None) -> None:
    """python -m conba_research.window_cache DATA.jsonl... [--windows F] [--limit N] [--model M]"""
    import argparse

    from conba.model import load_model

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("data", nargs="+")
    ap.add_argument("--windows", "--fragments", dest="windows", type=int, default=8)  # --fragments: old name
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--model", default="default")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--long-first", action="store_true", help="training order: long snippets and partners first")
    args = ap.parse_args(argv)
    model = load_model(args.model)
    for path in args.data:
        records, vectors, weight = load_window_set(model, path, args.windows, args.seed, args.limit,
                                                   args.long_first)
        long = int(((weight > 0).sum(axis=1) > 1).sum())
        print(f"{path}: {len(records)} snippets, {long} longer than one window, vectors {vectors.shape}")


if __name__ == "__main__":
    main()
