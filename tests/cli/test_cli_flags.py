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
        for short in (o for o in _visible_opts(option) if len(o) == 2 and o[0] == "-"):
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

    ctx = merge_cmd.make_context("merge", ["m", "-a", "0.5", "--out", "o"])
    assert str(ctx.params["out"]) == "o"
    help_text = CliRunner().invoke(cli, ["merge", "--help"]).output
    assert "-o, --output DIR" in help_text and "--out " not in help_text
    missing = CliRunner().invoke(cli, ["merge", "m", "-a", "0.5"])
    assert missing.exit_code == 2 and "'-o' / '--output'" in missing.output


def _meaning(option: click.Option) -> tuple:
    """What a flag is, beyond its name: a switch, or its value's type (a file, a folder, a number...)
    and metavar."""
    if option.is_flag or option.count:
        return ("flag",)
    t = option.type
    kind = "Choice" if isinstance(t, click.Choice) else type(t).__name__  # conba train --head: a Choice
    if isinstance(t, click.Path):
        kind += "(file)" if not t.dir_okay else "(dir)" if not t.file_okay else ""
    return kind, option.metavar


def _visible_opts(option: click.Option) -> list[str]:
    aliases = option.aliases if isinstance(option, AliasOption) else ()
    return [o for o in option.opts + option.secondary_opts if o not in aliases]


