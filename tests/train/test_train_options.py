"""``conba train`` keeps what a user needs to tune a model on their own pairs (at most 25 options); the other
TrainConfig knobs are keys of ``--config FILE`` (docs/TRAIN_CONFIG.md), the research knobs options of
``conba experiment train``; every old flag points to where it went in one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.cli.train_cmd import MOVED
from conba.train.config import TrainConfig
from helpers import train_config

DOC = Path(__file__).resolve().parents[2] / "docs" / "TRAIN_CONFIG.md"
MAX_TRAIN_OPTIONS = 25
# the flags `conba train` had before the configuration file and the research suite took some
OLD_FLAGS = ["--split-identifiers", "--head-mode", "--state-dim", "--state-a", "--no-control", "--no-feedback",
             "--no-state", "--no-state-path", "--no-residual", "--control-codes", "--loss", "--steps-per-epoch",
             "--patience", "--hard-negatives", "--monolingual-apart", "--monolingual-mixed",
             "--max-per-group-language", "--dev-limit", "--save-dtype", "--cache-dir", "--amp", "--no-amp",
             "--warmup-steps", "--keep", "--keep-weight", "--keep-limit", "--keep-batch"]


def _options(help_text: str) -> list[str]:
    return [line.split()[0].rstrip(",") for line in help_text.split("Options:")[1].splitlines()
            if re.match(r"^  -", line)]


def test_train_help_has_at_most_25_options():
    out = CliRunner().invoke(cli, ["train", "--help"])
    assert out.exit_code == 0 and len(_options(out.output)) <= MAX_TRAIN_OPTIONS, _options(out.output)


@pytest.mark.parametrize("flag", OLD_FLAGS)
def test_every_removed_flag_points_where_it_went(flag, tmp_path):
    assert flag in MOVED
    out = CliRunner().invoke(cli, ["train", str(tmp_path / "t.jsonl"), flag, "1", "-o", str(tmp_path / "o")])
    assert out.exit_code == 2
    (line,) = [x for x in out.output.splitlines() if x.startswith("Error:")]
    assert line.startswith(f"Error: {flag} moved to ")
    if "experiment train" not in line:
        key = re.search(r'\{"(\w+)": ', line).group(1)
        assert key in TrainConfig().to_dict() and f"`{key}`" in DOC.read_text(encoding="utf-8")


def test_the_file_sets_knobs_and_a_given_option_wins(tmp_path, monkeypatch):
    import conba.train.trainer as trainer_module

    seen: list[TrainConfig] = []
    monkeypatch.setattr(trainer_module, "train", lambda cfg, **kw: seen.append(cfg))
    data = tmp_path / "t.jsonl"
    data.write_text("")
    config = train_config(tmp_path, patience=7, warmup_steps=5, epochs=3, head="linear", keep=["k.jsonl"],
                          keep_weight=0.5)
    base = ["train", str(data), "-o", str(tmp_path / "o"), "--config", config]
    assert CliRunner().invoke(cli, base).exit_code == 0
    assert CliRunner().invoke(cli, [*base, "-e", "1", "--head", "none"]).exit_code == 0
    file_only, overridden = seen
    assert (file_only.patience, file_only.warmup_steps, file_only.epochs, file_only.head) == (7, 5, 3, "linear")
    assert file_only.keep == ["k.jsonl"] and file_only.keep_weight == 0.5 and file_only.train == [str(data)]
    assert (overridden.epochs, overridden.head, overridden.patience) == (1, "none", 7)
    assert CliRunner().invoke(cli, ["train", str(data), "-o", "o"]).exit_code == 0
    assert seen[-1].patience == TrainConfig().patience  # no file: the defaults


def test_a_bad_file_fails_in_one_line_naming_it(tmp_path):
    data = tmp_path / "t.jsonl"
    data.write_text("")
    config = train_config(tmp_path, patiense=7)
    out = CliRunner().invoke(cli, ["train", str(data), "-o", str(tmp_path / "o"), "--config", config])
    assert out.exit_code == 1
    assert f"unknown train config key 'patiense' in {config}" in out.output and "Traceback" not in out.output
