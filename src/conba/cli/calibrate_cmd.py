"""``conba calibrate``: the clone threshold for a target precision on dev data."""

from __future__ import annotations

import json
from pathlib import Path

import click

from conba.cli.common import friendly_errors, load, resolve_model_name, show_progress
from conba.cli.formats import REPORT, format_option
from conba.cli.options import (
    FiniteFloat,
    bare_model_options,
    batch_size_option,
    lexical_weight_option,
    limit_option,
    model_option,
    placement_options,
    progress_option,
    seed_option,
)
from conba.cli.paths import InputPath


@click.command("calibrate")
@click.argument("dev", nargs=-1, required=True, type=InputPath(dir_okay=False, path_type=Path))
@model_option
@bare_model_options
@click.option("-p", "--precision", "target", default=0.9, show_default=True, type=FiniteFloat(0, 1, min_open=True),
              help="Target precision of `score >= threshold` on all cross-language pairs.")
@click.option("--write", is_flag=True, help="Store the threshold in the model folder's conba_config.json.")
@click.option("--force", is_flag=True, help="With --write: allow changing the model shipped with conba.")
@format_option(REPORT, ("plain", "json"), help="plain: one sentence; json: the threshold record.")
@batch_size_option
@limit_option("Use about N records (whole groups, seeded): all pairs grow as N²; 0: all.")
@seed_option(help="Seed for --limit.")
@placement_options(help="Where to encode")
@lexical_weight_option(help="Default: the model's. With --write it becomes the model's weight too.")
@progress_option
@friendly_errors
def calibrate_cmd(dev: tuple[Path, ...], model: str | None, target: float, write: bool, force: bool, fmt: str,
                  batch_size: int | None, limit: int, seed: int, device: str, lexical_weight: float | None,
                  progress: bool | None = None, dtype: str = "auto") -> None:
    """Pick the clone threshold for a target precision.

    Encodes the dev records (grouped JSONL: same group = clones; group ids are shared across the
    files), scores every cross-language pair (not a balanced sample: a codebase holds far more
    non-clones than clones) and prints the lowest threshold whose precision reaches --precision,
    with the recall there. --write stores it in the model folder as `clone_threshold`, which
    `conba clones -t auto` and `conba compare` then use. Scores are fused with the lexical channel
    at --lexical-weight (default: the model's weight), its document frequencies counted over the dev
    records as an index of them would.

    \b
    Examples:
      conba calibrate ../shared/data/atcoder_dev.jsonl -m runs/my-model --precision 0.9
      conba calibrate dev1.jsonl dev2.jsonl -m runs/my-model -p 0.95 --write --json
    """
    from conba.data import load_many, subset_groups
    from conba.eval.calibrate import calibrate, model_folder, write_clone_threshold

    name = resolve_model_name(model)
    folder = model_folder(name, force) if write else None  # fail before the encoding
    records = subset_groups(load_many(dev), limit, seed)
    m = load(model, None, device, dtype)
    record = calibrate(records, m, target, sources=[str(p) for p in dev], batch_size=batch_size,
                       progress=show_progress(progress), lexical_weight=lexical_weight)
    click.echo(f"{len(records)} snippets, {record['pairs']} cross-language pairs ({record['clone_pairs']} clones)",
               err=True)
    if folder is not None:
        path = write_clone_threshold(folder, record, force=force, lexical_weight=lexical_weight)
        click.echo(f"wrote clone_threshold to {path}", err=True)
    if fmt == "plain":
        click.echo(f"threshold {record['value']:.4f}: precision {record['precision']:.3f}, recall "
                   f"{record['recall']:.3f} on {', '.join(record['calibrated_on'])} (model {name})")
    else:
        click.echo(json.dumps({"model": name, **record}))