def test_each_short_flag_has_one_meaning():
    """Same short flag, same kind of value and metavar, in every command (hidden old spellings aside)."""
    uses: dict[str, dict[tuple, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path, option in _options():
        for short in (o for o in _visible_opts(option) if len(o) == 2 and o[0] == "-"):
            uses[short][_meaning(option)].append(path)
    clashes = {short: dict(kinds) for short, kinds in uses.items() if len(kinds) > 1 and short != "-o"}
    assert not clashes, f"short flags with more than one meaning: {clashes}"
    assert {"-b", "-n", "-d", "-l", "-c", "-i", "-m"} <= set(uses)


def test_long_flags_take_one_kind_of_value():
    """A long flag is a switch everywhere or takes a value everywhere, of one type (choices may differ)."""
    kinds: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path, option in _options():
        long = _long_name(option)
        if long and long != "--output":
            kinds[long][_meaning(option)[0]].append(path)
    clashes = {name: dict(k) for name, k in kinds.items() if len(k) > 1}
    assert not clashes, f"long flags with more than one kind of value: {clashes}"


def test_output_is_where_the_result_goes_a_file_or_a_folder_said_in_the_metavar():
    files, folders = set(), set()
    for path, option in _options():
        if "-o" in _visible_opts(option) or "--output" in _visible_opts(option):
            assert option.opts[:2] == ["-o", "--output"], path
            assert isinstance(option.type, click.Path), path
            assert option.metavar in ("FILE", "DIR"), path
            if option.metavar == "FILE":
                files.add(path)
            else:
                assert not option.type.file_okay, path
                folders.add(path)
    assert {"conba clones", "conba encode"} <= files
    assert {"conba train", "conba distill", "conba merge", "conba prune train"} <= folders


@pytest.mark.parametrize("flag,metavar", [("--time-budget", "SECONDS"), ("-b", "N"), ("-n", "N"), ("-d", "FILE"),
                                          ("--seed", "N")])
def test_shared_options_have_one_unit(flag, metavar):
    found = [(path, o) for path, o in _options() if flag in _visible_opts(o)]
    assert len(found) >= 2, flag
    for path, option in found:
        assert option.metavar == metavar, f"{path} {flag}: {option.metavar}"


def test_batch_size_is_an_encoder_batch_and_training_batches_have_their_own_name():
    for path, option in _options():
        if "-b" in _visible_opts(option):
            assert "train" not in (option.help or "").lower().replace("not training", ""), path
    for cmd in (["distill"], ["pretrain"]):
        help_text = CliRunner().invoke(cli, [*cmd, "--help"]).output
        assert "--train-batch-size N" in help_text and "-b," not in help_text, cmd


def test_old_spellings_still_work():
    from conba.cli.clones_cmd import clones
    from conba.cli.compare_cmd import compare
    from conba.cli.distill_cmd import distill
    from conba.cli.search_cmd import search

    assert clones.make_context("clones", ["--output", "x.html"]).params["output"] == "x.html"
    assert clones.make_context("clones", ["-o", "x.html"]).params["output"] == "x.html"
    assert compare.make_context("compare", ["-c", "a", "b"]).params["code"] is True
    assert compare.make_context("compare", ["--snippets", "a", "b"]).params["code"] is True
    assert search.make_context("search", ["-l", "go"]).params["language"] == "go"
    assert search.make_context("search", ["--result-language", "go"]).params["language"] == "go"
    assert distill.make_context("distill", ["-o", "x", "-b", "8"]).params["batch_size"] == 8
    assert distill.make_context("distill", ["--out", "x", "--time-budget", "90"]).params["time_budget"] == 90


def test_training_options_come_from_the_config_dataclasses():
    from conba.cli.distill_cmd import distill
    from conba.cli.prune_cmd import train as prune_train
    from conba.cli.train_cmd import train
    from conba.prune.train_config import PruneTrainConfig
    from conba.train.config import HEADS, TrainConfig
    from conba.train.distill_config import DistillConfig

    for command, config in ((train, TrainConfig()), (distill, DistillConfig()), (prune_train, PruneTrainConfig())):
        checked = 0
        skip = {"layers", "data", "dev", "out", "cache_dir", "view", "device", "model"}  # shared, or converted
        for param in command.params:
            if isinstance(param, click.Option) and hasattr(config, param.name) and param.name not in skip:
                default = getattr(config, param.name)
                if isinstance(default, list):
                    continue
                assert param.default == default, f"{command.name} --{param.name}: {param.default} != {default}"
                checked += 1
        assert checked >= 5, command.name
    from conba.heads import HEAD_KINDS, head_kinds

    assert tuple(HEADS) == tuple(HEAD_KINDS) and set(HEADS) <= set(head_kinds())


def test_docs_cli_lists_every_short_flag_with_its_long_name():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "CLI.md").read_text(encoding="utf-8")
    documented = dict(re.findall(r"^\| `(-\w)` \| `(--[\w-]+)", text, flags=re.M))
    in_code = {}
    for _, option in _options():
        for short in (o for o in _visible_opts(option) if len(o) == 2 and o[0] == "-"):
            in_code[short] = _long_name(option)
    in_code.pop("-h", None)
    documented.pop("-h", None)
    assert documented == in_code


def _hidden(option: click.Option) -> tuple[list[str], list[str]]:
    """(aliases that keep their meaning, deprecated aliases) of an option."""
    if not isinstance(option, AliasOption):
        return [], []
    return [a for a in option.aliases if a not in option.deprecated_aliases], list(option.deprecated_aliases)


def test_hidden_aliases_mean_what_the_flag_means_everywhere():
    """A kept hidden alias has one meaning across commands, the same as where the flag is visible; an alias
    whose letters mean something else elsewhere is deprecated (it warns), never silently kept."""
    meanings: dict[str, set[tuple]] = defaultdict(set)
    for _, option in _options():
        for flag in _visible_opts(option) + _hidden(option)[0]:
            meanings[flag].add((_long_name(option), _meaning(option)))
    kept = {a for _, o in _options() for a in _hidden(o)[0]}
    assert kept, "no hidden alias found: the walk is broken"
    clashes = {flag: meanings[flag] for flag in kept if len(meanings[flag]) > 1 and flag not in ("-o", "--output")}
    assert not clashes, f"hidden aliases with more than one meaning: {clashes}"
    deprecated = {a: path for path, o in _options() for a in _hidden(o)[1]}
    assert {"-c", "-l", "-b", "-d"} <= set(deprecated)
    for flag, path in deprecated.items():
        others = {m for m in meanings.get(flag, set())}
        assert others, f"{path} {flag}: deprecated, but no other command uses it: make it a kept alias or drop it"


@pytest.mark.parametrize("args,alias,param,value,use", [
    (["compare", "-c", "a", "b"], "-c", "code", True, "--snippets"),
    (["search", "-l", "go"], "-l", "language", "go", "--result-language"),
    (["search", "--language", "go"], "--language", "language", "go", "--result-language"),
    (["distill", "-o", "x", "-b", "8"], "-b", "batch_size", 8, "--train-batch-size"),
    (["pretrain", "-o", "x", "--batch-size", "8"], "--batch-size", "batch_size", 8, "--train-batch-size"),
])
def test_a_deprecated_alias_works_and_warns(args, alias, param, value, use, capsys):
    command = cli.get_command(click.Context(cli), args[0])
    assert command.make_context(args[0], args[1:], resilient_parsing=True).params[param] == value
    err = capsys.readouterr().err
    assert f"{alias} is deprecated" in err and f"use {use}" in err
    command.make_context(args[0], [a if a != alias else use for a in args[1:]], resilient_parsing=True)
    assert "deprecated" not in capsys.readouterr().err


def test_help_examples_use_visible_flags():
    for path, command in _commands():
        hidden = {a for p in command.params if isinstance(p, AliasOption) for a in p.aliases}
        text = command.help or ""
        examples = [line.split("#")[0].split() for line in text.splitlines() if line.strip().startswith(path)]
        used = {word.split("=")[0] for words in examples for word in words}
        assert not used & hidden, f"{path}: help examples use hidden flags {used & hidden}"


def test_one_definition_of_each_output_option():
    import re
    from pathlib import Path

    from conba.cli.formats import DEFAULTS, RECORDS, REPORT

    src = Path(__file__).resolve().parents[2] / "src"
    pattern = re.compile(r"""click\.option\([^)]*["'](--plain|--json|--format)["']""")
    found = [f"{p.relative_to(src)}: {m.group(1)}" for p in src.rglob("*.py")
             for m in pattern.finditer(p.read_text(encoding="utf-8"))]
    assert found == ["conba/cli/formats.py: --format", "conba/cli/formats.py: --json", "conba/cli/formats.py: --plain"]
    assert DEFAULTS == {RECORDS: "jsonl", REPORT: "plain"}
    for path, command in _commands():
        params = {p.name: p for p in command.params}
        if "fmt_choice" in params:
            choices = params["fmt_choice"].type.choices
            if "json" in choices or "jsonl" in choices:
                assert "fmt_json" in params, path
            assert ("plain" in choices) == ("fmt_plain" in params), path


@pytest.mark.parametrize("args,expected", [([], "plain"), (["--json"], "json"), (["-f", "json"], "json"),
                                           (["--plain"], "plain"), (["--json", "-f", "json"], "json")])
def test_format_shorthands_resolve_to_one_format(args, expected):
    from conba.cli.formats import REPORT, format_option

    @click.command()
    @format_option(REPORT, ("plain", "json"))
    def report(fmt: str) -> None:
        click.echo(fmt)

    assert CliRunner().invoke(report, args).output.strip() == expected


def test_format_shorthands_that_disagree_are_an_error():
    from conba.cli.formats import RECORDS, format_option

    @click.command()
    @format_option(RECORDS, ("jsonl", "csv", "plain"))
    def records(fmt: str) -> None:
        click.echo(fmt)

    assert CliRunner().invoke(records, []).output.strip() == "jsonl"
    assert CliRunner().invoke(records, ["--json"]).output.strip() == "jsonl"
    bad = CliRunner().invoke(records, ["-f", "csv", "--plain"])
    assert bad.exit_code == 2 and "--format (csv) and --plain (plain) disagree" in bad.output
