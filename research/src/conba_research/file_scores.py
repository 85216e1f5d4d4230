"""File-level MAP@R of every file scorer (:mod:`conba.eval.file_level`) on an eval-repo index (evaluation only).

    python -m conba_research.file_scores IDX GROUPS [--function-groups] [-o OUT.json]

``GROUPS``: eval-repo's file groups (``{"group", "files"}`` lines), or with ``--function-groups`` a function
groups file like ports_dev's (``{"group", "members": [{"language", "file", ...}]}``), turned into file
groups by :func:`file_groups_from_functions`. Scores are reported dense and fused with the index's lexical
weight (the pair scorers fuse; file vectors are dense).
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from pathlib import Path

from conba.data.records import iter_json_lines
from conba.utils.io import write_text_atomic


def file_groups_from_functions(path: str | Path) -> list[dict]:
    """File groups from function groups: two files in different languages are counterparts when each is the
    other's file sharing the most function groups with it (ties: path order), and they share at least 2;
    a file group is a connected component of counterparts. Paths stay relative to ``path``'s folder."""
    shared: Counter = Counter()
    for _, obj in iter_json_lines(Path(path)):
        files = sorted({(m["language"], m["file"]) for m in obj["members"]})
        for a in files:
            for b in files:
                if a[0] != b[0]:
                    shared[(a, b)] += 1
    best: dict[tuple, tuple] = {}
    for (a, b), n in sorted(shared.items()):
        key = (a, b[0])
        if n >= 2 and (key not in best or n > shared[(a, best[key])]):
            best[key] = b
    parent: dict[tuple, tuple] = {}

    def root(x: tuple) -> tuple:
        while parent.get(x, x) != x:
            x = parent[x]
        return x
    for (a, _lang), b in best.items():
        if best.get((b, a[0])) == a:
            parent.setdefault(a, a)
            parent.setdefault(b, b)
            parent[root(a)] = root(b)
    comps: dict[tuple, list[str]] = {}
    for x in sorted(parent):
        comps.setdefault(root(x), []).append(x[1])
    return [{"group": f"files-{k}", "files": sorted(fs)} for k, fs in enumerate(sorted(comps.values()))]


def shipped_map_at_r(idx, found: dict[str, str]) -> float:
    """MAP@R of ``conba search --files`` itself (:func:`conba.index.files.search.rank_files`, the index's
    stored file vectors) under eval-repo's protocol: each grouped file against each other language holding
    its group, mean over ordered language pairs. MAP@R reads only the top R, so the top 50 suffice."""
    import numpy as np

    from conba.index.files.search import FileScorer, rank_files
    from conba.index.storage.store import shown_path

    scorer = FileScorer(idx)
    group = {scorer.row_of[p]: g for p, g in found.items() if p in scorer.row_of}
    langs = scorer.files.languages
    per_pair: dict[tuple[str, str], list[float]] = {}
    for q, g in group.items():
        for tl in sorted({langs[t] for t, h in group.items() if h == g and langs[t] != langs[q]}):
            relevant = {shown_path(scorer.files.paths[t]) for t, h in group.items() if h == g and langs[t] == tl}
            hits = rank_files(scorer, scorer.query_of(q), 50, language=tl)
            rel = [h.file.file in relevant for h in hits[:len(relevant)]]
            ap = sum(sum(rel[:i + 1]) / (i + 1) for i, r in enumerate(rel) if r) / len(relevant)
            per_pair.setdefault((langs[q], tl), []).append(ap)
    return round(float(np.mean([np.mean(v) for v in per_pair.values()])), 4)


def cost(idx, queries: int = 100) -> dict:
    """Seconds of the shipped file search (mean per query over ``queries`` indexed files, warm) and of
    ``clones --files -x`` at the index's clone threshold, with what the clones found."""
    import time

    from conba.index.files.clones import clone_files
    from conba.index.files.search import FileScorer, rank_files

    t0 = time.perf_counter()
    scorer = FileScorer(idx)
    load = time.perf_counter() - t0
    n = min(queries, len(scorer.files.paths))
    t0 = time.perf_counter()
    for k in range(n):
        rank_files(scorer, scorer.query_of(k * len(scorer.files.paths) // n), 10)
    per_query = (time.perf_counter() - t0) / max(n, 1)
    t0 = time.perf_counter()
    report = clone_files(idx, "auto", cross_language_only=True)
    return {"scorer_load_s": round(load, 2), "query_ms": round(1000 * per_query, 1),
            "clones_x_s": round(time.perf_counter() - t0, 1), "threshold": idx.threshold,
            "classes": report.stats.classes, "pairs": report.stats.clone_pairs, "largest": report.stats.largest_class,
            "classes_shown": [[os.path.basename(u.file) for u in c.units] for c in report.classes[:5]]}


def main(argv: list[str] | None = None) -> dict:
    from conba.eval.file_level import score_table
    from conba.eval.repo_groups import load_groups, resolve_groups
    from conba.eval.repo_units import table_from_index
    from conba.index import Index

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("index")
    ap.add_argument("groups")
    ap.add_argument("--function-groups", action="store_true")
    ap.add_argument("-o", "--output", default=None)
    ap.add_argument("--cost", action="store_true", help="also time search --files and clones --files -x")
    ap.add_argument("--shipped", action="store_true", help="also score `conba search --files` itself (the "
                    "index needs file vectors: a `conba index` run of this version)")
    args = ap.parse_args(argv)
    groups_file = args.groups
    if args.function_groups:
        derived = file_groups_from_functions(args.groups)
        tmp = Path(os.environ.get("TMPDIR", "/tmp")) / "conba-file-groups.jsonl"
        base = Path(args.groups).resolve().parent
        tmp.write_text("".join(json.dumps({"group": g["group"], "files": [str(base / f) for f in g["files"]]}) + "\n"
                               for g in derived))
        groups_file = str(tmp)
    groups = load_groups(groups_file)
    with Index(args.index, create=False) as idx:
        table = table_from_index(idx)
        units_of = {f: int(table.starts[k + 1] - table.starts[k]) for k, f in enumerate(table.files)}
        found, missing = resolve_groups(groups, units_of, set(idx.store.file_states()), Path(groups_file).parent)
        weight = idx.lexical_weight
        fused = table.fused(idx.lexical_index().rows([u.id for u in table.units]), weight) if weight else None
        fingerprint = idx.stats()["fingerprint"]
        shipped = shipped_map_at_r(idx, found) if args.shipped else None
        costs = cost(idx) if args.cost else None
    out = {"index": args.index, "groups": args.groups, "fingerprint": fingerprint, "files": len(table.files),
           "units": table.n_units, "grouped_files": len(found), "groups_n": len(groups), "missing": len(missing),
           "dense": score_table(table, found)}
    if fused is not None:
        out[f"fused (lexical {weight:g})"] = score_table(fused, found)
    if shipped is not None:
        out["shipped: conba search --files"] = shipped
    if costs is not None:
        out["cost"] = costs
    text = json.dumps(out, indent=1)
    if args.output:
        write_text_atomic(args.output, text + "\n")
    print(text)
    return out


if __name__ == "__main__":
    main()
