"""``conba plagiarism``: which submissions of an assignment copy from one another, across languages."""

from __future__ import annotations

import time

import click

from conba.cli.common import friendly_errors
from conba.cli.formats import RECORDS, format_option
from conba.cli.options import output_file_option, threshold_option
from conba.cli.paths import InputPath, check_input_path, check_output_file
from conba.utils.io import open_output


def _threshold(value: str, auto: float) -> float:
    if value == "auto":
        return auto
    try:
        t = float(value)
    except ValueError:
        t = float("nan")
    if not 0 <= t <= 1:
        raise click.BadParameter(f"{value!r}: give a score in [0, 1] or auto", param_hint="'-t' / '--threshold'")
    return t


@click.command("plagiarism")
@click.argument("folder", type=InputPath(file_okay=True, dir_okay=True))
@click.option("--base", "base", default=None, metavar="PATH",
              help="Starter code (a file or folder): its lines and what it is made of count for no pair. "
                   "Inside FOLDER it is not a submission.")
@threshold_option("A pair whose score or structure score reaches it is suspicious and clustered; auto = 0.995 "
                  "(each is reached by 0.5% of same-task independent pairs on contest data; docs/plagiarism.md).")
@click.option("--top", type=click.IntRange(0), default=None, metavar="K",
              help="Candidate partners per submission: only pairs where one is among the other's K best are "
                   "scored, which keeps large classes fast (default 20; 0: every pair).")
@format_option(RECORDS, ("jsonl", "csv", "plain", "html"),
               help="jsonl: one pair per line, then clusters and a summary; csv: one pair per row; "
                    "html: one self-contained report.")
@output_file_option()
@click.option("-v", "--verbose", is_flag=True, help="List the skipped files and submissions on stderr.")
@friendly_errors
def plagiarism(folder: str, base: str | None, threshold: str, top: int | None, fmt: str, output: str,
               verbose: bool) -> None:
    """Check an assignment FOLDER for copies: each entry of FOLDER (a file, or a folder of files) is one
    submission, in any mix of languages. Pairs are ranked by a score made for copies (higher = more
    suspicious): the order of statements, loops, branches, operators and literals, which survive translation
    into another language and renaming, and the names when they were kept, each weighed by how rare it is in
    the class, so what every solution of the task shares counts little. No model is loaded.

    \b
    Examples:
      conba plagiarism submissions/ --base starter/ -f html -o report.html
      conba plagiarism submissions/ --plain
      conba plagiarism submissions/ | jq 'select(.suspicious) | [.a, .b, .score]'
    """
    from conba.plagiarism.check import DEFAULT_TOP, THRESHOLD, check
    from conba.plagiarism.output import write_report

    check_output_file(output, example="report.html")
    if base is not None:
        check_input_path(base)
    start = time.perf_counter()
    report = check(folder, base, top=DEFAULT_TOP if top is None else top, threshold=_threshold(threshold, THRESHOLD))
    try:
        with open_output(output) as out:
            write_report(report, out, fmt, title=f"conba plagiarism report: {folder}")
    except OSError as exc:
        raise click.ClickException(f"{output}: cannot write ({exc.strerror or exc})") from None
    if verbose:
        for name, reason in report.skipped:
            click.echo(f"skipped {name}: {reason}", err=True)
    s = report.summary()
    where = "" if output == "-" else f" -> {output}"
    skipped = f", {s['skipped']} skipped" + ("" if verbose or not s["skipped"] else " (-v lists them)")
    click.echo(f"{s['submissions']} submissions, {s['pairs']} pairs, {s['suspicious_pairs']} suspicious at "
               f"{report.threshold:.3f}, {s['clusters']} clusters{skipped if s['skipped'] else ''} "
               f"({time.perf_counter() - start:.1f} s){where}", err=True)
