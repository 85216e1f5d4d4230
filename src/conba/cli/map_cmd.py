"""``conba map SOURCE TARGET``: which functions (and files) of one tree have a counterpart in another."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click
from click.core import ParameterSource

from conba.cli.common import friendly_errors, index_model, show_progress
from conba.cli.formats import RECORDS, format_option
from conba.cli.index_cmd import index_option, resolve_index_dir
from conba.cli.moved import PointerCommand, to_config_file
from conba.cli.options import (
    bare_model_options,
    model_option,
    output_file_option,
    placement_options,
    progress_option,
)
from conba.cli.paths import InputPath, check_output_file
from conba.mapping.config import ONLY, MapConfig
from conba.utils.io import open_output

# the scoring constants and switches that became keys of the mapping configuration (docs/MAP_CONFIG.md)
MOVED = to_config_file(["--margin", "--relax", "--contrast", "--name-bonus", "--constructor-penalty", "--path-weight",
                        "--lexical-weight", "--no-align", "--keep-trivial", "--min-coverage"],
                       "mapping configuration", "map", "docs/MAP_CONFIG.md")
SUMMARY_FILES = 40  # per-file lines of the stderr summary (least covered first)


def _summary(port: object) -> str:
    lines = port.summary().splitlines()  # type: ignore[attr-defined]
    if len(lines) > SUMMARY_FILES + 1:
        more = len(lines) - SUMMARY_FILES - 1
        lines = lines[:SUMMARY_FILES + 1] + [f"  ... {more} more files (the output lists all)"]
    return "\n".join(lines)


@click.command("map", cls=PointerCommand, moved_options=MOVED)
@click.argument("source", required=False, type=InputPath(path_type=Path))
@click.argument("target", required=False, type=InputPath(path_type=Path))
@index_option
@model_option
@bare_model_options
@click.option("--source-lang", default=None, metavar="LANG", help="Only source functions in this language.")
@click.option("--target-lang", default=None, metavar="LANG", help="Only target functions in this language.")
@click.option("-t", "--threshold", default="auto", show_default=True, metavar="T|auto",
              help="Score a counterpart needs; auto = the model's calibrated clone threshold (as `conba clones`).")
@click.option("--config", "config_file", default=None, type=InputPath(dir_okay=False, path_type=Path),
              metavar="FILE", help="Mapping configuration (JSON): the scoring constants (margin, relax, contrast, "
                                   "name_bonus, constructor_penalty, path_weight, lexical_weight), align, "
                                   "keep_trivial, min_coverage; each key and its default: docs/MAP_CONFIG.md.")
@click.option("--only", type=click.Choice(ONLY), default=None, help="Only list source functions with this status.")
@click.option("--since", default=None, metavar="REV",
              help="Drift: list the source functions changed, added or removed since the git revision REV (SOURCE "
                   "in a git working tree) with their counterparts' status, instead of every function.")
@click.option("--target-since", default=None, metavar="REV",
              help="With --since: the revision of the target's repository to tell which counterparts changed too "
                   "(default: REV when the target is in the same repository, else not tracked).")
@click.option("-g", "--groups", "groups_file", default=None, type=InputPath(dir_okay=False, path_type=Path),
              help="Score the map against a groups file (JSONL; function 'members' as ports_dev, or 'files' as "
                   "algorithms_dev): matched-pair precision / recall, missing functions found, files right.")
@format_option(RECORDS, ("jsonl", "csv", "html", "plain"),
               help="jsonl: one line per source function, per source file, then a summary; csv: one row per "
                    "source function; html: report; plain: one line per source function for people.")
@output_file_option()
@placement_options(help="Where to encode SOURCE and TARGET")
@progress_option
@friendly_errors
def map_cmd(source: Path | None, target: Path | None, index_dir: str | None, model: str | None,
            source_lang: str | None, target_lang: str | None, threshold: str, config_file: Path | None,
            only: str | None, groups_file: Path | None, fmt: str, output: str, progress: bool | None = None,
            device: str = "auto", dtype: str = "auto", since: str | None = None,
            target_since: str | None = None) -> None:
    """Port coverage: for every function of SOURCE, its counterpart in TARGET (matched: a one-to-one
    assignment above the threshold; ambiguous: several close candidates; missing: nothing above the
    threshold), and for every source file the target file it corresponds to.

    SOURCE and TARGET are folders or files: they are indexed first into the index (-i; only what it lacks
    is encoded). Without them, --source-lang and --target-lang pick the two sides of an existing index.
    The summary (coverage by file and overall, counts per status) goes to stderr.

    \b
    Examples:
      conba map java/ python/ --format html --output port.html
      conba map --index idx --source-lang java --target-lang go --only missing --plain
      conba map src/ port/ --config port-map.json > /dev/null   # CI: {"min_coverage": 90} fails a lagging port
      conba map dmp/java dmp/python --groups groups.jsonl
      conba map upstream/src port/src --since v1.2.0 --plain   # what changed upstream since the sync
    """
    from conba.cli.add_report import echo_add_report, with_skips
    from conba.clones.threshold import resolve_threshold
    from conba.data.records import DataError
    from conba.index import Index
    from conba.index.model.placement import place_index_model
    from conba.mapping import map_index
    from conba.mapping.groups import evaluate
    from conba.mapping.output import write_map

    if (source is None) != (target is None):
        raise click.UsageError("give both SOURCE and TARGET, or neither (with --source-lang / --target-lang)")
    if source is None and not (source_lang and target_lang):
        raise click.UsageError("give SOURCE and TARGET folders, or --index with --source-lang and --target-lang")
    if since is None and target_since is not None:
        raise click.UsageError("--target-since goes with --since")
    if since is not None and source is None:
        raise click.UsageError("--since needs SOURCE (a folder in a git working tree) and TARGET")
    if since is not None:  # fail before indexing: SOURCE in a git working tree, REV one of its revisions
        from conba.mapping.git_changes import repo_root, resolve_revision

        assert source is not None and target is not None  # checked above: --since needs SOURCE and TARGET
        resolve_revision(repo_root(source), since)
        if target_since is not None:  # and --target-since one of TARGET's
            resolve_revision(repo_root(target, "--target-since"), target_since, "--target-since")
    folder = resolve_index_dir(index_dir)
    check_output_file(output, folder, "map.html")
    config = MapConfig.load(config_file) if config_file is not None else MapConfig()
    if click.get_current_context().get_parameter_source("threshold") != ParameterSource.DEFAULT \
            or config_file is None:  # -t given, or no file: -t (auto: the index's calibrated threshold)
        t = None if threshold.strip().lower() == "auto" else resolve_threshold(threshold, None)
        config = replace(config, threshold=t)
    lexical_weight, min_coverage = config.lexical_weight, config.min_coverage
    with Index(folder, **index_model(model), create=source is not None, lexical_weight=lexical_weight) as idx:
        place_index_model(idx, device, dtype)
        report = None
        if source is not None:
            assert target is not None  # both or neither (checked above)
            report = idx.add([source, target], show_progress=show_progress(progress))
            if (upgraded := getattr(idx, "upgrade_report", None)) is not None:  # conba.index.model.upgrade
                click.echo(upgraded.line(), err=True)
            if report.units_encoded:
                click.echo(f"Indexed {report.units_encoded} new functions -> {folder}", err=True)
            echo_add_report(report)  # what `conba index` would say: unreadable, skipped and why
        else:
            idx.manifest()  # an index being written or interrupted says so (not "no functions")
        try:
            port = map_index(idx, [source] if source else None, [target] if target else None, source_lang,
                             target_lang, config)
        except DataError as exc:
            raise with_skips(exc, report) from None
        drift = None
        if since is not None:
            from conba.mapping.drift import map_drift

            assert source is not None  # checked above: --since needs SOURCE
            drift = map_drift(port, source, since, idx, target_since)
    evaluation = [evaluate(port, groups_file)] if groups_file is not None else []
    try:
        with open_output(output) as out:
            if drift is not None:
                from conba.mapping.drift_output import write_drift

                write_drift(drift, port, out, fmt, only)
            else:
                write_map(port, out, fmt, only, extra=evaluation)
    except OSError as exc:
        raise click.ClickException(f"{output}: cannot write ({exc.strerror or exc})") from None
    click.echo(_summary(port) + ("" if drift is None else "\n" + drift.summary())
               + ("" if output == "-" else f"\n-> {output}"), err=True)
    for e in evaluation:
        click.echo(f"groups: {e['groups_usable']} of {e['groups_total']} usable (a member among the source "
                   "functions)", err=True)
        for level in ("functions", "files"):
            if level in e:
                click.echo(f"{level}: " + ", ".join(f"{k} {v}" for k, v in e[level].items() if k != "level"), err=True)
    if min_coverage is not None and 100 * port.coverage < min_coverage:
        raise click.ClickException(f"coverage {100 * port.coverage:.1f}% is below min_coverage {min_coverage:g}% "
                                   f"({config_file})")
