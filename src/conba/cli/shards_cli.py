"""The CLI over a sharded index (:mod:`conba.index.scale.shards`): ``conba index ROOT --shards N`` creates or updates
one, ``conba search`` reads it like a single index (a folder with ``shards.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click


def is_sharded(folder: str | Path) -> bool:
    from conba.index.scale.shards import SHARDS_FILE

    return (Path(folder) / SHARDS_FILE).is_file()


def run_sharded_index(folder: str, paths: tuple[str, ...], shards: int | None, index_kwargs: dict[str, Any],
                      add_kwargs: dict[str, Any], fmt: str) -> None:
    """``conba index ROOT --shards N --index FOLDER``: ROOT's top-level folders split between N shards (fixed
    once made; a re-run without --shards updates the same shards incrementally)."""
    from conba.index.scale.shards import ShardedIndex

    if len(paths) != 1 or not Path(paths[0]).is_dir():
        raise click.UsageError("a sharded index is built from one folder (its top-level folders are split "
                               f"between the shards); got {', '.join(paths)}")
    sharded = ShardedIndex(folder, shards=shards, **index_kwargs)
    reports = sharded.add(paths[0], **add_kwargs)
    for report in reports:
        for warning in report.warnings if report else []:
            click.echo(f"warning: {warning}", err=True)
    done = [r for r in reports if r is not None]
    keys = ("units_total", "files_seen", "files_changed", "units_encoded", "units_reused", "files_removed")
    total = {key: sum(getattr(r, key) for r in done) for key in keys}
    if fmt == "json":
        click.echo(json.dumps({"shards": [r.to_dict() if r else None for r in reports], **total,
                               "seconds": round(sum(r.seconds for r in done), 3)}))
        return
    for i, (path, report) in enumerate(zip(sharded.shards, reports)):
        if report is not None or i in sharded.removed:  # a shard never used has nothing to say
            click.echo(f"  shard {i}: " + ("nothing left to index (removed)" if report is None else
                                           f"{report.units_total} functions, {report.units_encoded} encoded -> {path}"))
    idle = len(reports) - len(done)
    click.echo(f"Indexed {total['units_total']} functions from {total['files_seen']} files in {len(done)} shards"
               + (f" ({idle} of {len(reports)} hold no source file)" if idle else "") + ": "
               f"{total['files_changed']} files changed, {total['units_encoded']} functions encoded, "
               f"{total['units_reused']} reused, {total['files_removed']} files removed -> {folder}")


def sharded_search(folder: str, snippet: str, k: int, language: str | None, query_language: str | None,
                   index_kwargs: dict[str, Any]) -> list:
    """The hits of ``conba search`` over every shard of ``folder``, merged by score."""
    from conba.index.scale.shards import ShardedIndex

    return ShardedIndex(folder, **index_kwargs).search(snippet, k=k, language=language, query_language=query_language)
