"""``conba clones``: clone pairs and classes over an index, as JSONL, CSV or an HTML report."""

from __future__ import annotations

import click

from conba.cli.common import friendly_errors, index_model
from conba.cli.formats import RECORDS, format_option
from conba.cli.options import (
    bare_model_options,
    index_option,
    lexical_weight_option,
    model_option,
    neighbors_option,
    output_file_option,
    placement_options,
    resolve_index_dir,
    threshold_option,
)
from conba.cli.paths import check_output_file
from conba.utils.io import open_output


@click.command("clones")
@index_option
@model_option
@bare_model_options
@click.option("-x", "--cross-language-only", is_flag=True, help="Only pairs in different languages.")
@threshold_option(
    "Cosine similarity for a clone pair; auto = the model's calibrated clone threshold "
                   "(`conba calibrate`), else its F1 threshold, else 0.80.")
@click.option("--min-lines", default=1, show_default=True, help="Ignore functions shorter than this.")
@click.option("--keep-trivial", is_flag=True,
              help="Keep trivial functions (near-empty bodies, one-line getters/setters, tests); skipped by default.")
@neighbors_option("Nearest neighbours per function in the kNN graph.")
@click.option("--grouping", type=click.Choice(["communities", "components"]), default="communities",
              show_default=True, help="communities: classes whose members are similar to each other; "
                                      "components: connected components of the pair graph (these chain).")
@click.option("--files", "files", is_flag=True,
              help="Whole files instead of functions: pairs of files whose functions match each other (ported "
                   "files, copied submissions), scored by the mean of their functions' best matches.")
@format_option(RECORDS, ("jsonl", "csv", "html"),
               help="jsonl: one clone class per line, then a stats line; csv: one pair per row; html: report.")
@output_file_option()
@lexical_weight_option(help="Default: the index's (its auto threshold is calibrated for the model's weight).")
@placement_options(help="Where the model runs, when it has to encode")
@friendly_errors
def clones(index_dir: str | None, model: str | None, cross_language_only: bool, threshold: str,
           min_lines: int, keep_trivial: bool, neighbors: int, grouping: str, files: bool, fmt: str, output: str,
           lexical_weight: float | None, device: str = "auto", dtype: str = "auto") -> None:
    """Find clones in an index: the kNN graph's pairs at or above the threshold, grouped into
    clone classes whose members are similar to each other (Louvain communities, checked so that
    every member's mean similarity to its class is at least the threshold). Class-size
    statistics go to stderr and into the JSONL / HTML output. With --files the members are whole
    files (kind "file"), a pair's score is the mean of each side's best function matches, and
    classes are connected components.

    \b
    Examples:
      conba clones --cross-language-only -f html -o clones.html
      conba clones --threshold 0.9 --min-lines 5 --format csv > pairs.csv
      conba clones | jq 'select(.class) | .members[].name'
      conba clones --files -x -f html -o ported-files.html
    """
    from conba.clones.report import write_report
    from conba.index import Index
    from conba.index.model.placement import place_index_model

    folder = resolve_index_dir(index_dir)
    check_output_file(output, folder)
    with Index(folder, **index_model(model), create=False, lexical_weight=lexical_weight) as idx:
        place_index_model(idx, device, dtype)
        if files:
            from conba.cli.clones_files import file_clone_report

            report = file_clone_report(idx, threshold, cross_language_only=cross_language_only, min_lines=min_lines,
                                       neighbors=neighbors, fmt=fmt)
        else:
            report = idx.clone_report(threshold, cross_language_only=cross_language_only, min_lines=min_lines,
                                      neighbors=neighbors, keep_trivial=keep_trivial, grouping=grouping)
        fingerprint = idx.stats()["fingerprint"]
        weight = f", lexical weight {idx.lexical_weight:g}" if idx.lexical_weight else ""
        info = {"index": folder, "model": f"{idx.model_name} ({fingerprint}){weight}", "threshold": report.threshold,
                "cross_language_only": cross_language_only, "title": f"conba {'file ' * files}clone report"}
    try:
        with open_output(output) as out:
            write_report(report.classes, out, fmt, stats=report.stats, **(info if fmt == "html" else {}))
    except OSError as exc:
        raise click.ClickException(f"{output}: cannot write ({exc.strerror or exc})") from None
    where = "" if output == "-" else f" -> {output}"
    click.echo(f"{report.stats.classes} {'file ' * files}clone classes, {report.stats.clone_pairs} pairs at threshold "
               f"{report.threshold:.3f}{where}", err=True)
    click.echo(report.stats.summary(), err=True)
