"""How sure is a difference between two window-head rows on long queries? A bootstrap over problems.

``python -m conba_research.window_significance OUT DEV.jsonl --dev-offset 1536 --dev-limit 2560``
scores, for each long query of the dev part (as ``conba experiment windows`` chose it), its MAP@R
averaged over the other languages, for today's truncation, the mean of the windows and every trained
head saved in ``OUT/heads`` (its seeds' embeddings averaged per query score); then resamples whole
problems (groups) 10,000 times and prints the 95% interval of each row's mean difference to
truncation and to the mean. Problems, not queries, are resampled: queries of one problem share
their candidates and move together, and the parts of atcoder_dev differed by several points.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def per_query(emb: np.ndarray, records: list, queries: np.ndarray) -> np.ndarray:
    """MAP@R of each query in ``queries`` (n,) bool, averaged over the other languages. Returns (q,)."""
    from conba.eval.metrics import embedding_similarity, map_at_r

    sim = embedding_similarity(emb)
    langs = np.array([r.language for r in records])
    _, groups = np.unique(np.array([r.group for r in records]), return_inverse=True)
    out = []
    for i in np.flatnonzero(queries):
        scores = []
        for c in sorted(set(langs.tolist()) - {langs[i]}):
            cand = np.flatnonzero(langs == c)
            rel = groups[cand] == groups[i]
            if rel.any():
                scores.append(map_at_r(sim[i, cand], rel))
        out.append(np.mean(scores) if scores else np.nan)
    return np.array(out)


def bootstrap(diff: np.ndarray, groups: np.ndarray, n: int = 10_000, seed: int = 0) -> tuple[float, float, float]:
    """Mean of ``diff`` (q,) and the 2.5 / 97.5 percentiles of its mean over problems resampled with replacement."""
    names, inv = np.unique(groups, return_inverse=True)
    sums = np.bincount(inv, weights=diff, minlength=len(names))
    counts = np.bincount(inv, minlength=len(names))
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(names), size=(n, len(names)))
    means = sums[pick].sum(axis=1) / counts[pick].sum(axis=1)
    return float(diff.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def main(argv: list[str] | None = None) -> None:
    import torch

    from conba.heads.window_head import load_window_head
    from conba.model import load_model
    from conba_research.window_cache import load_truncated, load_window_set
    from conba_research.window_fight import WindowSet, embed

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out", type=Path)
    ap.add_argument("dev")
    ap.add_argument("--dev-offset", type=int, default=0)
    ap.add_argument("--dev-limit", type=int, default=None)
    ap.add_argument("--windows", "--fragments", dest="windows", type=int, default=8)  # --fragments: old name
    ap.add_argument("--no-truncate", action="store_true",
                    help="leave out today's truncation (it encodes the long snippets' first windows again)")
    ap.add_argument("--heads", type=Path, default=None, help="the heads folder (default: OUT/heads)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    m = load_model("default")
    recs, vec, w = load_window_set(m, args.dev, args.windows, limit=args.dev_limit)
    if args.dev_offset:
        seen = {r.group for r in recs[:args.dev_offset]}
        keep = np.array([k >= args.dev_offset and r.group not in seen for k, r in enumerate(recs)])
        recs, vec, w = [r for r, k in zip(recs, keep) if k], vec[keep], w[keep]
    fs = WindowSet(Path(args.dev).stem, recs, vec, w)
    weights = w[..., None]
    rows = {}
    if not args.no_truncate:
        trunc = vec[:, 0].copy()
        trunc[fs.long] = load_truncated(m, recs, fs.long, Path(args.dev).stem)
        rows["truncate"] = per_query(trunc, recs, fs.long)
    rows["mean"] = per_query((vec * weights).sum(1) / np.maximum(weights.sum(1), 1.0), recs, fs.long)
    for folder in sorted((args.heads or args.out / "heads").glob("*-s*")):
        row = folder.name.rsplit("-s", 1)[0]
        rows.setdefault(row, [])
        if isinstance(rows[row], list):
            rows[row].append(per_query(embed(load_window_head(folder), fs), recs, fs.long))
    rows = {k: (np.mean(v, axis=0) if isinstance(v, list) else v) for k, v in rows.items()}
    groups = np.array([r.group for r, q in zip(recs, fs.long) if q])
    print(f"{int(fs.long.sum())} long queries of {len(set(groups.tolist()))} problems; 95% intervals over problems")
    for name, score in rows.items():
        parts = [f"{name}: {np.nanmean(score):.4f}"]
        for base in ("truncate", "mean"):
            if name != base and base in rows:
                ok = ~np.isnan(score) & ~np.isnan(rows[base])
                mean, lo, hi = bootstrap(score[ok] - rows[base][ok], groups[ok])
                parts.append(f"vs {base} {mean:+.4f} [{lo:+.4f}, {hi:+.4f}]")
        print(", ".join(parts))


if __name__ == "__main__":
    main()
