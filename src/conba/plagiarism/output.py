"""A check's report as JSON Lines, CSV or plain text (the HTML report: :mod:`.html`).

JSONL: one record per pair (``a``, ``b``, ``score``, ``suspicious``, ``channels``, and for the pairs with
evidence ``coverage`` and ``fragments``), highest score first; then one ``{"cluster": [...]}`` line per
cluster and a last ``{"summary": {...}}`` line. CSV: one row per pair. Plain: the suspicious pairs (at least
the first ten) and the clusters, for people.
"""

from __future__ import annotations

import csv
import json
from typing import IO

from conba.plagiarism.check import Report

PLAIN_MIN_ROWS = 10


def write_jsonl(report: Report, out: IO[str]) -> None:
    for p in report.pairs:
        out.write(json.dumps(p.to_dict(), ensure_ascii=False) + "\n")
    for c in report.clusters:
        out.write(json.dumps({"cluster": c, "size": len(c)}, ensure_ascii=False) + "\n")
    out.write(json.dumps({"summary": report.summary() | {"skipped_by_reason": _skip_counts(report)}},
                         ensure_ascii=False) + "\n")


def _skip_counts(report: Report) -> dict[str, int]:
    out: dict[str, int] = {}
    for _, reason in report.skipped:
        out[reason] = out.get(reason, 0) + 1
    return out


def write_csv(report: Report, out: IO[str]) -> None:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["a", "b", "score", "structure_score", "similarity", "suspicious", "structure", "names", "words",
                "coverage", "fragments"])
    for p in report.pairs:
        channels = [f"{p.channels[c]:.4f}" for c in ("structure", "names", "words")]
        w.writerow([p.a, p.b, f"{p.score:.6f}", f"{p.structure_score:.6f}", f"{p.similarity:.4f}", int(p.suspicious),
                    *channels,
                    "" if p.coverage is None else f"{p.coverage:.4f}",
                    "" if p.fragments is None else len(p.fragments)])


def write_plain(report: Report, out: IO[str]) -> None:
    s = report.summary()
    out.write(f"{s['submissions']} submissions, {s['pairs']} pairs scored, {s['suspicious_pairs']} suspicious (score "
              f"or structure score at least {report.threshold:.3f}; marked !)\n")
    rows = [p for i, p in enumerate(report.pairs) if p.suspicious or i < PLAIN_MIN_ROWS]
    if rows:
        wa = max(len(p.a) for p in rows)
        wb = max(len(p.b) for p in rows)
        out.write(f"\n{'score':>6}  {'struct':>6}  {'a':<{wa}}  {'b':<{wb}}  structure names words  coverage\n")
        for p in rows:
            flag = "!" if p.suspicious else " "
            cov = "" if p.coverage is None else f"{p.coverage:8.2f}"
            c = p.channels
            out.write(f"{p.score:6.3f}  {p.structure_score:6.3f}{flag} {p.a:<{wa}}  {p.b:<{wb}}  "
                      f"{c['structure']:9.2f} {c['names']:5.2f} {c['words']:5.2f}  {cov}\n")
    if report.clusters:
        out.write("\nclusters (submissions joined by suspicious pairs):\n")
        for members in report.clusters:
            out.write(f"  {len(members)}: {', '.join(members)}\n")
    if report.skipped:
        counts = ", ".join(f"{n} {r}" for r, n in _skip_counts(report).items())
        out.write(f"\nskipped: {counts} (-v lists them)\n")


def write_report(report: Report, out: IO[str], fmt: str, title: str = "conba plagiarism report") -> None:
    if fmt == "jsonl":
        write_jsonl(report, out)
    elif fmt == "csv":
        write_csv(report, out)
    elif fmt == "plain":
        write_plain(report, out)
    elif fmt == "html":
        from conba.plagiarism.html import render

        out.write(render(report, title=title))
    else:
        raise ValueError(f"unknown format {fmt!r}")
