"""Read-outs of long snippets scored as ``conba eval`` scores a model, from cached window vectors.

``python -m conba_research.window_e2e DATA.jsonl [--heads OUT/heads ...] [-j OUT.json]`` loads the
cached windows of every snippet of DATA (:mod:`conba_research.window_cache`, as ``conba experiment
windows`` fills it: the frozen default's windows after its view), turns them into one vector per
snippet with each read-out (``mean``: the token-weighted mean of the windows, what ``max_windows`` 8
without a head gives; ``max`` and ``first`` of the windows; ``shipped``: the default model's own
window head; every head saved under each ``--heads`` folder) and scores them as ``conba eval`` does,
in its record order: the fused score at the model's lexical weight and the dense cosine over the whole
set, and the long queries (over one window after the view, :mod:`conba.eval.long_inputs`) against
every candidate, all of them and those of the selection and held-out parts. Nothing is encoded again.
A one-window snippet keeps its window in every row, so rows differ only on long snippets.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import torch


def read_outs(model: Any, vectors: np.ndarray, weight: np.ndarray, heads: dict[str, Any]) -> dict[str, np.ndarray]:
    """{row: (n, d) unit vectors} of the cached windows (n, f, d) / weights (n, f) through each head."""
    from conba.heads.window_head import WindowHeadConfig, build_window_head
    from conba.model.window_readout import read_out_windows

    rows = {r: build_window_head(WindowHeadConfig(reader=r, dim=vectors.shape[-1])) for r in ("mean", "max", "first")}
    rows.update(heads)
    mask = weight > 0
    owner = np.repeat(np.arange(len(vectors)), mask.sum(axis=1))
    windows = torch.from_numpy(vectors[mask])
    out = {}
    for name, head in rows.items():
        emb = read_out_windows(head.eval(), windows, owner.tolist(), weight[mask].tolist(), len(vectors))
        out[name] = torch.nn.functional.normalize(emb, dim=-1).numpy()
    return out


def score(emb: np.ndarray, lexsim: np.ndarray, weight: float, groups: list, langs: list,
          parts: dict[str, np.ndarray]) -> dict:
    """Whole-set MAP@R (fused and dense) and long-query MAP@R of each part's long queries (each against all)."""
    from conba.eval.long_inputs import long_query_map
    from conba.eval.metrics import cross_language_retrieval, embedding_similarity
    from conba.lexical import fuse

    dense = embedding_similarity(emb)
    fused = fuse(dense, lexsim, weight)
    out = {"conba": cross_language_retrieval(fused, groups, langs)["mean"]["map_at_r"],
           "dense": cross_language_retrieval(dense, groups, langs)["mean"]["map_at_r"]}
    for part, mask in parts.items():
        out[f"long-{part}"] = long_query_map(fused, groups, langs, mask)["map_at_r"]
        out[f"long-{part}-dense"] = long_query_map(dense, groups, langs, mask)["map_at_r"]
    return out


def main(argv: list[str] | None = None) -> None:
    from conba.data.records import load_records
    from conba.eval.long_inputs import long_mask
    from conba.eval.runner import _lexical
    from conba.heads.window_head import load_window_head
    from conba.model import load_model
    from conba.utils.io import write_json_atomic
    from conba_research.window_cache import load_window_set

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--heads", action="append", default=[], type=Path,
                    help="a folder of saved heads (OUT/heads of conba experiment windows; repeatable)")
    ap.add_argument("--selection", type=int, default=1536,
                    help="long queries of the groups in the first N snippets of the cache order: the selection "
                         "part; the rest: held-out")
    ap.add_argument("--windows", "--fragments", dest="windows", type=int, default=8)  # --fragments: old name
    ap.add_argument("-j", "--json-out", type=Path, default=None)
    args = ap.parse_args(argv)
    model = load_model("default")
    cached, vectors, weight = load_window_set(model, args.data, args.windows)
    heads = {f"{d.parent.name}/{h.name}": load_window_head(h) for d in args.heads for h in sorted(d.iterdir())
             if (h / "fragment_config.json").exists()}
    if model.window_head is not None:
        heads["shipped"] = model.window_head
    records = load_records(args.data)
    at = {r.code: k for k, r in enumerate(cached)}
    if any(r.code not in at for r in records):
        raise SystemExit(f"{args.data}: the cache does not hold every snippet")
    order = np.array([at[r.code] for r in records])  # cache row of each record, in file order
    groups, langs = [r.group for r in records], [r.language for r in records]
    long = long_mask(model, [r.code for r in records], langs)
    chosen = {r.group for r in cached[:args.selection]}
    sel = np.array([g in chosen for g in groups])
    parts = {"all": long, "selection": long & sel, "heldout": long & ~sel}
    print(f"{len(records)} snippets, long: {int(long.sum())} ({int(parts['selection'].sum())} selection, "
          f"{int(parts['heldout'].sum())} held-out); cached long: {int(((weight > 0).sum(1) > 1).sum())}", flush=True)
    lex = _lexical(records)
    lexsim = (lex @ lex.T).toarray()
    results = {}
    for name, emb in read_outs(model, vectors, weight, heads).items():
        results[name] = score(emb[order], lexsim, model.lexical_weight, groups, langs, parts)
        print(name + ": " + ", ".join(f"{k} {v:.4f}" for k, v in results[name].items()), flush=True)
    if args.json_out:
        write_json_atomic(args.json_out, {"data": str(args.data), "counts": {k: int(v.sum()) for k, v in parts.items()},
                                          "rows": results})


if __name__ == "__main__":
    main()
