"""Function-level evaluation of every method of an ``eval-repo`` run, plain and name-blind.

Each method scores units through its :class:`~conba.eval.repo_units.UnitTable` (rows aligned with the
model's table). For the name-blind variant the grouped query units are re-encoded with their own
name replaced (:func:`conba.eval.repo_functions.blind_name`): dense vectors by the method's model,
lexical / TF-IDF vectors by its vectorizer; candidates keep their stored vectors.

Glossary: u units, q queries, c candidates, d embedding width, V lexical columns.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from conba.errors import ConfigError
from conba.eval.repo_functions import FunctionGroups, blind_name, function_retrieval
from conba.eval.repo_units import UnitTable, dot
from conba.source.overloads import overload_ids, pool_overloads

__all__ = ["Method", "evaluate_functions"]


def _tfidf_rows(vectorizer: Any, codes: list[str], languages: list[str]) -> sparse.csr_matrix:
    """TF-IDF rows of ``codes`` (the languages are not used): a changed query of the tfidf baseline."""
    return vectorizer.transform(codes).tocsr()


@dataclass
class Method:
    """How one method scores units: its table, and how it encodes a changed query (name-blind)."""

    table: UnitTable
    encode_vectors: Callable[[list[str], list[str]], Any] | None = None   # (codes, languages) -> (q, d) or (q, V)
    encode_lexical: Callable[[list[str]], sparse.csr_matrix] | None = None  # codes -> (q, V), for fused tables


def _scorer(method: Method, blind_rows: dict[int, int] | None, blind_vec: Any, blind_lex: Any):
    table = method.table

    def score(q_rows: list[int], c_rows: list[int]) -> np.ndarray:
        if blind_rows is None:
            return table.similarity(np.asarray(q_rows), np.asarray(c_rows))
        sel = [blind_rows[r] for r in q_rows]
        sim = dot(blind_vec[sel], table.vectors[c_rows])
        if table.lexical is None or not table.lexical_weight:
            return sim
        from conba.lexical import fuse

        return fuse(sim, dot(blind_lex[sel], table.lexical[c_rows]), table.lexical_weight)

    return score


def _pooled(score: Callable[[list[int], list[int]], np.ndarray], ids: np.ndarray,
            scorable: Callable[[int], bool]) -> Callable[[list[int], list[int]], np.ndarray]:
    """``score`` with overload sets pooled (:func:`conba.source.overloads.pool_overloads`): the query rows are
    scored together with their overloads (those ``scorable``), and each pair takes its sets' best score."""
    members: dict[int, list[int]] = {}
    for row, key in enumerate(ids.tolist()):
        members.setdefault(key, []).append(row)

    def pooled(q_rows: list[int], c_rows: list[int]) -> np.ndarray:
        extra = sorted({r for q in q_rows for r in members[int(ids[q])] if scorable(r)} - set(q_rows))
        rows = list(q_rows) + extra
        sim = pool_overloads(score(rows, c_rows), ids[rows], ids[c_rows])
        return sim[:len(q_rows)]

    return pooled


