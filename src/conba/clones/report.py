"""Clone reports as JSONL (one clone class per line, then one ``{"stats": {...}}`` line with the
class-size statistics of the run) or CSV (one clone pair per row)."""

from __future__ import annotations

import csv
import json
from typing import TextIO

from conba.clones.display import display_path
from conba.clones.stats import CloneStats
from conba.errors import ConfigError
from conba.source.records import CloneClass

FORMATS = ("jsonl", "csv", "html")
CSV_COLUMNS = ["class", "score", "language_a", "name_a", "file_a", "start_a", "end_a",
               "language_b", "name_b", "file_b", "start_b", "end_b"]


def write_jsonl(classes: list[CloneClass], out: TextIO, code: bool = False, stats: CloneStats | None = None) -> None:
    for c in classes:
        d = c.to_dict(code=code)
        for m in d["members"]:
            m["file"] = display_path(m["file"])
        out.write(json.dumps(d) + "\n")
    if stats is not None:
        out.write(json.dumps({"stats": stats.to_dict()}) + "\n")


def write_csv(classes: list[CloneClass], out: TextIO) -> None:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for c in classes:
        for p in c.pairs:
            a, b = p.a, p.b
            w.writerow([c.id, f"{p.score:.4f}",
                        a.language, a.qualname, display_path(a.file), a.start_line, a.end_line,
                        b.language, b.qualname, display_path(b.file), b.start_line, b.end_line])


def write_report(classes: list[CloneClass], out: TextIO, fmt: str = "jsonl", stats: CloneStats | None = None,
                 **html_info: object) -> None:
    """Write ``classes`` in ``fmt`` (jsonl, csv, html); ``stats`` go into the JSONL and HTML outputs."""
    if fmt == "jsonl":
        write_jsonl(classes, out, stats=stats)
    elif fmt == "csv":
        write_csv(classes, out)
    elif fmt == "html":
        from conba.clones.html_report import render_html

        out.write(render_html(classes, stats=stats, **html_info))  # type: ignore[arg-type]
    else:
        raise ConfigError(f"unknown format '{fmt}' (choose from {', '.join(FORMATS)})")
