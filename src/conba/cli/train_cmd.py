"""``conba train``: contrastive training of a head (and optionally the backbone)."""

from __future__ import annotations

from pathlib import Path

import click

from conba.cli.common import friendly_errors
from conba.cli.options import (
    CACHE_ENV,
    POOLING_NAMES,
    batch_size_option,
    config_option,
    dev_files_option,
    device_option,
    output_dir_option,
    progress_option,
    restart_option,
    seed_option,
    time_budget_option,
    view_option,
)
from conba.cli.paths import InputPath
from conba.train.config import CONTROL_CODES, HEAD_MODES, HEADS, LOSSES, SAVE_DTYPES, STATE_AS, TUNE_MODES, TrainConfig

_PATH = InputPath(dir_okay=False, path_type=Path)
_DEFAULTS = TrainConfig()


def _opt(name: str, *decls: str, **kwargs):
    """An option for the TrainConfig field ``name`` (its default and choices come from there)."""
    return config_option(TrainConfig, name, *decls, **kwargs)


@click.command("train")
@click.argument("train_files", nargs=-1, required=True, type=_PATH)
@dev_files_option("Dev file(s) for early stopping (repeatable).")
@output_dir_option("Output model folder (training artefacts go to OUT/training/).")
@_opt("backbone", help="HF encoder name or local folder; 'default' = embedded all-MiniLM-L6-v2.")
@_opt("max_length", help="Truncation length in tokens.")
@_opt("pooling", type=click.Choice(["", *POOLING_NAMES]), metavar=f"[{'|'.join(POOLING_NAMES)}]",
      show_default=False, help="Read-out of the backbone: overrides its own (its sentence-transformers Pooling "
                               "module, else the last token for decoders, the mean for encoders).")
@_opt("trust_remote_code", "--trust-remote-code", is_flag=True,
      help="Let the backbone run code from its folder or hub repository (never the default; recorded in the "
           "saved model, which then needs it again).")
@_opt("split_identifiers", help="Split camelCase/snake_case before tokenizing.")
@_opt("head", choices=HEADS)
@_opt("head_mode", choices=HEAD_MODES,
      help="ConbaLayer on one pooled vector (research code) or as a recurrence over tokens.")
@_opt("state_dim", help="SSM state size n (conba-scan).")
@_opt("state_a", choices=STATE_AS,
      help="A of --head-mode tokens: diagonal (parallel scan) or dense d×d (sequential loop).")
@click.option("--no-control", is_flag=True, help="Ablation: switch control_weight off.")
@click.option("--no-feedback", is_flag=True,
              help="Ablation: switch feedback_weight off (the state is kept, added unweighted).")
@click.option("--no-state", is_flag=True,
              help="Ablation: remove the state (A, B; conba-scan: the SSM); feedback term 0.")
@click.option("--no-state-path", is_flag=True, help="Ablation: --no-state and --no-feedback (the old --no-feedback).")
@click.option("--no-residual", is_flag=True,
              help="ConbaLayer heads without the residual (random start instead of the pooled vector).")
@_opt("control_codes", choices=CONTROL_CODES, is_flag=False, flag_value="offset",
      help="Language control codes (CTRL): offset to control_weight, prefix code after CLS at the "
           "backbone's input, both, or none. A bare --control-codes means offset.")
@_opt("tune", choices=TUNE_MODES, help="Backbone tuning: frozen+cached, top k layers, or all layers.")
@_opt("top_k", help="Layers trained with --tune top-k.")
@_opt("loss", choices=LOSSES)
@_opt("temperature", help="Loss temperature τ.")
@_opt("groups_per_batch", "-P", "--groups-per-batch", help="Groups per batch (P).")
@_opt("per_group", "-K", "--per-group", help="Snippets per group (K).")
@_opt("epochs", "-e", "--epochs")
@_opt("steps_per_epoch", help="Batches per epoch, so a dev check (and the best-model choice) comes every N "
                               "steps on large data; 0 = one pass over the data.")
@_opt("lr_head")
@_opt("lr_backbone")
@_opt("patience", help="Epochs without dev improvement before stopping.")
@_opt("hard_negatives", help="Batch nearby groups together (hard negatives).")
@_opt("monolingual_apart", "--monolingual-apart/--monolingual-mixed",
      help="Batch groups whose snippets are all in one language (e.g. a function and its doc) only with "
           "groups of that language, so the loss cannot reward the language itself.")
@_opt("max_per_group_language", help="Cap snippets per (group, language); 0 = all.")
@_opt("dev_limit", help="Early-stop on about N dev records (whole groups); 0 = all.")
@seed_option(default=_DEFAULTS.seed)
@_opt("save_dtype", choices=SAVE_DTYPES)
@_opt("cache_dir", envvar=CACHE_ENV, show_envvar=True, show_default=False,
      help="Feature cache (default ~/.cache/conba).")
@batch_size_option(default=_DEFAULTS.batch_size,
                   help="Snippets per encoder batch (encoding and caching, not training).")
@device_option(help="Where to train")
@_opt("amp", "--amp/--no-amp", help="bf16 autocast of the backbone on CUDA.")
@time_budget_option(default=_DEFAULTS.time_budget)
@_opt("warmup_steps", help="Linear warm-up of the backbone lr.")
@_opt("init", help="Start from this conba model's backbone weights (name or folder, e.g. default); "
                   "'' = the --backbone as it was pretrained.")
@click.option("--keep", "keep", multiple=True, type=_PATH,
              help="Grouped JSONL whose code keeps the untuned backbone's in-batch similarities "
                   "(a distillation term; repeatable). Needs --keep-weight > 0.")
@_opt("keep_weight", help="Weight of the --keep term (0 = off).")
@_opt("keep_limit", help="Snippets drawn from --keep (0 = all).")
@_opt("keep_batch", help="--keep snippets per training step.")
@restart_option("Discard an existing checkpoint in OUT instead of resuming.")
@progress_option
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
      conba train mined.jsonl mbxp_train.jsonl -D dev.jsonl -o runs/m4 --init default --view code+docs \
          --tune top-k --top-k 1 --head none --keep mined.jsonl --keep-weight 1
    """
    from conba.cli.common import show_progress
    from conba.train.trainer import train as run

    opts["view"] = opts.get("view") or "raw"  # no model to take a view from yet
    opts["keep"] = [str(p) for p in opts.get("keep") or ()]
    cfg = TrainConfig(train=[str(p) for p in train_files], dev=[str(p) for p in dev], out=str(out),
                      use_control=not no_control, use_feedback=not (no_feedback or no_state_path),
                      use_state=not (no_state or no_state_path), residual=not no_residual, **opts)
    run(cfg, restart=restart, progress=show_progress(progress),
        log=lambda m: click.echo(m, err=True))
