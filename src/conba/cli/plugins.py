"""Commands other installed distributions add to ``conba``: the entry-point group ``conba.commands``.

The product's CLI runs click commands only. A distribution adds its own by declaring entry points whose
objects are click commands (or groups):

    [project.entry-points."conba.commands"]
    experiment = "conba_research.cli:experiment"          # conba experiment ...
    "bench.gpu" = "conba_research.bench.gpu_cmd:gpu"      # conba bench gpu ...

A name without a dot is a top-level command; ``GROUP.NAME`` adds NAME to the product's group GROUP
(``bench``). A product command keeps its name: a plug-in of the same name is ignored. Nothing is imported
until the command is listed or run. The research suite (``pip install -e research/``) is such a
distribution (research/README.md).
"""

from __future__ import annotations

import importlib.metadata

import click

from conba.errors import ConfigError

ENTRY_POINT_GROUP = "conba.commands"


def entry_points() -> list[importlib.metadata.EntryPoint]:
    """The installed entry points of the ``conba.commands`` group."""
    return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def plugin_commands(parent: str = "") -> dict[str, importlib.metadata.EntryPoint]:
    """Command name -> entry point, for the commands plugged into ``parent`` ('' = the top level)."""
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for point in entry_points():
        group, _, name = point.name.rpartition(".")
        if group == parent and name:
            found.setdefault(name, point)
    return found


def load_command(point: importlib.metadata.EntryPoint) -> click.Command:
    """The click command an entry point names; a one-line error when it is something else."""
    command = point.load()
    if not isinstance(command, click.Command):
        raise ConfigError(f"entry point {point.name} = {point.value} (group {ENTRY_POINT_GROUP}) "
                          f"is not a click command")
    return command


class PluginGroup(click.Group):
    """A click group that also lists and runs the commands plugged into it (``plugin_name`` in the entry
    point names: ``bench`` for ``bench.NAME``)."""

    plugin_name = ""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *plugin_commands(self.plugin_name)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        own = super().get_command(ctx, cmd_name)
        if own is not None:
            return own
        point = plugin_commands(self.plugin_name).get(cmd_name)
        return load_command(point) if point is not None else None


class BenchGroup(PluginGroup):
    """``conba bench``: ``speed`` here, the developer benchmarks from the research suite."""

    plugin_name = "bench"
