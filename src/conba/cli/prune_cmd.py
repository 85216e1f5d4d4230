"""``conba prune``: SDTP token pruning (``conba prune train``)."""

from __future__ import annotations

from pathlib import Path

import click

from conba.cli.bare_options import name_only_pointers
from conba.cli.common import friendly_errors, resolve_model_name
from conba.cli.moved import PointerCommand
from conba.cli.options import (
    FINITE_FLOAT,
    config_option,
    data_files_option,
    device_option,
    limit_option,
    model_option,
    output_dir_option,
    progress_option,
    restart_option,
    seed_option,
)
from conba.cli.paths import InputPath
from conba.prune.train_config import DEFAULT_TRAIN, SALIENCY_MODES, PruneTrainConfig

_DEFAULTS = PruneTrainConfig()


def _opt(name: str, *decls: str, **kwargs):
    """An option for the PruneTrainConfig field ``name`` (its default and choices come from there)."""
    return config_option(PruneTrainConfig, name, *decls, **kwargs)


@click.group("prune", context_settings={"help_option_names": ["-h", "--help"]})
def prune() -> None:
    """SDTP (saliency-driven dynamic token pruning): faster encoding by dropping unimportant tokens
    inside the encoder.

    \b
    Examples:
      conba prune train --model default --output runs/default-sdtp
      conba prune train -m runs/my-model -o runs/my-model-sdtp --keep-ratio 0.6 --layers 2-5
      conba prune set runs/my-model-sdtp --keep-ratio 0.8        # trade speed for accuracy, no retraining
    """


@prune.command("train", cls=PointerCommand, moved_options=name_only_pointers("prune train"))
@model_option(help="Model to prune: 'default', 'zero-shot', a conba model folder or an HF encoder.")
@output_dir_option("Output model folder (the model plus its pruning module in OUT/prune/).")
@_opt("keep_ratio", "-r", "--keep-ratio",
      help="Share of the tokens kept at each pruning layer (compounds over layers).")
@click.option("-L", "--layers", default="", metavar="LIST",
              help="Pruning layers, e.g. '2,3,4,5' or '2-5' (tokens are dropped before these layers run). "
                   "Default: every layer from the middle up (MiniLM: 3-5).")
@data_files_option("Training file(s) with clone groups (repeatable). Default: " + " and ".join(DEFAULT_TRAIN)
                   + " in $CONBA_DATA.")
@limit_option("Snippets for saliency and training.", default=_DEFAULTS.limit)
@_opt("epochs", "-e", "--epochs", help="Scorer training epochs over those snippets.")
@_opt("lr", help="Scorer learning rate (AdamW).")
@_opt("groups_per_batch", "-P", "--groups-per-batch", help="Groups per batch (P).")
@_opt("per_group", "-K", "--per-group", help="Snippets per group (K).")
@_opt("saliency", choices=SALIENCY_MODES,
      help="Importance from saliency s = sum(h * dL/dh): |s|, s or -s.")
@_opt("keep_first", help="Leading tokens that are never pruned.")
@_opt("keep_tail", help="Share of trailing tokens never pruned.")
@_opt("w_distill",
      help="Extra loss weight: 1 - cos(pruned, exact embedding) (0 = the SDTP loss only).")
@_opt("saliency_from", metavar="DIR", show_default=False,
              help="Reuse the saliency pass of another OUT folder (same model/data/limit/seed, superset of layers).")
@seed_option(default=_DEFAULTS.seed)
@restart_option("Discard saved saliency / scorer progress in OUT instead of resuming.")
@device_option(help="Where to train (float32)")
@progress_option
@friendly_errors
def train(model: str | None, out: Path, keep_ratio: float, layers: str, data: tuple[Path, ...], limit: int,
          epochs: int, lr: float, groups_per_batch: int, per_group: int, saliency: str, keep_first: int,
          keep_tail: float, w_distill: float, saliency_from: str, seed: int, restart: bool,
          progress: bool | None, device: str = "auto") -> None:
    """Train SDTP token scorers for a model (backbone and head stay frozen) and save a model whose
    encode() prunes. Saliency and scorer progress are saved in OUT/prune_training/; running the same
    command again resumes.

    \b
    Examples:
      conba prune train --model default --output runs/default-sdtp
      conba prune train -m default -o runs/sdtp-r06 -r 0.6 -L 2-5 -n 1024 -e 3
    Then:
      conba eval ../shared/data/atcoder_dev.jsonl --model runs/default-sdtp
      python -c "import conba; m = conba.load_model('runs/default-sdtp', prune=False)"   # exact again
    """
    from conba.cli.common import show_progress
    from conba.data.location import data_files
    from conba.encoder.sdtp.config import parse_layers
    from conba.prune.train import train_pruner

    cfg = PruneTrainConfig(
        model=resolve_model_name(model), out=str(out),
        train=[str(p) for p in data or data_files(DEFAULT_TRAIN, "training file (-d)")],
        layers=parse_layers(layers) if layers.strip() else [], keep_ratio=keep_ratio, keep_first=keep_first,
        keep_tail=keep_tail, limit=limit, groups_per_batch=groups_per_batch, per_group=per_group,
        epochs=epochs, lr=lr, saliency=saliency, w_distill=w_distill, saliency_from=saliency_from, seed=seed)
    train_pruner(cfg, restart=restart, progress=show_progress(progress),
                 log=lambda m: click.echo(m, err=True), device=device)


@prune.command("set")
@click.argument("model_dir", type=InputPath(file_okay=False, path_type=Path))
@click.option("-r", "--keep-ratio", default=None, type=FINITE_FLOAT, help="New share of tokens kept per pruning layer.")
@click.option("-L", "--layers", default="", metavar="LIST",
              help="Prune at these layers only (a subset of the trained ones), e.g. '3-5'.")
@friendly_errors
def set_(model_dir: Path, keep_ratio: float | None, layers: str) -> None:
    """Change the keep ratio or the pruning layers of a pruned model folder in place, reusing its trained
    scorers (no retraining). Prints the new settings and the share of the dense work left.

    \b
    Examples:
      conba prune set runs/default-sdtp --keep-ratio 0.8
      conba prune set runs/default-sdtp -L 4,5
    """
    import json

    from conba.encoder.sdtp.config import parse_layers
    from conba.encoder.sdtp.scorer import load_pruner, retarget_pruner, save_pruner

    folder = model_dir / "prune"
    if not model_dir.is_dir():
        raise click.ClickException(f"{model_dir}: no such model folder")
    if not folder.is_dir():
        raise click.ClickException(f"{model_dir}: no prune/ folder (make one with `conba prune train`)")
    if keep_ratio is None and not layers.strip():
        raise click.UsageError("nothing to change: pass --keep-ratio and/or --layers")
    pruner = retarget_pruner(load_pruner(folder), keep_ratio, parse_layers(layers) if layers.strip() else None)
    save_pruner(pruner, folder)
    cfg = pruner.config
    click.echo(json.dumps({"model": str(model_dir), "layers": cfg.layers, "keep_ratio": cfg.keep_ratio,
                           "token_fraction": round(cfg.token_fraction(), 4)}))
