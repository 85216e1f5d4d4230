"""Function-level retrieval over indexed repositories (the protocol of ``ports_dev/groups.jsonl``).

A groups file lists ported functions, one group per line::

    {"group": "project/name", "members": [{"language", "file", "name", "line"}, ...]}

``file`` is relative to the groups file's folder; its first path component is the *project*. For
every member function in language a, rank every indexed function of language b in the same project;
the relevant ones are the group's members in b. MAP@R (R = relevant), MRR and R@1 per (project,
ordered language pair), and their plain mean.

*Name-blind*: the query's own name (the last component of its qualified name) is replaced by ``f``
in its code before it is scored, so names cannot match; what is left is what the body (and the rest
of its words) is worth.

Glossary: q queries, c candidates (units of the target language in the query's project).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from conba.data.records import DataError, iter_json_lines
from conba.eval.metrics import map_at_r, mrr, pair_name, recall_at_1
from conba.source.records import Unit

__all__ = ["Member", "FunctionGroups", "is_function_groups", "load_function_groups", "blind_name",
           "function_retrieval"]

_METRICS = ("map_at_r", "recall_at_1", "mrr")


@dataclass(frozen=True)
class Member:
    group: str
    language: str
    file: str  # absolute, normalised
    name: str
    line: int


@dataclass
class FunctionGroups:
    """The members of a function-level groups file, and the project folder of each member."""

    path: Path
    members: list[Member]

    @property
    def base(self) -> Path:
        return self.path.parent

    def project_of(self, file: str) -> str | None:
        """The first folder below the groups file's folder that holds ``file`` (None: outside it)."""
        rel = os.path.relpath(os.path.realpath(file), os.path.realpath(self.base))
        return None if rel.startswith("..") else Path(rel).parts[0]

    def resolve(self, units: Sequence[Unit]) -> tuple[dict[int, str], list[Member]]:
        """({row in ``units``: group} for every member the index holds, members it lacks). A member matches
        the unit of the same file and first line (its qualified name too, when several units start there), else
        the unit of that file and last name whose lines hold the member's line (a unit that starts at its doc
        comment, for a groups file written when units started at the function's own first line)."""
        at: dict[tuple[str, int], list[tuple[int, Unit]]] = {}
        for row, u in enumerate(units):
            at.setdefault((os.path.realpath(u.file), u.start_line), []).append((row, u))
        found: dict[int, str] = {}
        missing: list[Member] = []
        for m in self.members:
            cands = at.get((os.path.realpath(m.file), m.line), []) or _enclosing(units, m)
            if len(cands) > 1:
                cands = [c for c in cands if c[1].qualname == m.name] or cands[:1]
            if cands:
                found[cands[0][0]] = m.group
            else:
                missing.append(m)
        return found, missing


def _enclosing(units: Sequence[Unit], m: Member) -> list[tuple[int, Unit]]:
    path, last = os.path.realpath(m.file), _last_name(m.name)
    return [(row, u) for row, u in enumerate(units) if u.start_line < m.line <= u.end_line
            and _last_name(u.qualname) == last and os.path.realpath(u.file) == path]


def _last_name(qualname: str) -> str:
    return re.split(r"[.:#]", qualname)[-1]


def name_key(qualname: str) -> str:
    """A function's name as ports_dev's README keys its groups: the last component of the qualified name,
    lower case, without ``_`` or punctuation (``diff_main`` and ``diffMain`` both key ``diffmain``)."""
    return re.sub(r"[\W_]", "", _last_name(qualname)).lower()


def is_function_groups(path: str | os.PathLike) -> bool:
    """True when the first JSON line of ``path`` has ``members`` (function level), not ``files``."""
    for _, obj in iter_json_lines(Path(path)):
        return isinstance(obj, dict) and "members" in obj
    return False


def load_function_groups(path: str | os.PathLike) -> FunctionGroups:
    """Every member of a function-level groups file. Raises :class:`DataError` naming ``file:line``."""
    path = Path(path)
    base = os.path.abspath(path.parent)
    members: list[Member] = []
    seen: dict[str, int] = {}
    for lineno, obj in iter_json_lines(path):
        where = f"{path}:{lineno}"
        name = obj.get("group")
        if not isinstance(name, str) or not name.strip():
            raise DataError(f"{where}: field 'group' must be a non-empty string")
        if name in seen:
            raise DataError(f"{where}: group {name!r} is already defined on line {seen[name]}")
        seen[name] = lineno
        listed = obj.get("members")
        if not isinstance(listed, list) or not listed:
            raise DataError(f"{where}: field 'members' must be a non-empty list of "
                            '{"language", "file", "name", "line"} objects')
        for k, m in enumerate(listed):
            if not isinstance(m, dict):
                raise DataError(f"{where}: members[{k}] must be an object")
            for key, kind in (("language", str), ("file", str), ("name", str), ("line", int)):
                if not isinstance(m.get(key), kind) or isinstance(m.get(key), bool):
                    raise DataError(f"{where}: members[{k}].{key} must be a {kind.__name__}")
            members.append(Member(name, m["language"], os.path.normpath(os.path.join(base, m["file"])),
                                  m["name"], m["line"]))
    if not members:
        raise DataError(f"{path}: no groups")
    return FunctionGroups(path, members)


def blind_name(unit: Unit, replacement: str = "f") -> str:
    """``unit.code`` with its own name (last component of the qualified name) replaced everywhere."""
    name = re.split(r"[.:#]", unit.qualname)[-1]
    if not name or not re.fullmatch(r"\w+", name):
        return unit.code
    return re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", replacement, unit.code)


def function_retrieval(units: Sequence[Unit], group_of: dict[int, str], project_of: Callable[[str], str | None],
                       score: Callable[[list[int], list[int]], np.ndarray]) -> dict:
    """MAP@R / R@1 / MRR per (project, ordered language pair) and their mean.

    ``units``: every indexed unit, by row; ``group_of``: {row: group} of the grouped ones;
    ``score(q_rows, c_rows)``: (q, c) scores of query units against candidate units. Pair keys are
    ``project:a->b``; candidates are every unit of language b in the query's project."""
    by_key: dict[tuple[str, str], list[int]] = {}
    for row, u in enumerate(units):
        proj = project_of(os.path.normpath(u.file))
        if proj is not None:
            by_key.setdefault((proj, u.language), []).append(row)
    pairs: dict[str, dict] = {}
    for proj in sorted({p for p, _ in by_key}):
        langs = sorted(lang for p, lang in by_key if p == proj)
        for ql in langs:
            for cl in langs:
                if ql == cl:
                    continue
                cands = by_key[(proj, cl)]
                c_groups = np.array([group_of.get(r, "") for r in cands], dtype=object)
                present = {g for g in c_groups if g}
                queries = [r for r in by_key[(proj, ql)] if group_of.get(r) in present]
                if not queries:
                    continue
                sim = score(queries, cands)
                values: dict[str, list[float]] = {m: [] for m in _METRICS}
                for row, q in zip(sim, queries):
                    relevant = c_groups == group_of[q]
                    values["map_at_r"].append(map_at_r(row, relevant))
                    values["recall_at_1"].append(recall_at_1(row, relevant))
                    values["mrr"].append(mrr(row, relevant))
                pairs[f"{proj}:{pair_name(ql, cl)}"] = {**{m: float(np.mean(v)) for m, v in values.items()},
                                                        "queries": len(queries), "candidates": len(cands)}
    mean = {m: float(np.mean([p[m] for p in pairs.values()])) if pairs else float("nan") for m in _METRICS}
    return {"pairs": pairs, "mean": mean}
