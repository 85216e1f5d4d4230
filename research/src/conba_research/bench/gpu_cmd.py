"""``conba bench gpu``: the GPU benchmark (encoder speed vs sentence-transformers, end-to-end index)."""

from __future__ import annotations

from pathlib import Path

import click

from conba.cli.common import friendly_errors
from conba.cli.options import batch_size_option, device_option, limit_option, model_option, seed_option
from conba.cli.paths import InputPath


def _dtypes(ctx: click.Context, param: click.Parameter, value: str) -> list[str]:
    from conba.engine.device import DTYPES

    out = [v.strip().lower() for v in value.split(",") if v.strip()]
    bad = [v for v in out if v not in DTYPES]
    if bad or not out:
        raise click.BadParameter(f"{value!r}: a comma-separated list of {', '.join(DTYPES)}")
    return out


@click.command("gpu")
@click.option("-o", "--output", "out", default="gpu-bench", show_default=True, metavar="DIR",
              type=click.Path(file_okay=False), help="Folder for gpu_bench.json, gpu_bench.md and the work files.")
@device_option(help="Where to benchmark")
@click.option("--dtypes", "dtypes", default="float32,float16", show_default=True, callback=_dtypes,
              envvar="CONBA_DTYPE", show_envvar=True, metavar="LIST",
              help="Precisions of the encoder stage (auto, float32, float16, bfloat16), comma separated; "
                   "the index stage runs in --dtype auto (float16 on CUDA).")
@model_option(envvar=False, help="Model (default: zero-shot, the untuned MiniLM); a MiniLM-shaped stand-in with "
                                 "random weights when it cannot load (no embedded MiniLM package).")
@limit_option("Timed snippets of the encoder stage (functions of installed packages).", default=4000)
@click.option("--repeats", default=3, show_default=True, help="Timed repeats per variant (median reported).")
@click.option("--functions", default=22_000, show_default=True, type=click.IntRange(1), metavar="N",
              help="Python defs in the tree `conba index --device` indexes end to end (it keeps ~90%: >= 20k).")
@click.option("--cpu-functions", default=2_000, show_default=True, type=click.IntRange(0), metavar="N",
              help="Functions of the CPU index run the device is compared with (0: none).")
@click.option("--source", multiple=True, type=InputPath(exists=True, path_type=Path), metavar="DIR",
              help="Folder(s) of Python code for the tree and the snippets (default: site-packages).")
@click.option("--tokenizer", default=".gpu-bench/minilm-tokenizer", show_default=True, metavar="DIR",
              help="all-MiniLM-L6-v2's tokenizer files, for the stand-in model.")
@batch_size_option
@seed_option
@friendly_errors
def gpu(out: str, device: str, dtypes: list[str], model: str | None, limit: int, repeats: int, functions: int,
        cpu_functions: int, source: tuple[Path, ...], tokenizer: str, batch_size: int | None, seed: int) -> None:
    """The GPU benchmark in one offline run (runs on a CPU too, with small sizes): `conba bench speed
    --device D` (conba vs sentence-transformers, same weights, cap, precision and batch) per --dtypes,
    then `conba index --device D` end to end over a tree of --functions Python functions copied from
    installed packages, and the same on the CPU over --cpu-functions of them. Writes OUT/gpu_bench.json
    and OUT/gpu_bench.md (printed too). Sized for at most 8 minutes on an H100 at the defaults (estimated).

    \b
    Examples:
      conba bench gpu --device cuda -o runs/gpu-bench            # scripts/gpu_bench.sh runs this
      conba bench gpu --device cpu --limit 64 --functions 300 --cpu-functions 0 --dtypes float32,bfloat16
    """
    from conba_research.bench.gpu import GpuBenchConfig, run_gpu_bench

    cfg = GpuBenchConfig(out=out, device=device, model=model or "zero-shot", dtypes=dtypes, snippets=limit,
                         repeats=repeats, functions=functions, cpu_functions=cpu_functions,
                         source=[str(p) for p in source], tokenizer=tokenizer, batch_size=batch_size, seed=seed)
    report = run_gpu_bench(cfg, log=lambda m: click.echo(m, err=True))
    from conba_research.bench.gpu_report import format_gpu_report

    click.echo(format_gpu_report(report))
