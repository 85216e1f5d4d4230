"""``conba experiment train``: the research knobs of the ConbaLayer heads reach the TrainConfig."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.train.config import TrainConfig


@pytest.mark.parametrize("args, expected", [
    ([], dict(control_codes="none", use_state=True, use_feedback=True, residual=True, state_a="diag")),
    (["--control-codes"], dict(control_codes="offset")),
    (["--control-codes", "prefix"], dict(control_codes="prefix")),
    (["--control-codes", "both", "--state-a", "dense"], dict(control_codes="both", state_a="dense")),
    (["--no-feedback"], dict(use_state=True, use_feedback=False)),
    (["--no-state"], dict(use_state=False, use_feedback=True)),
    (["--no-state-path"], dict(use_state=False, use_feedback=False)),
    (["--no-residual"], dict(residual=False)),
])
def test_cli_flags_reach_the_train_config(args: list[str], expected: dict, tmp_path, monkeypatch) -> None:
    import conba.train.trainer as trainer_module

    seen: list[TrainConfig] = []
    monkeypatch.setattr(trainer_module, "train", lambda cfg, **kw: seen.append(cfg))
    train = tmp_path / "t.jsonl"
    train.write_text("")
    res = CliRunner().invoke(cli, ["experiment", "train", str(train), *args, "-o", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert {k: getattr(seen[0], k) for k in expected} == expected


def test_cli_rejects_a_bad_control_code_mode(tmp_path) -> None:
    res = CliRunner().invoke(cli, ["experiment", "train", str(tmp_path / "t.jsonl"), "--control-codes", "suffix",
                                   "-o", "o"])
    assert res.exit_code == 2 and "suffix" in res.output
