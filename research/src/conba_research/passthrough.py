"""Subcommands that hand their arguments to a module's argparse ``main`` (the developer benchmarks and research
tools that used to be scripts): ``conba bench view-stats ARGS`` runs ``conba_research.bench.view_stats.main``
with ARGS, its usage line naming the subcommand. The module is imported only when the command runs."""

from __future__ import annotations

import importlib
import sys

import click


def passthrough(name: str, module: str, summary: str, prog: str) -> click.Command:
    """A click command ``name`` running ``module.main()`` on the rest of the command line (``-h`` included)."""

    @click.command(name, help=f"{summary}\n\nArguments and -h/--help: `{prog} {name} -h`.", short_help=summary,
                   add_help_option=False,
                   context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def command(args: tuple[str, ...]) -> None:
        main = importlib.import_module(module).main
        saved = sys.argv
        sys.argv = [f"{prog} {name}", *args]  # argparse takes its usage name and arguments from here
        try:
            code = main()
        finally:
            sys.argv = saved
        raise SystemExit(code or 0)

    return command


def add_passthroughs(group: click.Group, tools: dict[str, tuple[str, str]], prog: str) -> None:
    """Add one :func:`passthrough` command to ``group`` per ``tools`` entry: name -> (module, summary)."""
    for name, (module, summary) in tools.items():
        group.add_command(passthrough(name, module, summary, prog))
