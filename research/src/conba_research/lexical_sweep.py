"""Choose the lexical weight of the fused score on real code and the curated dev sets together.

For each weight w (lexical share; 0 = dense only) it prints, for one model:

* algorithms_dev, file level (``conba eval-repo`` protocol, ``max`` aggregate): mean MAP@R;
* ports_dev, function level (its README's protocol), plain and name-blind: mean MAP@R;
* each curated dev file (grouped JSONL; ``FILE:N`` takes about N records of whole groups): mean
  cross-language MAP@R, with the lexical idf fitted on the file itself, as an index would be.

Embeddings come from built indexes (``conba index``) and, for the curated files and the name-blind
queries, from the model (cached in ``--cache``). Lexical vectors use the idf of the units being
ranked (``--idf index``) or of the curated training files (``--idf train``).

    conba experiment lexical-sweep -m default --alg-index runs/r/alg-default \\
        --ports-index runs/r/ports-default --dev ../shared/data/atcoder_dev.jsonl:2000 \\
        --dev ../shared/data/mbxp_dev.jsonl -w 0,0.1,0.2,0.3,0.4 -j runs/r/sweep.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from conba.utils.io import write_npy_atomic, write_text_atomic


def _cached(cache: Path, key: str, fn):
    from conba.utils.cache import cache_key

    path = cache / (cache_key(key) + ".npy")
    if path.exists():
        return np.load(path, allow_pickle=False)
    value = fn()
    cache.mkdir(parents=True, exist_ok=True)
    write_npy_atomic(path, value)
    return value


def _index_units(folder: str):
    from conba.index import Index

    idx = Index(folder, create=False)
    dim = int(idx.manifest()["dim"])
    ids, emb = idx.store.all_vectors(dim)
    units = idx.units()
    fp = idx.stats()["fingerprint"]
    idx.close()
    return units, {int(i): r for r, i in enumerate(ids)}, emb, fp


def alg_scores(folder: str, groups: Path, weights: list[float], idf_mode: str, train_idf) -> dict:
    from conba.eval.repo_groups import load_groups, resolve_groups
    from conba.eval.repo_scores import repo_retrieval
    from conba.eval.repo_units import table_from_index
    from conba.index import Index
    from conba.lexical import LexicalVectorizer

    with Index(folder, create=False) as idx:
        table = table_from_index(idx)
        units_of = {f: int(table.starts[k + 1] - table.starts[k]) for k, f in enumerate(table.files)}
        found, _ = resolve_groups(load_groups(groups), units_of, set(idx.store.file_states()), groups.parent)
    lex = LexicalVectorizer().vectors(table.codes, train_idf if idf_mode == "train" else None)
    out = {}
    for w in weights:
        res = repo_retrieval(table.fused(lex, w), found)
        out[w] = {"mean": res["mean"]["map_at_r"], "pairs": {k: v["map_at_r"] for k, v in res["pairs"].items()}}
    return out


def ports_scores(folder: str, groups: Path, weights: list[float], model, cache: Path, idf_mode: str,
                 train_idf) -> dict:
    from conba.eval.repo_functions import blind_name, function_retrieval, load_function_groups
    from conba.lexical import LexicalVectorizer, fuse
    from conba.lexical.vectorizer import IdfTable

    units, row_of, emb, fp = _index_units(folder)
    fg = load_function_groups(groups)
    group_of, missing = fg.resolve(units)
    if missing:
        print(f"ports: {len(missing)} members not found in the index, e.g. {missing[0]}", file=sys.stderr)
    vec = LexicalVectorizer()
    tf = vec.term_frequencies([u.code for u in units])
    idf = train_idf if idf_mode == "train" else IdfTable.fit(tf)
    lex = vec.weigh(tf, idf.weights())
    pos = {int(u.id): k for k, u in enumerate(units)}
    grouped = [units[r] for r in sorted(group_of)]  # group_of: {row in units: group}
    blind_codes = [blind_name(u) for u in grouped]
    blind_emb = _cached(cache, f"blind/{fp}/" + "\x00".join(blind_codes), lambda: model.encode(
        blind_codes, languages=[u.language for u in grouped], show_progress_bar=False))
    blind_row = {int(u.id): k for k, u in enumerate(grouped)}
    blind_lex = vec.weigh(vec.term_frequencies(blind_codes), idf.weights())
    out = {}
    for w in weights:
        def score(q, c, blind=False, w=w):  # q, c: rows of ``units``
            q, c = [int(units[r].id) for r in q], [int(units[r].id) for r in c]
            cd = emb[[row_of[i] for i in c]]
            cl = lex[[pos[i] for i in c]]
            if blind:
                qd, ql = blind_emb[[blind_row[i] for i in q]], blind_lex[[blind_row[i] for i in q]]
            else:
                qd, ql = emb[[row_of[i] for i in q]], lex[[pos[i] for i in q]]
            return fuse(qd @ cd.T, (ql @ cl.T).toarray(), w)
        plain = function_retrieval(units, group_of, fg.project_of, score)
        blind = function_retrieval(units, group_of, fg.project_of, lambda q, c: score(q, c, True))
        out[w] = {"mean": plain["mean"]["map_at_r"], "blind": blind["mean"]["map_at_r"],
                  "pairs": {k: v["map_at_r"] for k, v in plain["pairs"].items()}}
    return out


def curated_scores(spec: str, weights: list[float], model, cache: Path) -> dict:
    from conba.data import load_records
    from conba.data.subsets import subset_groups
    from conba.eval.metrics import cross_language_retrieval
    from conba.lexical import LexicalVectorizer, fuse

    path, _, limit = spec.partition(":")
    records = subset_groups(load_records(path), int(limit or 0), 0)
    codes = [r.code for r in records]
    emb = _cached(cache, f"curated/{model.embedding_fingerprint()}/{spec}/{len(records)}", lambda: model.encode(
        codes, languages=[r.language for r in records], show_progress_bar=True))
    dense = emb @ emb.T
    lex = LexicalVectorizer().vectors(codes)
    lex = (lex @ lex.T).toarray()
    groups, langs = [r.group for r in records], [r.language for r in records]
    return {w: cross_language_retrieval(fuse(dense, lex, w), groups, langs)["mean"]["map_at_r"] for w in weights}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-m", "--model", default="default")
    ap.add_argument("--alg-index")
    ap.add_argument("--alg-groups", type=Path, help="default: $CONBA_DATA/algorithms_dev/groups.jsonl")
    ap.add_argument("--ports-index")
    ap.add_argument("--ports-groups", type=Path, help="default: $CONBA_DATA/ports_dev/groups.jsonl")
    ap.add_argument("--dev", action="append", default=[])
    ap.add_argument("-w", "--weights", default="0,0.1,0.2,0.3,0.4,0.5")
    ap.add_argument("--idf", choices=["index", "train"], default="index")
    ap.add_argument("--cache", type=Path, default=Path("runs/conba-sweep-cache"))
    ap.add_argument("-j", "--json-out", type=Path)
    args = ap.parse_args()
    from conba.data.location import data_path
    from conba.model import load_model

    args.alg_groups = args.alg_groups or (data_path("algorithms_dev", "groups.jsonl") if args.alg_index else None)
    args.ports_groups = args.ports_groups or (data_path("ports_dev", "groups.jsonl") if args.ports_index else None)

    weights = [float(w) for w in args.weights.split(",")]
    model = load_model(args.model)
    train_idf = None
    if args.idf == "train":
        from conba.data import load_records
        from conba.lexical import LexicalVectorizer
        from conba.lexical.vectorizer import IdfTable

        codes = [r.code for f in ("atcoder_train.jsonl", "mbxp_train.jsonl") for r in load_records(data_path(f))]
        train_idf = IdfTable.fit(LexicalVectorizer().term_frequencies(codes))
    t0 = time.time()
    result: dict = {"command": " ".join(sys.argv), "model": args.model, "idf": args.idf, "weights": weights}
    if args.alg_index:
        result["algorithms_dev"] = alg_scores(args.alg_index, args.alg_groups, weights, args.idf, train_idf)
    if args.ports_index:
        result["ports_dev"] = ports_scores(args.ports_index, args.ports_groups, weights, model, args.cache,
                                           args.idf, train_idf)
    for spec in args.dev:
        result[Path(spec.partition(":")[0]).stem + (f":{spec.partition(':')[2]}" if ":" in spec else "")] = \
            curated_scores(spec, weights, model, args.cache)
    result["seconds"] = round(time.time() - t0, 1)
    head = ["w"] + [k for k in result if k in ("algorithms_dev", "ports_dev") or k.endswith("_dev")
                    or ":" in k]
    print(" | ".join(head + (["ports blind"] if "ports_dev" in result else [])))
    for w in weights:
        row = [f"{w:.2f}"]
        for k in head[1:]:
            v = result[k][w]
            row.append(f"{(v['mean'] if isinstance(v, dict) else v):.4f}")
        if "ports_dev" in result:
            row.append(f"{result['ports_dev'][w]['blind']:.4f}")
        print(" | ".join(row))
    if args.json_out:
        write_text_atomic(args.json_out, json.dumps(result, indent=1, default=float))


if __name__ == "__main__":
    main()
