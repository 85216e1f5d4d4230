"""``conba search``: the indexed functions most similar to a snippet."""

from __future__ import annotations

import json

import click

from conba.cli.common import code_argument, friendly_errors, index_model, read_code_path, read_stdin
from conba.cli.formats import RECORDS, format_option
from conba.cli.options import (
    AliasOption,
    bare_model_options,
    index_option,
    lexical_weight_option,
    model_option,
    neighbors_option,
    output_file_option,
    placement_options,
    resolve_index_dir,
    view_option,
)
from conba.cli.paths import check_output_file


def read_query(query: str | None, code: str | None, language: str | None) -> tuple[str, str | None]:
    """(snippet, its language) from a file, '-' (stdin) or --code."""
    if code is not None and query is not None:
        raise click.UsageError("give either QUERY (a file or -) or --code, not both")
    if code is not None:
        return code_argument(code, "--code"), language
    if query is None:
        raise click.UsageError("give a QUERY file, - for stdin, or --code '...'")
    if query == "-":
        return read_stdin(), language
    return read_code_path(query, language, "to search for a snippet, pass it with --code",
                          language_option="--query-language")


@click.command("search")
@click.argument("query", required=False)
@click.option("-c", "--code", default=None, help="The snippet to search for, inline.")
@neighbors_option("Number of results (nearest neighbours).")
@click.option("--result-language", "language", cls=AliasOption, deprecated_aliases=["-l", "--language"], default=None,
              metavar="LANG", help="Only return functions in this language.")
@click.option("--query-language", default=None,
              help="Language of the query (default: from the file extension).")
@format_option(RECORDS, ("jsonl", "csv", "plain"))
@output_file_option()
@click.option("--show-code", is_flag=True, help="Include each result's code.")
@click.option("--files", "files", is_flag=True,
              help="Rank the index's files for the file QUERY (indexed or not): whole files, scored by their "
                   "functions; other languages only, unless --same-language.")
@click.option("--same-language", is_flag=True, help="With --files: include files in the query's language.")
@index_option
@model_option
@bare_model_options
@view_option
@lexical_weight_option
@placement_options(help="Where to encode the query")
@friendly_errors
def search(query: str | None, code: str | None, neighbors: int, language: str | None, query_language: str | None,
           fmt: str, output: str, show_code: bool, files: bool, same_language: bool, index_dir: str | None,
           model: str | None, view: str | None, lexical_weight: float | None, device: str = "auto",
           dtype: str = "auto") -> None:
    """Find the indexed functions most similar to a snippet. QUERY is a source file, or - for
    stdin; or pass the snippet with --code. Output: one JSON object per result (rank, score,
    file, start_line, end_line, name, language), CSV rows or --plain lines. With --files, QUERY is a
    whole file and the results are files (rank, score, vector_score, file, language, functions).

    \b
    Examples:
      conba search snippet.py -k 5
      conba search --code 'def gcd(a, b): ...' --result-language java --plain
      cat q.go | conba search - --query-language go
      conba search --files submissions/alice.java -k 3 --plain
    """
    from conba.cli.common import language_option_value
    from conba.clones.display import plain_hit, relative_unit_dict
    from conba.index import Index
    from conba.index.model.placement import place_index_model
    from conba.utils.io import open_output

    language = language_option_value(language, "--result-language")
    query_language = language_option_value(query_language, "--query-language")
    check_output_file(output, resolve_index_dir(index_dir))
    if same_language and not files:
        raise click.UsageError("--same-language goes with --files")
    if files:
        from conba.cli.search_files import run_file_search

        with Index(resolve_index_dir(index_dir), **index_model(model), create=False, view=view,
                   lexical_weight=lexical_weight) as idx:
            place_index_model(idx, device, dtype)
            return run_file_search(idx, query, code, neighbors=neighbors, language=language,
                                   query_language=query_language, same_language=same_language, fmt=fmt,
                                   output=output, show_code=show_code)
    snippet, qlang = read_query(query, code, query_language)
    if not snippet.strip():
        raise click.ClickException(f"{query or '--code'}: the query is empty")
    from conba.cli.shards_cli import is_sharded, sharded_search

    if is_sharded(resolve_index_dir(index_dir)):  # a sharded index (conba index --shards N): every shard, merged
        hits = sharded_search(resolve_index_dir(index_dir), snippet, neighbors, language, qlang,
                              dict(**index_model(model), view=view, lexical_weight=lexical_weight))
        held: dict = {}
    else:
        with Index(resolve_index_dir(index_dir), **index_model(model), create=False, view=view,
                   lexical_weight=lexical_weight) as idx:
            place_index_model(idx, device, dtype)
            hits = idx.search(snippet, k=neighbors, language=language, query_language=qlang)
            held = idx.stats()["languages"] if not hits and language else {}
    if not hits:
        lacking = language and held and language not in held
        click.echo(f"no results: the index holds no {language} functions (it has "
                   f"{', '.join(sorted(held))})" if lacking else "no results", err=True)
    try:
        with open_output(output) as out:
            if fmt == "csv":
                write_hits_csv(hits, out, show_code)
            for rank, hit in enumerate(hits if fmt != "csv" else [], 1):
                if fmt == "plain":
                    out.write(plain_hit(rank, hit) + "\n")
                    if show_code:
                        out.write("      " + hit.unit.code.rstrip().replace("\n", "\n      ") + "\n\n")
                else:
                    d = {"rank": rank, "score": round(hit.score, 4), **relative_unit_dict(hit.unit, code=show_code)}
                    out.write(json.dumps(d) + "\n")
    except OSError as exc:
        raise click.ClickException(f"{output}: cannot write ({exc.strerror or exc})") from None


def write_hits_csv(hits: list, out, code: bool = False) -> None:
    """Function hits as CSV: rank, score, file, start_line, end_line, name, language (and code)."""
    import csv

    from conba.clones.display import relative_unit_dict

    columns = ["rank", "score", "file", "start_line", "end_line", "name", "language"] + (["code"] if code else [])
    w = csv.writer(out, lineterminator="\n")
    w.writerow(columns)
    for rank, hit in enumerate(hits, 1):
        d = {"rank": rank, "score": round(hit.score, 4), **relative_unit_dict(hit.unit, code=code)}
        w.writerow([d.get(c, "") for c in columns])
