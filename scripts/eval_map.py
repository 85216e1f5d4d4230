"""Evaluate `conba map` on the dev sets, for every ordered language pair.

ports_dev (function groups): the map of each language onto each other one (matched-pair precision and
recall), then a held-out check: a seeded share (default 20%) of the target's functions is deleted in a copy
of the target folder (their lines blanked, so the groups' line numbers still hold), and the map of each other
language onto that copy must report the functions whose counterpart is gone as *missing* (and the others not).

algorithms_dev (file groups): the share of source files with a same-named target file mapped onto it.

    python scripts/eval_map.py --data /work/shared/data/ports_dev --index /tmp/ports_idx --work /tmp/map_eval
    python scripts/eval_map.py --data /work/shared/data/algorithms_dev --index /tmp/algo_idx

The data is never modified: copies go to --work. The index may already hold the data (nothing is encoded
again); the copies are added to it too (only what changed is encoded), so give the script an index of its own
rather than one used with `conba map --source-lang/--target-lang`, which would see the copies as well.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
import sys
from collections import defaultdict
from pathlib import Path


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return round(sum(values) / len(values), 4) if values else None


def _delete(idx, folder: Path, copy: Path, fraction: float, seed: int, keep_trivial: bool) -> int:
    """Copy ``folder`` to ``copy`` and blank the lines of a seeded ``fraction`` of its functions."""
    from conba.clones.trivial import trivial_reason
    from conba.mapping import select_units

    units = [u for u in select_units(idx.units(), [folder]) if keep_trivial or trivial_reason(u) is None]
    chosen = random.Random(f"{seed}:{folder}").sample(units, round(fraction * len(units)))
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy)
    by_file = defaultdict(list)
    for u in chosen:
        by_file[u.file].append(u)
    for file, gone in by_file.items():
        target = copy / Path(file).relative_to(folder.resolve())
        lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
        for u in gone:
            for i in range(u.start_line - 1, min(u.end_line, len(lines))):
                lines[i] = "\n"
        target.write_text("".join(lines), encoding="utf-8")
    return len(chosen)


def _config(args: argparse.Namespace):
    from conba.mapping import MapConfig

    return MapConfig(threshold=args.threshold, margin=args.margin, keep_trivial=args.keep_trivial, relax=args.relax,
                     contrast=args.contrast, path_weight=args.path_weight)


def _score(port, args: argparse.Namespace, groups: list[dict]) -> dict:
    """Function-level scores of ``port``; with ``--extend-by-name`` the functions that the groups file
    predates (helpers nested in a function, units since extractor version 4) are labelled by the README's
    rule: a function of the project whose name keys a group, in a language without a member of it."""
    from conba.eval.repo_functions import name_key
    from conba.mapping.groups import evaluate_functions, unit_labels

    units = [f.source for f in port.functions] + port.targets
    labels = unit_labels(groups, units)
    if args.extend_by_name:
        by_key = {(g["group"].split("/", 1)[0], g["group"].split("/", 1)[1]): g["group"] for g in groups}
        have = {(labels[u.id], u.language) for u in units if u.id in labels}
        for u in units:
            parts = Path(u.file).parts
            for project in {k[0] for k in by_key} & set(parts):
                group = by_key.get((project, name_key(u.qualname)))
                if u.id not in labels and group is not None and (group, u.language) not in have:
                    labels[u.id] = group
    return evaluate_functions(port, labels)


def ports(args: argparse.Namespace, idx, groups: list[dict]) -> list[dict]:
    from conba.mapping import map_index

    sides: dict[str, dict[str, Path]] = defaultdict(dict)
    for g in groups:
        for m in g["members"]:
            project, language = Path(m["file"]).parts[:2]
            sides[project][m["language"]] = args.data / project / language
    config = _config(args)
    rows = []
    for project, folders in sorted(sides.items()):
        copies = {}
        for lang, folder in sorted(folders.items()):
            copy = args.work / f"seed{args.seed}" / project / lang
            deleted = _delete(idx, folder, copy, args.fraction, args.seed, args.keep_trivial)
            copies[lang] = (copy, deleted)
        idx.add([c for c, _ in copies.values()])
        for a, b in itertools.permutations(sorted(folders), 2):
            full = _score(map_index(idx, [folders[a]], [folders[b]], config=config), args, groups)
            held = _score(map_index(idx, [folders[a]], [copies[b][0]], config=config), args, groups)
            rows.append({"project": project, "source": a, "target": b, "precision": full["precision"],
                         "recall": full["recall"], "pairs": full["pairs_graded"], "deleted": copies[b][1],
                         "truly_missing": held["truly_missing"], "missing_found": held["missing_found"],
                         "false_missing": held["false_missing"], "held_precision": held["precision"]})
    return rows


def files(args: argparse.Namespace, idx, groups: list[dict]) -> list[dict]:
    from conba.mapping import map_index
    from conba.mapping.groups import evaluate

    langs = sorted({Path(f).parts[0] for g in groups for f in g["files"]})
    config = _config(args)
    rows = []
    for a, b in itertools.permutations(langs, 2):
        e = evaluate(map_index(idx, [args.data / a], [args.data / b], config=config), args.groups)["files"]
        rows.append({"source": a, "target": b, **{k: v for k, v in e.items() if k != "level"}})
    return rows


def main() -> int:
    from conba.mapping.config import DEFAULT_CONTRAST, DEFAULT_PATH_WEIGHT, DEFAULT_RELAX

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="ports_dev or algorithms_dev folder (with groups.jsonl).")
    ap.add_argument("--index", type=Path, required=True, help="Index folder (reused; the data is added to it).")
    ap.add_argument("--work", type=Path, default=Path("/tmp/conba-map-eval"), help="Where the copies go.")
    ap.add_argument("-m", "--model", default=None, help="Model (default: the index's, else the shipped default).")
    ap.add_argument("-t", "--threshold", type=float, default=None, help="Default: the calibrated threshold.")
    ap.add_argument("--margin", type=float, default=0.02)
    ap.add_argument("--relax", type=float, default=DEFAULT_RELAX, help="Mutual-best pairs down to t - relax.")
    ap.add_argument("--contrast", type=float, default=DEFAULT_CONTRAST, help="Flat rows are missing (0: off).")
    ap.add_argument("--path-weight", type=float, default=DEFAULT_PATH_WEIGHT, help="File names' words (0: off).")
    ap.add_argument("--lexical-weight", type=float, default=None, help="Default: the index's recorded weight.")
    ap.add_argument("--keep-trivial", action="store_true")
    ap.add_argument("--fraction", type=float, default=0.2, help="Share of the target's functions deleted.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--extend-by-name", action="store_true",
                    help="Also label the functions the groups file predates by its README's name rule (nested "
                         "helpers, units since extractor version 4).")
    ap.add_argument("-j", "--json-out", type=Path, default=None, help="Also write the rows and means here.")
    args = ap.parse_args()
    args.data = args.data.resolve()
    args.groups = args.data / "groups.jsonl"

    from conba.index import Index
    from conba.mapping.groups import load_groups

    groups = load_groups(args.groups)
    with Index(args.index, model=args.model, lexical_weight=args.lexical_weight) as idx:
        idx.add([p for p in sorted(args.data.iterdir()) if p.is_dir()])
        function_level = any("members" in g for g in groups)
        rows = ports(args, idx, groups) if function_level else files(args, idx, groups)
        threshold = args.threshold if args.threshold is not None else idx.threshold
        weight = idx.lexical_weight
    keys = ([k for k in rows[0] if k not in ("project", "source", "target", "pairs", "deleted", "truly_missing")]
            if rows else [])
    for r in rows:
        print(f"{r.get('project', ''):<17} {r['source']:>10} -> {r['target']:<10} "
              + "  ".join(f"{k} {r[k]}" for k in keys))
    means = {k: _mean([r[k] for r in rows]) for k in keys}
    print(f"mean over {len(rows)} ordered pairs (threshold {threshold}, margin {args.margin}, "
          f"lexical weight {weight}, relax {args.relax}, contrast {args.contrast}, path weight {args.path_weight}): "
          + ", ".join(f"{k} {v}" for k, v in means.items()))
    if args.json_out:
        args.json_out.write_text(json.dumps({"rows": rows, "means": means, "threshold": threshold,
                                             "margin": args.margin, "seed": args.seed, "relax": args.relax,
                                             "contrast": args.contrast, "path_weight": args.path_weight,
                                             "lexical_weight": weight, "extend_by_name": args.extend_by_name},
                                            indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
