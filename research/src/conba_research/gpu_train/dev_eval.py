"""The four dev sets of the decision rule, evaluated as ``conba eval`` and ``conba eval-repo`` do, and the
rule itself.

atcoder_dev and mbxp_dev: snippet-level MAP@R (``conba eval``, no TF-IDF); algorithms_dev: file level and
ports_dev: function level (``conba eval-repo`` into a fresh index, no baselines, no clone statistics).
The score of each is the mean cross-language MAP@R of ``conba`` (the fused score at the model's lexical
weight, which the sweep sets to the shipped default's) and ``dense`` (the cosine alone).

The repository sets need ``conba index``, which writes its vectors with FAISS; where faiss is not installed
(the GPU machine: its wheel is 19 MB, more than the 64 MiB that go there leave room for) they are
recorded as skipped, and ``scripts/gpu_train.sh import CKPT OUT --eval DATA`` scores them here for the
returned checkpoints.

The rule (issue 50): a trained model replaces the shipped default when it beats it on the four sets
together (the mean of the four differences is above 0) and none is lower by more than 0.5 points
(0.005 MAP@R).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

SETS = {  # name -> (kind, paths relative to the data folder, groups file)
    "atcoder_dev": ("jsonl", ["atcoder_dev.jsonl"], None),
    "mbxp_dev": ("jsonl", ["mbxp_dev.jsonl"], None),
    "algorithms_dev": ("repo", ["algorithms_dev/cpp", "algorithms_dev/javascript", "algorithms_dev/rust",
                                "algorithms_dev/csharp"], "algorithms_dev/groups.jsonl"),
    "ports_dev": ("repo", ["ports_dev"], "ports_dev/groups.jsonl"),
}
TOLERANCE = 0.005  # 0.5 points of MAP@R


def repo_eval_available() -> bool:
    """Whether ``conba index`` can write here (it needs faiss)."""
    import importlib.util

    return importlib.util.find_spec("faiss") is not None


def _means(retrieval: dict) -> dict[str, float]:
    return {k: round(float(v["mean"]["map_at_r"]), 6) for k, v in retrieval.items()
            if isinstance(v, dict) and "mean" in v and k in ("conba", "dense")}


def evaluate_sets(model: Any, data: Path, work: Path, sets: dict = SETS, device: str = "cpu",
                  dtype: str = "float32", batch_size: int = 128, log=print) -> dict:
    """``{set: {"conba": MAP@R, "dense": MAP@R, "seconds": s, ...}}`` for a placed model object; a set
    that fails is ``{"error": message}`` (the others still run)."""
    from conba.errors import ConbaError

    out: dict[str, dict] = {}
    for name, (kind, paths, groups) in sets.items():
        t0 = time.time()
        if kind == "repo" and not repo_eval_available():
            out[name] = {"skipped": "faiss is not installed here (conba index needs it): score this set with "
                                    "`scripts/gpu_train.sh import CKPT OUT --eval DATA`"}
            log(f"{name}: skipped (no faiss)")
            continue
        try:
            if kind == "jsonl":
                from conba.data import load_records
                from conba.eval.runner import evaluate

                records = [r for p in paths for r in load_records(data / p)]
                result = evaluate(records, model, tfidf=False, batch_size=batch_size, progress=False)
                row = {**_means(result["retrieval"]), "records": len(records)}
            else:
                from conba.eval.repo import evaluate_repo

                result = evaluate_repo([str(data / p) for p in paths], data / groups, model=model,
                                       index_dir=work / f"index-{name}", baselines=(), clones=False,
                                       batch_size=batch_size, device=device, dtype=dtype)
                row = {**_means(result["retrieval"]), "level": result.get("level"), "counts": result.get("counts")}
        except (ConbaError, OSError, ValueError) as exc:
            row = {"error": f"{type(exc).__name__}: {exc}"}
        row["seconds"] = round(time.time() - t0, 1)
        log(f"{name}: " + json.dumps({k: v for k, v in row.items() if k != "counts"}))
        out[name] = row
    return out


def shipped_scores(results_dir: Path) -> dict[str, float]:
    """The shipped default's ``conba`` MAP@R per dev set, from its committed result JSON (docs/results)."""
    scores = {}
    for name in SETS:
        path = results_dir / f"{name}.json"
        if path.is_file():
            scores[name] = round(float(json.loads(path.read_text())["retrieval"]["conba"]["mean"]["map_at_r"]), 6)
    return scores


def decide(scores: dict[str, dict], shipped: dict[str, float], key: str = "conba") -> dict:
    """The rule for one run: ``beats`` (bool; None while a set is not scored, ``missing`` names them),
    the per-set differences and their mean over the sets scored (which ranks the runs)."""
    diffs = {name: round(scores[name][key] - ref, 6) for name, ref in shipped.items()
             if scores.get(name, {}).get(key) is not None}
    missing = [name for name in shipped if name not in diffs]
    if not diffs:
        return {"beats": None, "missing": missing or ["the shipped default's scores"]}
    mean = sum(diffs.values()) / len(diffs)
    worst = min(diffs.values())
    out = {"beats": None if missing else (mean > 0 and worst >= -TOLERANCE), "mean_difference": round(mean, 6),
           "worst_difference": round(worst, 6), "differences": diffs}
    return {**out, "missing": missing} if missing else out
