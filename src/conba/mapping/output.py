"""``conba map`` outputs: JSONL (functions, then files, then a summary line), CSV (one row per source
function), plain lines for people, or the HTML report (:mod:`conba.mapping.html`)."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from typing import Any, TextIO

from conba.clones.display import display_path
from conba.errors import ConfigError
from conba.mapping.records import FunctionMatch, PortMap

FORMATS = ("jsonl", "csv", "html")
CSV_COLUMNS = ["status", "reason", "score", "source_language", "source_name", "source_file", "source_line",
               "target_language", "target_name", "target_file", "target_line"]


def _selected(port: PortMap, only: str | None) -> list[FunctionMatch]:
    return [f for f in port.functions if only is None or f.status == only]


def write_jsonl(port: PortMap, out: TextIO, only: str | None = None, extra: Sequence[dict[str, Any]] = ()) -> None:
    """One line per source function; without ``only`` also one per source file and a summary line."""
    for f in _selected(port, only):
        out.write(json.dumps(f.to_dict()) + "\n")
    if only is None:
        for fm in port.files:
            out.write(json.dumps(fm.to_dict()) + "\n")
        out.write(json.dumps(port.summary_dict()) + "\n")
    for line in extra:
        out.write(json.dumps(line) + "\n")


def write_csv(port: PortMap, out: TextIO, only: str | None = None) -> None:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for f in _selected(port, only):
        s, t = f.source, f.target
        w.writerow([f.status, f.reason, "" if f.score is None else f"{f.score:.4f}", s.language, s.qualname,
                    display_path(s.file), s.start_line, t.language if t else "", t.qualname if t else "",
                    display_path(t.file) if t else "", t.start_line if t else ""])


def write_plain(port: PortMap, out: TextIO, only: str | None = None) -> None:
    """One line per source function: status, score, source location and name, counterpart (missing: the
    nearest targets, with their scores)."""
    for f in _selected(port, only):
        s, t = f.source, f.target
        score = "  -  " if f.score is None else f"{f.score:.3f}"
        there = f"{t.qualname} ({display_path(t.file)}:{t.start_line})" if t is not None else "-"
        if f.nearest:  # missing: its nearest targets, to check it is not there
            there = ", ".join(f"{u.qualname} ({display_path(u.file)}:{u.start_line}) {sc:.3f}" for u, sc in f.nearest)
        arrow = "->" if f.status != "missing" else "~ "
        out.write(f"{f.status:<9} {score}  {display_path(s.file)}:{s.start_line} {s.qualname} {arrow} {there}\n")


def write_map(port: PortMap, out: TextIO, fmt: str = "jsonl", only: str | None = None,
              extra: Sequence[dict[str, Any]] = ()) -> None:
    """Write ``port`` in ``fmt`` (jsonl, csv, html, plain); ``extra`` lines (e.g. an evaluation) end the JSONL."""
    if fmt == "jsonl":
        write_jsonl(port, out, only, extra)
    elif fmt == "csv":
        write_csv(port, out, only)
    elif fmt == "plain":
        write_plain(port, out, only)
    elif fmt == "html":
        from conba.mapping.html import render_map_html

        out.write(render_map_html(port, only=only))
    else:
        raise ConfigError(f"unknown format '{fmt}' (choose from {', '.join(FORMATS)})")
