"""One meaning per flag across every `conba` subcommand (docs/CLI.md)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.cli.options import DEFAULT_DEVICE, AliasOption, DeviceType


def _commands(group: click.Command = cli, path: str = "conba") -> Iterator[tuple[str, click.Command]]:
    if isinstance(group, click.Group):
        ctx = click.Context(group)
        for name in group.list_commands(ctx):
            yield from _commands(group.get_command(ctx, name), f"{path} {name}")
    else:
        yield path, group


def _options() -> Iterator[tuple[str, click.Option]]:
    for path, command in _commands():
        for param in command.params:
            if isinstance(param, click.Option):
                yield path, param


def _long_name(option: click.Option) -> str | None:
    aliases = option.aliases if isinstance(option, AliasOption) else ()
    longs = [o for o in option.opts if o.startswith("--") and o not in aliases]
    return longs[0] if longs else None


def test_walk_finds_every_subcommand():
    paths = {path for path, _ in _commands()}
    assert {"conba index", "conba search", "conba train", "conba prune train", "conba experiment noise"} <= paths
    assert len(paths) >= 20


def test_each_short_flag_has_one_long_name():
    uses: dict[str, dict[str | None, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path, option in _options():
        for short in (o for o in option.opts + option.secondary_opts if len(o) == 2 and o[0] == "-"):
            uses[short][_long_name(option)].append(path)
    clashes = {short: dict(names) for short, names in uses.items() if len(names) > 1}
    assert not clashes, f"short flags with more than one meaning: {clashes}"


def test_json_is_always_a_flag_and_files_use_json_out():
    for path, option in _options():
        if "--json" in option.opts:
            assert option.is_flag or option.flag_value is not None, f"{path}: --json takes a value"
        if "-j" in option.opts:
            assert "--json-out" in option.opts and isinstance(option.type, click.Path), path


def test_device_is_one_choice_with_one_default():
    devices = [(path, o) for path, o in _options() if o.name == "device"]
    assert len(devices) >= 5
    for path, option in devices:
        assert isinstance(option.type, DeviceType), path
        assert option.default == DEFAULT_DEVICE, path
    convert = DeviceType().convert
    assert convert("CUDA:1", None, None) == "cuda:1"
    assert convert("mps", None, None) == "mps"
    with pytest.raises(click.BadParameter):
        convert("tpu", None, None)


@pytest.mark.parametrize("name,env", [("model", "CONBA_MODEL"), ("index_dir", "CONBA_INDEX"),
                                      ("token", "CONBA_TOKEN"), ("cache_dir", "CONBA_CACHE"),
                                      ("threads", "CONBA_THREADS")])
def test_environment_variables_are_click_envvars_shown_in_help(name, env):
    found = [(path, o) for path, o in _options() if o.name == name and o.envvar == env]
    assert found, f"no option reads {env}"
    for path, option in found:
        assert option.show_envvar, f"{path}: {env} not shown in --help"
    path, _ = found[0]
    out = CliRunner().invoke(cli, [*path.split()[1:], "--help"], terminal_width=200).output
    assert f"env var: {env}" in out


def test_index_reads_conba_index_from_the_environment(tmp_path, monkeypatch):
    from conba.cli.search_cmd import search

    monkeypatch.delenv("CONBA_INDEX", raising=False)
    assert search.make_context("search", ["--code", "x"]).params["index_dir"] is None
    monkeypatch.setenv("CONBA_INDEX", str(tmp_path / "idx"))
    assert search.make_context("search", ["--code", "x"]).params["index_dir"] == str(tmp_path / "idx")
    assert search.make_context("search", ["--code", "x", "-i", "other"]).params["index_dir"] == "other"


def test_old_long_name_still_works_but_is_hidden():
    from conba.cli.merge_cmd import merge_cmd

    ctx = merge_cmd.make_context("merge", ["m", "-a", "0.5", "--output", "o"])
    assert str(ctx.params["out"]) == "o"
    help_text = CliRunner().invoke(cli, ["merge", "--help"]).output
    assert "-o, --out DIR" in help_text and "--output" not in help_text
    missing = CliRunner().invoke(cli, ["merge", "m", "-a", "0.5"])
    assert missing.exit_code == 2 and "'-o' / '--out'" in missing.output
