"""Issue 41 row 3: NaN and infinities are refused by every float option of every command (one shared type,
conba.cli.options.FiniteFloat), so a gate such as ``map --min-coverage nan`` cannot pass silently."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.cli.options import FiniteFloat

NOT_NUMBERS = ("nan", "NaN", "inf", "-inf", "Infinity", "1e999")


def _commands(cmd: click.Command, path: tuple[str, ...] = ()):
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        for name in cmd.list_commands(ctx):
            yield from _commands(cmd.get_command(ctx, name), (*path, name))
    else:
        yield path, cmd


def _float_params() -> list[tuple[str, click.Parameter]]:
    return [(" ".join(path) + " " + p.name, p) for path, cmd in _commands(cli) for p in cmd.params
            if isinstance(p.type, click.types.FloatParamType)]


def test_every_float_option_is_a_finite_float():
    params = _float_params()
    assert len(params) > 20  # the walk found the options (map, train, distill, pretrain, prune, serve, ...)
    plain = [name for name, p in params if not isinstance(p.type, FiniteFloat)]
    assert not plain, f"float options that accept NaN / infinities: {plain}"


@pytest.mark.parametrize("text", NOT_NUMBERS)
def test_every_float_option_refuses_nan_and_infinities(text):
    for name, p in _float_params():
        with pytest.raises(click.BadParameter):
            p.type.convert(text, p, None)
            pytest.fail(f"{name} accepted {text!r}")


def test_finite_float_keeps_numbers_and_bounds():
    assert FiniteFloat()("0.5") == 0.5 and FiniteFloat(0, 100)("100") == 100.0
    with pytest.raises(click.BadParameter, match="not in the range"):
        FiniteFloat(0, 100)("101")
    with pytest.raises(click.BadParameter, match="'nan' is not a finite number"):
        FiniteFloat(0, 100)("nan")


@pytest.mark.parametrize("key", ["min_coverage", "margin", "relax", "contrast", "path_weight", "lexical_weight"])
def test_map_refuses_nan_before_any_work(tmp_path, key):
    config = tmp_path / "map.json"
    config.write_text(f'{{"{key}": NaN}}')
    result = CliRunner().invoke(cli, ["map", str(tmp_path), str(tmp_path), "-i", str(tmp_path / "idx"),
                                      "--config", str(config)])
    assert result.exit_code == 1
    assert f"{key} must be in [" in result.output and f"got nan in {config}" in result.output
    assert not (tmp_path / "idx").exists()


def test_no_help_shows_an_unbounded_range_as_none():
    """Issue 49 row 17: `--lexical-weight` (an unbounded FiniteFloat) showed ``[x<=None]`` in --help."""
    shown = {}
    for name, p in _float_params():
        record = p.get_help_record(click.Context(cli))
        if record is not None:
            shown[name] = record[1]
    assert any("lexical_weight" in name for name in shown)
    assert not [name for name, text in shown.items() if "None" in text], shown
