"""``conba clones``: clone pairs and classes over an index, as JSONL, CSV or an HTML report."""

from __future__ import annotations

import click

from conba.cli.common import friendly_errors, model_option
from conba.cli.index_cmd import index_option, resolve_index_dir, resolve_model


@click.command("clones")
@index_option
@model_option
@click.option("-x", "--cross-language-only", is_flag=True, help="Only pairs in different languages.")
@click.option("-t", "--threshold", default="auto", show_default=True, metavar="T|auto",
              help="Cosine similarity for a clone pair; auto = the model's calibrated threshold, or 0.80 "
                   "when the model has none.")
@click.option("--min-lines", default=1, show_default=True, help="Ignore functions shorter than this.")
@click.option("-n", "--neighbors", default=10, show_default=True,
              help="Nearest neighbours per function in the kNN graph.")
@click.option("-f", "--format", "fmt", type=click.Choice(["jsonl", "csv", "html"]), default="jsonl",
              show_default=True, help="jsonl: one clone class per line; csv: one pair per row; html: report.")
@click.option("-o", "--output", default="-", show_default=True, help="Output file ('-' for stdout).")
@friendly_errors
def clones(index_dir: str | None, model: str | None, cross_language_only: bool, threshold: str,
           min_lines: int, neighbors: int, fmt: str, output: str) -> None:
    """Find clones in an index: the kNN graph's pairs at or above the threshold, grouped into
    clone classes (connected components).

    \b
    Examples:
      conba clones --cross-language-only --format html -o clones.html
      conba clones --threshold 0.9 --min-lines 5 --format csv -o pairs.csv
      conba clones | jq '.members[].name'
    """
    from conba.index import Index
    from conba.index.report import write_report
    from conba.index.threshold import resolve_threshold

    folder = resolve_index_dir(index_dir)
    with Index(folder, model=resolve_model(model), create=False) as idx:
        t = resolve_threshold(threshold, idx.threshold)
        classes = idx.clones(t, cross_language_only=cross_language_only, min_lines=min_lines,
                             neighbors=neighbors)
        fingerprint = idx.stats()["fingerprint"]
        info = {"index": folder, "model": f"{idx.model_name} ({fingerprint})", "threshold": t,
                "cross_language_only": cross_language_only}
    with click.open_file(output, "w", encoding="utf-8") as out:
        if fmt == "html":
            write_report(classes, out, "html", **info)
        else:
            write_report(classes, out, fmt)
    pairs = sum(len(c.pairs) for c in classes)
    where = "" if output == "-" else f" -> {output}"
    click.echo(f"{len(classes)} clone classes, {pairs} pairs at threshold {t:.3f}{where}", err=True)
