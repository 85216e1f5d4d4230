"""Map a source tree onto a target tree in one index: pick the two sides, score, assign, sum up by file.

>>> from conba.index import Index
>>> from conba.mapping import map_index
>>> with Index("runs/idx", create=False) as idx:
...     port = map_index(idx, source_language="java", target_language="python")
>>> port.coverage, port.counts()

Every score comes from :meth:`conba.index.Index.score_matrix`, the same score as ``search`` and ``clones``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from conba.clones.display import display_path
from conba.clones.threshold import resolve_threshold
from conba.clones.trivial import trivial_reason
from conba.data.records import DataError, normalize_language
from conba.index.storage.store import db_path, shown_path
from conba.mapping.align import align_units
from conba.mapping.assign import MATCHED, MISSING, assign, top_columns
from conba.mapping.config import MapConfig
from conba.mapping.copies import share_copies
from conba.mapping.files import file_lexical_scores, map_files
from conba.mapping.kinds import kind_mismatch
from conba.mapping.names import anchor_scores, name_anchors
from conba.mapping.records import FunctionMatch, PortMap
from conba.source.overloads import overload_ids, pool_overloads
from conba.source.records import Unit


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def select_units(units: Sequence[Unit], paths: Sequence[str | os.PathLike] | None = None,
                 language: str | None = None) -> list[Unit]:
    """The units below any of ``paths`` (files or folders; None: anywhere) in ``language`` (None: any).
    The paths are matched as the index shows its files: symlinks resolved, names escaped (:func:`shown_path`)."""
    roots = [r for p in paths for s in [db_path(os.path.realpath(p))] for r in {s, shown_path(s)}] if paths else None
    lang = normalize_language(language) if language else None
    return [u for u in units if (roots is None or _under(u.file, roots)) and (lang is None or u.language == lang)]


def _describe(paths: Sequence[str | os.PathLike] | None, language: str | None) -> str:
    parts = [", ".join(display_path(os.path.abspath(p)) for p in paths)] if paths else []
    if language:
        parts.append(f"language {language}")
    return " ".join(parts) or "the whole index"


def _side(units: Sequence[Unit], paths: Any, language: str | None, name: str, where: str) -> list[Unit]:
    if not paths and not language:
        raise DataError(f"{where}: say which functions are the {name}: a folder, or a language "
                        f"(--{name}-lang) within the index")
    chosen = select_units(units, paths, language)
    if not chosen:
        languages = ", ".join(sorted({u.language for u in units})) or "none"
        raise DataError(f"{where}: no functions in the {name} ({_describe(paths, language)}); "
                        f"languages in the index: {languages}")
    return chosen


def map_units(idx: Any, source: Sequence[Unit], target: Sequence[Unit], config: MapConfig | None = None,
              info: dict[str, Any] | None = None) -> PortMap:
    """Map the ``source`` units onto the ``target`` units of ``idx`` (an :class:`~conba.index.Index`)."""
    config = config or MapConfig()
    threshold = resolve_threshold(config.threshold, idx.threshold)
    if not config.keep_trivial:
        kept = [u for u in source if trivial_reason(u) is None]
        skipped, source = len(source) - len(kept), kept
        target = [u for u in target if trivial_reason(u) is None]
    else:
        skipped, source, target = 0, list(source), list(target)
    target_set = {u.id for u in target}
    own = [u for u in source if u.id not in target_set]  # a unit is never its own counterpart
    if source and not own:
        where = (info or {}).get("source", "the source")
        raise DataError(f"{where}: every source function is also a target function (the two sides overlap): "
                        "give two different folders, or two languages with --source-lang / --target-lang")
    source = own
    source_sets = overload_ids(source)
    # an overload scores as its set (conba.source.overloads): a forwarding `diff_main(a, b)` maps with the
    # `diff_main(a, b, flag)` that carries the behaviour
    scores = pool_overloads(idx.score_matrix([u.id for u in source], [u.id for u in target]), source_sets)
    target_sets = overload_ids(target)
    # ports keep names: a pair that alone shares a name key is raised for the assignment (conba.mapping.names)
    anchors = name_anchors(source, target, source_sets, target_sets) if config.name_bonus else []
    raised_scores, raised = anchor_scores(scores, anchors, threshold, config.name_bonus)
    if config.constructor_penalty:  # a constructor ports to a constructor (conba.mapping.kinds)
        penalty = np.float32(config.constructor_penalty)
        raised_scores = np.where(kind_mismatch(source, target), raised_scores - penalty, raised_scores)
    a = assign(raised_scores, threshold, config.margin, config.candidates, siblings=source_sets,
               relax=config.relax, contrast=config.contrast or None, target_siblings=target_sets)
    for i, j in enumerate(a.target):  # report each pair's own score; say when its name carried it
        if j >= 0:
            a.score[i] = scores[i, j]
            if raised[i, j] and a.status[i] == MATCHED and not a.reason[i] and scores[i, j] < threshold:
                a.reason[i] = "name"  # below the threshold on its own: its name made it
    share_copies(a, source)  # identical source functions: one outcome (conba.mapping.copies)
    functions = []
    for i, unit in enumerate(source):
        j = int(a.target[i])
        match = FunctionMatch(unit, a.status[i], target[j] if j >= 0 else None,
                              float(a.score[i]) if j >= 0 else None, a.reason[i],
                              [(target[c], float(scores[i, c])) for c in a.candidates[i]])
        if match.status == MISSING and config.nearest:
            match.nearest = [(target[c], float(scores[i, c])) for c in top_columns(scores[i], config.nearest)]
        elif match.target is not None and config.align:
            match.lines = align_units(unit, match.target).to_list()
        functions.append(match)
    files = map_files(functions, scores, [u.file for u in target],
                      file_lexical_scores(idx, source, target, config.path_weight))
    return PortMap(functions, files, threshold, config.margin, len(target), skipped, dict(info or {}), list(target))


def map_index(idx: Any, source_paths: Sequence[str | os.PathLike] | None = None,
              target_paths: Sequence[str | os.PathLike] | None = None, source_language: str | None = None,
              target_language: str | None = None, config: MapConfig | None = None) -> PortMap:
    """Map the indexed functions below ``source_paths`` / in ``source_language`` onto those below
    ``target_paths`` / in ``target_language``. A side with neither, or with no functions, is an error."""
    units = idx.units()
    where = str(idx.path)
    source = _side(units, source_paths, source_language, "source", where)
    target = _side(units, target_paths, target_language, "target", where)
    info = {"source": _describe(source_paths, source_language), "target": _describe(target_paths, target_language),
            "index": str(idx.path), "model": idx.model_name}
    return map_units(idx, source, target, config, info)
