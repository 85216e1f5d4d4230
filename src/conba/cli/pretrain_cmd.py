"""``conba pretrain``: continued pretraining of the backbone on unlabelled code (MLM, RTD or both)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from conba.cli.common import friendly_errors
from conba.cli.options import (
    FINITE_FLOAT,
    AliasOption,
    device_option,
    output_dir_option,
    progress_option,
    restart_option,
    seed_option,
)
from conba.cli.paths import InputPath


@click.command("pretrain")
@click.argument("data", nargs=-1, required=True, type=InputPath(path_type=Path))
@output_dir_option("Output backbone folder (Hugging Face format; pass it to `conba train --backbone`).")
@click.option("--backbone", default="default", show_default=True,
              help="HF encoder name or local folder; 'default' = embedded all-MiniLM-L6-v2.")
@click.option("--objective", type=click.Choice(["mlm", "rtd", "both"]), default="mlm", show_default=True,
              help="Masked LM, replaced-token detection (ELECTRA / CodeBERT), or both.")
@click.option("--steps", default=1000, show_default=True, help="Optimizer steps.")
@click.option("--max-length", default=128, show_default=True,
              help="Tokens per training window (longer code is cut into windows).")
@click.option("--max-windows-per-file", "max_windows_per_file", cls=AliasOption,
              aliases=["--max-chunks-per-file"], default=0, show_default=True,
              help="Windows kept per file/snippet; 0 = all.")
@click.option("--train-batch-size", "batch_size", cls=AliasOption,
              deprecated_aliases=["-b", "--batch-size"], default=16,
              show_default=True, metavar="N", help="Sequences per training batch.")
@click.option("--lr", default=5e-5, type=FINITE_FLOAT, show_default=True,
              help="Peak learning rate (linear warm-up and decay).")
@click.option("--warmup", default=0.06, type=FINITE_FLOAT, show_default=True,
              help="Fraction of steps spent warming up.")
@click.option("--mask-prob", default=0.15, type=FINITE_FLOAT, show_default=True,
              help="Fraction of tokens chosen per step (of those: 80% [MASK], 10% random, 10% kept).")
@click.option("--generator-size", default=0.25, type=FINITE_FLOAT, show_default=True,
              help="RTD generator width as a fraction of the backbone width.")
@click.option("--generator-layers", default=0, show_default=True, help="RTD generator layers; 0 = as the backbone.")
@click.option("--rtd-weight", default=50.0, type=FINITE_FLOAT, show_default=True,
              help="λ, weight of the discriminator loss.")
@seed_option
@device_option(help="Where to train")
@click.option("--amp/--no-amp", default=True, show_default=True, help="bf16 autocast on CUDA.")
@click.option("--checkpoint-every", default=200, show_default=True, help="Steps between checkpoints; 0 = none.")
@restart_option("Discard a checkpoint or finished run in OUT and start again.")
@progress_option(help="Progress bar")
@friendly_errors
def pretrain(data: tuple[Path, ...], out: Path, restart: bool, progress: bool | None, **opts) -> None:
    """Continue pretraining the backbone on DATA: folders of code files and/or JSONL files.

    Each step draws a fresh mask (dynamic masking). MLM predicts the masked tokens; RTD trains a
    small generator MLM that fills them in and the backbone, as discriminator, to tell original
    from replaced tokens on every token (loss = generator MLM + 50 × discriminator). An interrupted
    run resumes from OUT/.checkpoint when started again with the same settings. Prints a JSON
    summary on stdout.

    \b
    Examples:
      conba pretrain ../shared/data/atcoder_train.jsonl -o runs/bb-mlm --steps 300
      conba pretrain src/ other_repo/ -o runs/bb-rtd --objective rtd --device cuda
      conba train train.jsonl -D dev.jsonl -o runs/m --backbone runs/bb-mlm
    """
    from conba.cli.common import show_progress
    from conba.pretrain import PretrainConfig
    from conba.pretrain import pretrain as run
    from conba.utils.io import read_json

    cfg = PretrainConfig(data=[str(p) for p in data], out=str(out), **opts)
    folder = run(cfg, restart=restart, progress=show_progress(progress),
                 log=lambda m: click.echo(m, err=True))
    result = read_json(Path(folder) / "pretrain_result.json")
    result.pop("signature", None)
    click.echo(json.dumps({"out": str(folder), **result}))
