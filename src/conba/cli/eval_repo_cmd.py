"""``conba eval-repo``: repository-level evaluation (file-level cross-language retrieval + clone statistics)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click

from conba.cli.common import friendly_errors, show_progress
from conba.cli.formats import REPORT, format_option
from conba.cli.options import (
    bare_model_options,
    bare_model_settings,
    batch_size_option,
    index_option,
    json_out_option,
    lexical_weight_option,
    model_option,
    placement_options,
    progress_option,
    resolve_index_dir,
    resolve_model,
)
from conba.cli.paths import InputPath


def parse_baselines(value: str) -> tuple[str, ...]:
    from conba.eval.repo import BASELINES

    names = [v.strip() for v in value.split(",") if v.strip()]
    if names == ["none"]:
        return ()
    bad = [n for n in names if n not in BASELINES]
    if bad or not names:
        raise click.BadParameter(f"{value!r}: give a comma list of {', '.join(BASELINES)}, or none")
    return tuple(dict.fromkeys(names))


@click.command("eval-repo")
@click.argument("paths", nargs=-1, type=InputPath())
@click.option("-g", "--groups", "groups_file", required=True, type=InputPath(dir_okay=False, path_type=Path),
              help="JSONL, one line per group: {\"group\": NAME, \"files\": [PATH, ...]} (paths relative to it).")
@index_option
@model_option
@bare_model_options
@click.option("--aggregate", type=click.Choice(["max", "mean-best"]), default="max", show_default=True,
              help="File score from function similarities: best pair, or the symmetric mean of best matches.")
@click.option("--baselines", "baselines", default="tfidf,zero-shot", show_default=True, metavar="LIST",
              help="Baselines through the same protocol: tfidf, zero-shot (untuned MiniLM), or none.")
@click.option("--no-clones", is_flag=True, help="Skip the clone-class statistics.")
@click.option("--overloads/--no-overloads", default=True, show_default=True,
              help="Function level: score the overloads of a function (same file and name) as one, for every "
                   "method alike, as `conba map` does.")
@lexical_weight_option(help="Default: the index's. Above 0 the dense score alone is reported too (dense).")
@json_out_option(help="Also write every number (per pair, per query, clones, timings, command) to this JSON file.")
@format_option(REPORT, ("plain", "json"), help="plain: the table for people; json: one JSON line.")
@batch_size_option
@placement_options(help="Where to encode")
@progress_option(help="Progress bars on stderr")
@friendly_errors
def eval_repo(paths: tuple[str, ...], groups_file: Path, index_dir: str | None, model: str | None, aggregate: str,
              baselines: str, no_clones: bool, json_out: Path | None, fmt: str, batch_size: int,
              progress: bool | None, lexical_weight: float | None, overloads: bool, device: str = "auto",
              dtype: str = "auto") -> None:
    """Evaluate on real repositories: index PATHS (or use the index of -i as it is), then for every
    grouped file and every other language holding a file of its group, rank ALL files of that
    language by a file score built from function-level cosine similarities.

    Reports MAP@R (R = relevant files in that language) and R@1 per ordered language pair and their
    mean, for the model and for the baselines of the same run (TF-IDF over the same functions; the
    untuned MiniLM, whose index is cached in DIR/eval-repo/ so re-runs encode only changes), then
    clone-class statistics at the model's auto threshold: classes, largest class, pairs per
    function, precision/recall of cross-language file pairs against the groups.

    Grouped files the index does not hold are reported and skipped. Output: a table for people, or
    with --json one JSON line; -j/--json-out also writes it to a file.

    \b
    Examples:
      conba eval-repo repos/cpp repos/rust -g groups.jsonl -i runs/idx -j result.json
      conba eval-repo -i runs/idx -g groups.jsonl --baselines tfidf --aggregate mean-best --json
    """
    from conba.eval.repo import evaluate_repo
    from conba.eval.repo_report import format_repo_report
    from conba.utils.io import write_json_atomic

    chosen = parse_baselines(baselines)
    bars = show_progress(progress)

    def log(message: str) -> None:
        click.echo(message, err=True)

    result = evaluate_repo(list(paths), groups_file, model=resolve_model(model),
                           index_dir=resolve_index_dir(index_dir), baselines=chosen, aggregate=aggregate,
                           clones=not no_clones, batch_size=batch_size, progress=bars, log=log,
                           command=shlex.join(["conba", *sys.argv[1:]]), lexical_weight=lexical_weight,
                           overloads=overloads, device=device, dtype=dtype, model_options=bare_model_settings())
    if json_out:
        write_json_atomic(json_out, result)
        log(f"wrote {json_out}")
    if fmt == "plain":
        click.echo(format_repo_report(result))
    else:
        click.echo(json.dumps(result))
