"""Recall / precision of the planted cross-language clone pairs of ``examples/polyglot``.

Indexes the example project into a temporary folder, runs ``Index.clones`` (cross-language only)
at the threshold (``auto`` by default: the model's calibrated one, else 0.80), and compares the
predicted pairs with every cross-language pair inside a planted clone set of ``CLONES.json``; it
also reports the class sizes and every class that mixes functions of two planted clone sets.
It also ranks every cross-language candidate pair by score (threshold -1) to check that the
planted pairs come out on top: R-precision (share of planted pairs among the top R, R = number of
planted pairs), average precision, the lowest planted and the highest distractor score.

    conba experiment polyglot [--model default] [--threshold auto] [--json]
        [--grouping communities|components] [--keep-trivial]

(``--grouping components --keep-trivial`` reproduces the clone classes of conba before issue 10.)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path

# the repository (examples/ is not installed): the first folder above this file that holds examples/polyglot
ROOT = next((p for p in Path(__file__).resolve().parents if (p / "examples" / "polyglot").is_dir()), Path.cwd())
EXAMPLE = ROOT / "examples" / "polyglot"


def planted_pairs(truth: dict) -> set[frozenset[tuple[str, str]]]:
    pairs = set()
    for clone_set in truth["clone_sets"]:
        members = [(m["file"], m["name"], m["language"]) for m in clone_set["members"]]
        for a, b in itertools.combinations(members, 2):
            if a[2] != b[2]:
                pairs.add(frozenset({a[:2], b[:2]}))
    return pairs


def ranking(scored: list[tuple[float, frozenset]], planted: set[frozenset]) -> dict:
    """R-precision and average precision of the planted pairs in pairs sorted by score."""
    scored = sorted(scored, key=lambda x: -x[0])
    r = len(planted)
    hits, precisions = 0, []
    for rank, (_, pair) in enumerate(scored, 1):
        if pair in planted:
            hits += 1
            precisions.append(hits / rank)
    top_r = sum(pair in planted for _, pair in scored[:r])
    planted_scores = [s for s, pair in scored if pair in planted]
    other_scores = [s for s, pair in scored if pair not in planted]
    return {
        "r_precision": round(top_r / r, 4) if r else 0.0,
        "average_precision": round(sum(precisions) / r, 4) if r else 0.0,
        "lowest_planted_score": round(min(planted_scores), 4) if planted_scores else None,
        "highest_distractor_score": round(max(other_scores), 4) if other_scores else None,
    }


def mixed_classes(classes: list, truth: dict, example: Path) -> list[str]:
    """'class N: set_a, set_b' for every class holding functions of two or more planted clone sets."""
    set_of = {(m["file"], m["name"]): s["name"] for s in truth["clone_sets"] for m in s["members"]}
    mixed = []
    for c in classes:
        names = sorted({set_of[k] for u in c.units if (k := (os.path.relpath(u.file, example), u.qualname)) in set_of})
        if len(names) > 1:
            mixed.append(f"class {c.id}: " + ", ".join(names))
    return mixed


def evaluate(model: str, threshold: str, example: Path = EXAMPLE, neighbors: int = 10,
             grouping: str = "communities", keep_trivial: bool = False) -> dict:
    from conba.index import Index

    truth = json.loads((example / "CLONES.json").read_text(encoding="utf-8"))
    planted = planted_pairs(truth)
    with tempfile.TemporaryDirectory() as tmp, Index(tmp, model=model) as idx:
        idx.add([str(example)])
        known = {(os.path.relpath(u.file, example), u.qualname) for u in idx.units()}
        missing = sorted({k for pair in planted for k in pair} - known)
        if missing:
            raise SystemExit(f"CLONES.json names functions the index does not have: {missing}")

        def key(p) -> frozenset:
            return frozenset({(os.path.relpath(p.a.file, example), p.a.qualname),
                              (os.path.relpath(p.b.file, example), p.b.qualname)})

        report = idx.clone_report(threshold, cross_language_only=True, neighbors=neighbors, grouping=grouping,
                                  keep_trivial=keep_trivial)
        classes = report.classes
        predicted = {key(p) for c in classes for p in c.pairs}
        mixed = mixed_classes(classes, truth, example)
        # every candidate pair, whatever the grouping: components at threshold -1 keep them all
        everything = idx.clones(-1.0, cross_language_only=True, neighbors=neighbors, grouping="components",
                                keep_trivial=True)
        ranked = ranking([(p.score, key(p)) for c in everything for p in c.pairs], planted)
        from conba.clones.threshold import resolve_threshold

        t = resolve_threshold(threshold, idx.threshold)
        fingerprint = idx.stats()["fingerprint"]
    hits = predicted & planted
    return {
        "model": model, "fingerprint": fingerprint, "threshold": round(t, 4), "grouping": grouping,
        "keep_trivial": keep_trivial, "planted_pairs": len(planted),
        "predicted_pairs": len(predicted), "true_positives": len(hits),
        "recall": round(len(hits) / len(planted), 4) if planted else 0.0,
        "precision": round(len(hits) / len(predicted), 4) if predicted else 0.0,
        "mixed_classes": mixed, "stats": report.stats.to_dict(),
        **ranked,
        "missed": sorted(" <-> ".join(f"{f}:{n}" for f, n in sorted(p)) for p in planted - predicted),
        "false_positives": sorted(" <-> ".join(f"{f}:{n}" for f, n in sorted(p)) for p in predicted - planted),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=os.environ.get("CONBA_MODEL", "default"))
    ap.add_argument("--threshold", default="auto")
    ap.add_argument("--neighbors", type=int, default=10)
    ap.add_argument("--example", default=str(EXAMPLE))
    ap.add_argument("--grouping", choices=["communities", "components"], default="communities")
    ap.add_argument("--keep-trivial", action="store_true")
    ap.add_argument("--json", action="store_true", help="print the full result as JSON")
    args = ap.parse_args(argv)
    result = evaluate(args.model, args.threshold, Path(args.example), args.neighbors, args.grouping,
                      args.keep_trivial)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"model {result['model']} ({result['fingerprint']})  threshold {result['threshold']}")
    print(f"planted cross-language pairs {result['planted_pairs']}, predicted {result['predicted_pairs']}, "
          f"correct {result['true_positives']}")
    print(f"recall {result['recall']:.3f}  precision {result['precision']:.3f}")
    st = result["stats"]
    kept = " (trivial kept)" if result["keep_trivial"] else ""
    print(f"grouping {result['grouping']}{kept}: {st['classes']} classes, "
          f"largest {st['largest_class']} ({st['largest_share']:.1%} of {st['considered']} units considered, "
          f"{st['units']} indexed), median {st['median_class_size']:g}, {st['pairs_per_unit']:.2f} pairs per unit")
    print("classes mixing planted clone sets:", ", ".join(result["mixed_classes"]) or "none")
    print(f"ranking of all cross-language pairs: R-precision {result['r_precision']:.3f}, average precision "
          f"{result['average_precision']:.3f}, lowest planted score {result['lowest_planted_score']}, "
          f"highest distractor score {result['highest_distractor_score']}")
    for label in ("missed", "false_positives"):
        if result[label]:
            print(f"{label.replace('_', ' ')}:", *result[label][:20], sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
