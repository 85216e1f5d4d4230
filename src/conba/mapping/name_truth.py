"""The name-key truth of a name-keeping port: which source functions are unported, and how right the map's
*missing* list is against it (:mod:`conba.mapping.evaluate` has the rest of the measuring)."""

from __future__ import annotations

from typing import Any

from conba.eval.repo_functions import name_key
from conba.mapping.assign import MISSING
from conba.mapping.records import PortMap


def ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def unported(port: PortMap) -> dict[int, bool]:
    """source unit id -> True when no target function of ``port`` has the source function's name key."""
    keys = {name_key(u.qualname) for u in port.targets}
    return {f.source.id: name_key(f.source.qualname) not in keys for f in port.functions}


def evaluate_missing(port: PortMap) -> dict[str, Any]:
    """Missing precision and recall of ``port`` against the name-key truth of :func:`unported`."""
    truth = unported(port)
    reported = [f for f in port.functions if f.status == MISSING]
    absent = sum(truth.values())
    right = sum(truth[f.source.id] for f in reported)
    return {"unported_by_name": absent, "reported_missing": len(reported), "missing_right": right,
            "missing_precision": ratio(right, len(reported)), "missing_recall": ratio(right, absent)}
