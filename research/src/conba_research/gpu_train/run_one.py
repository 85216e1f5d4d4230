"""One run of the GPU sweep: ``conba train``'s trainer on the pre-viewed data, then the dev sets.

The sweep applies the input view to the training and early-stopping snippets once, for every run
(:class:`PreviewedTrainer` takes them as they are; the saved model still records the view, so the
evaluation views the dev sets as ``conba eval`` does). A run is one process
(``python -m conba_research.gpu_train.run_one SPEC.json``) so that several share the GPU; it writes
the spec's ``result`` JSON, the sweep's row for it.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path

from conba.train.config import TrainConfig
from conba.train.trainer import Trainer
from conba.utils.io import write_json_atomic


class PreviewedTrainer(Trainer):
    """The trainer of ``conba train`` on records whose view was applied before (by the sweep)."""

    def _viewed(self, records, name):  # noqa: ANN001, ANN202 (the base class's signature)
        return records

    def __init__(self, config: TrainConfig, **kwargs) -> None:
        super().__init__(config, **kwargs)
        self.model.backbone.model.float()  # float16 weights on disk: train in float32 (bf16 autocast on CUDA)


def train(spec: dict, log=print) -> dict:
    cfg = TrainConfig(**spec["train_config"]).validate()
    t0 = time.time()
    trainer = PreviewedTrainer(cfg, progress=False, log=log, plot_history=False)
    trainer.fit(restart=True)
    history = json.loads((Path(cfg.out) / "training" / "history.json").read_text())
    result = json.loads((Path(cfg.out) / "training" / "result.json").read_text())
    steps = len(history.get("step_loss", []))
    return {"train_seconds": round(time.time() - t0, 1), "steps": steps, "best_check": result["best_epoch"],
            "early_stop_map_at_r": round(result["dev_map_at_r"], 6),
            "checks": [round(e["dev_map_at_r"], 6) for e in history.get("epochs", []) if e.get("dev_map_at_r")
                       is not None]}


def evaluate(spec: dict, log=print) -> dict:
    from conba.engine.device import place_model
    from conba.model import load_model
    from conba_research.gpu_train.dev_eval import SETS, evaluate_sets

    ev = spec["eval"]
    model = load_model(spec["model_dir"])
    model.lexical_weight = ev["lexical_weight"]
    place_model(model, ev["device"], ev["dtype"])
    sets = {k: v for k, v in SETS.items() if k in ev.get("sets", SETS)}
    return {"fingerprint": model.fingerprint(), "lexical_weight": ev["lexical_weight"],
            "scores": evaluate_sets(model, Path(ev["data"]), Path(spec["index_dir"]), sets, ev["device"], ev["dtype"],
                                    ev.get("batch_size", 128), log)}


def run(spec: dict, log=print) -> dict:
    """Train (unless the spec has no ``train_config``: the untrained base) and evaluate; the row,
    also written to the spec's ``result`` file. A failure is recorded in the row, not raised."""
    row = {k: spec[k] for k in ("name", "variant", "seed") if k in spec}
    t0 = time.time()
    try:
        if spec.get("train_config"):
            row.update(train(spec, log))
        row.update(evaluate(spec, log))
        row["status"] = "done"
    except Exception as exc:  # one run's failure must not end the sweep: it is recorded in its row
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}")
        log(traceback.format_exc())
    row["seconds"] = round(time.time() - t0, 1)
    Path(spec["result"]).parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(spec["result"], row)
    return row


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        raise SystemExit("usage: conba_research.gpu_train.run_one SPEC.json (one run of the sweep, started by it)")
    spec = json.loads(Path(argv[0]).read_text())
    run(spec, log=lambda m: print(m, file=sys.stderr, flush=True))


if __name__ == "__main__":
    main()
