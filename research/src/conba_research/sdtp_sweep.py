"""Choose the SDTP layer schedule and keep ratio on a dev subset: MAP@R per (layers, keep ratio).

Glossary: n records in the subset, d embedding width.

Every row re-uses the trained scorers of one pruned model folder (``conba prune train``) for a subset
of its layers and a keep ratio (no retraining), or replaces them with a baseline ranking:
``position`` (keep the earliest tokens) or ``random`` (an untrained scorer). ``exit`` rows mean-pool
pruned tokens at the layer they left (``pool_pruned``); ``engine:onnx`` / ``engine:onnx-fp32`` rows
time the unpruned model on that engine. Rows are appended to a JSONL file as they finish; a rerun
skips finished rows (resumable). ``cpu_s`` is process time (depends on machine load; use
``conba bench speed`` for speed).

    conba experiment sdtp-sweep runs/sdtp-L3-5 runs/sdtp_sweep.jsonl --limit 800 \\
        --row "L3-5 r0.8" 3,4,5 0.8 trained --row "L3-5 r0.7" 3,4,5 0.7 trained \\
        --row "L1-5 r0.7 position" 1,2,3,4,5 0.7 position --row "onnx int8" - 0 engine:onnx
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from conba.utils.io import write_npy_atomic

KINDS = ("trained", "trained-exit", "random", "position", "engine:onnx", "engine:onnx-fp32")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pruned", help="pruned model folder (conba prune train) whose scorers are reused")
    ap.add_argument("out", help="JSONL of results (appended; finished rows are skipped)")
    ap.add_argument("--data", help="grouped JSONL (default: atcoder_dev.jsonl of $CONBA_DATA)")
    ap.add_argument("--limit", type=int, default=800, help="about this many records, whole groups (seeded)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--row", nargs=4, action="append", default=[], metavar=("NAME", "LAYERS", "RATIO", "KIND"),
                    help=f"one configuration; KIND in {', '.join(KINDS)}; LAYERS '-' for engine rows")
    args = ap.parse_args()

    from conba.bench.speed import group_subset
    from conba.data.location import data_path

    args.data = args.data or str(data_path("atcoder_dev.jsonl", what="--data file"))
    from conba.data import load_records
    from conba.eval.metrics import cross_language_retrieval, embedding_similarity
    from conba.model import load_model
    from conba.prune import PruneConfig, PruneModule, load_pruner, parse_layers

    for name, _, _, kind in args.row:
        if kind not in KINDS:
            raise SystemExit(f"row {name!r}: unknown kind {kind!r} ({', '.join(KINDS)})")
    records = group_subset(load_records(args.data), args.limit, args.seed)
    codes, langs, groups = [r.code for r in records], [r.language for r in records], [r.group for r in records]
    model = load_model(args.pruned, prune=False)
    trained = model.pruner if model.pruner is not None else load_pruner(Path(args.pruned) / "prune")
    dim, depth = model.backbone.hidden_size, model.backbone.num_layers

    def map_at_r(emb: np.ndarray) -> float:
        return float(cross_language_retrieval(embedding_similarity(emb), groups, langs)["mean"]["map_at_r"])

    out = Path(args.out)
    done = {json.loads(line)["name"] for line in out.read_text().splitlines()} if out.exists() else set()

    def write(row: dict) -> None:
        print(json.dumps(row), flush=True)
        with out.open("a") as f:
            f.write(json.dumps(row) + "\n")

    def timed_encode(engine: str = "torch") -> tuple[np.ndarray, float]:
        t = time.process_time()
        emb = model.encode(codes, languages=langs, engine=engine, show_progress_bar=False)
        return emb, time.process_time() - t

    model.use_pruning = False
    exact_path = out.with_name(f"{out.stem}-exact-{model.fingerprint()}-{len(records)}.npy")
    if exact_path.exists():
        exact, cpu = np.load(exact_path), 0.0
    else:
        exact, cpu = timed_encode()
        write_npy_atomic(exact_path, exact)
    if "exact" not in done:
        write({"name": "exact", "map": map_at_r(exact), "cpu_s": round(cpu, 1), "n": len(records)})

    class Positional(PruneModule):  # keeps the earliest tokens: the baseline a learned scorer must beat
        def logits(self, layer: int, x: torch.Tensor) -> torch.Tensor:
            """Args: x: shape (b, l, d). Returns (b, l, 2) with keep log-odds -position."""
            pos = torch.arange(x.shape[1], dtype=x.dtype)[None, :].expand(x.shape[0], -1)
            return torch.stack([torch.zeros_like(pos), -pos], dim=-1)

    for name, layer_text, ratio_text, kind in args.row:
        if name in done:
            continue
        row: dict = {"name": name, "kind": kind, "n": len(records)}
        if kind.startswith("engine:"):
            model.use_pruning = False
            emb, cpu = timed_encode(kind.split(":", 1)[1])
        else:
            layers, ratio = parse_layers(layer_text), float(ratio_text)
            cfg = PruneConfig(layers=layers, keep_ratio=ratio, dim=dim, num_layers=depth,
                              pool_pruned=kind.endswith("-exit"))
            torch.manual_seed(args.seed)
            pruner = Positional(cfg) if kind == "position" else PruneModule(cfg)
            if kind.startswith("trained"):
                state = trained.scorers.state_dict()
                pruner.scorers.load_state_dict({k: v for k, v in state.items() if int(k.split(".")[0]) in layers})
            pruner.eval()
            model.pruner, model.use_pruning = pruner, True
            emb, cpu = timed_encode()
            row.update(layers=layers, ratio=ratio, frac=round(cfg.token_fraction(), 3))
        cos = (emb * exact).sum(axis=1)
        row.update(map=map_at_r(emb), cos_mean=float(cos.mean()), cos_min=float(cos.min()), cpu_s=round(cpu, 1))
        write(row)


if __name__ == "__main__":
    main()
