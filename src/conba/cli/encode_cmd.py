"""``conba encode``: embed snippets and print JSONL vectors."""

from __future__ import annotations

import json

import click

from conba.cli.common import (
    friendly_errors,
    language_option_value,
    load,
    read_code_path,
    read_stdin,
)
from conba.cli.formats import RECORDS, format_option
from conba.cli.options import (
    bare_model_options,
    batch_size_option,
    engine_option,
    fast_option,
    model_option,
    output_file_option,
    placement_options,
    view_option,
)
from conba.cli.paths import check_output_file
from conba.utils.io import open_output


@click.command("encode")
@click.argument("source", default="-")
@model_option
@bare_model_options
@click.option("-l", "--language", default=None,
              help="Language of a plain code file (default: from its extension), of a stdin snippet, "
                   "or of JSONL lines without one.")
@batch_size_option
@engine_option
@fast_option
@view_option
@placement_options
@format_option(RECORDS, ("jsonl", "plain"), help="plain: id, language, first dimensions.")
@output_file_option("File to write the vectors to ('-' for stdout).")
@friendly_errors
def encode(source: str, model: str | None, language: str | None, batch_size: int | None, engine: str,
           view: str | None, device: str, dtype: str, fmt: str, output: str) -> None:
    """Embed code. SOURCE is a JSONL file of snippets (one vector per line: {"code", "language", "id"},
    only "code" required; grouped and pair data files too), a code file, or '-' for one snippet on
    stdin. Output: JSONL {"id", "language", "embedding"}.

    \b
    Examples:
      conba encode data.jsonl -o vectors.jsonl
      echo 'def add(a, b): return a + b' | conba encode - -l python
      conba encode data.jsonl -m default-sdtp --engine onnx    # SDTP token pruning + int8 ONNX
      conba encode data.jsonl --fast     # fastest: -m default-fast --engine onnx
      conba encode src/util.py --view code               # without imports, comments, unused helpers
      conba encode data.jsonl --device cuda --dtype float16  # on a GPU (auto picks it when there is one)
    """
    from conba.data import load_snippets

    language = language_option_value(language, "--language")
    check_output_file(output, None, "vectors.jsonl")
    if source == "-":
        items = [("stdin", language or "", read_stdin())]
    elif source.endswith(".jsonl"):
        items = load_snippets(source, language)
    else:  # the index's checks: unreadable, directory, binary, not UTF-8, too large... (one-line errors)
        text, lang = read_code_path(source, language, "to encode a snippet, pipe it to 'conba encode - -l LANG'",
                                    require_language=False)
        items = [(source, lang or "", text)]
    if not any(code.strip() for _, _, code in items):
        raise click.ClickException(f"{source}: no code to encode")
    m = load(model, view, device, dtype, engine)
    emb = m.encode([c for _, _, c in items], languages=[lang for _, lang, _ in items], batch_size=batch_size,
                   engine=engine)
    with open_output(output) as fh:
        for (rid, lang, _), vec in zip(items, emb):
            if fmt == "plain":
                click.echo(f"{rid}\t{lang or '?'}\t" + " ".join(f"{v:+.3f}" for v in vec[:6]) + " ...", file=fh)
            else:
                click.echo(json.dumps({"id": rid, "language": lang or None,
                                       "embedding": [round(float(v), 6) for v in vec]}), file=fh)
