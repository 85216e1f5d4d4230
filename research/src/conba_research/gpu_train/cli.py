"""``conba experiment gpu-train prepare|run|import`` (also ``python -m conba_research.gpu_train.cli``, which
``scripts/gpu_train.sh`` calls): pack what the GPU machine lacks, run the sweep there, and turn a returned
checkpoint into a conba model folder here (docs/gpu-train.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

USAGE = "prepare ARGS (pack, here) | run ARGS (the sweep, on the GPU machine) | import CKPT OUT (here); -h after each"


def import_main(argv: list[str], prog: str) -> None:
    ap = argparse.ArgumentParser(prog=prog, description="Rebuild a conba model folder from NAME.ckpt.tar "
                                                        "(or its .part0, .part1, ...) that the GPU sweep returned.")
    ap.add_argument("checkpoint", type=Path, help="NAME.ckpt.tar (its parts are found beside it).")
    ap.add_argument("out", type=Path, help="The model folder to write.")
    ap.add_argument("--base", default="default",
                    help="The untuned backbone the sweep packed: 'default' (the embedded MiniLM) or its folder.")
    ap.add_argument("--eval", type=Path, metavar="DATA",
                    help="Then score it here on the four dev sets of DATA (../shared/data) as the sweep does, "
                         "and apply the rule against the shipped default (slow on a CPU: minutes per set).")
    ap.add_argument("--shipped", type=Path, default=Path("docs/results/default"),
                    help="The shipped default's result JSON per dev set.")
    ap.add_argument("--device", default="cpu", help="Where --eval encodes.")
    args = ap.parse_args(argv)
    from conba.errors import ConbaError
    from conba_research.gpu_train.export import import_run

    try:
        result = import_run(args.checkpoint, args.out, args.base)
        if args.eval:
            result.update(evaluate_here(args.out, args.eval, args.shipped, args.device))
    except (ConbaError, OSError) as exc:
        raise SystemExit(f"error: {exc}") from None
    print(json.dumps(result))


def evaluate_here(model_dir: Path, data: Path, shipped: Path, device: str) -> dict:
    """The four dev sets for an imported model, as the sweep scores them, and the rule's verdict."""
    import tempfile

    from conba.engine.device import place_model
    from conba.model import load_model
    from conba.model.core import DEFAULT_MODEL_DIR
    from conba_research.gpu_train.dev_eval import decide, evaluate_sets, shipped_scores

    model = load_model(str(model_dir))
    model.lexical_weight = json.loads((Path(DEFAULT_MODEL_DIR) / "conba_config.json").read_text()).get(
        "lexical_weight", 0.0)
    place_model(model, device, "float32")
    with tempfile.TemporaryDirectory(prefix="conba-gpu-train-eval-") as work:
        scores = evaluate_sets(model, data, Path(work), device=device, log=lambda m: print(m, file=sys.stderr))
    return {"scores": scores, "decision": decide(scores, shipped_scores(shipped))}


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    prog = Path(sys.argv[0]).name if sys.argv and not sys.argv[0].endswith(".py") else "gpu-train"
    if not argv or argv[0] in ("-h", "--help"):
        print(f"usage: {prog} {USAGE}\n\n{__doc__}")
        return
    command, rest = argv[0], argv[1:]
    if command == "prepare":
        from conba_research.gpu_train.pack import main as prepare

        prepare(rest, f"{prog} prepare")
    elif command == "run":
        from conba_research.gpu_train.sweep import main as run

        run(rest, f"{prog} run")
    elif command == "import":
        import_main(rest, f"{prog} import")
    else:
        raise SystemExit(f"{prog}: unknown command {command!r}; {USAGE}")


if __name__ == "__main__":
    main()
