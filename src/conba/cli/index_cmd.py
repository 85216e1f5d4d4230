"""``conba index``: index a codebase (incremental and resumable)."""

from __future__ import annotations

import json
import os

import click

from conba.cli.common import friendly_errors, index_model, show_progress
from conba.cli.formats import REPORT, format_option
from conba.cli.options import (
    bare_model_options,
    batch_size_option,
    engine_option,
    fast_option,
    index_option,
    lexical_weight_option,
    model_option,
    parse_size,
    placement_options,
    progress_option,
    resolve_index_dir,
    resolve_model,
    view_option,
)
from conba.cli.paths import InputPath
from conba.index.scale.shard_layout import MAX_SHARDS

# the shared helpers live in conba.cli.options; importing them from here keeps working
__all__ = ["index", "index_option", "parse_size", "resolve_index_dir", "resolve_model"]


@click.command("index")
@click.argument("paths", nargs=-1, type=InputPath())
@index_option
@model_option
@bare_model_options
@view_option
@engine_option(default=None, help="Recorded in the index: search and serve encode queries with it, and "
                                  "vectors of two engines never mix. Default: the index's engine (torch for a "
                                  "new index).")
@fast_option
@lexical_weight_option(help="Recorded in the index for search, clones and map. Default: the index's, else the "
                           "model's (the shipped default's is chosen on the dev sets).")
@click.option("--max-file-size", default="1MB", show_default=True, metavar="SIZE",
              help="Skip source files larger than this (e.g. 500KB, 2MB).")
@batch_size_option
@placement_options(help="Where to encode")
@click.option("--rebuild", is_flag=True, help="Start from an empty index (e.g. to switch models), built beside "
              "the old one, which stays readable until the new one is swapped in (docs/SCALE.md).")
@click.option("--rebuild-vectors", is_flag=True,
              help="Rebuild the vector structure from the stored vectors (no PATHS, no encoding): above 200k "
                   "functions the IVF lists are retrained beside the old ones, which serve until the swap. A run "
                   "rebuilds them by itself when they have degraded (docs/SCALE.md).")
@click.option("--wait", is_flag=True,
              help="If another `conba index` is writing the same index, wait for it instead of failing.")
@click.option("--shards", type=click.IntRange(1, MAX_SHARDS), default=None, metavar="N",
              help=f"A sharded index: the top-level folders of the one PATH split between N (<= {MAX_SHARDS}) indexes "
                   "(fixed once made; later runs update them without --shards). `conba search` reads it as one "
                   "(docs/SCALE.md).")
@click.option("-v", "--verbose", is_flag=True, help="List every skipped file with its reason.")
@format_option(REPORT, ("plain", "json"), help="json: the run's report as one object.")
@click.option("--ray", "ray_address", is_flag=False, flag_value="", default=None, metavar="[ADDRESS]",
              help="Encode on a Ray cluster (put it after PATHS): ADDRESS, or alone for $RAY_ADDRESS, a running "
                   "local cluster or a new local one. Needs: pip install 'conba[ray]'.")
@click.option("--watch", is_flag=True,
              help="After indexing, keep following PATHS: re-index changed files incrementally (a burst of saves "
                   "or a branch switch is one update) until Ctrl-C, which finishes the update in progress.")
