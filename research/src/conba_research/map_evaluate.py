"""How right a map is on a name-keeping port: the missing list against name keys, and every language pair.

A port that keeps the names of what it ports (ports_dev) gives a ground truth for *missing* without any
hand labelling: a source function is **unported** when no target function has its name key (the last name
component, lower case, without ``_`` or punctuation: :func:`conba.eval.repo_functions.name_key`; ``diff_main``
= ``diffMain``). :func:`evaluate_missing` scores the functions a map reports *missing* against it:

* missing precision: the share of the reported missing that are unported;
* missing recall: the share of the unported that are reported missing.

(A renamed port counts as unported, so on a port that renames functions these are lower bounds.)

:func:`measure_ports` maps every project of a ports_dev-style folder (``PROJECT/LANGUAGE/...``, a
``groups.jsonl``) in every ordered language pair over one index, with the matched-pair precision / recall of
:func:`conba.mapping.groups.evaluate_functions` and the missing scores above, one row per pair::

    python -m conba_research.map_evaluate --data ports_dev --index runs/ports-idx [-j rows.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conba.mapping.assign import MATCHED
from conba.mapping.name_truth import evaluate_missing, missing_scores, ratio, unported

__all__ = ["evaluate_missing", "format_row", "measure_ports", "missing_scores", "pooled", "project_sides",
           "unported"]


def project_sides(data: Path, groups: Sequence[dict[str, Any]]) -> dict[str, dict[str, Path]]:
    """{project: {language: folder}} from the members of ``groups`` (files ``PROJECT/LANGUAGE/...``)."""
    sides: dict[str, dict[str, Path]] = defaultdict(dict)
    for g in groups:
        for m in g.get("members", []):
            parts = Path(str(m["file"])).parts
            if len(parts) >= 3:
                sides[parts[0]][str(m["language"])] = data / parts[0] / parts[1]
    return dict(sides)


def measure_ports(idx: Any, data: Path, groups: Sequence[dict[str, Any]], config: Any = None,
                  projects: Sequence[str] | None = None, by_name: bool = False) -> list[dict[str, Any]]:
    """One row per project and ordered language pair of ``data`` (already in ``idx``): matched precision /
    recall from ``groups`` (``by_name``: with :func:`extend_by_name`) and missing precision / recall from name
    keys (:func:`conba.mapping.name_truth.missing_scores`)."""
    from conba.mapping.build import map_index
    from conba.mapping.groups import evaluate_functions, unit_labels

    rows = []
    for project, folders in sorted(project_sides(data, groups).items()):
        if projects and project not in projects:
            continue
        for a, b in itertools.permutations(sorted(folders), 2):
            port = map_index(idx, [folders[a]], [folders[b]], config=config)
            units = [f.source for f in port.functions] + port.targets
            labels = unit_labels(list(groups), units)
            if by_name:
                labels = extend_by_name(groups, units, labels)
            e = evaluate_functions(port, labels)
            m = missing_scores(port)
            rows.append({"project": project, "source": a, "target": b, "functions": len(port.functions),
                         "matched": port.counts()[MATCHED], "precision": e["precision"], "recall": e["recall"],
                         "pairs": e["pairs_graded"], "with_counterpart": e["with_counterpart"], **m})
    return rows


def pooled(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Missing precision / recall pooled over ``rows`` (sums of counts; literal and folded rule), and the
    plain means over the rows."""
    out: dict[str, Any] = {"pairs": len(rows)}
    keys = ["precision", "recall"]
    for prefix in ("", "folded_"):
        right = sum(r[f"{prefix}missing_right"] for r in rows)
        reported = sum(r[f"{prefix}reported_missing"] for r in rows)
        absent = sum(r[f"{prefix}unported_by_name"] for r in rows)
        out[f"pooled_{prefix}missing_precision"] = ratio(right, reported)
        out[f"pooled_{prefix}missing_recall"] = ratio(right, absent)
        keys += [f"{prefix}missing_precision", f"{prefix}missing_recall"]
    out["mean"] = {k: round(sum(v) / len(v), 4) if v else None
                   for k in keys for v in [[r[k] for r in rows if r[k] is not None]]}
    return out


