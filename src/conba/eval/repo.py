"""Repository-level evaluation: index real repositories as a user would, then measure how well
file-level scores built from function-level similarities find the same algorithm in other languages.

>>> result = evaluate_repo(["cpp/", "rust/"], "groups.jsonl", model="default", index_dir="runs/idx")
>>> result["retrieval"]["conba"]["mean"]["map_at_r"]

Every method runs through the identical protocol (:mod:`conba.eval.repo_scores`) on the same units:
the model under test (its index), the TF-IDF baseline (unit-level TF-IDF vectors) and the untuned
MiniLM (``zero-shot``: its own index of the same files, cached in ``<index>/eval-repo/`` so a second
run re-encodes only what changed). Clone statistics come from ``Index.clones`` at the model's auto
threshold (:mod:`conba.eval.repo_clones`).
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from conba.errors import ConfigError
from conba.eval.repo_clones import clone_statistics
from conba.eval.repo_function_eval import evaluate_functions, function_methods
from conba.eval.repo_functions import is_function_groups, load_function_groups
from conba.eval.repo_groups import display_file, load_groups, resolve_groups
from conba.eval.repo_scores import AGGREGATES, repo_retrieval
from conba.eval.repo_units import UnitTable, table_from_index, tfidf_table
from conba.lexical.fusion import check_weight

__all__ = ["BASELINES", "evaluate_repo", "baseline_index_dir"]

BASELINES = ("tfidf", "zero-shot")
CACHE_FOLDER = "eval-repo"
MAIN = "conba"


def _clean(obj: Any) -> Any:
    """NaN -> None (JSON has no NaN), floats rounded to 6 digits, recursively."""
    if isinstance(obj, float):
        return None if math.isnan(obj) else round(obj, 6)
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def baseline_index_dir(index_path: str | os.PathLike, name: str, fingerprint: str,
                       cache_dir: str | os.PathLike | None = None) -> Path:
    """Where the index of a baseline model is cached: ``<cache_dir or index/eval-repo>/<name>-<fingerprint>``."""
    root = Path(cache_dir) if cache_dir else Path(index_path) / CACHE_FOLDER
    return root / f"{name}-{fingerprint}"


def _open_main(paths: Sequence[str | os.PathLike], index_dir: Any, model: Any, batch_size: int | None,
               progress: bool, log: Callable[[str], None], placement: tuple = (None, None),
               model_options: dict | None = None) -> tuple[Any, dict]:
    from conba.index import Index
    from conba.index.model.placement import place_index_model

    if not paths:
        idx = Index(index_dir, model=model, create=False, model_options=model_options)
        place_index_model(idx, *placement)
        idx.manifest()  # an interrupted or empty index fails here, with what to do
        return idx, {}
    idx = Index(index_dir, model=model, model_options=model_options)
    place_index_model(idx, *placement)
    label = idx.model_name or ("default" if model is None else "the given model")
    log(f"indexing {len(paths)} path(s) into {idx.path} with model {label}")
    report = idx.add(list(paths), batch_size=batch_size, show_progress=progress)
    info = {"files_seen": report.files_seen, "files_changed": report.files_changed,
            "units_encoded": report.units_encoded, "units_reused": report.units_reused,
            "skipped": len(report.skipped), "skipped_summary": report.skip_summary(),
            "seconds": round(report.seconds, 2)}
    return idx, info


def _baseline_model_table(main_idx: Any, main: UnitTable, baseline_model: Any, cache_dir: Any,
                          batch_size: int | None, progress: bool, log: Callable[[str], None],
                          placement: tuple = (None, None)) -> tuple[UnitTable, dict, Any]:
    """The zero-shot (or injected) baseline's units and vectors, from its cached index of the same files."""
    from conba.index import Index
    from conba.index.model.placement import apply_placement

    t0 = time.perf_counter()
    if baseline_model is None or isinstance(baseline_model, (str, os.PathLike)):
        from conba.model import load_model

        name = str(baseline_model or "zero-shot")
        model_obj = apply_placement(load_model(name), placement, "torch")
    else:
        name, model_obj = "zero-shot", baseline_model
    fingerprint = model_obj.embedding_fingerprint()
    info: dict[str, Any] = {"model": name, "fingerprint": fingerprint}
    if fingerprint == main_idx.stats()["fingerprint"]:  # the model under test is the baseline itself
        info.update(index=str(main_idx.path), units_encoded=0, seconds=round(time.perf_counter() - t0, 2))
        return main, info, model_obj
    folder = baseline_index_dir(main_idx.path, "zero-shot", fingerprint, cache_dir)
    log(f"zero-shot baseline: indexing the same {len(main.files)} files into {folder}")
    with Index(folder, model=model_obj) as idx:
        report = idx.add(main.files, batch_size=batch_size, show_progress=progress)
        table = table_from_index(idx, keep=set(main.files))
    info.update(index=str(folder), units_encoded=report.units_encoded, units_reused=report.units_reused,
                seconds=round(time.perf_counter() - t0, 2))
    return table, info, model_obj


