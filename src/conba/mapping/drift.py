"""Drift of a port: the source functions changed upstream since a revision, and where their counterparts stand.

``conba map SRC TARGET --since REV`` (SRC in a git working tree) lists every source function changed, added
or removed since ``REV`` (:mod:`conba.mapping.git_changes`) with its counterpart in the map:

* changed: *changed upstream, counterpart unchanged since* (the port has not followed: the one to act on),
  *changed upstream, counterpart changed since* (it has changed too: check it followed), *changed upstream,
  counterpart to review* (the target is not tracked at a revision: give ``--target-since``), or *changed
  upstream, missing* (no counterpart);
* new: *new upstream, missing* (port it) or *new upstream, ported* (a counterpart exists already);
* removed: *removed upstream, still in the port* (a target function scores at least the threshold with the
  old code, searched in the index) or *removed upstream, gone from the port*.

A function the map leaves out (trivial ones, without ``--keep-trivial``) is left out here too, and counted in the
summary (never "no source function changed" when some did).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from conba.clones.display import display_path
from conba.data.records import DataError
from conba.mapping.assign import MISSING
from conba.mapping.git_changes import CHANGED, NEW, FunctionChange, function_changes
from conba.mapping.records import FunctionMatch, PortMap
from conba.source.records import Unit

SEARCH_K = 50  # index hits searched for the counterpart of a removed function


@dataclass
class DriftRecord:
    """One changed source function, its counterpart (or None) and the drift status."""

    change: str                  # changed / new / removed
    source: Unit
    counterpart: Unit | None
    status: str
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        def unit(u: Unit | None) -> dict[str, Any] | None:
            return None if u is None else {"name": u.qualname, "language": u.language, "file": display_path(u.file),
                                           "start_line": u.start_line, "end_line": u.end_line}
        return {"type": "drift", "change": self.change, "status": self.status, "source": unit(self.source),
                "counterpart": unit(self.counterpart),
                "score": None if self.score is None else round(self.score, 4)}


@dataclass
class Drift:
    """The drift records of a map since ``revision`` (``commit``: its id)."""

    revision: str
    commit: str
    records: list[DriftRecord]
    target_revision: str | None = None
    left_out: int = 0            # changed / new source functions the map leaves out (trivial ones...)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.records:
            out[r.status] = out.get(r.status, 0) + 1
        return out

    def summary_dict(self) -> dict[str, Any]:
        return {"type": "drift_summary", "since": self.revision, "commit": self.commit,
                "target_since": self.target_revision, "functions": len(self.records), **self.counts(),
                "left_out": self.left_out}

    def summary(self) -> str:
        left = (f"; {self.left_out} changed functions the map leaves out (trivial ones: --keep-trivial lists them)"
                if self.left_out else "")
        if not self.records:
            return f"drift since {self.revision}: no mapped source function changed{left}"
        parts = ", ".join(f"{n} {s}" for s, n in sorted(self.counts().items()))
        return f"drift since {self.revision} ({self.commit[:12]}): {len(self.records)} functions: {parts}{left}"


def _key(u: Unit) -> tuple[str, str]:
    return os.path.realpath(u.file), u.qualname


def _find(port: PortMap, unit: Unit) -> FunctionMatch | None:
    """The map row of the current function ``unit`` (same file and name, nearest start line)."""
    rows = [f for f in port.functions if _key(f.source) == _key(unit)]
    return min(rows, key=lambda f: abs(f.source.start_line - unit.start_line)) if rows else None


def _changed_targets(port: PortMap, target_since: str | None) -> set[tuple[str, str]] | None:
    """(file, name) of the target functions changed since ``target_since`` (None: not tracked)."""
    if target_since is None:
        return None
    roots = sorted({os.path.dirname(u.file) for u in port.targets})
    if not roots:
        return set()
    common = os.path.commonpath(roots)
    _, changes = function_changes(common, target_since, "--target-since")
    return {_key(c.unit) for c in changes}


def _removed_counterpart(idx: Any, port: PortMap, unit: Unit) -> tuple[Unit | None, float | None]:
    """The target function closest to the removed ``unit``'s code, when it scores at least the threshold."""
    if idx is None or not port.targets:
        return None, None
    targets = {t.id for t in port.targets}
    languages = sorted({t.language for t in port.targets})
    best: tuple[Unit | None, float | None] = (None, None)
    for lang in languages:
        for hit in idx.search(unit.code, k=SEARCH_K, language=lang, query_language=unit.language):
            if hit.unit.id in targets and (best[1] is None or hit.score > best[1]):
                best = (hit.unit, float(hit.score))
                break
    return best if best[1] is not None and best[1] >= port.threshold else (None, best[1])


def drift_records(port: PortMap, changes: list[FunctionChange], idx: Any = None,
                  changed_targets: set[tuple[str, str]] | None = None) -> list[DriftRecord]:
    """A :class:`DriftRecord` per change of a function the map covers (see the module docstring);
    ``changed_targets``: (real path, name) of the target functions changed since (None: not tracked)."""
    out = []
    for c in changes:
        if c.change in (CHANGED, NEW):
            row = _find(port, c.unit)
            if row is None:
                continue  # trivial or outside the mapped source
            there = row.target if row.status != MISSING else None
            score = row.score if there is not None else None
            if c.change == NEW:
                status = "new upstream, missing" if there is None else "new upstream, ported"
            elif there is None:
                status = "changed upstream, missing"
            elif changed_targets is None:
                status = "changed upstream, counterpart to review"
            elif _key(there) in changed_targets:
                status = "changed upstream, counterpart changed since"
            else:
                status = "changed upstream, counterpart unchanged since"
            out.append(DriftRecord(c.change, row.source, there, status, score))
        else:
            there, score = _removed_counterpart(idx, port, c.unit)
            status = ("removed upstream, still in the port" if there is not None
                      else "removed upstream, gone from the port")
            out.append(DriftRecord(c.change, c.unit, there, status, score))
    order = {"changed": 0, "new": 1, "removed": 2}
    return sorted(out, key=lambda r: (order[r.change], r.status, display_path(r.source.file), r.source.start_line))


def map_drift(port: PortMap, source: str | os.PathLike, since: str, idx: Any = None,
              target_since: str | None = None) -> Drift:
    """The :class:`Drift` of ``port`` whose source tree ``source`` is in a git working tree, since ``since``;
    ``target_since``: a revision of the target's repository to tell which counterparts changed (None: when the
    target is in the same repository, ``since``; else not tracked)."""
    from conba.mapping.git_changes import repo_root

    commit, changes = function_changes(source, since)
    if target_since is None and port.targets:
        try:
            same = repo_root(os.path.dirname(port.targets[0].file)) == repo_root(source)
        except DataError:  # the target is not in a git working tree: its changes are not tracked
            same = False
        target_since = since if same else None
    records = drift_records(port, changes, idx, _changed_targets(port, target_since))
    left_out = sum(1 for c in changes if c.change in (CHANGED, NEW) and _find(port, c.unit) is None)
    return Drift(since, commit, records, target_since, left_out)
