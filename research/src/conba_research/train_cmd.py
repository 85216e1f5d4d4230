"""``conba experiment train``: ``conba train`` with the research knobs of the ConbaLayer heads — the ablation
switches (--no-control, --no-feedback, --no-state, --no-state-path, --no-residual), the head shape
(--head-mode, --state-dim, --state-a) and the language control codes (--control-codes). The product's
``conba train`` points here for each of them."""

from __future__ import annotations

from pathlib import Path

import click

from conba.cli.common import friendly_errors
from conba.cli.options import config_option
from conba.cli.paths import InputPath
from conba.cli.train_cmd import run_train, train_options
from conba.train.config import CONTROL_CODES, HEAD_MODES, STATE_AS, TrainConfig


def _opt(name: str, *decls: str, **kwargs):
    return config_option(TrainConfig, name, *decls, **kwargs)


@click.command("train")
@click.argument("train_files", nargs=-1, required=True, type=InputPath(dir_okay=False, path_type=Path))
@train_options
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
@friendly_errors
def train(train_files: tuple[Path, ...], dev: tuple[Path, ...], out: Path, config_file: Path | None, restart: bool,
          progress: bool | None, no_control: bool, no_feedback: bool, no_state: bool, no_state_path: bool,
          no_residual: bool, **opts) -> None:
    """Train a model with the research knobs of the ConbaLayer heads (every option of `conba train` too).

    \b
    Examples:
      conba experiment train train.jsonl -D dev.jsonl -o runs/a1 --head conba --no-control
      conba experiment train train.jsonl -D dev.jsonl -o runs/a2 --head conba-scan --control-codes both
    """
    switches = {"use_control": not no_control, "use_feedback": not (no_feedback or no_state_path),
                "use_state": not (no_state or no_state_path), "residual": not no_residual}
    given = {"use_control": no_control, "use_feedback": no_feedback or no_state_path,
             "use_state": no_state or no_state_path, "residual": no_residual}
    run_train(train_files, dev, out, config_file, restart, progress, opts,
              overrides={k: v for k, v in switches.items() if given[k]})
