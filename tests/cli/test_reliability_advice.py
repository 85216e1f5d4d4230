"""Issue 41 row 11: advice names only flags the command has.

Every ``raise`` in the package whose message names a flag (``pass --wait``, ``use --view``, ``with -l LANG``)
is found by walking the source; the flags it names must be options of every command that can meet the error:
the command whose callback raises it, the commands of the same CLI module for its helpers, and for library
modules the commands listed in :data:`REACH` (a module that starts giving advice must be added there). A flag
quoted with its command (```conba index --rebuild```) is checked against that command.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click
import pytest

from conba.cli.main import cli
from helpers.source import parse

ROOT = Path(__file__).resolve().parents[2]
FLAG = re.compile(r"(?<![\w`'-])(--[a-z][a-z0-9-]+|-[a-zA-Z])(?![\w-])")
QUOTED = re.compile(r"`conba ([a-z-]+(?: [a-z-]+)?)([^`]*)`")
OTHER_PROGRAM = re.compile(r"python3? -c \"[^\"]*\"")  # a shell line of another program: its flags are its own

INDEX = ["index", "search", "clones", "map", "eval-repo", "serve"]  # the commands that open an index
MODEL = ["encode", "compare", "eval", "calibrate", "index", "search", "clones", "map"]  # bare HF models (W1)
# library module -> the commands that can meet its advice
REACH: dict[str, list[str]] = {
    "conba_research/bench/gpu.py": ["bench gpu"], "conba_research/bench/gpu_tree.py": ["bench gpu"],
    "conba_research/bench/results.py": ["bench results"], "conba/bench/speed.py": ["bench speed"],
    "conba/clones/compare.py": ["compare", "encode"],  # search names its own option (read_code_path)
    "conba/data/records.py": ["encode"],
    "conba/encoder/backbone.py": MODEL, "conba/model/loading.py": MODEL, "conba/model/persist.py": MODEL,
    "conba/engine/device.py": ["encode", "index", "search", "map", "serve"],
    "conba/settings.py": ["encode", "index", "search", "map", "serve", "train"],
    "conba/eval/calibrate.py": ["calibrate"],
    "conba/heads/prefix.py": ["train"], "conba/model/core.py": ["train"],
    "conba/index/model/identity.py": ["index", "serve"],  # --engine: only where an engine is given
    "conba/index/scale/ray_encode.py": ["index"],
    "conba/index/scale/shards.py": ["index", "search"], "conba/serve/app.py": ["serve"],
    "conba/mapping/build.py": ["map"], "conba/mapping/git_changes.py": ["map"],
    "conba/plagiarism/submissions.py": ["plagiarism"],
    "conba/pretrain/trainer.py": ["pretrain"],
    "conba/prune/train.py": ["prune train"], "conba/prune/train_config.py": ["prune train"],
    "conba/train/checkpoint.py": ["train", "distill", "prune train", "pretrain"],
    "conba/train/config.py": ["train"], "conba/train/trainer.py": ["train"],
    "conba/train/distill.py": ["distill"], "conba/train/distill_config.py": ["distill"],
    "conba/train/distill_data.py": ["distill"],
    "conba/utils/io.py": ["map", "clones", "encode"],
    "conba/cli/options.py": ["encode", "index", "serve"],  # --fast
    "conba/cli/bare_options.py": MODEL,  # bare_model_options
    "conba/cli/search_files.py": ["search"],  # the --files branch of conba search
    "conba_research/config.py": ["experiment ablation", "experiment fair", "experiment figures"],
    "conba_research/data.py": ["experiment ablation", "experiment fair", "experiment figures"],
}
SKIP = {"conba_research/bench/serve_load.py",  # argparse tools behind `conba bench serve-load`, `bench index-scale`:
        "conba_research/bench/ann.py", "conba_research/bench/index_scale.py",  # their advice names their own flags
        "conba_research/window_ship.py"}  # `python -m conba_research.window_ship`: its own argparse flags


def _commands() -> dict[str, click.Command]:
    ctx = click.Context(cli)
    out: dict[str, click.Command] = {}

    def walk(cmd: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), (*path, name))
        elif cmd.params:  # passthrough tools parse their own arguments
            out[" ".join(path)] = cmd

    walk(cli, ())
    return out


COMMANDS = _commands()
# the product; the research suite when its commands are plugged in (installed, or on the path: tests/helpers)
PACKAGES = (ROOT / "src" / "conba",) + ((ROOT / "research" / "src" / "conba_research",) if "experiment" in COMMANDS
                                       or any(n.startswith("experiment ") for n in COMMANDS) else ())


def _flags(cmd: click.Command) -> set[str]:
    return {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}


def _text(node: ast.AST) -> str:
    text = " ".join(n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    return OTHER_PROGRAM.sub("", text)


def _advice() -> list[tuple[str, int, str, str]]:
    """(module, line, enclosing function, message text) of every raise that names a flag."""
    found = []
    for base in PACKAGES:
        for path in sorted(base.rglob("*.py")):
            module = path.relative_to(base.parent).as_posix()
            if module in SKIP:
                continue
            tree = parse(path.read_text(encoding="utf-8"))
            parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Raise) and node.exc is not None:
                    text = _text(node.exc)
                    if FLAG.search(QUOTED.sub("", text)) or QUOTED.search(text):
                        up = node
                        while up in parents and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            up = parents[up]
                        found.append((module, node.lineno, getattr(up, "name", ""), text))
    return found


def _reach(module: str, function: str) -> list[str]:
    by_callback = [name for name, cmd in COMMANDS.items()
                   if cmd.callback is not None and _module_path(cmd) == module
                   and getattr(cmd.callback, "__name__", "") == function]
    if by_callback:
        return by_callback
    same_module = [name for name, cmd in COMMANDS.items() if _module_path(cmd) == module]
    return same_module or REACH.get(module, [])


def _module_path(cmd: click.Command) -> str:
    callback = cmd.callback
    while hasattr(callback, "__wrapped__"):
        callback = callback.__wrapped__
    return callback.__module__.replace(".", "/") + ".py"


def test_the_walk_finds_advice():
    found = _advice()
    assert len(found) > 30 and any(m == "conba/index/storage/lock.py" for m, *_ in found)


def test_every_advice_names_flags_the_command_has():
    problems, unplaced = [], []
    for module, line, function, text in _advice():
        where = f"{module}:{line}"
        for command, rest in QUOTED.findall(text):
            command = command if command in COMMANDS else command.split()[0]
            if command not in COMMANDS:
                problems.append(f"{where}: `conba {command}` is not a command")
                continue
            missing = [f for f in FLAG.findall(rest) if f not in _flags(COMMANDS[command])]
            if missing:
                problems.append(f"{where}: `conba {command}` has no {', '.join(missing)}")
        flags = FLAG.findall(QUOTED.sub("", text))
        if not flags:
            continue
        reach = _reach(module, function)
        if not reach:
            unplaced.append(f"{where} ({function}): names {flags}")
            continue
        for name in reach:
            missing = sorted({f for f in flags if f not in _flags(COMMANDS[name])})
            if missing:
                problems.append(f"{where} ({function}): advises {', '.join(missing)} to `conba {name}`")
    assert not unplaced, "advice in a module without a REACH entry:\n" + "\n".join(unplaced)
    assert not problems, "advice naming flags the command lacks:\n" + "\n".join(problems)


@pytest.mark.parametrize("text,flags", [("pass --wait, or use another --index folder", ["--wait", "--index"]),
                                        ("run `conba index --rebuild`", []), ("a-b -1 x--y", [])])
def test_flag_pattern(text, flags):
    assert FLAG.findall(QUOTED.sub("", text)) == flags


def test_the_commands_of_reach_exist():
    assert not {c for cs in REACH.values() for c in cs} - set(COMMANDS)
