"""Where `conba clones` spends its time on an index: wall time of each step of ``Index.clone_report``.

    conba bench clones-profile runs/scale100k/index-fast768 [-x] [--classes OUT.json]

Prints one JSON line: seconds per step (candidate_pairs: the kNN search and pair filter; louvain,
connected_parts, means: inside cohesive_groups; clone_classes; trivial_reason: the unit filter),
the class and candidate-pair counts. ``--classes`` writes each class's sorted unit ids, to compare
the classes of two versions.
"""

from __future__ import annotations

import argparse
import functools
import json
import time

import conba.clones.find as find
import conba.clones.grouping as grouping
from conba.index import Index
from conba.utils.io import write_json_atomic

SECONDS: dict[str, float] = {}


def timed(owner: object, name: str) -> None:
    """Wrap ``owner.name`` so that its calls add to ``SECONDS[name]``."""
    inner = getattr(owner, name)

    @functools.wraps(inner)
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            SECONDS[name] = SECONDS.get(name, 0.0) + time.perf_counter() - t0

    setattr(owner, name, wrapper)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("index", help="an index folder (conba index -i)")
    p.add_argument("-x", "--cross-language-only", action="store_true")
    p.add_argument("--classes", metavar="FILE", help="write the classes' unit ids here (JSON)")
    args = p.parse_args()
    for name in ("candidate_pairs", "cohesive_groups", "clone_classes", "trivial_reason"):
        timed(find, name)
    for name in ("louvain", "connected_parts"):
        timed(grouping, name)
    timed(grouping.Cohesion, "means")
    idx = Index(args.index, create=False)
    t0 = time.perf_counter()
    report = idx.clone_report("auto", cross_language_only=args.cross_language_only)
    SECONDS["total"] = time.perf_counter() - t0
    print(json.dumps({"index": args.index, "cross_language_only": args.cross_language_only,
                      "seconds": {k: round(v, 2) for k, v in SECONDS.items()}, "classes": len(report.classes),
                      "candidate_pairs": report.stats.candidate_pairs}))
    if args.classes:
        write_json_atomic(args.classes, [sorted(u.id for u in c.units) for c in report.classes])


if __name__ == "__main__":
    main()
