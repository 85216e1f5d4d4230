"""``conba compare``: similarity of two files or snippets, and a clone / not-clone decision."""

from __future__ import annotations

import json

import click

from conba.cli.common import (
    code_argument,
    friendly_errors,
    language_option_value,
    read_code_path,
    read_stdin,
    resolve_model_name,
)
from conba.cli.formats import REPORT, format_option
from conba.cli.options import (
    AliasOption,
    bare_model_options,
    lexical_weight_option,
    model_option,
    placement_options,
    threshold_option,
    view_option,
)


@click.command("compare")
@click.argument("a")
@click.argument("b")
@click.option("--snippets", "code", is_flag=True, cls=AliasOption, deprecated_aliases=["-c", "--code"],
              help="A and B are code snippets, not file names.")
@click.option("--language-a", default=None, help="Language of A (default: from its extension).")
@click.option("--language-b", default=None, help="Language of B (default: from its extension).")
@threshold_option(
    "Clone threshold; auto = the model's calibrated one, or 0.80 when it has none.")
@format_option(REPORT, ("plain", "json"), help="json: one object.")
@click.option("--align", "align", is_flag=True,
              help="Also show which lines of A correspond to which lines of B (aligned by their identifier "
                   "words, in order; JSON: 'lines', a list of line-range pairs).")
@model_option
@bare_model_options
@view_option
@lexical_weight_option(help="Default: the model's (the lexical cosine uses conba's reference document frequencies).")
@placement_options
@friendly_errors
def compare(a: str, b: str, code: bool, language_a: str | None, language_b: str | None, threshold: str,
            fmt: str, align: bool, model: str | None, view: str | None, lexical_weight: float | None,
            device: str = "auto", dtype: str = "auto") -> None:
    """Compare two files (or, with --snippets, two snippets): print their score (the dense cosine, fused
    with the lexical cosine of their identifier words at the model's lexical weight) and whether it
    is a clone at the threshold. One of A/B may be - for stdin.

    \b
    Examples:
      conba compare gcd.py Gcd.java
      conba compare --snippets 'def f(x): return x*2' 'int f(int x) { return 2*x; }' --language-b java
      conba compare a.go b.rs --threshold 0.9 --json
      conba compare Diff.java diff.py --align        # which lines correspond
    """
    from conba.clones.compare import compare as compare_code

    if a == "-" and b == "-":
        raise click.UsageError("only one of A and B can be - (stdin)")
    language_a = language_option_value(language_a, "--language-a")
    language_b = language_option_value(language_b, "--language-b")

    def get(x: str, lang: str | None, what: str) -> tuple[str, str | None]:  # what: A or B
        if x == "-":
            return read_stdin(), lang
        if code:
            return code_argument(x, what), lang
        return read_code_path(x, lang, "to compare snippets, add --snippets",
                              language_option=f"--language-{what.lower()}")

    code_a, lang_a = get(a, language_a, "A")
    code_b, lang_b = get(b, language_b, "B")
    for name, text in ((a, code_a), (b, code_b)):
        if not text.strip():
            raise click.ClickException(f"{'snippet' if code else name}: empty, nothing to compare")
    from conba.cli.options import bare_model_settings
    from conba.index.model.query import model_for_queries

    # the ONNX query encoder when the model has one (no torch), else the model loaded and placed
    the_model = model_for_queries(resolve_model_name(model), view, bare_model_settings(), (device, dtype))
    result = compare_code(code_a, code_b, model=the_model, languages=(lang_a, lang_b),
                          threshold=threshold, lexical_weight=lexical_weight)
    lines = None
    if align:
        from conba.mapping.align import align_code

        lines = align_code(code_a, code_b, languages=(lang_a, lang_b))
    if fmt == "json":
        click.echo(json.dumps(result.to_dict() | ({"lines": lines.to_list()} if lines is not None else {})))
    else:
        verdict = "clone" if result.is_clone else "not a clone"
        click.echo(f"{result.score:.4f}  {verdict}  (threshold {result.threshold:.3f})")
        if lines is not None:
            from conba.mapping.align import side_by_side

            click.echo(side_by_side(lines, code_a, code_b) if lines.blocks else "no aligned lines")
