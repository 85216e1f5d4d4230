"""The one output option of every command: ``-f/--format``, with ``--json`` and ``--plain`` as shorthands.

The rule for the default (docs/CLI.md, "Output"): a command whose output is a stream of records (search
hits, encodings, clone classes, map rows) prints JSON Lines (``jsonl``); a command whose output is one
report of a run (eval, eval-repo, index, compare, calibrate, bench speed) prints it for people
(``plain``). ``--json`` is the command's JSON form (``jsonl`` for records, ``json``: one object, for a
report); ``--plain`` is ``--format plain``. A file of every number is ``-j/--json-out FILE`` (a separate
option: it writes JSON beside whatever is printed).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import click

FORMATS = ("jsonl", "json", "csv", "html", "plain")
RECORDS, REPORT = "records", "report"
DEFAULTS = {RECORDS: "jsonl", REPORT: "plain"}  # the one rule: records for machines, a report for people


def resolve_format(fmt: str | None, as_json: bool, plain: bool, *, kind: str, choices: Sequence[str]) -> str:
    """The format the command prints in: ``-f`` / ``--json`` / ``--plain`` when one is given (two that
    disagree are a usage error), else the default of ``kind`` (:data:`DEFAULTS`)."""
    json_form = "jsonl" if "jsonl" in choices else "json"
    given = [(flag, value) for flag, value in (("--format", fmt), ("--json", json_form if as_json else None),
                                               ("--plain", "plain" if plain else None)) if value is not None]
    if len({value for _, value in given}) > 1:
        raise click.UsageError(" and ".join(f"{flag} ({value})" for flag, value in given) + " disagree: give one")
    return given[0][1] if given else DEFAULTS[kind]


def format_option(kind: str, choices: Sequence[str], *, help: str = "") -> Callable:
    """``-f/--format CHOICE`` (``choices`` of :data:`FORMATS`, in the command's order), ``--json`` when the
    command has a JSON form and ``--plain`` when it has ``plain``. The command takes one parameter
    ``fmt: str``: the format resolved by :func:`resolve_format`. ``kind`` is :data:`RECORDS` or :data:`REPORT`."""
    if kind not in DEFAULTS or DEFAULTS[kind] not in choices or not set(choices) <= set(FORMATS):
        raise ValueError(f"format_option({kind!r}, {choices!r}): the default {DEFAULTS.get(kind)} must be a choice")
    json_form = "jsonl" if "jsonl" in choices else "json" if "json" in choices else None
    default = DEFAULTS[kind]

    def deco(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args: Any, fmt_choice: str | None = None, fmt_json: bool = False, fmt_plain: bool = False,
                    **kwargs: Any) -> Any:
            kwargs["fmt"] = resolve_format(fmt_choice, fmt_json, fmt_plain, kind=kind, choices=choices)
            return f(*args, **kwargs)

        opts = [click.option("-f", "--format", "fmt_choice", type=click.Choice(list(choices)), default=None,
                             metavar="FORMAT",
                             help=f"Output format: {', '.join(choices)} (default: {default}). {help}".strip())]
        if json_form:
            opts.append(click.option("--json", "fmt_json", is_flag=True, help=f"Shorthand for --format {json_form}."))
        if "plain" in choices:
            opts.append(click.option("--plain", "fmt_plain", is_flag=True, help="Shorthand for --format plain."))
        for opt in reversed(opts):
            wrapper = opt(wrapper)
        return wrapper

    return deco
