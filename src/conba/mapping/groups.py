"""Score a map against a groups file (``conba map --groups``).

Two formats, one JSON object per line (both as in the shipped dev sets):

* functions (ports_dev): ``{"group": "project/name", "members": [{"language", "file", "name", "line"}]}``;
  a member is the indexed function whose path ends with ``file`` and that starts at ``line`` (else has ``name``);
* files (algorithms_dev): ``{"group": "bubblesort", "files": ["cpp/sorting/bubble_sort.cpp", ...]}``.

Function level: precision and recall of *matched* pairs (a pair is graded when either side is in a group), and
how many source functions whose group has no member in the target are reported *missing* (and how many of the
others wrongly are). File level: the share of source files with a same-group target file mapped onto one.
"""

from __future__ import annotations

import json
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
    """The groups of ``path``; a line that is not a group is a :class:`DataError` naming file and line."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                g = json.loads(line)
            except ValueError as exc:
                raise DataError(f"{path}:{n}: not JSON ({exc.msg})") from None
            if not isinstance(g, dict) or "group" not in g or not isinstance(g.get("members", g.get("files")), list):
                raise DataError(f"{path}:{n}: a group needs 'group' and a list of 'members' or 'files'")
            out.append(g)
    if not out:
        raise DataError(f"{path}: no groups in the file")
    return out


def _ends_with(path: str, tail: str) -> bool:
    tail = tail.replace("/", os.sep).lstrip(os.sep)
    return path == tail or path.endswith(os.sep + tail)


def unit_labels(groups: list[dict[str, Any]], units: list[Unit]) -> dict[int, str]:
    """unit id -> group, for every function member found among ``units``."""
    by_name: dict[str, list[Unit]] = defaultdict(list)
    for u in units:
        by_name[os.path.basename(u.file)].append(u)
    labels: dict[int, str] = {}
    for g in groups:
        for m in g.get("members", []):
            near = [u for u in by_name.get(os.path.basename(str(m.get("file", ""))), ())
                    if _ends_with(u.file, str(m["file"]))]
            for file in sorted({u.file for u in near}):  # one per copy of the file (e.g. a tree and its port)
                here = [u for u in near if u.file == file]
                line, last = m.get("line"), _last_name(str(m.get("name", "")))
                hit = ([u for u in here if u.start_line == line]
                       # a unit that starts at its doc comment holds the function's own first line
                       or [u for u in here if isinstance(line, int) and u.start_line < line <= u.end_line
                           and _last_name(u.qualname) == last]
                       or [u for u in here if u.qualname == m.get("name")])
                for u in hit[:1]:
                    labels[int(u.id)] = str(g["group"])
    return labels


def file_labels(groups: list[dict[str, Any]], files: list[str]) -> dict[str, str]:
    """file -> group, for every listed file found among ``files`` (paths as indexed)."""
    out: dict[str, str] = {}
    for g in groups:
        for tail in g.get("files", []):
            for f in files:
                if _ends_with(f, str(tail)):
                    out[f] = str(g["group"])
    return out


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def evaluate_functions(port: PortMap, labels: dict[int, str]) -> dict[str, Any]:
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
    """Both levels that ``groups_path`` labels (function members and / or files)."""
    groups = load_groups(groups_path)
    units = [f.source for f in port.functions] + port.targets
    out: dict[str, Any] = {"type": "evaluation", "groups": str(Path(groups_path))}
    if any("members" in g for g in groups):
        out["functions"] = evaluate_functions(port, unit_labels(groups, units))
    if any("files" in g for g in groups):
        out["files"] = evaluate_files(port, file_labels(groups, sorted({u.file for u in units})))
    return out


def _last_name(qualname: str) -> str:
    return re.split(r"[.:#]", qualname)[-1]
