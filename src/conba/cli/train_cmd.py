"""``conba train``: contrastive training of a head (and optionally the backbone) on a user's grouped pairs.

What a user needs to tune a model is an option; every other knob of :class:`conba.train.config.TrainConfig`
is a key of the training configuration (``--config FILE``, docs/TRAIN_CONFIG.md); the ConbaLayer ablation
switches and head shapes are options of ``conba experiment train`` (the research suite). An old flag points
to where it went (:mod:`conba.cli.moved`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from conba.cli.common import friendly_errors
from conba.cli.moved import PointerCommand, to_config_file, to_research
from conba.cli.options import (
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
from conba.errors import ConfigError
from conba.train.config import TUNE_MODES, TrainConfig
from conba.utils.head_kinds import RESEARCH_KINDS, head_kinds, missing_kind_message

_PATH = InputPath(dir_okay=False, path_type=Path)
_DEFAULTS = TrainConfig()
RESEARCH_SWITCHES = ["--head-mode", "--state-dim", "--state-a", "--no-control", "--no-feedback", "--no-state",
                     "--no-state-path", "--no-residual", "--control-codes"]
CONFIG_KEYS = ["--split-identifiers", "--loss", "--steps-per-epoch", "--patience", "--hard-negatives",
               "--monolingual-apart", "--monolingual-mixed", "--max-per-group-language", "--dev-limit",
               "--save-dtype", "--cache-dir", "--amp", "--no-amp", "--warmup-steps", "--keep", "--keep-weight",
               "--keep-limit", "--keep-batch"]
MOVED = {**to_config_file(CONFIG_KEYS, "training configuration", "train", "docs/TRAIN_CONFIG.md"),
         **to_research(RESEARCH_SWITCHES, "experiment train")}
for _flag, _old, _new in (("--monolingual-mixed", '"monolingual_mixed": ...', '"monolingual_apart": false'),
                          ("--no-amp", '"amp": ...', '"amp": false')):
    MOVED[_flag] = MOVED[_flag].replace(_old, _new)


class HeadKind(click.Choice):
    """``--head``: the head kinds installed here (conba.utils.head_kinds); a research kind without the research
    suite fails with the one-line pointer to it."""

    def __init__(self) -> None:
        super().__init__(list(head_kinds()))

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value in RESEARCH_KINDS and value not in self.choices:
            self.fail(missing_kind_message(value), param, ctx)
        return super().convert(value, param, ctx)


def _opt(name: str, *decls: str, **kwargs):
    """An option for the TrainConfig field ``name`` (its default and choices come from there)."""
    return config_option(TrainConfig, name, *decls, **kwargs)


def train_options(f: Callable) -> Callable:
    """The options of ``conba train`` (``conba experiment train`` adds the research ones to them)."""
    for option in reversed([
        dev_files_option("Dev file(s) for early stopping (repeatable)."),
        output_dir_option("Output model folder (training artefacts go to OUT/training/)."),
        click.option("--config", "config_file", default=None, type=_PATH, metavar="FILE",
                     help="Training configuration (JSON): any TrainConfig keys (loss, patience, warmup_steps, "
                          "keep, ...; docs/TRAIN_CONFIG.md); an option given here wins over the file."),
        _opt("backbone", help="HF encoder name or local folder; 'default' = embedded all-MiniLM-L6-v2."),
        _opt("init", help="Start from this conba model's backbone weights (name or folder, e.g. default); "
                          "'' = the --backbone as it was pretrained."),
        _opt("max_length", help="Truncation length in tokens."),
        _opt("pooling", type=click.Choice(["", *POOLING_NAMES]), metavar=f"[{'|'.join(POOLING_NAMES)}]",
             show_default=False, help="Read-out of the backbone: overrides its own (its sentence-transformers "
                                      "Pooling module, else the last token for decoders, the mean for encoders)."),
        _opt("trust_remote_code", "--trust-remote-code", is_flag=True,
             help="Let the backbone run code from its folder or hub repository (never the default; recorded in "
                  "the saved model, which then needs it again)."),
        view_option,
        _opt("head", type=HeadKind(), help="Head over the backbone's states: linear, or none (pooling only); "
                                           "conba / conba-scan are the research suite's heads."),
        _opt("tune", choices=TUNE_MODES, help="Backbone tuning: frozen+cached, top k layers, or all layers."),
        _opt("top_k", help="Layers trained with --tune top-k."),
        _opt("epochs", "-e", "--epochs"),
        _opt("groups_per_batch", "-P", "--groups-per-batch", help="Groups per batch (P)."),
        _opt("per_group", "-K", "--per-group", help="Snippets per group (K)."),
        _opt("lr_head"),
        _opt("lr_backbone"),
        _opt("temperature", help="Loss temperature τ."),
        time_budget_option(default=_DEFAULTS.time_budget),
        seed_option(default=_DEFAULTS.seed),
        batch_size_option(default=_DEFAULTS.batch_size,
                          help="Snippets per encoder batch (encoding and caching, not training)."),
        device_option(help="Where to train"),
        restart_option("Discard an existing checkpoint in OUT instead of resuming."),
        progress_option,
    ]):
        f = option(f)
    return f


def run_train(train_files: tuple[Path, ...], dev: tuple[Path, ...], out: Path, config_file: Path | None,
              restart: bool, progress: bool | None, opts: Mapping[str, Any],
              overrides: Mapping[str, Any] | None = None) -> None:
    """Train with TrainConfig = the defaults, then ``config_file``'s keys, then the options given on the
    command line (an option left at its default does not override the file), then ``overrides``."""
    from conba.cli.common import show_progress
    from conba.train.trainer import train as run

    ctx = click.get_current_context()
    from_file = TrainConfig.load(config_file).to_dict() if config_file is not None else {}
    given = {k: v for k, v in opts.items()
             if k not in from_file or ctx.get_parameter_source(k) not in (ParameterSource.DEFAULT, None)}
    settings = {**_DEFAULTS.to_dict(), **from_file, **given, **(overrides or {})}
    settings["view"] = settings.get("view") or "raw"  # no model to take a view from yet
    settings["keep"] = [str(p) for p in settings.get("keep") or ()]
    settings.update(train=[str(p) for p in train_files], dev=[str(p) for p in dev], out=str(out))
    cfg = TrainConfig.from_dict(settings, source=config_file)
    try:
        cfg.validate()
    except (ConfigError, ValueError) as exc:  # a setting of the file, or of an option: name the file too
        raise ConfigError(f"{exc}{f' (settings of {config_file} and the options)' if config_file else ''}") from None
    run(cfg, restart=restart, progress=show_progress(progress), log=lambda m: click.echo(m, err=True))


@click.command("train", cls=PointerCommand, moved_options=MOVED)
@click.argument("train_files", nargs=-1, required=True, type=_PATH)
@train_options
@friendly_errors
def train(train_files: tuple[Path, ...], dev: tuple[Path, ...], out: Path, config_file: Path | None,
          restart: bool, progress: bool | None, **opts) -> None:
    """Train a model on grouped JSONL files (or the research pair format).

    An interrupted run resumes from OUT/training/checkpoint when started again with the same
    settings. The best model on dev MAP@R is saved to OUT, with the clone threshold calibrated on dev.
    --view (default raw) is applied to the training and dev snippets and saved with the model, so
    it encodes with the same view. Every other setting (loss, patience, warm-up, the --keep distillation
    term, ...) is a key of --config FILE (docs/TRAIN_CONFIG.md).

    \b
    Examples:
      conba train ../shared/data/mbxp_train.jsonl -D ../shared/data/mbxp_dev.jsonl -o runs/m1 --head linear
      conba train train.jsonl -D dev.jsonl -o runs/m2 --head linear --tune top-k --top-k 2
      conba train mined.jsonl mbxp_train.jsonl -D dev.jsonl -o runs/m3 --init default --view code+docs \\
          --tune top-k --top-k 1 --head none --config keep.json
      # keep.json: {"keep": ["mined.jsonl"], "keep_weight": 1}
    """
    run_train(train_files, dev, out, config_file, restart, progress, opts)
