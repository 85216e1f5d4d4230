"""Score candidate models on real and curated dev code together, from cached lower-layer states.

For models that share their first ``--from-layer`` backbone layers (e.g. every run of
``conba train --init default --tune top-k --top-k K`` with K = 6 - from-layer, and the model it
started from), the states after those layers are computed once per snippet set and cached
(``conba.train.features.compute_states``); each model then runs only its upper layers and its head.
That makes a candidate sweep affordable on a CPU. The embeddings are what ``model.encode`` gives
(same view, same token cap, one window), checked on a sample at start (``--check``).

Printed per model, at the fused score with lexical weight ``-w`` (and W = 0, dense only):

* algorithms_dev, file level (``conba eval-repo`` protocol, ``max`` aggregate): mean MAP@R and the
  12 ordered pairs;
* ports_dev, function level: mean MAP@R, plain and name-blind;
* each curated dev file (``FILE:N``: about N records of whole groups, seed 0): cross-language MAP@R,
  with the idf fitted on the file itself, as an index would.

    conba experiment candidates -m default -m runs/top1-keep --from-layer 5 \\
        --alg-index runs/r/alg-final --ports-index runs/r/ports-final \\
        --dev ../shared/data/atcoder_dev.jsonl:2000 --dev ../shared/data/mbxp_dev.jsonl -j out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from conba.utils.io import write_text_atomic

SAVED: dict[str, np.ndarray] = {}  # desc -> embeddings, written by --save-emb


@torch.inference_mode()
def embed(model, provider, codes: list[str], languages: list[str], layer: int, desc: str) -> np.ndarray:
    """(n, d) L2-normalised: the model's view, states after ``layer`` layers (cached), then the rest."""
    from conba.syntax.view import apply_views

    if model.view != "raw":
        codes, _ = apply_views(list(codes), list(languages), model.view)
    bb, head = model.backbone, model.head
    states = provider.get(bb, list(codes), layer, desc=desc)
    order = np.argsort(-states.lengths(), kind="stable")
    out = torch.zeros(len(codes), model.dim)
    model.eval()
    for s in range(0, len(order), 32):
        idx = [int(i) for i in order[s:s + 32]]
        x, mask = states.batch(idx)
        if layer < bb.num_layers:
            x = bb.upper(x, mask.long(), layer)
        out[idx] = head(x.float(), mask, head.language_ids([languages[i] for i in idx])).float()
    SAVED[desc] = torch.nn.functional.normalize(out, dim=-1).numpy()
    return SAVED[desc]


def alg_scores(model, provider, layer: int, folder: str, groups: Path, weights: list[float]) -> dict:
    from dataclasses import replace

    from conba.eval.repo_groups import load_groups, resolve_groups
    from conba.eval.repo_scores import repo_retrieval
    from conba.eval.repo_units import table_from_index
    from conba.index import Index
    from conba.lexical import LexicalVectorizer

    with Index(folder, create=False) as idx:
        table = table_from_index(idx)
        units_of = {f: int(table.starts[k + 1] - table.starts[k]) for k, f in enumerate(table.files)}
        found, _ = resolve_groups(load_groups(groups), units_of, set(idx.store.file_states()), groups.parent)
    langs = [table.languages[k] for k in range(len(table.files))
             for _ in range(int(table.starts[k + 1] - table.starts[k]))]
    emb = embed(model, provider, list(table.codes), langs, layer, "algorithms_dev")
    table = replace(table, vectors=emb.astype(np.float32))
    lex = LexicalVectorizer().vectors(table.codes)
    out = {}
    for w in weights:
        res = repo_retrieval(table.fused(lex, w) if w else table, found)
        out[w] = {"mean": res["mean"]["map_at_r"], "pairs": {k: v["map_at_r"] for k, v in res["pairs"].items()}}
    return out


def ports_scores(model, provider, layer: int, folder: str, groups: Path, weights: list[float]) -> dict:
    from conba.eval.repo_functions import blind_name, function_retrieval, load_function_groups
    from conba.index import Index
    from conba.lexical import LexicalVectorizer, fuse
    from conba.lexical.vectorizer import IdfTable

    with Index(folder, create=False) as idx:
        units = idx.units()
    fg = load_function_groups(groups)
    group_of, missing = fg.resolve(units)
    if missing:
        print(f"ports: {len(missing)} members not found in the index, e.g. {missing[0]}", file=sys.stderr)
    emb = embed(model, provider, [u.code for u in units], [u.language for u in units], layer, "ports_dev")
    grouped = sorted(group_of)
    blind_codes = [blind_name(units[r]) for r in grouped]
    blind_emb = embed(model, provider, blind_codes, [units[r].language for r in grouped], layer, "ports blind")
    blind_row = {r: k for k, r in enumerate(grouped)}
    vec = LexicalVectorizer()
    idf = IdfTable.fit(vec.term_frequencies([u.code for u in units]))
    lex = vec.weigh(vec.term_frequencies([u.code for u in units]), idf.weights())
    blind_lex = vec.weigh(vec.term_frequencies(blind_codes), idf.weights())
    out = {}
    for w in weights:
        def score(q, c, blind=False, w=w):  # q, c: rows of ``units``
            if blind:
                qd, ql = blind_emb[[blind_row[r] for r in q]], blind_lex[[blind_row[r] for r in q]]
            else:
                qd, ql = emb[list(q)], lex[list(q)]
            return fuse(qd @ emb[list(c)].T, (ql @ lex[list(c)].T).toarray(), w)
        plain = function_retrieval(units, group_of, fg.project_of, score)
        blind = function_retrieval(units, group_of, fg.project_of, lambda q, c: score(q, c, True))
        out[w] = {"mean": plain["mean"]["map_at_r"], "blind": blind["mean"]["map_at_r"],
                  "pairs": {k: v["map_at_r"] for k, v in plain["pairs"].items()}}
    return out


