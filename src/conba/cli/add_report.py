"""What a command that indexes its input on the way (``map SOURCE TARGET``) says about that indexing: the
warnings and skipped files that ``conba index`` would print, so a stale, unreadable or skipped file is never
used or left out silently."""

from __future__ import annotations

from typing import Any

import click

SHOWN_SKIPS = 5  # skipped files listed one per line; the rest are counted


def echo_add_report(report: Any) -> None:
    """Print ``report``'s (a :class:`conba.source.records.AddReport`) warnings and skipped files to stderr."""
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    if not report.skipped:
        return
    click.echo(f"Skipped {len(report.skipped)}: {report.skip_summary()}", err=True)
    for path, reason in report.skipped[:SHOWN_SKIPS]:
        click.echo(f"  {path}: {reason}", err=True)
    if len(report.skipped) > SHOWN_SKIPS:
        click.echo(f"  ... {len(report.skipped) - SHOWN_SKIPS} more (`conba index -v` lists them all)", err=True)


def with_skips(exc: Exception, report: Any) -> Exception:
    """``exc`` (a side with no functions) with why files were skipped when indexing, when any were."""
    if report is None or not report.skipped:
        return exc
    return type(exc)(f"{exc}; skipped when indexing: {report.skip_summary()}")
