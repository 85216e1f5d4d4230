"""Score a map against a groups file (``conba map --groups``).

Two formats, one JSON object per line (both as in the shipped dev sets):

* functions (ports_dev): ``{"group": "project/name", "members": [{"language", "file", "name", "line"}]}``;
  a member is the indexed function whose path ends with ``file`` and that starts at ``line`` (else has ``name``);
* files (algorithms_dev): ``{"group": "bubblesort", "files": ["cpp/sorting/bubble_sort.cpp", ...]}``.

The file is checked exactly as ``conba eval-repo -g`` checks it (the same validators:
:func:`conba.eval.repo_functions.load_function_groups`, :func:`conba.eval.repo_groups.load_groups`): the first
line picks the level, a malformed line is an error naming ``file:line``. A path is relative to the groups
file's folder (as in eval-repo); one that matches no indexed file that way matches by its tail (an indexed path
ending with it). The evaluation says how many groups were usable (a member among the source functions); none
is an error.

Function level: precision and recall of *matched* pairs (a pair is graded when either side is in a group), and
how many source functions whose group has no member in the target are reported *missing* (and how many of the
others wrongly are). File level: the share of source files with a same-group target file mapped onto one.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from conba.data.records import DataError
from conba.mapping.assign import MATCHED, MISSING
from conba.mapping.records import PortMap
from conba.source.records import Unit


def load_groups(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The groups of ``path`` (JSON objects, in file order), checked as ``conba eval-repo -g`` checks them;
    a bad line is a :class:`DataError` naming file and line."""
    from conba.data.records import iter_json_lines
    from conba.eval.repo_functions import is_function_groups, load_function_groups
    from conba.eval.repo_groups import load_groups as load_file_groups

    (load_function_groups if is_function_groups(path) else load_file_groups)(path)
    return [obj for _, obj in iter_json_lines(Path(path))]


def _ends_with(path: str, tail: str) -> bool:
    tail = tail.replace("/", os.sep).lstrip(os.sep)
    return path == tail or path.endswith(os.sep + tail)


def _matcher(base: str | os.PathLike | None, files: list[str]) -> Any:
    """``where(listed) -> indexed files``: the file the path names relative to ``base`` (the groups file's
    folder; through symlinks too), else those whose path ends with it (not for ``..`` paths)."""
    real = {os.path.realpath(f): f for f in files}
    known = set(files)

    def where(listed: str) -> list[str]:
        if base is not None:
            full = os.path.normpath(os.path.join(os.path.abspath(base), listed))
            hit = full if full in known else real.get(os.path.realpath(full))
            if hit is not None:
                return [hit]
        if listed.replace("\\", "/").startswith("../") or os.path.isabs(listed):
            return []
        return [f for f in files if _ends_with(f, listed)]

    return where


def unit_labels(groups: list[dict[str, Any]], units: list[Unit],
                base: str | os.PathLike | None = None) -> dict[int | None, str]:
    """unit id -> group, for every function member found among ``units`` (``base``: the groups file's folder)."""
    where = _matcher(base, sorted({u.file for u in units}))
    by_file: dict[str, list[Unit]] = defaultdict(list)
    for u in units:
        by_file[u.file].append(u)
    labels: dict[int | None, str] = {}  # by unit id (a unit without one has no label)
    for g in groups:
        for m in g.get("members", []):
            for file in where(str(m.get("file", ""))):  # one per copy of the file (e.g. a tree and its port)
                here = by_file[file]
                line, last = m.get("line"), _last_name(str(m.get("name", "")))
                hit = ([u for u in here if u.start_line == line]
                       # a unit that starts at its doc comment holds the function's own first line
                       or [u for u in here if isinstance(line, int) and u.start_line < line <= u.end_line
                           and _last_name(u.qualname) == last]
                       or [u for u in here if u.qualname == m.get("name")])
                for u in hit[:1]:
                    labels[u.id] = str(g["group"])
    return labels


def file_labels(groups: list[dict[str, Any]], files: list[str],
                base: str | os.PathLike | None = None) -> dict[str, str]:
    """file -> group, for every listed file found among ``files`` (paths as indexed)."""
    where = _matcher(base, files)
    out: dict[str, str] = {}
    for g in groups:
        for listed in g.get("files", []):
            for f in where(str(listed)):
                out[f] = str(g["group"])
    return out


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def evaluate_functions(port: PortMap, labels: dict[int | None, str]) -> dict[str, Any]:
    """Matched-pair precision / recall and missing detection of ``port`` against unit ``labels``."""
    in_target = {labels[u.id] for u in port.targets if u.id in labels}
    graded = correct = present = found = absent = reported = false_missing = 0
    for f in port.functions:
        g = labels.get(f.source.id)
        if f.status == MATCHED and f.target is not None:
            tg = labels.get(f.target.id)
            if g is not None or tg is not None:
                graded += 1
                correct += g is not None and g == tg
        if g is None:
            continue
        if g in in_target:
            present += 1
            found += f.status == MATCHED and f.target is not None and labels.get(f.target.id) == g
            false_missing += f.status == MISSING
        else:
            absent += 1
            reported += f.status == MISSING
    return {"level": "function", "pairs_graded": graded, "pairs_correct": correct, "precision": _ratio(correct, graded),
            "with_counterpart": present, "recall": _ratio(found, present), "truly_missing": absent,
            "missing_found": _ratio(reported, absent), "false_missing": _ratio(false_missing, present)}


def evaluate_files(port: PortMap, labels: dict[str, str]) -> dict[str, Any]:
    """The share of source files with a same-group file in the target whose mapped file is one of them."""
    target_groups = {labels[u.file] for u in port.targets if u.file in labels}
    eligible = [f for f in port.files if labels.get(f.source) in target_groups]
    right = sum(f.target is not None and labels.get(f.target) == labels[f.source] for f in eligible)
    return {"level": "file", "files_with_counterpart": len(eligible), "files_right": right,
            "file_accuracy": _ratio(right, len(eligible))}


def evaluate(port: PortMap, groups_path: str | os.PathLike) -> dict[str, Any]:
    """Both levels that ``groups_path`` labels (function members or files), with how many groups were usable
    (a member among the source functions); none usable is a :class:`DataError`. The function level adds the
    missing list's precision / recall by name keys (:func:`conba.mapping.name_truth.missing_scores`)."""
    from conba.mapping.name_truth import missing_scores

    groups = load_groups(groups_path)
    base = Path(groups_path).parent
    units = [f.source for f in port.functions] + port.targets
    out: dict[str, Any] = {"type": "evaluation", "groups": str(Path(groups_path)), "groups_total": len(groups)}
    if any("members" in g for g in groups):
        labels = unit_labels(groups, units, base)
        usable = {labels[f.source.id] for f in port.functions if f.source.id in labels}
        out["functions"] = evaluate_functions(port, labels)
        out["functions"].update(missing_scores(port))  # missing precision / recall by name keys
    else:
        file_groups = file_labels(groups, sorted({u.file for u in units}), base)
        usable = {file_groups[f.source] for f in port.files if f.source in file_groups}
        out["files"] = evaluate_files(port, file_groups)
    out["groups_usable"] = len(usable)
    if not usable:
        raise DataError(f"{groups_path}: none of its {len(groups)} groups has a member among the source functions "
                        "(paths are relative to the groups file's folder, or tails of the indexed paths); "
                        "nothing to score")
    return out


def _last_name(qualname: str) -> str:
    return re.split(r"[.:#]", qualname)[-1]