def evaluate_functions(main: UnitTable, groups: FunctionGroups, methods: dict[str, Method], blind: bool = True,
                       log: Callable[[str], None] | None = None, overloads: bool = True) -> dict:
    """{"retrieval": {method: result}, "blind": {method: result}, "counts": {...}, "missing": [...]}
    (results as :func:`conba.eval.repo_functions.function_retrieval` gives them). ``overloads``: score
    overload sets as one function (:mod:`conba.source.overloads`), for every method alike."""
    log = log or (lambda _m: None)
    group_of, missing = groups.resolve(main.units)
    if missing:
        log(f"{len(missing)} grouped functions are not in the index (the JSON lists them)")
    languages: dict[str, set[str]] = {}
    for row, group in group_of.items():
        languages.setdefault(group, set()).add(main.units[row].language)
    if not any(len(langs) > 1 for langs in languages.values()):
        raise ConfigError(f"{groups.path}: no group has members in two languages among the indexed functions "
                          f"({len(group_of)} of {len(groups.members)} members found); nothing to rank")
    out: dict[str, Any] = {"retrieval": {}, "blind": {}}
    grouped = sorted(group_of)
    blind_codes = [blind_name(main.units[r]) for r in grouped]
    langs = [main.units[r].language for r in grouped]
    encoded: dict[int, Any] = {}  # one encoding of the blind queries per encoder (conba and dense share one)
    ids = overload_ids(main.units) if overloads else None

    def scorer(fn: Callable[[list[int], list[int]], np.ndarray],
               scorable: Callable[[int], bool]) -> Callable[[list[int], list[int]], np.ndarray]:
        return _pooled(fn, ids, scorable) if ids is not None else fn

    for name, method in methods.items():
        log(f"function level: ranking with {name}")
        out["retrieval"][name] = function_retrieval(main.units, group_of, groups.project_of,
                                                    scorer(_scorer(method, None, None, None), lambda _r: True))
        if blind and method.encode_vectors is not None and grouped:
            key = id(method.encode_vectors)
            if key not in encoded:
                encoded[key] = method.encode_vectors(blind_codes, langs)
            vec = encoded[key]
            lex = method.encode_lexical(blind_codes) if method.encode_lexical is not None else None
            rows = {r: k for k, r in enumerate(grouped)}
            out["blind"][name] = function_retrieval(main.units, group_of, groups.project_of,
                                                    scorer(_scorer(method, rows, vec, lex), rows.__contains__))
    out["overloads"] = overloads
    out["counts"] = {"units": main.n_units, "members": len(groups.members), "members_found": len(group_of),
                     "groups_found": len(set(group_of.values()))}
    out["missing"] = [{"group": m.group, "language": m.language, "file": m.file, "name": m.name, "line": m.line}
                      for m in missing]
    return out


def _model_encoder(model: Any, batch_size: int | None, engine: str = "torch") -> Callable[[list[str], list[str]], Any]:
    def encode(codes: list[str], languages: list[str]) -> np.ndarray:
        return model.encode(codes, languages=languages, batch_size=batch_size, show_progress_bar=False,
                            engine=engine)

    return encode


def _aligned(main: UnitTable, other: UnitTable, name: str) -> UnitTable:
    """``other`` if its units are the main table's (same files, lines, names, in order), else an error."""
    from conba.errors import UsageError

    key = [(u.file, u.start_line, u.qualname) for u in main.units]
    if [(u.file, u.start_line, u.qualname) for u in other.units] != key:
        raise UsageError(f"the {name} index does not hold the same functions as the model's index; "
                         "re-run `conba eval-repo` with the same paths")
    return other


def function_methods(idx: Any, tables: dict[str, UnitTable], baseline_models: dict[str, Any],
                     batch_size: int | None = None) -> dict[str, Method]:
    """The :class:`Method` of every table of an ``eval-repo`` run (``conba``, ``dense``, ``zero-shot``,
    ``tfidf``), with the encoders its name-blind queries need."""
    from conba.eval.tfidf import tfidf_vectorizer

    main_name = next(iter(tables))
    main = tables.get("dense", tables[main_name])
    own = _model_encoder(idx.model, batch_size, idx.engine)
    methods: dict[str, Method] = {}
    for name, table in tables.items():
        if name == "tfidf":
            vectorizer = tfidf_vectorizer().fit(main.codes)
            methods[name] = Method(UnitTable(table.files, table.languages, table.starts,
                                             vectorizer.transform(main.codes).tocsr(), table.codes, units=main.units),
                                   functools.partial(_tfidf_rows, vectorizer))
        elif name in baseline_models:
            aligned = table if table is main else _aligned(main, table, name)
            methods[name] = Method(aligned, _model_encoder(baseline_models[name], batch_size))
        else:
            lexical = idx.lexical_index().encode if table.lexical is not None else None
            methods[name] = Method(table, own, lexical)
    return methods
