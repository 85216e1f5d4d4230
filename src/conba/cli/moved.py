"""Options that left a command: giving one fails in one line that says where it went (a setting of a
configuration file, another command, the research suite) instead of click's bare "No such option".

The pointer is raised when click meets the unknown option, so nothing is declared for the old flags: they
are not options of the command and not in its --help.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click

RESEARCH_INSTALL = "pip install -e research/"


class PointerCommand(click.Command):
    """A click command with a table of removed options: flag -> where it went (one line)."""

    def __init__(self, *args: Any, moved_options: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.moved_options = dict(moved_options or {})

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            where = self.moved_options.get(exc.option_name)
            if where is None:
                raise
            raise click.UsageError(f"{exc.option_name} {where}", ctx) from None


def to_config_file(flags: Sequence[str], what: str, command: str, doc: str) -> dict[str, str]:
    """Pointers for flags that became keys of a configuration file: ``--name-bonus`` -> ``"name_bonus"``."""
    return {flag: (f"moved to the {what}: `conba {command} --config FILE` with "
                   f"{{\"{flag.lstrip('-').removeprefix('no-').replace('-', '_')}\": ...}} ({doc})")
            for flag in flags}


def to_research(flags: Sequence[str], command: str) -> dict[str, str]:
    """Pointers for flags that moved to a research command (``conba experiment train``)."""
    return {flag: f"moved to `conba {command}` (the research suite: {RESEARCH_INSTALL})" for flag in flags}
