"""``conba distill``: a shallower, faster student of a model (layer dropping + distillation)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from conba.cli.bare_options import name_only_pointers
from conba.cli.common import friendly_errors, resolve_model_name
from conba.cli.moved import PointerCommand
from conba.cli.options import (
    AliasOption,
    config_option,
    data_files_option,
    dev_files_option,
    device_option,
    limit_option,
    model_option,
    output_dir_option,
    progress_option,
    restart_option,
    seed_option,
    time_budget_option,
)
from conba.cli.paths import InputPath
from conba.train.config import LR_SCHEDULES
from conba.train.distill_config import DistillConfig

_DEFAULTS = DistillConfig()


def _opt(name: str, *decls: str, **kwargs):
    """An option for the DistillConfig field ``name`` (its default comes from there)."""
    return config_option(DistillConfig, name, *decls, **kwargs)


def _layers(value: str) -> list[int]:
    from conba.encoder.sdtp.config import parse_layers
    from conba.errors import ConfigError

    try:
        return parse_layers(value)
    except (ConfigError, ValueError) as exc:
        raise click.BadParameter(str(exc)) from None


@click.command("distill", cls=PointerCommand, moved_options=name_only_pointers("distill"),
               context_settings={"help_option_names": ["-h", "--help"]})
@model_option(help="Teacher: 'default' (shipped), a conba model folder or an HF encoder.")
@output_dir_option("Output model folder: the student (the run's teacher vectors, checkpoint and distill.json "
                   "go to OUT/distill/).")
@click.option("-L", "--layers", default=",".join(map(str, _DEFAULTS.layers)), show_default=True, metavar="LIST",
              help="Teacher layers the student starts from, in order (e.g. '0,2,4' or '0-2').")
@_opt("init", metavar="MODEL", help="Continue from this student (name or folder, e.g. default-fast; as many "
      "layers as -L names) instead of dropping the teacher's layers: more data or epochs on an earlier run (with "
      "--ffn-size, it is narrowed first).")
@data_files_option("JSONL file(s) whose code the student learns on (labels unused; repeatable). "
                   "Default: atcoder_train.jsonl and mbxp_train.jsonl of $CONBA_DATA.")
@click.option("--source", "source", multiple=True, type=InputPath(exists=True, path_type=Path),
              help="Folder or file of real source code; its functions (as `conba index` cuts them) are "
                   "added to the training snippets (repeatable).")
@_opt("source_limit", help="At most this many functions from --source.")
@limit_option("Records sampled from the --data files (0: all).", default=_DEFAULTS.limit)
@dev_files_option(
    "Dev file(s) with clone groups: the best epoch by mean MAP@R over them is kept (repeatable).")
@_opt("dev_limit", help="Records per dev file (whole groups; 0: all).")
@_opt("epochs", "-e", "--epochs")
@_opt("batch_size", "--train-batch-size", metavar="N", cls=AliasOption, deprecated_aliases=["-b", "--batch-size"],
      help="Snippets per training batch.")
@_opt("max_length", "--max-length", metavar="TOKENS", help="Tokens the student reads, in training and after "
      "(0: the teacher's window). The teacher's vectors are still those of its own window, so a shorter one "
      "trains the student to guess them from the first TOKENS.")
@_opt("ffn_size", "--ffn-size", metavar="NEURONS", help="Also narrow each kept layer's feed-forward block to "
      "this many neurons, the most important on a sample of the training code (0: the teacher's width, 1536 "
      "for MiniLM): a faster student at the same depth.")
@_opt("ffn_sample", metavar="N", help="Training snippets the neurons are ranked on (with --ffn-size).")
@_opt("lr", help="Learning rate (AdamW, linear warm-up).")
@_opt("lr_schedule", choices=LR_SCHEDULES,
      help="After the warm-up: keep the rate, or decay it linearly to 0 at the end of the last epoch.")
@_opt("sim_weight", help="Weight of the in-batch similarity (KL) term next to the cosine term.")
@_opt("hidden_weight", help="Weight of the layer-wise term: each student layer's token states follow the "
      "teacher layer it was cut from (TinyBERT; the teacher then runs in every step; 0: off).")
@_opt("attention_weight", help="Weight of the last layer's attention and value-relation term (MiniLM; 0: off).")
@time_budget_option("Stop training after this many seconds (0: none); the student so far is scored and kept.",
                    default=_DEFAULTS.time_budget)
@seed_option(default=_DEFAULTS.seed)
@restart_option()
@device_option(help="Where to train (teacher and student, float32)")
@progress_option
@friendly_errors
def distill(model: str | None, out: Path, layers: str, init: str | None, data: tuple[Path, ...],
            source: tuple[Path, ...], source_limit: int, limit: int, dev: tuple[Path, ...], dev_limit: int,
            epochs: int, batch_size: int, max_length: int, ffn_size: int, ffn_sample: int, lr: float, lr_schedule: str,
            sim_weight: float, hidden_weight: float, attention_weight: float, time_budget: float, seed: int,
            restart: bool, progress: bool | None, device: str = "auto") -> None:
    """Distil a model into a student with fewer transformer layers (faster encoding: half the layers is
    about half the time) and, with --ffn-size, narrower feed-forward blocks. The student keeps the
    teacher's embeddings, head and input view and learns the teacher's vectors and in-batch similarities.
    Running the same command again resumes.

    \b
    Examples:
      conba distill -o runs/student -L 0,2,4 --source ~/src/some-repo -D ../shared/data/atcoder_dev.jsonl
      conba distill -o runs/student2 -L 0,2,5 --init default-fast -d mined.jsonl -D ../shared/data/atcoder_dev.jsonl
      conba distill -o runs/narrow -L 0,2,4,5 --ffn-size 512 -d mined.jsonl -D ../shared/data/atcoder_dev.jsonl
      conba eval ../shared/data/atcoder_dev.jsonl -m runs/student
      conba calibrate ../shared/data/atcoder_dev.jsonl -m runs/student --write   # its own clone threshold
    """
    from conba.cli.common import show_progress
    from conba.data.location import DATA_ENV, data_files
    from conba.train.distill import distill as run

    if not data and (not source or os.environ.get(DATA_ENV)):  # the training files of $CONBA_DATA
        data = tuple(data_files(("atcoder_train.jsonl", "mbxp_train.jsonl"), "training data (-d FILE or --source)"))
    cfg = DistillConfig(teacher=resolve_model_name(model), out=str(out), layers=_layers(layers),
                        init=resolve_model_name(init) if init else None,
                        data=[str(p) for p in data], source=[str(p) for p in source], source_limit=source_limit,
                        limit=limit, dev=[str(p) for p in dev], dev_limit=dev_limit, epochs=epochs,
                        batch_size=batch_size, max_length=max_length, ffn_size=ffn_size, ffn_sample=ffn_sample,
                        lr=lr, lr_schedule=lr_schedule, sim_weight=sim_weight, hidden_weight=hidden_weight,
                        attention_weight=attention_weight, time_budget=time_budget, seed=seed)
    student = run(cfg, restart=restart, log=lambda m: click.echo(m, err=True),
                  progress=show_progress(progress), device=device)
    width = f", {student.backbone.config.ffn_size} feed-forward neurons" if student.backbone.config.ffn_size else ""
    click.echo(f"student ({student.backbone.num_layers} layers{width}, fingerprint {student.fingerprint()}) "
               f"saved in {out}", err=True)
