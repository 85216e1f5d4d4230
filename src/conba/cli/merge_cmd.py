"""``conba merge``: WiSE-FT weight-space averaging of a fine-tuned model with its untuned base."""

from __future__ import annotations

from pathlib import Path

import click

from conba.cli.aliases import AliasOption
from conba.cli.common import friendly_errors
from conba.cli.options import FiniteFloat, output_dir_option, view_option


@click.command("merge")
@click.argument("finetuned", metavar="MODEL")
@click.option("-a", "--alpha", type=FiniteFloat(0.0, 1.0), required=True,
              help="Weight of MODEL: 1 = MODEL unchanged, 0 = the base.")
@click.option("--base", default=None, metavar="M",
              help="The model MODEL was fine-tuned from (default: its untuned backbone with a fresh head).")
@output_dir_option("Folder to write the merged model to.")
@click.option("--max-windows", "max_windows", type=click.IntRange(1), default=None,
              cls=AliasOption, aliases=["--max-chunks"],
              help="Windows per long snippet for the merged model (default: MODEL's).")
@view_option
@click.option("--save-dtype", "dtype", type=click.Choice(["float32", "float16"]), default="float32", show_default=True,
              cls=AliasOption, deprecated_aliases=["--dtype"],  # --dtype elsewhere: the precision a model runs in
              help="Storage precision of the saved weights (float16 halves the folder).")
@click.option("--head", "head", type=click.Choice(["merge", "none"]), default="merge", show_default=True,
              help="merge: average the heads too; none: mean-pool the merged backbone (no head).")
@friendly_errors
def merge_cmd(finetuned: str, alpha: float, base: str | None, out: Path, max_windows: int | None,
              view: str | None, dtype: str, head: str) -> None:
    """Average every weight of MODEL with its untuned base: alpha * MODEL + (1 - alpha) * base
    (WiSE-FT). Fine-tuning on one kind of code can cost accuracy on another; the merge keeps part of
    both (docs/BENCHMARKS.md measures the trade-off).

    \b
    Examples:
      conba merge runs/my-model -a 0.5 -o runs/my-model-wise50
      conba merge default -a 0.7 -o wise70 && conba eval data.jsonl -m wise70
      conba merge default -a 0.5 --view code+docs --save-dtype float16 -o wise50
      conba merge runs/tuned -a 0.5 --head none -o wise50-nohead    # how the shipped default was made
    """
    from conba.merge import drop_head, merge
    from conba.model import load_model

    tuned = load_model(finetuned, prune=False)
    merged = merge(tuned, load_model(base, prune=False) if base else None, alpha)
    if head == "none":
        drop_head(merged)
    if max_windows is not None:
        merged.max_windows = max_windows
    if view is not None:
        merged.view = view
    merged.threshold = None  # the fine-tuned model's calibrated threshold does not hold for the merge
    merged.save(out, storage="auto", dtype=dtype)
    click.echo(f"wrote {out} (alpha {alpha}; recalibrate its threshold with `conba eval --calibrate`)", err=True)