def extend_by_name(groups: Sequence[dict[str, Any]], units: Sequence[Any], labels: dict[int, str]) -> dict[int, str]:
    """``labels`` plus the units the groups file predates (helpers nested in a function, extracted since)
    labelled by its README's rule: a unit of a project whose name key is a group's, in a language without a
    member of that group."""
    from conba.eval.repo_functions import name_key

    by_key = {tuple(str(g["group"]).split("/", 1)): str(g["group"]) for g in groups if "/" in str(g["group"])}
    projects = {k[0] for k in by_key}
    have = {(labels[u.id], u.language) for u in units if u.id in labels}
    out = dict(labels)
    for u in units:
        for project in projects & set(Path(u.file).parts):
            group = by_key.get((project, name_key(u.qualname)))
            if u.id not in out and group is not None and (group, u.language) not in have:
                out[u.id] = group
    return out


def format_row(r: dict[str, Any]) -> str:
    return (f"{r['project']:<17} {r['source']:>10} -> {r['target']:<10} precision {r['precision']} recall "
            f"{r['recall']} (of {r['with_counterpart']})  missing precision {r['missing_precision']} recall "
            f"{r['missing_recall']} (of {r['unported_by_name']} unported, {r['reported_missing']} reported; folded "
            f"{r['folded_missing_precision']} / {r['folded_missing_recall']} of {r['folded_unported_by_name']})")


def main(argv: Sequence[str] | None = None) -> int:
    from conba.mapping.config import (
        DEFAULT_CONSTRUCTOR_PENALTY,
        DEFAULT_CONTRAST,
        DEFAULT_MARGIN,
        DEFAULT_NAME_BONUS,
        DEFAULT_RELAX,
        MapConfig,
    )

    ap = argparse.ArgumentParser(prog="python -m conba_research.map_evaluate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="ports_dev-style folder with groups.jsonl.")
    ap.add_argument("--index", type=Path, required=True, help="Index folder holding the data (made if needed).")
    ap.add_argument("-m", "--model", default=None, help="Model (default: the index's, else the shipped default).")
    ap.add_argument("--project", action="append", default=None, help="Only this project (repeatable).")
    ap.add_argument("--margin", type=float, default=DEFAULT_MARGIN)
    ap.add_argument("--relax", type=float, default=DEFAULT_RELAX)
    ap.add_argument("--contrast", type=float, default=DEFAULT_CONTRAST)
    ap.add_argument("--name-bonus", type=float, default=DEFAULT_NAME_BONUS, help="0: name-blind assignment.")
    ap.add_argument("--constructor-penalty", type=float, default=DEFAULT_CONSTRUCTOR_PENALTY,
                    help="Score taken off a constructor / non-constructor pair (conba.mapping.kinds; 0: off).")
    ap.add_argument("--extend-by-name", action="store_true",
                    help="Also label the units groups.jsonl predates (nested helpers) by its README's name rule.")
    ap.add_argument("-j", "--json-out", type=Path, default=None, help="Also write the rows and means here.")
    args = ap.parse_args(argv)

    from conba.index import Index
    from conba.mapping.groups import load_groups

    data = args.data.resolve()
    groups = load_groups(data / "groups.jsonl")
    config = MapConfig(margin=args.margin, relax=args.relax, contrast=args.contrast, name_bonus=args.name_bonus,
                       align=False, constructor_penalty=args.constructor_penalty)
    with Index(args.index, model=args.model) as idx:
        idx.add([data / p for p in sorted(project_sides(data, groups))])
        rows = measure_ports(idx, data, groups, config, args.project, args.extend_by_name)
    for r in rows:
        print(format_row(r))
    by_project = {p: pooled([r for r in rows if r["project"] == p]) for p in sorted({r["project"] for r in rows})}
    for p, s in by_project.items():
        print(f"{p}: {json.dumps(s)}")
    total = pooled(rows)
    print(f"all: {json.dumps(total)}")
    if args.json_out:
        from conba.utils.io import write_text_atomic

        write_text_atomic(args.json_out, json.dumps({"rows": rows, "projects": by_project, "all": total,
                                                     "config": vars(args) | {"data": str(data)}}, indent=1,
                                                    default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