def curated_scores(model, provider, layer: int, spec: str, weights: list[float]) -> dict:
    from conba.data import load_records
    from conba.data.subsets import subset_groups
    from conba.eval.metrics import cross_language_retrieval
    from conba.lexical import LexicalVectorizer, fuse

    path, _, limit = spec.partition(":")
    records = subset_groups(load_records(path), int(limit or 0), 0)
    codes = [r.code for r in records]
    emb = embed(model, provider, codes, [r.language for r in records], layer, Path(path).stem)
    dense = emb @ emb.T
    lex = LexicalVectorizer().vectors(codes)
    lex = (lex @ lex.T).toarray()
    groups, langs = [r.group for r in records], [r.language for r in records]
    return {w: cross_language_retrieval(fuse(dense, lex, w), groups, langs)["mean"]["map_at_r"] for w in weights}


def check(model, provider, layer: int, spec: str, n: int = 24) -> float:
    """Max |difference| between ``embed`` and ``model.encode`` on ``n`` records of the first dev file."""
    from conba.data import load_records

    records = load_records(spec.partition(":")[0])[:n]
    codes, langs = [r.code for r in records], [r.language for r in records]
    a = embed(model, provider, codes, langs, layer, "check")
    b = model.encode(codes, languages=langs, show_progress_bar=False, max_windows=1)
    return float(np.abs(a - b).max())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-m", "--model", action="append", required=True)
    ap.add_argument("--from-layer", type=int, default=5, help="layers whose states are cached (shared)")
    ap.add_argument("--alg-index")
    ap.add_argument("--alg-groups", type=Path, help="default: $CONBA_DATA/algorithms_dev/groups.jsonl")
    ap.add_argument("--ports-index")
    ap.add_argument("--ports-groups", type=Path, help="default: $CONBA_DATA/ports_dev/groups.jsonl")
    ap.add_argument("--dev", action="append", default=[])
    ap.add_argument("-w", "--weight", type=float, default=0.2)
    ap.add_argument("--cache", type=Path, default=None, help="states cache (default: conba's cache dir)")
    ap.add_argument("--max-length", type=int, default=0,
                    help="encode with this token cap (0: the model's; a model trained at 256 ships at 512)")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("-j", "--json-out", type=Path)
    ap.add_argument("--save-emb", type=Path, help="folder: one .npz of every set's embeddings per model")
    args = ap.parse_args()
    from conba.data.location import data_path
    from conba.model import load_model
    from conba_research.states import StatesProvider

    args.alg_groups = args.alg_groups or (data_path("algorithms_dev", "groups.jsonl") if args.alg_index else None)
    args.ports_groups = args.ports_groups or (data_path("ports_dev", "groups.jsonl") if args.ports_index else None)

    provider = StatesProvider(args.cache, batch_size=32, keep=8)
    weights = sorted({0.0, args.weight})
    results: dict = {"command": " ".join(sys.argv), "weights": weights, "models": {}}
    for name in args.model:
        t0 = time.time()
        model = load_model(name, prune=False)
        model.max_windows = 1
        if args.max_length:
            model.backbone.config.max_length = args.max_length
        r: dict = {"fingerprint": model.fingerprint()}
        if args.dev and not args.no_check:
            r["check_max_abs_diff"] = check(model, provider, args.from_layer, args.dev[0])
            print(f"{name}: max |embed - encode| = {r['check_max_abs_diff']:.2e}", file=sys.stderr)
        if args.alg_index:
            r["algorithms_dev"] = alg_scores(model, provider, args.from_layer, args.alg_index, args.alg_groups,
                                             weights)
        if args.ports_index:
            r["ports_dev"] = ports_scores(model, provider, args.from_layer, args.ports_index, args.ports_groups,
                                          weights)
        for spec in args.dev:
            r[Path(spec.partition(":")[0]).stem] = curated_scores(model, provider, args.from_layer, spec, weights)
        r["seconds"] = round(time.time() - t0, 1)
        results["models"][name] = r
        for w in weights:
            cells = [f"{name} W{w:g}"]
            if "algorithms_dev" in r:
                cells.append(f"alg {r['algorithms_dev'][w]['mean']:.4f}")
            if "ports_dev" in r:
                cells.append(f"ports {r['ports_dev'][w]['mean']:.4f} blind {r['ports_dev'][w]['blind']:.4f}")
            cells += [f"{Path(s.partition(':')[0]).stem} {r[Path(s.partition(':')[0]).stem][w]:.4f}"
                      for s in args.dev]
            print(" | ".join(cells), flush=True)
        if args.save_emb:
            args.save_emb.mkdir(parents=True, exist_ok=True)
            np.savez(args.save_emb / f"{Path(name).name}.npz", **SAVED)
        SAVED.clear()
        if args.json_out:
            write_text_atomic(args.json_out, json.dumps(results, indent=1, default=float))


if __name__ == "__main__":
    main()
