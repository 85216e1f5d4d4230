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
    args = ap.parse_args(argv)
    from conba.errors import ConbaError
    from conba_research.gpu_train.export import import_run

    try:
        print(json.dumps(import_run(args.checkpoint, args.out, args.base)))
    except (ConbaError, OSError) as exc:
        raise SystemExit(f"error: {exc}") from None


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