def _counts(main: UnitTable, groups: list, found: dict[str, str], missing: list) -> dict:
    units: Counter[str] = Counter()
    files = Counter(main.languages)
    for k, lang in enumerate(main.languages):
        units[lang] += int(main.starts[k + 1] - main.starts[k])
    langs_of_group: dict[str, set[str]] = {}
    lang_of = dict(zip(main.files, main.languages))
    for f, g in found.items():
        langs_of_group.setdefault(g, set()).add(lang_of[f])
    return {
        "files": len(main.files), "units": main.n_units,
        "languages": {lang: {"files": files[lang], "units": units[lang]} for lang in sorted(files)},
        "groups": len(groups), "grouped_files": sum(len(g.files) for g in groups),
        "grouped_files_found": len(found), "grouped_files_missing": len(missing),
        "groups_usable": sum(1 for s in langs_of_group.values() if len(s) >= 2),
    }


def evaluate_repo(paths: Sequence[str | os.PathLike], groups_file: str | os.PathLike, *, model: Any = None,
                  index_dir: str | os.PathLike | None = None, baselines: Sequence[str] = BASELINES,
                  aggregate: str = "max", baseline_model: Any = None, cache_dir: str | os.PathLike | None = None,
                  clones: bool = True, batch_size: int | None = None, progress: bool = False,
                  log: Callable[[str], None] | None = None, command: str | None = None,
                  lexical_weight: float | None = None, overloads: bool = True,
                  device: str | None = None, dtype: str | None = None, model_options: dict | None = None) -> dict:
    """Evaluate ``model`` on repositories with a groups file; returns a JSON-ready dict.

    ``paths``: folders/files to index into ``index_dir`` (incremental); empty = use the index as it
    is. ``model``: name, folder or model object; None = the model the index was built with
    (``default`` for a new one). ``baselines``: any of ``tfidf`` and ``zero-shot``; ``baseline_model``
    replaces the zero-shot MiniLM (a name or a model object, e.g. a tiny test model); its index is
    cached under ``cache_dir`` (default ``<index_dir>/eval-repo``). ``aggregate``: ``max`` or
    ``mean-best`` (see :mod:`conba.eval.repo_scores`). ``clones``: add clone-class statistics.
    ``log`` receives progress lines (the CLI sends them to stderr). ``lexical_weight``: the lexical
    share of the model's fused score (default: the index's); above 0 the dense score alone is reported
    too, as ``dense``.

    A function-level groups file (``{"group", "members": [{"language", "file", "name", "line"}]}``, as in
    ``ports_dev``) is scored function by function (:mod:`conba.eval.repo_functions`), plain and
    name-blind, instead of file by file; ``overloads`` scores the overloads of a function (same file and
    name) as one there (:mod:`conba.source.overloads`). ``device`` / ``dtype`` place the model and the
    zero-shot baseline (:mod:`conba.engine.device`; None: CPU, float32). ``model_options``: load_model's
    pooling / trust_remote_code for a bare ``model`` given by name (:class:`conba.index.Index`).
    """
    log = log or (lambda _msg: None)
    if aggregate not in AGGREGATES:
        raise ConfigError(f"aggregate must be one of {', '.join(AGGREGATES)}, got {aggregate!r}")
    unknown = [b for b in baselines if b not in BASELINES]
    if unknown:
        raise ConfigError(f"unknown baseline {unknown[0]!r}; choose from {', '.join(BASELINES)} (or none)")
    t_start = time.perf_counter()
    groups_file = Path(groups_file)
    base = groups_file.parent
    function_level = is_function_groups(groups_file)
    # bad lines fail before any indexing
    # FunctionGroups at the function level, list[Group] at the file level (the branches below follow the level)
    groups: Any = load_function_groups(groups_file) if function_level else load_groups(groups_file)
    timings: dict[str, Any] = {}

    idx, indexing = _open_main(paths, index_dir, model, batch_size, progress, log, (device, dtype), model_options)
    with idx:
        timings["index_s"] = indexing.get("seconds", 0.0)
        main = table_from_index(idx)
        weight = idx.lexical_weight if lexical_weight is None else check_weight(lexical_weight)
        stats = idx.stats()
        tables: dict[str, UnitTable] = {MAIN: main}
        if weight:
            lexical = idx.lexical_index()
            tables = {MAIN: main.fused(lexical.rows([u.id for u in main.units]), weight), "dense": main}
        baseline_info: dict[str, dict] = {}
        baseline_models: dict[str, Any] = {}
        if "zero-shot" in baselines:
            tables["zero-shot"], baseline_info["zero-shot"], baseline_models["zero-shot"] = _baseline_model_table(
                idx, main, baseline_model, cache_dir, batch_size, progress, log, (device, dtype))
            timings["zero_shot_s"] = baseline_info["zero-shot"]["seconds"]
        if "tfidf" in baselines:
            t0 = time.perf_counter()
            tables["tfidf"] = tfidf_table(main)
            baseline_info["tfidf"] = {"vocabulary": int(tables["tfidf"].vectors.shape[1])}
            timings["tfidf_fit_s"] = round(time.perf_counter() - t0, 2)
        model_info = {"name": stats["model"], "fingerprint": stats["fingerprint"], "threshold": stats["threshold"],
                      "lexical_weight": weight}
        if function_level:
            t0 = time.perf_counter()
            methods = function_methods(idx, tables, baseline_models, batch_size)
            scored = evaluate_functions(main, groups, methods, log=log, overloads=overloads)
            timings["functions_s"] = round(time.perf_counter() - t0, 2)
            timings["total_s"] = round(time.perf_counter() - t_start, 2)
            return _clean({"command": command, "cwd": os.getcwd(), "index": str(idx.path), "level": "function",
                           "paths": [os.path.abspath(p) for p in paths], "groups_file": str(groups_file.resolve()),
                           "model": model_info, "methods": list(tables), **scored, "baselines": baseline_info,
                           "indexing": indexing, "timings": timings})
        units_of = {f: int(main.starts[k + 1] - main.starts[k]) for k, f in enumerate(main.files)}
        found, missing = resolve_groups(groups, units_of, set(idx.store.file_states()), base)
        if missing:
            log(f"{len(missing)} of {sum(len(g.files) for g in groups)} grouped files are skipped "
                f"(not in the index or without functions); the JSON lists them")
        if not found:
            raise ConfigError(f"{groups_file}: none of the grouped files is in the index {idx.path}")
        if not _counts(main, groups, found, missing)["groups_usable"]:
            raise ConfigError(f"{groups_file}: no group has files in two languages among the indexed files "
                              f"({len(found)} grouped files found); nothing to rank")
        show = {f: display_file(f, base) for f in main.files}

        retrieval: dict[str, dict] = {}
        per_query: dict[str, list] = {}
        timings["retrieval_s"] = {}
        for name, table in tables.items():
            log(f"ranking with {name} ({aggregate})")
            t0 = time.perf_counter()
            res = repo_retrieval(table, found, aggregate, show)
            timings["retrieval_s"][name] = round(time.perf_counter() - t0, 2)
            per_query[name] = res.pop("per_query")
            retrieval[name] = res

        clone_stats: dict[str, dict] = {}
        if clones:
            log("clone classes at the model's auto threshold")
            lang_of = dict(zip(main.files, main.languages))
            for key, cross in (("all", False), ("cross_language", True)):
                clone_stats[key] = clone_statistics(idx, found, lang_of, main.n_units, cross_language_only=cross)
            timings["clones_s"] = round(sum(c["seconds"] for c in clone_stats.values()), 2)

    timings["total_s"] = round(time.perf_counter() - t_start, 2)
    return _clean({
        "command": command, "cwd": os.getcwd(), "index": str(idx.path),
        "paths": [os.path.abspath(p) for p in paths], "groups_file": str(groups_file.resolve()),
        "level": "file", "model": model_info, "aggregate": aggregate, "methods": list(tables),
        "counts": _counts(main, groups, found, missing),
        "retrieval": retrieval, "baselines": baseline_info, "clones": clone_stats,
        "indexing": indexing, "timings": timings,
        "missing": [m.to_dict() for m in missing], "per_query": per_query,
    })