@progress_option
@friendly_errors
def index(paths: tuple[str, ...], index_dir: str | None, model: str | None, view: str | None, engine: str | None,
          max_file_size: str, batch_size: int | None, rebuild: bool, wait: bool, verbose: bool, fmt: str,
          ray_address: str | None, lexical_weight: float | None, progress: bool | None = None,
          device: str = "auto", dtype: str = "auto", rebuild_vectors: bool = False, shards: int | None = None,
          watch: bool = False) -> None:
    """Index the functions of a codebase for `conba search` and `conba clones`.

    Walks PATHS (files or folders), respecting .gitignore and skipping vendored (node_modules,
    vendor, third_party, virtualenvs, hidden folders), generated, minified, binary, non-UTF-8 and
    over-size files. Functions and methods are extracted with tree-sitter (Python, Java, C, C++,
    C#, JavaScript, TypeScript, Go, Rust, Kotlin, PHP, Ruby); other languages are indexed whole-file
    or in 60-line windows.

    Re-running is incremental: unchanged files are not re-read, unchanged functions are not
    re-encoded, deleted files are dropped. An interrupted run (even kill -9) resumes where it stopped.
    One run writes an index at a time: a second one fails (or, with --wait, waits).

    \b
    Examples:
      conba index .                          # into ./.conba-index
      conba index src/ lib/ --index runs/idx
      conba index . --model path/to/model --rebuild
      conba index . --view code --rebuild    # the model sees functions without comments and imports
      conba index . --engine onnx --index runs/fast    # int8 ONNX Runtime: faster on CPU
      conba index . --fast --index runs/fast           # = -m default-fast --engine onnx: fastest
      conba index --rebuild-vectors --index runs/fast  # retrain the vector structure, no encoding
      conba index /srv/monorepo --ray                  # encode on Ray (local or $RAY_ADDRESS)
      conba index /srv/monorepo --ray ray://head:10001  # encode on a Ray cluster
      conba index . --device cuda            # on a GPU, float16 (--dtype float32 for full precision)
      conba index src/ --watch               # then follow the working tree until Ctrl-C
    """
    from conba.index import Index
    from conba.index.model.placement import place_index_model

    if watch and (rebuild_vectors or rebuild or shards is not None):
        raise click.UsageError("--watch goes without --rebuild, --rebuild-vectors and --shards (run those first)")
    if rebuild_vectors:
        if paths or rebuild:
            raise click.UsageError("--rebuild-vectors takes no PATHS and no --rebuild")
        with Index(resolve_index_dir(index_dir), create=False, wait=wait) as idx:
            m = idx.rebuild_vectors()
        click.echo(f"Rebuilt the vector structure ({m['kind']}) of {m['count']} functions -> {idx.path}")
        return
    if not paths:
        hint = (f" (--ray took '{ray_address}' as the cluster address: put PATHS before --ray)"
                if ray_address and os.path.exists(ray_address) else "")
        raise click.UsageError(f"Missing argument 'PATHS...'{hint}")
    encoder = None
    if ray_address is not None:
        from conba.index.scale.ray_encode import RayEncoder

        encoder = RayEncoder(ray_address or None, device=device, dtype=dtype)
    folder = resolve_index_dir(index_dir)
    size = parse_size(max_file_size)
    from conba.cli.shards_cli import is_sharded, run_sharded_index

    if shards is not None or is_sharded(folder):  # conba.index.scale.shards: one ordinary index per shard
        if watch:
            raise click.UsageError(f"{folder}: --watch does not follow a sharded index")
        opts = dict(**index_model(model), rebuild=rebuild, wait=wait, view=view, engine=engine,
                    lexical_weight=lexical_weight)
        add = dict(max_file_size=size, batch_size=batch_size, show_progress=show_progress(progress), encoder=encoder)
        return run_sharded_index(folder, paths, shards, opts, add, fmt)

    def waiting(pid: str) -> None:
        click.echo(f"{folder}: waiting for another `conba index` (pid {pid}) to finish...", err=True)

    with Index(folder, **index_model(model), rebuild=rebuild, wait=wait, on_wait=waiting, view=view,
               engine=engine, lexical_weight=lexical_weight) as idx:
        if encoder is None:  # Ray actors place their own models
            place_index_model(idx, device, dtype)
        report = idx.add(list(paths), max_file_size=size, batch_size=batch_size, show_progress=show_progress(progress),
                         encoder=encoder)
        loaded = idx.models.loaded  # None when nothing was encoded: the model never loaded (conba.index.model.lazy)
        where = {} if encoder is not None or report.engine != "torch" or loaded is None else \
            {"device": str(loaded.device), "dtype": str(loaded.dtype).removeprefix("torch.")}
        _echo_report(report, where, getattr(idx, "upgrade_report", None), folder, fmt, verbose)
        if watch:  # the same index object: its model stays loaded between updates
            _watch(idx, paths, size, encoder, fmt)


def _echo_report(report, where: dict, upgraded, folder, fmt: str, verbose: bool) -> None:
    """What one run did (stdout), its warnings and skipped files (stderr); ``upgraded``: conba.index.model.upgrade."""
    from conba.clones.display import display_path

    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    if fmt == "json":
        click.echo(json.dumps({**report.to_dict(), **where, **({"upgrade": upgraded.to_dict()} if upgraded else {})}))
        return
    if upgraded is not None:
        click.echo(upgraded.line())
    click.echo(f"Indexed {report.units_total} functions from {report.files_seen} files in "
               f"{report.seconds:.1f} s: {report.files_changed} files changed, {report.units_encoded} "
               f"functions encoded, {report.units_reused} reused, {report.files_removed} files removed "
               f"-> {folder}" + (f" (engine {report.engine})" if report.engine != "torch" else "")
               + (f" (on {where['device']}, {where['dtype']})" if where.get("device", "cpu") != "cpu" else ""))
    if report.view != "raw" and report.units_encoded:
        click.echo(f"View {report.view}: {report.view_fallbacks} of {report.units_encoded} encoded functions "
                   "fell back to raw (no grammar or no usable parse)")
    if report.syntax_errors:
        n = len(report.syntax_errors)
        click.echo(f"{n} file{'s' if n != 1 else ''} parsed with syntax errors: indexed the functions that could "
                   f"be recovered{'' if verbose else ' (-v lists them)'}", err=True)
        if verbose:
            for path, line in report.syntax_errors:
                click.echo(f"  {display_path(path)}:{line}: syntax error", err=True)
    if report.skipped:
        hint = "" if verbose else " (-v lists them)"
        click.echo(f"Skipped {len(report.skipped)}: {report.skip_summary()}{hint}", err=True)
        if verbose:
            for path, reason in report.skipped:
                click.echo(f"  {display_path(path)}: {reason}", err=True)


def _watch(idx, paths: tuple[str, ...], size: int, encoder, fmt: str) -> None:
    """Follow PATHS (conba.index.storage.watch): one line per update (json: one object), errors without stopping."""
    import logging
    import time

    from conba.index.storage.watch import Watcher, describe, watch_paths_exist

    def on_update(report, error: str | None) -> None:
        if error is not None:
            click.echo(time.strftime("%H:%M:%S ") + f"error: {error} (still watching)", err=True)
        elif fmt == "json":
            click.echo(json.dumps({"type": "update", **report.to_dict()}))
        else:
            click.echo(describe(report))

    def changed(changes: set) -> None:
        click.echo(time.strftime("%H:%M:%S ") + f"{len(changes)} changes: updating...", err=True)

    logging.getLogger("watchfiles.main").setLevel(logging.ERROR)  # Ctrl-C is said below, once
    watcher = Watcher(idx, watch_paths_exist(paths), max_file_size=size, encoder=encoder, on_update=on_update)
    watcher.run(changed, on_ready=lambda: click.echo(f"watching {', '.join(paths)} (Ctrl-C to stop)", err=True))
    click.echo(f"stopped watching after {watcher.state.updates} updates; the index is complete", err=True)
