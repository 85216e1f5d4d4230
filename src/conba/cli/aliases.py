"""Old flag names a command still accepts without listing them in ``--help``.

An alias either means what its flag means everywhere (``--out`` for ``-o/--output DIR``) or is on its way
out: a *deprecated* alias still works for one release and prints a one-line warning naming the flag to
use, because the same letters mean something else in other commands (docs/CLI.md, "Hidden aliases").
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import click


class AliasOption(click.Option):
    """A click option that also accepts old names (``aliases``) without listing them in ``--help``;
    those in ``deprecated_aliases`` print a warning when used (removed in the next release)."""

    def __init__(self, param_decls: Sequence[str], aliases: Sequence[str] = (), deprecated_aliases: Sequence[str] = (),
                 **kwargs: Any) -> None:
        super().__init__([*param_decls, *aliases, *deprecated_aliases], **kwargs)
        self.aliases = tuple(aliases) + tuple(deprecated_aliases)
        self.deprecated_aliases = tuple(deprecated_aliases)

    def _visible(self) -> list[str]:
        return [o for o in self.opts if o not in self.aliases]

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        opts, self.opts = self.opts, self._visible()
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = opts

    def get_error_hint(self, ctx: click.Context | None) -> str:
        opts, self.opts = self.opts, self._visible()
        try:
            return super().get_error_hint(ctx)
        finally:
            self.opts = opts

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        flag = self._visible()[-1] if self._visible() else self.opts[0]
        for alias in self.deprecated_aliases:
            table = parser._long_opt if alias.startswith("--") else parser._short_opt
            table[alias] = _Warning(table[alias], alias, flag, ctx)


class _Warning:
    """The parser entry of a deprecated alias: warns on stderr, then stores as the option does."""

    def __init__(self, option: Any, alias: str, flag: str, ctx: click.Context) -> None:
        self._option, self._alias, self._flag, self._ctx = option, alias, flag, ctx

    def __getattr__(self, name: str) -> Any:
        return getattr(self._option, name)

    def process(self, value: Any, state: Any) -> None:
        command = self._ctx.command_path
        click.echo(f"warning: {command}: {self._alias} is deprecated and goes in the next release "
                   f"(it means something else in other commands); use {self._flag}", err=True)
        self._option.process(value, state)

    def __copy__(self) -> _Warning:
        return _Warning(copy.copy(self._option), self._alias, self._flag, self._ctx)
