"""``conba bench``: benchmarks (``conba bench speed``; the research suite plugs in the developer ones)."""

from __future__ import annotations

import click

from conba.cli.bare_options import name_only_pointers
from conba.cli.common import friendly_errors, resolve_model_name
from conba.cli.formats import REPORT, format_option
from conba.cli.moved import PointerCommand
from conba.cli.options import (
    batch_size_option,
    json_out_option,
    limit_option,
    model_option,
    placement_options,
    seed_option,
)
from conba.cli.paths import InputPath
from conba.cli.plugins import BenchGroup


def _variants(text: str) -> list[str]:
    from conba.bench.variants import VARIANTS

    if text.strip().lower() in ("", "none"):
        return []
    if text.strip().lower() == "all":
        return list(VARIANTS)
    out = [v.strip() for v in text.split(",") if v.strip()]
    for v in out:
        if v not in VARIANTS:
            raise click.BadParameter(f"unknown variant {v!r} (choose from {', '.join(VARIANTS)}, all, none)")
    return out


@click.group("bench", cls=BenchGroup, context_settings={"help_option_names": ["-h", "--help"]})
def bench() -> None:
    """Benchmarks. The developer benchmarks (gpu, ivf, index-scale, results, ...) are added by the research
    suite when it is installed (pip install -e research/).

    \b
    Examples:
      conba bench speed --limit 256
    """


@bench.command("speed", cls=PointerCommand, moved_options=name_only_pointers("bench speed"))
@click.option("-d", "--data", default="", show_default=False,
              type=InputPath(dir_okay=False), metavar="FILE",
              help="Grouped JSONL file: the timed snippets are drawn from it (and MAP@R is computed on it). "
                   "Default: atcoder_dev.jsonl of $CONBA_DATA.")
@limit_option("Timed snippets (seeded random sample).", default=256)
@click.option("--repeats", default=5, show_default=True, help="Timed repeats per variant (median reported).")
@batch_size_option(help="Snippets per encoder batch, in every variant (default: 32 on a CPU, 256 on a GPU).")
@click.option("--max-batch-tokens", default=-1, show_default=True,
              help="Padded-token budget per batch of the conba variants (-1: the device's plan, 4,096 on a CPU, "
                   "131,072 on a GPU; 0: none).")
@placement_options(help="Where every variant runs (sentence-transformers too, in the same --dtype)")
@model_option
@click.option("--sdtp", default="", metavar="DIR",
              help="Pruned model folder (conba prune train) of the same model; default: the model's own "
                   "pruner, or the shipped 'default-sdtp' one for the default model.")
@click.option("--student", default="", metavar="DIR",
              help="Student of the fast variants (a `conba distill` folder); default: the shipped 'default-fast' "
                   "for the default model.")
@click.option("-V", "--variants", default="all", show_default=True,
              help="Timed variants, comma separated: st, exact, raw, sdtp, onnx, both, fast, fast-onnx.")
@click.option("--map-variants", default="all", show_default=True,
              help="Variants whose MAP@R is computed ('none' to skip MAP@R).")
@click.option("--map-data", default="", help="File for MAP@R (default: --data).")
@click.option("--map-limit", default=0, show_default=True, help="MAP@R on about N records (whole groups); 0 = all.")
@click.option("--cache-dir", default="", help="Cache of MAP@R embeddings (default $CONBA_CACHE/bench).")
@seed_option
@json_out_option(help="Also write the full report to this JSON file.")
@format_option(REPORT, ("plain", "json"), help="json: the full report as one object.")
@friendly_errors
def speed(data: str, limit: int, repeats: int, batch_size: int | None, max_batch_tokens: int, model: str | None,
          sdtp: str, student: str, variants: str, map_variants: str, map_data: str, map_limit: int, cache_dir: str,
          seed: int, json_out: str | None, fmt: str, device: str = "auto", dtype: str = "auto") -> None:
    """Encoding speed: sentence-transformers (the peer) vs conba exact, + SDTP, + ONNX int8, both, and the
    distilled student (fast, fast-onnx).

    Every variant encodes the same snippets with the same backbone weights, alternating, REPEATS
    times; the table gives median snippets/s, the ratio to sentence-transformers, CPU ms per
    snippet, mean cross-language MAP@R on the whole --data file (encoded once per variant, cached),
    and cosines to exact conba. Run it alone on the machine: other jobs distort wall-clock numbers.

    \b
    Needs: sentence-transformers, onnxruntime and onnx:  pip install 'conba[bench]'
    (variants whose packages are missing are skipped, with the reason printed).
    CONBA_THREADS sets the thread count of torch and ONNX Runtime.

    \b
    Examples:
      conba bench speed --limit 256
      conba bench speed -n 512 --repeats 7 -j runs/speed.json
      conba bench speed -V st,exact --map-variants none          # quick peer check
      CONBA_THREADS=1 conba bench speed -V exact,onnx --map-variants none --max-batch-tokens 0
      conba bench speed --sdtp runs/default-sdtp --map-limit 1500
      conba bench speed --device cuda --dtype float16 -n 4000 -V st,exact --map-variants none   # a GPU
    """
    import json
    import shlex
    import sys

    from conba.bench.report import format_report
    from conba.bench.speed import SpeedConfig, run_speed
    from conba.utils.io import write_json_atomic

    cfg = SpeedConfig(data=data, limit=limit, repeats=repeats, batch_size=batch_size, max_batch_tokens=max_batch_tokens,
                      model=resolve_model_name(model), sdtp=sdtp, student=student, variants=_variants(variants),
                      map_variants=_variants(map_variants), map_data=map_data, map_limit=map_limit,
                      cache_dir=cache_dir, seed=seed, device=device, dtype=dtype)
    report = {"command": shlex.join(["conba", *sys.argv[1:]]), **run_speed(cfg, log=lambda m: click.echo(m, err=True))}
    if json_out:
        write_json_atomic(json_out, report)
        click.echo(f"report written to {json_out}", err=True)
    if fmt == "json":
        click.echo(json.dumps(report))
        return
    click.echo(format_report(report))
    if not json_out:
        click.echo(json.dumps({"variants": {k: v.get("snippets_per_s") for k, v in report["variants"].items()}}),
                   err=True)
