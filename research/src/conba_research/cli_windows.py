"""``conba experiment windows``: the fair fight of window heads over the windows of long snippets.

The experiment was called ``fragments`` (the earlier word for windows): ``conba experiment fragments`` says in
one line what replaced it (:mod:`conba_research.renamed_commands`), and ``--fragments`` still works as a
hidden alias of ``--windows``. Its output files keep their names (``fragments.json``, ``fragments.md``,
``fragment_runs.json``), so that runs started before resume and the dated results in docs/experiments/fragments/
stay what they are."""

from __future__ import annotations

from pathlib import Path

import click

from conba.cli.aliases import AliasOption
from conba.cli.common import friendly_errors
from conba.cli.options import FINITE_FLOAT, device_option, model_option, output_dir_option
from conba.cli.paths import InputPath
from conba_research.cli import _examples, _ints, _log, _names, command_line, experiment

_FILE = InputPath(dir_okay=False, path_type=Path)


@experiment.command("windows")
@click.option("--train", "train_files", multiple=True, type=_FILE, required=True,
              help="Training file (repeatable): grouped JSONL.")
@click.option("-D", "--dev", "dev_files", multiple=True, type=_FILE, required=True, metavar="FILE",
              help="Dev file (repeatable), scored on all its queries and on its long ones.")
@output_dir_option("Output folder (fragments.json, fragments.md, the trained heads).")
@model_option(help="The frozen model whose window vectors every head reads.")
@click.option("--windows", "windows", type=click.IntRange(2, 64), default=8, show_default=True,
              cls=AliasOption, aliases=["--fragments"], help="Windows per snippet at most (f).")
@click.option("--train-limit", type=int, default=None,
              help="Training snippets per file at most: the long-first order's prefix (whole groups first).")
@click.option("--dev-limit", type=int, default=None,
              help="Dev snippets per file at most: a prefix of a seeded order of whole groups.")
@click.option("--dev-offset", type=click.IntRange(0), default=0, show_default=True,
              help="Skip the first N dev snippets of that order and every group they touch: a held-out part "
                   "beside the one read with --dev-limit N.")
@click.option("--rows", default=None, help="Comma-separated rows (default: all; conba_research.window_fight.ROWS).")
@click.option("--seeds", default="0,1,2", show_default=True, help="Comma-separated seeds of the trained rows.")
@click.option("--steps", type=int, default=300, show_default=True, help="Optimiser steps per run (>= 1).")
@click.option("-P", "--groups-per-batch", type=int, default=32, show_default=True, help="Groups per batch (>= 2).")
@click.option("-K", "--per-group", type=int, default=4, show_default=True, help="Snippets per group (>= 2).")
@click.option("--lr", type=FINITE_FLOAT, default=1e-3, show_default=True)
@click.option("--temperature", type=FINITE_FLOAT, default=0.05, show_default=True)
@click.option("--repo-index", "repo_indexes", multiple=True, type=InputPath(file_okay=False, path_type=Path),
              help="File level (evaluation only): an index built with the same model (repeatable).")
@click.option("--repo-groups", "repo_groups", multiple=True, type=_FILE,
              help="The file groups of each --repo-index, in the same order (groups.jsonl).")
@device_option(help="Where the frozen model encodes the window vectors (float32; the heads train on the CPU)")
@friendly_errors
@_examples("  conba experiment windows --train ../shared/data/atcoder_train.jsonl --train-limit 1536 \\\n"
           "      -D ../shared/data/atcoder_dev.jsonl -D ../shared/data/mbxp_dev.jsonl --dev-limit 1536 \\\n"
           "      -o runs/windows\n"
           "  conba experiment windows ... -D ../shared/data/atcoder_dev.jsonl --dev-offset 1536 --dev-limit 2560 "
           "-o OUT")
def windows_cmd(train_files: tuple[Path, ...], dev_files: tuple[Path, ...], out: Path, model: str | None,
                windows: int, train_limit: int | None, dev_limit: int | None, dev_offset: int,
                rows: str | None, seeds: str,
                steps: int,
                groups_per_batch: int, per_group: int, lr: float, temperature: float,
                repo_indexes: tuple[Path, ...], repo_groups: tuple[Path, ...], device: str = "auto") -> None:
    """Window heads (truncation, first / mean / max, linear, attention, ConbaLayer over the windows and its ablations, conba-scan) on one frozen model's cached window vectors, equal steps per seed."""  # noqa: E501
    import numpy as np

    from conba.model import load_model
    from conba_research.window_cache import load_truncated, load_window_set
    from conba_research.window_fight import ROWS, TrainSettings, WindowSet, run_fight
    from conba_research.window_report import write_report

    names = _names(rows)
    chosen = [r for r in ROWS if names is None or r.name in names]
    unknown = sorted(set(names or []) - {r.name for r in ROWS})
    if unknown:
        raise click.BadParameter(f"unknown row(s) {unknown}; choose from {[r.name for r in ROWS]}",
                                 param_hint="--rows")
    if len(repo_indexes) != len(repo_groups):
        raise click.BadParameter("give one --repo-groups per --repo-index", param_hint="--repo-groups")
    seed_list = _ints(seeds) or [0]
    if lr <= 0 or temperature <= 0:
        raise click.BadParameter("--lr and --temperature must be > 0")
    for flag, value, low in (("--train-limit", train_limit, 1), ("--dev-limit", dev_limit, 1), ("--steps", steps, 1),
                             ("--groups-per-batch", groups_per_batch, 2), ("--per-group", per_group, 2)):
        if value is not None and value < low:
            raise click.BadParameter(f"must be >= {low}, got {value}", param_hint=flag)
    m = load_model(model or "default", device=device, dtype="float32")
    parts = []
    for path in train_files:
        recs, vec, w = load_window_set(m, path, windows, limit=train_limit, long_first=True, log=_log)
        parts.append((recs, vec, w))
    train = WindowSet("train", [r for p in parts for r in p[0]], np.concatenate([p[1] for p in parts]),
                    np.concatenate([p[2] for p in parts]))
    dev = []
    for path in dev_files:
        recs, vec, w = load_window_set(m, path, windows, limit=dev_limit, log=_log)
        if dev_offset:
            seen = {r.group for r in recs[:dev_offset]}
            keep = np.array([k >= dev_offset and r.group not in seen for k, r in enumerate(recs)], dtype=bool)
            if not keep.any():
                raise click.BadParameter(f"{path}: nothing left after --dev-offset {dev_offset}",
                                         param_hint="--dev-offset")
            recs, vec, w = [r for r, k in zip(recs, keep) if k], vec[keep], w[keep]
        fs = WindowSet(path.stem + ("-heldout" if dev_offset else ""), recs, vec, w)
        truncated = vec[:, 0].copy()
        if fs.long.any():
            truncated[fs.long] = load_truncated(m, recs, fs.long, path.stem)
        fs.truncated = truncated
        dev.append(fs)
    ts = TrainSettings(steps, groups_per_batch, per_group, lr, temperature)
    done = run_fight(train, dev, out, chosen, seed_list, ts, log=_log)
    files = {}
    for index, groups in zip(repo_indexes, repo_groups):
        from conba_research.window_files import score_files

        name = groups.parent.name or index.name
        files[name] = score_files(index, groups, out / "heads", name)
        _log(f"{name} (file level): " + ", ".join(f"{k} {np.mean(v):.4f}" for k, v in files[name]["rows"].items()))
    write_report(out, done, chosen, train, dev, ts, m, command_line(), files)
    _log(f"wrote {out}/fragments.md")

