"""Score ``conba plagiarism`` as a teacher runs it, on a plagiarism data set (plagiarism_dev).

For each of N problems (sorted, shuffled with ``random.Random(0)``, the first N; default all) two folders are
laid out, one per variant (``plain``, ``renamed``): the problem's Python submissions (the original and the
independent ones) and ONE translated copy of that variant (``random.Random(problem position).choice``), files
``s000.py``, ``s001.py``, ... in record order, the copy last. The command runs once per folder with
``-f jsonl -o OUT`` (``--cmd "conba plagiarism"``: as a program, as a teacher runs it; without: the same records
through the Python API in this process, faster) and its pair records are read:
acc@1 = the copy's highest-scored Python submission is its original (ties count as misses); AUC = copy-original
scores against copy-independent scores, pooled (a pair the command does not report scores lowest).

Calibration: the threshold at which ``--fpr`` (default 1%) of the copy-independent pairs score at or above it,
the share of copies flagged there, and the false-positive rate there on the pairs of independent Python
solutions of a problem (the same task, different authors; the data hold a few real copies among those).
``--weights structure=1,names=0,words=0`` scores the same folders through the Python API with other channel
weights, ``--ngrams 3`` / ``--no-literals`` with another structure channel (ablations).

    conba bench plagiarism-eval ../shared/data/plagiarism_dev/plagiarism_dev.jsonl [--problems N] [--json OUT]
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import random
import shlex
import subprocess
import tempfile
import time
from typing import Any

EXT = {"python": "py", "cpp": "cpp", "go": "go", "rust": "rs", "javascript": "js", "kotlin": "kt", "java": "java",
       "c": "c", "csharp": "cs"}
VARIANTS = ("plain", "renamed")


def auc(pos: list[float], neg: list[float]) -> float:
    """ROC-AUC of ``pos`` against ``neg`` (ties count half): the Mann-Whitney statistic over average ranks."""
    if not pos or not neg:
        return float("nan")
    import numpy as np

    values = np.asarray(pos + neg, dtype=np.float64)
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    upper = np.cumsum(counts)
    ranks = (upper - (counts - 1) / 2.0)[inverse]  # 1-based average rank of each value
    return float((ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def layouts(records: list[dict[str, Any]], problems: int | None):
    """(problem position, variant, the folder's records with the copy last) in the protocol's order."""
    groups: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for r in records:
        groups[r["group"]].append(r)
    names = sorted(g for g, rs in groups.items() if any(r.get("copy_of") for r in rs))
    random.Random(0).shuffle(names)
    for gi, g in enumerate(names[:problems] if problems else names):
        py = [r for r in groups[g] if r["language"] == "python" and not r.get("copy_of")]
        copies = [r for r in groups[g] if r.get("copy_of")]
        for variant in VARIANTS:
            cs = [c for c in copies if c.get("variant", "plain") == variant]
            if cs:
                yield gi, variant, py + [random.Random(gi).choice(cs)]


def _run(folder: str, out: str, cmd: str | None, weights: dict[str, float] | None) -> bool:
    """Check ``folder`` into the JSONL file ``out``: with ``cmd``, by running that program (as a teacher runs
    ``conba plagiarism``); else through the Python API, which writes the same records."""
    if cmd:
        p = subprocess.run(shlex.split(cmd) + [folder, "-f", "jsonl", "-o", out], capture_output=True, text=True,
                           timeout=600)
        return p.returncode == 0 and os.path.exists(out)
    from conba.plagiarism.check import check
    from conba.plagiarism.output import write_jsonl
    from conba.plagiarism.scoring import WEIGHTS

    report = check(folder, weights=WEIGHTS if weights is None else weights)
    with open(out, "w", encoding="utf-8") as fh:
        write_jsonl(report, fh)
    return True


def _scores(out: str, field: str = "score") -> dict[frozenset, float]:
    score = {}
    with open(out, encoding="utf-8") as fh:
        for line in fh:
            o = json.loads(line)
            if field == "structure" and "a" in o and "channels" in o:
                score[frozenset((o["a"], o["b"]))] = float(o["channels"]["structure"])
            elif all(k in o for k in ("a", "b", field)):
                score[frozenset((o["a"], o["b"]))] = float(o[field])
    return score


def threshold_at(neg: list[float], fpr: float) -> float:
    """The lowest score that at most ``fpr`` of ``neg`` reach (just above the (1 - fpr) quantile)."""
    ranked = sorted(neg, reverse=True)
    allowed = int(math.floor(fpr * len(ranked)))
    return math.nextafter(ranked[allowed], math.inf) if allowed < len(ranked) else min(ranked)


def evaluate(records: list[dict[str, Any]], problems: int | None = None, cmd: str | None = None,
             weights: dict[str, float] | None = None, fpr: float = 0.01) -> dict[str, Any]:
    res: dict[str, dict[str, Any]] = {v: {"hit": [], "pos": [], "neg": [], "flag_pos": [], "flag_neg": [],
                                          "lang": collections.defaultdict(list)} for v in VARIANTS}
    flag_indep: list[float] = []
    indep: list[float] = []
    sims: dict[str, list[float]] = {"cross_language": [], "same_language": [], "cross_language_structure": [],
                                    "same_language_structure": []}
    errors = 0
    with tempfile.TemporaryDirectory() as tmp:
        for gi, variant, folder_records in layouts(records, problems):
            d = os.path.join(tmp, f"{gi}-{variant}")
            os.makedirs(d)
            names = []
            for i, r in enumerate(folder_records):
                names.append(f"s{i:03d}.{EXT.get(r['language'], 'txt')}")
                with open(os.path.join(d, names[-1]), "w", encoding="utf-8") as fh:
                    fh.write(r["code"])
            out = os.path.join(tmp, f"{gi}-{variant}.jsonl")
            if not _run(d, out, cmd, weights):
                errors += 1
                continue
            score, similarity, structure = _scores(out), _scores(out, "similarity"), _scores(out, "structure")
            flagged = _scores(out, "suspicious")
            copy, q = folder_records[-1], names[-1]
            s = {n: score.get(frozenset((q, n)), -math.inf) for n in names[:-1]}
            orig = [n for n, r in zip(names, folder_records[:-1]) if r["id"] == copy["copy_of"]]
            if not orig:
                continue
            best = max(s.values())
            hit = s[orig[0]] == best > -math.inf and sum(v == best for v in s.values()) == 1
            res[variant]["hit"].append(hit)
            res[variant]["lang"][copy["language"]].append(hit)
            res[variant]["pos"] += [s[n] for n in orig]
            res[variant]["neg"] += [v for n, v in s.items() if n not in orig]
            res[variant]["flag_pos"] += [flagged.get(frozenset((q, n)), 0.0) for n in orig]
            res[variant]["flag_neg"] += [flagged.get(frozenset((q, n)), 0.0) for n in names[:-1] if n not in orig]
            for kind, values in (("cross_language", similarity), ("cross_language_structure", structure)):
                sims[kind] += [values[k] for n in names[:-1] if n not in orig if (k := frozenset((q, n))) in values]
            if variant == "plain":  # the Python pairs are the same in both folders: count them once
                py = [n for n in names[:-1] if n not in orig]
                pairs = [frozenset((x, y)) for i, x in enumerate(py) for y in py[i + 1:]]
                indep += [score.get(k, -math.inf) for k in pairs]
                flag_indep += [flagged.get(k, 0.0) for k in pairs]
                sims["same_language"] += [similarity[k] for k in pairs if k in similarity]
                sims["same_language_structure"] += [structure[k] for k in pairs if k in structure]
    neg_all = res["plain"]["neg"] + res["renamed"]["neg"]
    thr = threshold_at(neg_all, fpr) if neg_all else float("nan")
    summary: dict[str, Any] = {"errors": errors, "threshold": {"fpr_target": fpr, "score": thr}}
    for v, x in res.items():
        summary[v] = {"n": len(x["hit"]), "acc1": sum(x["hit"]) / len(x["hit"]) if x["hit"] else float("nan"),
                      "auc": auc(x["pos"], x["neg"]),
                      "recall_at_threshold": sum(p >= thr for p in x["pos"]) / max(len(x["pos"]), 1),
                      "by_language": {k: round(sum(h) / len(h), 3) for k, h in sorted(x["lang"].items())}}
    summary["threshold"]["fpr_copy_independent"] = sum(n >= thr for n in neg_all) / max(len(neg_all), 1)
    summary["threshold"]["fpr_python_independent"] = sum(n >= thr for n in indep) / max(len(indep), 1)
    summary["threshold"]["python_independent_pairs"] = len(indep)
    neg_flags = res["plain"]["flag_neg"] + res["renamed"]["flag_neg"]
    summary["flags"] = {"plain_recall": sum(res["plain"]["flag_pos"]) / max(len(res["plain"]["flag_pos"]), 1),
                        "renamed_recall": sum(res["renamed"]["flag_pos"]) / max(len(res["renamed"]["flag_pos"]), 1),
                        "fpr_copy_independent": sum(neg_flags) / max(len(neg_flags), 1),
                        "fpr_python_independent": sum(flag_indep) / max(len(flag_indep), 1)}
    summary["similarities"] = sims
    return summary


def _weights(text: str | None) -> dict[str, float] | None:
    if not text:
        return None
    out = {}
    for part in text.split(","):
        k, _, v = part.partition("=")
        out[k.strip()] = float(v)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="conba bench plagiarism-eval", description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="plagiarism JSONL (id, group, language, code; copies: copy_of, variant)")
    ap.add_argument("--problems", type=int, default=None, help="the first N problems of the seeded order (all)")
    ap.add_argument("--cmd", default=None,
                    help='run this program per folder, e.g. "conba plagiarism" (default: the Python API in-process)')
    ap.add_argument("--weights", default=None, help="channel weights through the API, e.g. structure=1,names=0")
    ap.add_argument("--ngrams", default=None, help="structure n-gram sizes, e.g. 3 or 3,5 (ablation; default 3,5)")
    ap.add_argument("--no-literals", action="store_true", help="literals are no features of their own (ablation)")
    ap.add_argument("--fpr", type=float, default=0.01, help="false-positive rate the threshold is set for")
    ap.add_argument("--json", default=None, help="write the summary here")
    ap.add_argument("--write-calibration", default=None, metavar="FILE",
                    help="write the quantiles of the independent pairs' similarities (the package's "
                         "conba/plagiarism/calibration.json) here")
    a = ap.parse_args(argv)
    with open(a.data, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    from conba.plagiarism import features

    if a.ngrams:
        features.NGRAM_SIZES = tuple(int(x) for x in a.ngrams.split(","))
    features.LITERALS = not a.no_literals
    start = time.perf_counter()
    summary = evaluate(records, a.problems, a.cmd, _weights(a.weights), a.fpr)
    summary["seconds"] = round(time.perf_counter() - start, 1)
    sims = summary.pop("similarities")
    if a.write_calibration:
        from conba.plagiarism.calibration import LEVELS, quantiles
        from conba.utils.io import write_json_atomic

        write_json_atomic(a.write_calibration, {
            "source": f"conba bench plagiarism-eval {os.path.basename(a.data)} (independent pairs)",
            "pairs": {k: len(v) for k, v in sims.items()}, "levels": LEVELS,
            **{k: quantiles(v) for k, v in sims.items() if v}})
    if a.json:
        from conba.utils.io import write_json_atomic

        write_json_atomic(a.json, summary)
    t = summary["threshold"]
    print("plagiarism command: " + "; ".join(
        f"{v} acc@1 {summary[v]['acc1']:.3f} AUC {summary[v]['auc']:.3f} (n={summary[v]['n']})" for v in VARIANTS)
          + f"; failed runs {summary['errors']}")
    for v in VARIANTS:
        print(f"  {v} acc@1 by language: " + ", ".join(f"{k} {x:.2f}" for k, x in summary[v]["by_language"].items()))
    print(f"threshold for {t['fpr_target']:.0%} of copy-independent pairs: {t['score']:.4f}; copies flagged there: "
          f"plain {summary['plain']['recall_at_threshold']:.3f}, "
          f"renamed {summary['renamed']['recall_at_threshold']:.3f}; "
          f"false positives on same-task independent Python pairs {t['fpr_python_independent']:.4f} "
          f"({t['python_independent_pairs']} pairs); {summary['seconds']} s")
    f = summary["flags"]
    print(f"the command's suspicious flags: copies flagged plain {f['plain_recall']:.3f}, renamed "
          f"{f['renamed_recall']:.3f}; false positives: copy-independent {f['fpr_copy_independent']:.4f}, "
          f"same-task independent Python pairs {f['fpr_python_independent']:.4f}")


if __name__ == "__main__":
    main()
