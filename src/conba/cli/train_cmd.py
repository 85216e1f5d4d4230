"""``conba train``: contrastive training of a head (and optionally the backbone)."""

from __future__ import annotations

from pathlib import Path

import click

from conba.cli.common import friendly_errors
from conba.cli.options import CACHE_ENV, device_option, out_option, view_option

_PATH = click.Path(dir_okay=False, path_type=Path)


@click.command("train")
@click.argument("train_files", nargs=-1, required=True, type=_PATH)
@click.option("-D", "--dev", multiple=True, type=_PATH, help="Dev file(s) for early stopping (repeatable).")
@out_option("Output model folder (training artefacts go to OUT/training/).")
@click.option("--backbone", default="default", show_default=True,
              help="HF encoder name or local folder; 'default' = embedded all-MiniLM-L6-v2.")
@click.option("--max-length", default=256, show_default=True, help="Truncation length in tokens.")
@click.option("--split-identifiers", is_flag=True, help="Split camelCase/snake_case before tokenizing.")
@click.option("--head", type=click.Choice(["conba", "conba-scan", "linear", "none"]), default="conba",
              show_default=True)
@click.option("--head-mode", type=click.Choice(["pooled", "tokens"]), default="pooled", show_default=True,
              help="ConbaLayer on one pooled vector (research code) or as a recurrence over tokens.")
@click.option("--state-dim", default=16, show_default=True, help="SSM state size n (conba-scan).")
@click.option("--state-a", type=click.Choice(["diag", "dense"]), default="diag", show_default=True,
              help="A of --head-mode tokens: diagonal (parallel scan) or dense d×d (sequential loop).")
@click.option("--no-control", is_flag=True, help="Ablation: switch control_weight off.")
@click.option("--no-feedback", is_flag=True,
              help="Ablation: switch feedback_weight off (the state is kept, added unweighted).")
@click.option("--no-state", is_flag=True,
              help="Ablation: remove the state (A, B; conba-scan: the SSM); feedback term 0.")
@click.option("--no-state-path", is_flag=True, help="Ablation: --no-state and --no-feedback (the old --no-feedback).")
@click.option("--no-residual", is_flag=True,
              help="ConbaLayer heads without the residual (random start instead of the pooled vector).")
@click.option("--control-codes", type=click.Choice(["offset", "prefix", "both", "none"]), default="none",
              is_flag=False, flag_value="offset", show_default=True,
              help="Language control codes (CTRL): offset to control_weight, prefix code after CLS at the "
                   "backbone's input, both, or none. A bare --control-codes means offset.")
@click.option("--tune", type=click.Choice(["none", "top-k", "full"]), default="none", show_default=True,
              help="Backbone tuning: frozen+cached, top k layers, or all layers.")
@click.option("--top-k", default=2, show_default=True, help="Layers trained with --tune top-k.")
@click.option("--loss", type=click.Choice(["supcon", "simclr"]), default="supcon", show_default=True)
@click.option("--temperature", default=0.05, show_default=True, help="Loss temperature τ.")
@click.option("-P", "--groups-per-batch", default=16, show_default=True, help="Groups per batch (P).")
@click.option("-K", "--per-group", default=4, show_default=True, help="Snippets per group (K).")
@click.option("-e", "--epochs", default=10, show_default=True)
@click.option("--lr-head", default=1e-3, show_default=True)
@click.option("--lr-backbone", default=3e-5, show_default=True)
@click.option("--patience", default=3, show_default=True, help="Epochs without dev improvement before stopping.")
@click.option("--hard-negatives", is_flag=True, help="Batch nearby groups together (hard negatives).")
@click.option("--max-per-group-language", default=0, help="Cap snippets per (group, language); 0 = all.")
@click.option("--dev-limit", default=0, help="Early-stop on about N dev records (whole groups); 0 = all.")
@click.option("--seed", default=0, show_default=True)
@click.option("--save-dtype", type=click.Choice(["float32", "float16"]), default="float32", show_default=True)
@click.option("--cache-dir", default="", envvar=CACHE_ENV, show_envvar=True,
              help="Feature cache (default ~/.cache/conba).")
@click.option("-b", "--batch-size", default=32, show_default=True,
              help="Batch size for encoding/caching (not training).")
@device_option(help="Where to train")
@click.option("--amp/--no-amp", default=True, show_default=True, help="bf16 autocast of the backbone on CUDA.")
@click.option("--time-budget", default=0.0, help="Stop training after this many seconds (0 = no limit).")
@click.option("--warmup-steps", default=100, show_default=True, help="Linear warm-up of the backbone lr.")
@click.option("--restart", is_flag=True, help="Discard an existing checkpoint in OUT instead of resuming.")
@click.option("--progress/--no-progress", default=None, help="Progress bars (default: when a terminal).")
@view_option
@friendly_errors
def train(train_files: tuple[Path, ...], dev: tuple[Path, ...], out: Path, restart: bool,
          progress: bool | None, no_control: bool, no_feedback: bool, no_state: bool, no_state_path: bool,
          no_residual: bool, **opts) -> None:
    """Train a model on grouped JSONL files (or the research pair format).

    An interrupted run resumes from OUT/training/checkpoint when started again with the same
    settings. The best model on dev MAP@R is saved to OUT, with the clone threshold calibrated on dev.
    --view (default raw) is applied to the training and dev snippets and saved with the model, so
    it encodes with the same view.

    \b
    Examples:
      conba train ../shared/data/mbxp_train.jsonl -D ../shared/data/mbxp_dev.jsonl -o runs/m1
      conba train train.jsonl -D dev.jsonl -o runs/m2 --tune top-k --top-k 2 --head conba-scan --control-codes
      conba train train.jsonl -D dev.jsonl -o runs/m3 --head linear --control-codes prefix
    """
    from conba.cli.common import show_progress
    from conba.train.config import TrainConfig
    from conba.train.trainer import train as run

    opts["view"] = opts.get("view") or "raw"  # no model to take a view from yet
    cfg = TrainConfig(train=[str(p) for p in train_files], dev=[str(p) for p in dev], out=str(out),
                      use_control=not no_control, use_feedback=not (no_feedback or no_state_path),
                      use_state=not (no_state or no_state_path), residual=not no_residual, **opts)
    run(cfg, restart=restart, progress=show_progress() if progress is None else progress,
        log=lambda m: click.echo(m, err=True))
