"""The HTML report of ``conba plagiarism``: one self-contained file (no script from elsewhere, no network).

Four parts, in the spirit of Dolos: an **overview** (counts, and the distribution of pair scores as an inline
SVG histogram with the threshold marked, on an axis of how rare such a pair is among independent solutions),
the **ranked pairs** (a table; each pair with evidence links to its
view), the **clusters** (submissions joined by pairs at or above the threshold), and one **pair view** per pair
with evidence: both submissions side by side, syntax-highlighted, each matched fragment in its own colour on
both sides (hovering a fragment outlines it on both sides: CSS ``:has()``, no script). The page is the jinja2
template ``templates/plagiarism_report.html`` (autoescaped; pygments output is marked safe).
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
from typing import Any

import jinja2
from markupsafe import Markup, escape

from conba.clones.html_report import _lexer, style_css
from conba.plagiarism.check import PairRecord, Report
from conba.plagiarism.submissions import Submission

MAX_TABLE_ROWS = 300   # pairs in the table (JSONL / CSV list them all)
MAX_VIEWS = 40         # pair views
MAX_LINES = 400        # lines shown per file in a pair view
BINS = 20
BAND_COLOURS = 6       # fragment colours (as the map report's aligned blocks)
MAX_BLOCKS = 50        # fragments with their own hover rule (evidence.MAX_FRAGMENTS)


@functools.lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.PackageLoader("conba.plagiarism", "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    return env.get_template("plagiarism_report.html")


def _highlighted_lines(code: str, language: str) -> list[str]:
    """``code`` highlighted by pygments, one HTML string per line (``nowrap``: each line closes its spans)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter

    lines = code.splitlines()
    lexer = _lexer(language)
    lexer.stripnl = False  # keep leading blank lines: line i of the output is line i of the code
    out = highlight("\n".join(lines) + "\n", lexer, HtmlFormatter(nowrap=True)).split("\n")
    return (out + [""] * len(lines))[:len(lines)]


def rarity(score: float) -> float:
    """Where ``score`` sits on the histogram's axis, in [0, 1]: -log10(1 - score) / 3, so 0.9 (1 in 10
    independent pairs is as alike) is at a third, 0.99 at two thirds, 0.999 and above at the end."""
    return min(3.0, -math.log10(max(1e-3, 1.0 - score))) / 3.0


def histogram(scores: list[float], threshold: float, width: int = 600, height: int = 140) -> Markup:
    """An SVG histogram of pair ``scores`` (each pair's larger score) on the :func:`rarity` axis (``BINS``
    bins, square-root heights so the few high pairs show beside the many low ones), with a red line at
    ``threshold``."""
    counts = [0] * BINS
    for s in scores:
        counts[min(int(rarity(s) * BINS), BINS - 1)] += 1
    top = max(counts) or 1
    bar = width / BINS
    at = rarity(threshold)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="hist" width="{width}" height="{height + 20}" '
             f'role="img" aria-label="distribution of pair scores">']
    for k, c in enumerate(counts):
        h = 0 if c == 0 else max(2.0, (c / top) ** 0.5 * height)
        hot = (k + 1) / BINS > at
        parts.append(f'<rect x="{k * bar + 1:.1f}" y="{height - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" '
                     f'class="{"hot" if hot else "cold"}"><title>{c} pairs</title></rect>')
    tx = at * width
    parts.append(f'<line x1="{tx:.1f}" y1="0" x2="{tx:.1f}" y2="{height}" class="thr"/>')
    parts.append(f'<text x="{max(tx - 110, 0):.1f}" y="12" class="thr-label">threshold {threshold:.3f}</text>')
    for v, label in ((0, "as alike as any"), (1 / 3, "1 in 10"), (2 / 3, "1 in 100"), (1, "1 in 1,000")):
        parts.append(f'<text x="{min(v * width, width - 60):.1f}" y="{height + 15}" class="axis">{label}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def _side(sub: Submission, frags: list[dict[str, Any]], side: str) -> Markup:
    """Every file of ``sub`` highlighted, the lines of fragment k in band k (``side``: "a" or "b")."""
    out = []
    for f in sub.files:
        band: dict[int, int] = {}
        for k, fr in enumerate(frags):
            if fr[f"{side}_file"] != f.path:
                continue
            lo, hi = fr[f"{side}_lines"]
            for n in range(lo, hi + 1):
                band.setdefault(n, k)
        rows = []
        lines = _highlighted_lines(f.text, f.language)
        for i, html in enumerate(lines[:MAX_LINES]):
            block = band.get(i + 1)
            cls = "al" if block is None else f"al ab{block % BAND_COLOURS} ak{min(block, MAX_BLOCKS)}"
            rows.append(f'<span class="{cls}"><span class="lineno">{i + 1:>4}</span> {html}</span>')
        if len(lines) > MAX_LINES:
            rows.append(f'<span class="al">... ({len(lines) - MAX_LINES} more lines)</span>')
        out.append(f'<div class="file"><div class="fname">{escape(f.path)} <span class="lang">'
                   f'{escape(f.language)}</span></div><pre class="hl">{"".join(rows)}</pre></div>')
    return Markup("".join(out))


def _view(k: int, pair: PairRecord, subs: dict[str, Submission]) -> dict[str, Any]:
    frags = pair.fragments or []
    return {"id": f"pair-{k}", "pair": pair, "a": _side(subs[pair.a], frags, "a"), "b": _side(subs[pair.b], frags, "b"),
            "fragments": len(frags)}


def _css() -> str:
    colours = ["#dbeafe", "#dcfce7", "#fef3c7", "#fce7f3", "#e0e7ff", "#ccfbf1"]
    rules = [f".al.ab{i}{{background:{c}}}" for i, c in enumerate(colours[:BAND_COLOURS])]
    rules += [f".pairview:has(.ak{k}:hover) .ak{k}{{outline:1px solid #0969da;background:#fff8c5}}"
              for k in range(MAX_BLOCKS + 1)]
    return "".join(rules)


def render(report: Report, title: str = "conba plagiarism report") -> str:
    """The report as one HTML page."""
    subs = {s.name: s for s in report.submissions}
    with_views = [p for p in report.pairs if p.fragments is not None][:MAX_VIEWS]
    view_ids = {(p.a, p.b): f"pair-{k}" for k, p in enumerate(with_views)}
    views = [_view(k, p, subs) for k, p in enumerate(with_views)]
    summary = report.summary()
    return _template().render(
        title=title, summary=summary, threshold=report.threshold,
        generated=_dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        histogram=histogram([max(p.score, p.structure_score) for p in report.pairs], report.threshold),
        rows=report.pairs[:MAX_TABLE_ROWS], more_rows=max(0, len(report.pairs) - MAX_TABLE_ROWS),
        view_ids=view_ids, views=views, clusters=report.clusters, skipped=report.skipped, subs=subs,
        css=Markup(style_css() + _css()))
