"""``conba experiment``: help, option parsing and one-line errors for bad input."""

import json

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba_research.cli import build_config


def run(*args):
    return CliRunner().invoke(cli, ["experiment", *args])


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default work folder (runs/experiments) is relative


def test_help_lists_subcommands_and_examples():
    res = run("--help")
    assert res.exit_code == 0
    for sub in ("ablation", "classifiers", "temperature", "figures", "noise", "all"):
        assert sub in res.output
    res = run("all", "--help")
    assert res.exit_code == 0 and "Examples:" in res.output and "--quick" in res.output


def test_build_config_quick_preset_and_overrides(data_dir):
    cfg = build_config({"data": data_dir, "quick": True, "seeds": "3,4", "epochs": 5, "device": "cpu"})
    assert cfg.quick and cfg.seeds == [3, 4] and cfg.epochs == 5 and cfg.max_length == 128
    assert [p.split("/")[-1] for p in cfg.train] == ["tiny_train.jsonl"]
    full = build_config({"data": data_dir})
    assert not full.quick and full.seeds == [0, 1, 2] and full.max_length == 256
    explicit = build_config({"data": data_dir, "dev_files": (data_dir / "tiny_train.jsonl",)})
    assert [p.split("/")[-1] for p in explicit.dev] == ["tiny_train.jsonl"]


@pytest.mark.parametrize("args,msg", [
    (["ablation", "-o", "OUT"], "no training data"),
    (["ablation", "-d", "NOPE", "-o", "OUT"], "not a folder"),
    (["ablation", "-d", "DATA", "-o", "OUT", "--variants", "conba,typo"], "unknown variant"),
    (["ablation", "-d", "DATA", "-o", "OUT", "--seeds", "0,x"], "comma-separated integers"),
    (["ablation", "-d", "DATA", "-o", "OUT", "--seeds", "1,1"], "seeds must be distinct"),
    (["temperature", "-d", "DATA", "-o", "OUT", "--temperatures", "0.1,-1"], "temperatures must be > 0"),
    (["temperature", "-d", "DATA", "-o", "OUT", "--temperatures", "a"], "comma-separated numbers"),
    (["classifiers", "-d", "DATA", "-o", "OUT", "--classifiers", "mlp,xgb"], "unknown classifier"),
    (["all", "-d", "DATA", "-o", "OUT", "--skip", "everything"], "unknown part"),
    (["all", "-d", "DATA", "-o", "OUT", "--epochs", "0"], "epochs must be >= 1"),
    (["all", "-d", "DATA", "-o", "OUT", "--threads", "-1"], "threads must be >= 0"),
    (["classifiers", "-d", "DATA", "-o", "OUT", "--pairs", "3"], "must be >= 20"),
    (["temperature", "-d", "DATA", "-o", "OUT", "--temperature-seeds", "0"], "must be >= 1"),
    (["noise", "-d", "DATA/tiny_dev.jsonl", "-o", "OUT", "--levels", "0,2"], "levels must be in"),
    (["noise", "-d", "DATA/missing.jsonl", "-o", "OUT"], "missing.jsonl"),
])
def test_bad_input_is_a_one_line_error(data_dir, tmp_path, args, msg):
    args = [a.replace("DATA", str(data_dir)).replace("OUT", str(tmp_path / "out")) for a in args]
    res = run(*args)
    assert res.exit_code != 0
    assert msg in res.output, res.output
    assert "Traceback" not in res.output


def test_noise_missing_module_error(data_dir, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "conba_research.noise", None)
    res = run("noise", "-d", str(data_dir / "tiny_dev.jsonl"), "-o", str(tmp_path / "o"))
    assert res.exit_code == 1 and "not available" in res.output


@pytest.mark.slow
def test_ablation_cli_end_to_end(tiny_backbone, data_dir, tmp_path):
    res = run("ablation", "-d", str(data_dir), "-o", str(tmp_path / "abl"), "-w", str(tmp_path / "w"),
              "--backbone", str(tiny_backbone), "--variants", "no_conba,conba", "--seeds", "0", "-e", "1",
              "-P", "2", "-K", "2", "--cap", "0", "--dev-limit", "0", "--cache-dir", str(tmp_path / "cache"),
              "--device", "cpu", "--no-progress")
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "abl" / "ablation.json").read_text())
    assert list(data["variants"]) == ["no_conba", "conba"]
    md = (tmp_path / "abl" / "ablation.md").read_text()
    assert "conba experiment ablation" in md and "| `conba` | 1 |" in md


def test_recorded_command_keeps_zero_values():
    import click

    from conba_research.cli import command_line

    @click.command("fake")
    @click.option("-l", "--limit", type=int, default=300)
    @click.option("--scale", type=float, default=None)
    @click.option("--flag/--no-flag", default=False)
    @click.option("--tag", "tags", multiple=True)
    @click.option("--name", default=None)
    def fake(**_):
        click.echo(command_line())

    res = CliRunner().invoke(fake, ["--limit", "0", "--scale", "0.0", "--tag", "a", "--tag", "b c"])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == "conba experiment fake --limit 0 --scale 0.0 --tag a --tag 'b c'"
    res = CliRunner().invoke(fake, ["--flag"])  # unset options (None, False, ()) stay out
    assert res.output.strip() == "conba experiment fake --limit 300 --flag"
