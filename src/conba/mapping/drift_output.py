"""``conba map --since`` outputs: one drift record per changed source function, in JSONL (then a summary
line), CSV, plain lines; the HTML report shows them in a section of its own (:mod:`conba.mapping.html`)."""

from __future__ import annotations

import csv
import json
from typing import TextIO

from conba.clones.display import display_path
from conba.errors import ConfigError
from conba.mapping.drift import Drift
from conba.mapping.records import PortMap

DRIFT_CSV_COLUMNS = ["change", "status", "score", "source_language", "source_name", "source_file", "source_line",
                     "counterpart_language", "counterpart_name", "counterpart_file", "counterpart_line"]


def write_drift_csv(drift: Drift, out: TextIO) -> None:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(DRIFT_CSV_COLUMNS)
    for r in drift.records:
        s, t = r.source, r.counterpart
        w.writerow([r.change, r.status, "" if r.score is None else f"{r.score:.4f}", s.language, s.qualname,
                    display_path(s.file), s.start_line, t.language if t else "", t.qualname if t else "",
                    display_path(t.file) if t else "", t.start_line if t else ""])


def write_drift_plain(drift: Drift, out: TextIO) -> None:
    for r in drift.records:
        s, t = r.source, r.counterpart
        there = f"{t.qualname} ({display_path(t.file)}:{t.start_line})" if t is not None else "-"
        out.write(f"{r.status:<46} {display_path(s.file)}:{s.start_line} {s.qualname} -> {there}\n")


def write_drift(drift: Drift, port: PortMap, out: TextIO, fmt: str = "jsonl", only: str | None = None) -> None:
    """Write the drift of ``port`` in ``fmt`` (jsonl, csv, plain, html: the map report with the drift first)."""
    if fmt == "jsonl":
        for r in drift.records:
            out.write(json.dumps(r.to_dict()) + "\n")
        out.write(json.dumps(drift.summary_dict()) + "\n")
    elif fmt == "csv":
        write_drift_csv(drift, out)
    elif fmt == "plain":
        write_drift_plain(drift, out)
    elif fmt == "html":
        from conba.mapping.html import render_map_html

        out.write(render_map_html(port, only=only, drift=drift))
    else:
        raise ConfigError(f"unknown format '{fmt}' (choose from jsonl, csv, plain, html)")
