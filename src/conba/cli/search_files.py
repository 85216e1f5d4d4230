"""``conba search --files FILE``: the index's files most similar to a whole file (:mod:`conba.index.files.search`)."""

from __future__ import annotations

import csv
import json
from typing import Any, TextIO

import click

CSV_COLUMNS = ["rank", "score", "vector_score", "file", "language", "functions"]


def write_file_hits(hits: list, out: TextIO, fmt: str, code: bool = False) -> None:
    """File hits (:class:`conba.index.files.search.FileHit`) as JSONL, CSV or plain lines (``code``: with each
    file's functions' code, as ``conba search --show-code`` shows a function's)."""
    rows = [h.to_dict(rank, code=code) for rank, h in enumerate(hits, 1)]
    if fmt == "csv":
        columns = CSV_COLUMNS + (["code"] if code else [])
        w = csv.writer(out, lineterminator="\n")
        w.writerow(columns)
        w.writerows([[r[c] for c in columns] for r in rows])
    elif fmt == "plain":
        for r in rows:
            out.write(f"{r['rank']:>3}. {r['score']:.3f}  {r['file']}  [{r['language']}]  "
                      f"{r['functions']} function{'s' * (r['functions'] != 1)}\n")
            if code:
                out.write("      " + r["code"].rstrip().replace("\n", "\n      ") + "\n\n")
    else:
        for r in rows:
            out.write(json.dumps(r) + "\n")


def run_file_search(idx: Any, query: str | None, code: str | None, *, neighbors: int, language: str | None,
                    query_language: str | None, same_language: bool, fmt: str, output: str,
                    show_code: bool = False) -> None:
    """The ``--files`` branch of ``conba search`` over an open index."""
    from conba.index.files.search import FileScorer, search_files
    from conba.utils.io import open_output

    if code is not None or query in (None, "-"):
        raise click.UsageError("--files ranks files for a FILE: give a source file as QUERY (not --code or -)")
    scorer = FileScorer(idx)
    q, hits = search_files(idx, query, k=neighbors, same_language=same_language, language=language,
                           query_language=query_language, scorer=scorer)
    if q.note:  # an indexed file changed on disk (or asked in another language): read afresh, said so
        click.echo(f"note: {q.note}", err=True)
    for hit in hits if show_code else []:
        if hit.file.id is not None:
            hit.file.code = scorer.file_code(hit.file.id)
    if not hits:
        where = f"no {language} files" if language else "no other file" if same_language else \
            f"no files in another language than {q.language}"
        click.echo(f"no results: the index holds {where} (--same-language includes {q.language})", err=True)
    try:
        with open_output(output) as out:
            write_file_hits(hits, out, fmt, code=show_code)
    except OSError as exc:
        raise click.ClickException(f"{output}: cannot write ({exc.strerror or exc})") from None
