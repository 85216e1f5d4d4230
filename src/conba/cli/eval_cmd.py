"""``conba eval``: cross-language retrieval and clone classification on a dataset."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click

from conba.cli.common import friendly_errors, load, resolve_model_name
from conba.cli.formats import REPORT, format_option
from conba.cli.options import (
    bare_model_options,
    batch_size_option,
    json_out_option,
    lexical_weight_option,
    limit_option,
    model_option,
    placement_options,
    progress_option,
    seed_option,
    view_option,
)
from conba.cli.paths import InputPath


@click.command("eval")
@click.argument("data", type=InputPath(dir_okay=False, path_type=Path))
@model_option
@bare_model_options
@view_option
@json_out_option
@format_option(REPORT, ("plain", "json"), help="json: every number as one object.")
@click.option("--calibrate", type=InputPath(dir_okay=False, path_type=Path),
              help="Dev file whose balanced pairs set the clone threshold (default: the model's own).")
@click.option("--no-tfidf", is_flag=True, help="Skip the TF-IDF baseline.")
@batch_size_option
@limit_option("Evaluate on about N records (whole groups, seeded); 0: all.")
@seed_option(help="Seed for pair sampling and --limit.")
@placement_options(help="Where to encode")
@progress_option(help="Progress bar")
@lexical_weight_option(help="Default: the model's. Above 0 the dense cosine alone is reported too (dense).")
@friendly_errors
def eval_cmd(data: Path, model: str | None, view: str | None, json_out: Path | None, fmt: str,
             calibrate: Path | None,
             no_tfidf: bool, batch_size: int | None, limit: int, seed: int, device: str, progress: bool | None,
             lexical_weight: float | None, dtype: str = "auto") -> None:
    """Evaluate a model on grouped JSONL (or the research pair format).

    For every ordered language pair, queries in one language retrieve candidates in the other:
    MAP@R, MRR and Recall@1, their mean, and the TF-IDF baseline of the same run. Then clone /
    not-clone classification on balanced pairs: precision, recall, F1 and ROC-AUC.

    \b
    Examples:
      conba eval ../shared/data/atcoder_dev.jsonl
      conba eval data.jsonl --model runs/my-model -j result.json
      conba eval data.jsonl --json | jq .retrieval
      conba eval test.jsonl --calibrate dev.jsonl --no-tfidf
      conba eval data.jsonl --view code      # the model sees each snippet without imports etc.
    """
    from conba.data import load_records, subset_groups
    from conba.eval.report import format_classification, format_retrieval_table
    from conba.eval.runner import evaluate
    from conba.utils.io import write_json_atomic

    records = subset_groups(load_records(data), limit, seed)
    calib = load_records(calibrate) if calibrate else None
    m = load(model, view, device, dtype)
    result = evaluate(records, m, tfidf=not no_tfidf, calibration=calib, batch_size=batch_size,
                      progress=progress, seed=seed, lexical_weight=lexical_weight,
                      where=str(data) + (f" ({len(records)} records of -n {limit})" if limit else ""),
                      calibration_where=str(calibrate))
    result = {"command": shlex.join(["conba", *sys.argv[1:]]), "data": str(data), "model": resolve_model_name(model),
              "fingerprint": m.fingerprint(), "embedding_fingerprint": m.embedding_fingerprint(), "view": m.view,
              **result}
    if json_out:
        write_json_atomic(json_out, result)
        click.echo(f"wrote {json_out}", err=True)
    if fmt == "json":
        click.echo(json.dumps(result))
        return
    click.echo(f"data: {data} ({result['n_records']} snippets, {result['n_groups']} groups)")
    click.echo(f"model: {result['model']}, view {m.view}  ({result['snippets_per_second']} snippets/s)")
    click.echo(format_retrieval_table(result["retrieval"]))
    if "long" in result:
        long = result["long"]
        click.echo(f"long queries ({long['snippets']} snippets over one backbone window after the view), MAP@R: "
                   + ", ".join(f"{k} {v['map_at_r']:.3f}" for k, v in long.items() if isinstance(v, dict)))
    if "ratio_to_tfidf" in result and result["ratio_to_tfidf"] is not None:
        click.echo(f"mean MAP@R ratio conba / TF-IDF: {result['ratio_to_tfidf']:.2f}x")
    click.echo(format_classification(result["classification"]))
