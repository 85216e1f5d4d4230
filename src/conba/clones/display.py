"""How index results are shown to people: short paths and one-line summaries."""

from __future__ import annotations

import os

from conba.source.records import Hit, Unit


def display_path(path: str, start: str | None = None) -> str:
    """``path`` relative to the current directory when it lies below it, else unchanged."""
    start = start or os.getcwd()
    try:
        rel = os.path.relpath(path, start)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith("..") else rel


def location(unit: Unit) -> str:
    span = f"{unit.start_line}-{unit.end_line}" if unit.end_line != unit.start_line else f"{unit.start_line}"
    return f"{display_path(unit.file)}:{span}"


def plain_hit(rank: int, hit: Hit) -> str:
    u = hit.unit
    return f"{rank:>3}. {hit.score:.3f}  {location(u)}  [{u.language}]  {u.qualname}"


def relative_unit_dict(unit: Unit, code: bool = False) -> dict:
    d = unit.to_dict(code=code)
    d["file"] = display_path(unit.file)
    return d
