"""Subcommands of ``conba experiment`` that were renamed: the old name answers in one line with the new one
(instead of click's bare "No such command"); the old names are not commands, so no listing shows them."""

from __future__ import annotations

import click

RENAMED: dict[str, str] = {
    "fragments": "`conba experiment fragments` is now `conba experiment windows` "
                 "(--fragments: --windows; fragment was the earlier word for window)",
}


class RenamedCommands(click.Group):
    """A click group whose renamed subcommands (:data:`RENAMED`) fail in one line naming the new name."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in RENAMED:
            raise click.UsageError(RENAMED[cmd_name], ctx)
        return super().get_command(ctx, cmd_name)
