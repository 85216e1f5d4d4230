"""The aligned halves of a pair in the HTML map report: both functions line by line, aligned blocks in colour.

Each block of :mod:`conba.mapping.align` (a source line range and the target line range it corresponds to)
gets one of ``BAND_COLOURS`` pale colours on both sides (class ``ab<N>``; pygments owns the short token
classes such as ``c1``), and a class ``ak<N>`` (its number in the pair):
hovering a line of a block outlines the block on both sides (CSS ``:has()``, no script). Lines outside
every block stay white. The code is highlighted with pygments line by line (``nowrap``: each line closes its
spans), numbered as in the file.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup, escape

from conba.clones.html_report import MAX_CODE_LINES, _lexer
from conba.mapping.align import unit_text

BAND_COLOURS = 6
MAX_BLOCKS = 60  # blocks with their own hover rule; later ones share the colour bands only


def _highlighted_lines(code: str, language: str) -> list[str]:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter

    lines = code.splitlines()
    lexer = _lexer(language)
    lexer.stripnl = False  # keep leading blank lines: line i of the output is line i of the code
    html = highlight("\n".join(lines) + "\n", lexer, HtmlFormatter(nowrap=True))
    out = html.split("\n")
    return (out + [""] * len(lines))[:len(lines)]


def aligned_half(unit: Any, blocks: list[dict[str, Any]], side: str) -> Markup:
    """The code of ``unit`` as a ``<pre>`` whose lines in a block of ``blocks`` (``side``: "source" or
    "target" ranges) carry the block's colour and hover class."""
    code = unit_text(unit)
    lines = _highlighted_lines(code, unit.language)
    first = unit.start_line
    band: dict[int, int] = {}
    for k, b in enumerate(blocks):
        lo, hi = b[side]
        for n in range(lo, hi + 1):
            band.setdefault(n, k)
    rows = []
    for i, html in enumerate(lines[:MAX_CODE_LINES]):
        n = first + i
        block = band.get(n)
        cls = "al" if block is None else f"al ab{block % BAND_COLOURS} ak{min(block, MAX_BLOCKS)}"
        rows.append(f'<span class="{cls}"><span class="lineno">{n:>4}</span> {html}</span>')
    if len(lines) > MAX_CODE_LINES:
        rows.append(f'<span class="al">... ({len(lines) - MAX_CODE_LINES} more lines)</span>')
    return Markup('<div class="code"><pre class="hl">' + "".join(rows) + "</pre></div>")


def aligned_card(unit: Any, blocks: list[dict[str, Any]], side: str, link: Markup) -> Markup:
    """A card (the clone report's header: language, name, file:line link) around :func:`aligned_half`."""
    head = (f'<div class="hd" title="{escape(unit.qualname)}"><span class="lang">{escape(unit.language)}</span>'
            f'<b>{escape(unit.qualname)}</b> <span class="muted">{link} ({unit.lines} lines)</span></div>')
    return Markup(f'<div class="card">{head}{aligned_half(unit, blocks, side)}</div>')


def align_css() -> str:
    """The band colours and the hover rules of the aligned halves."""
    colours = ["#dbeafe", "#dcfce7", "#fef3c7", "#fce7f3", "#e0e7ff", "#ccfbf1"]
    rules = [f".al.ab{i}{{background:{c}}}" for i, c in enumerate(colours[:BAND_COLOURS])]
    rules.append(".al{display:block}")
    rules += [f".aligned:has(.ak{k}:hover) .ak{k}{{outline:1px solid #0969da;background:#fff8c5}}"
              for k in range(MAX_BLOCKS + 1)]
    return "".join(rules)
