"""``conba bench results``: the current-results table (docs/RESULTS.md) generated from the committed result
JSON (docs/results), and its check."""

from __future__ import annotations

from pathlib import Path

import click

from conba.cli.common import friendly_errors


@click.command("results")
@click.option("--results", "root", default="docs/results", show_default=True, metavar="DIR",
              type=click.Path(file_okay=False, path_type=Path),
              help="Folder of result JSON: MODEL/SET.json (conba eval / eval-repo -j) and speed.json (bench speed -j).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the table here (e.g. docs/RESULTS.md); default: print it.")
@click.option("--add", "add", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              metavar="JSON", help="First copy a run's -j JSON into DIR (machine paths made relative); repeatable.")
@click.option("--as-model", default=None, metavar="NAME",
              help="With --add: the model folder (default: the JSON's model).")
@click.option("--check", is_flag=True,
              help="Exit 1 when FILE is not what the JSON gives or a shipped model has no row.")
@friendly_errors
def results(root: Path, output: Path | None, add: tuple[Path, ...], as_model: str | None, check: bool) -> None:
    """The current-results table, generated from committed result JSON (docs/RESULTS.md).

    \b
    Examples:
      conba eval-repo ALG/cpp ALG/rust -g ALG/groups.jsonl -m default -j alg.json
      conba bench results --add alg.json -o docs/RESULTS.md
      conba bench results -o docs/RESULTS.md --check
    """
    from conba.utils.io import write_text_atomic
    from conba_research.bench.results import add_result, render, shipped_fingerprints
    from conba_research.bench.results import check as check_results

    for raw in add:
        click.echo(f"added {add_result(raw, root, model=as_model)}", err=True)
    if check:
        if output is None or not output.is_file():
            raise click.UsageError("--check needs -o FILE, an existing table")
        problems = check_results(root, output.read_text(encoding="utf-8"), shipped_fingerprints())
        for line in problems:
            click.echo(line, err=True)
        raise SystemExit(1 if problems else 0)
    text = render(root)
    if output is None:
        click.echo(text, nl=False)
    else:
        write_text_atomic(output, text)
        click.echo(f"wrote {output}", err=True)
