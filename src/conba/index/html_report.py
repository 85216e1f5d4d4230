"""The HTML clone report: one self-contained file (inline CSS, no scripts or external assets).

Each clone class shows its functions side by side (each next to what it is most similar to),
syntax-highlighted with pygments, with file:line links and the scores of its clone pairs (the best
few shown, the rest folded in a ``<details>``). Very large outputs are capped (functions per
class, classes per report) with a note pointing to the complete JSONL / CSV outputs.
"""

from __future__ import annotations

import datetime as _dt
import html
from pathlib import Path

from conba.index.clone_stats import CloneStats
from conba.index.display import display_path
from conba.index.records import CloneClass, Unit

MAX_CODE_LINES = 120
MAX_PAIR_ROWS = 60     # per class; the JSONL/CSV outputs list every pair
SHOWN_PAIR_ROWS = 6    # pairs shown before the "N more pairs" fold
MAX_CARDS = 24         # functions shown per class
MAX_CLASSES = 300      # classes in one report
PYGMENTS_LEXERS = {
    "python": "python", "java": "java", "c": "c", "cpp": "cpp", "csharp": "csharp",
    "javascript": "javascript", "typescript": "typescript", "go": "go", "rust": "rust", "kotlin": "kotlin",
    "php": "php", "ruby": "ruby", "scala": "scala", "swift": "swift", "lua": "lua", "haskell": "haskell",
    "perl": "perl", "shell": "bash", "r": "r", "julia": "julia", "dart": "dart", "elixir": "elixir",
}

CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0;background:#f6f7f9;color:#1f2328}
header{background:#24292f;color:#fff;padding:16px 24px}header h1{margin:0 0 4px;font-size:20px}
header p{margin:0;color:#c9d1d9;font-size:13px}main{padding:16px 24px}
nav{display:flex;flex-wrap:wrap;gap:6px;margin-bottom:16px;font-size:12px}
nav a{background:#fff;border:1px solid #d0d7de;border-radius:12px;padding:2px 10px;color:#1f2328;
text-decoration:none}nav a:hover{border-color:#0969da}nav a b{font-family:ui-monospace,Consolas,monospace}
section.cls{background:#fff;border:1px solid #d0d7de;border-radius:8px;margin:0 0 20px;padding:12px 16px}
section.cls h2{font-size:16px;margin:0 0 10px}section.cls h2 .muted{font-weight:400;font-size:13px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(400px,1fr));gap:12px;align-items:start}
.card{border:1px solid #d0d7de;border-radius:6px;overflow:hidden;min-width:0}
.card .hd{background:#f0f3f6;padding:6px 10px;font-size:13px;border-bottom:1px solid #d0d7de;
white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.card .hd b{font-family:ui-monospace,Consolas,monospace}
.lang{display:inline-block;background:#0969da;color:#fff;border-radius:10px;padding:0 8px;font-size:11px;
margin-right:6px}
.code{overflow:auto;max-height:460px;font-size:12px}.code pre{margin:0;padding:8px 10px;line-height:1.4}
.code .linenos,.code .lineno{color:#8c959f;padding-right:8px;user-select:none}
table.pairs{border-collapse:collapse;font-size:12px;margin-top:10px}
table.pairs td,table.pairs th{border-bottom:1px solid #eaeef2;padding:3px 10px;text-align:left}
.score{font-weight:600;font-variant-numeric:tabular-nums;white-space:nowrap}
.score i{display:inline-block;height:8px;border-radius:4px;margin-left:6px;vertical-align:middle}
.s-hi i{background:#1a7f37}.s-mid i{background:#9a6700}.s-lo i{background:#bc4c00}
details{font-size:12px;margin-top:4px}summary{cursor:pointer;color:#0969da}
.muted{color:#57606a}.note{font-size:12px;color:#57606a;margin:8px 0 0}
"""


def _lexer(language: str):
    from pygments.lexers import TextLexer, get_lexer_by_name
    from pygments.util import ClassNotFound

    name = PYGMENTS_LEXERS.get(language)
    try:
        if name == "php":
            return get_lexer_by_name("php", startinline=True)
        return get_lexer_by_name(name) if name else TextLexer()
    except ClassNotFound:
        return TextLexer()


def _clip(code: str) -> str:
    lines = code.splitlines()
    if len(lines) <= MAX_CODE_LINES:
        return code
    return "\n".join(lines[:MAX_CODE_LINES]) + f"\n... ({len(lines) - MAX_CODE_LINES} more lines)\n"


def highlight(code: str, language: str, first_line: int = 1) -> str:
    """Code as highlighted HTML (falls back to escaped plain text without pygments)."""
    try:
        from pygments import highlight as _hl
        from pygments.formatters import HtmlFormatter
    except ImportError:  # pragma: no cover
        return f"<pre>{html.escape(code)}</pre>"
    fmt = HtmlFormatter(cssclass="hl", linenos="inline", linenostart=first_line)
    return _hl(_clip(code), _lexer(language), fmt)


def _style_css() -> str:
    try:
        from pygments.formatters import HtmlFormatter
    except ImportError:  # pragma: no cover
        return ""
    return HtmlFormatter(style="default").get_style_defs(".hl")


def _link(unit: Unit) -> str:
    shown = f"{display_path(unit.file)}:{unit.start_line}"
    href = Path(unit.file).absolute().as_uri() if Path(unit.file).is_absolute() else unit.file
    return f'<a href="{html.escape(href)}#L{unit.start_line}">{html.escape(shown)}</a>'


def _card(unit: Unit) -> str:
    return (f'<div class="card"><div class="hd" title="{html.escape(unit.qualname)}">'
            f'<span class="lang">{html.escape(unit.language)}</span>'
            f'<b>{html.escape(unit.qualname)}</b> <span class="muted">{_link(unit)} '
            f"({unit.lines} lines)</span></div>"
            f'<div class="code">{highlight(unit.code, unit.language, unit.start_line)}</div></div>')


def _score(score: float) -> str:
    """The score with a bar whose length and colour follow it (green >= 0.95, amber >= 0.85, orange)."""
    level = "s-hi" if score >= 0.95 else "s-mid" if score >= 0.85 else "s-lo"
    width = max(2, round(60 * (score - 0.5) / 0.5)) if score > 0.5 else 2
    return f'<td class="score {level}">{score:.3f}<i style="width:{width}px"></i></td>'


def _pair_rows(pairs: list) -> str:
    return "".join(
        f"<tr>{_score(p.score)}<td>{html.escape(p.a.qualname)} "
        f'<span class="muted">[{html.escape(p.a.language)}] {_link(p.a)}</span></td>'
        f'<td>{html.escape(p.b.qualname)} <span class="muted">[{html.escape(p.b.language)}] {_link(p.b)}'
        f"</span></td></tr>" for p in pairs)


def _pairs_table(c: CloneClass) -> str:
    head = "<tr><th>score</th><th>function</th><th>clone of</th></tr>"
    shown = c.pairs[:MAX_PAIR_ROWS]
    table = f'<table class="pairs">{head}{_pair_rows(shown[:SHOWN_PAIR_ROWS])}</table>'
    rest = shown[SHOWN_PAIR_ROWS:]
    if rest:
        more = len(c.pairs) - SHOWN_PAIR_ROWS
        cut = (f'<p class="note">... {len(c.pairs) - MAX_PAIR_ROWS} more pairs in the JSONL / CSV output</p>'
               if len(c.pairs) > MAX_PAIR_ROWS else "")
        table += (f"<details><summary>{more} more pair{'s' if more != 1 else ''}</summary>"
                  f'<table class="pairs">{head}{_pair_rows(rest)}</table>{cut}</details>')
    return table


def _section(c: CloneClass) -> str:
    title = (f"Clone class {c.id} · {len(c.units)} functions · {', '.join(c.languages)}")
    scores = f"max {c.max_score:.3f}, mean {c.mean_score:.3f}, {len(c.pairs)} pairs"
    cards = "".join(_card(u) for u in c.units[:MAX_CARDS])
    if len(c.units) > MAX_CARDS:
        cards += (f'<p class="note">... {len(c.units) - MAX_CARDS} more functions (the most similar are '
                  "shown first; the JSONL output lists them all)</p>")
    return (f'<section class="cls" id="class-{c.id}"><h2>{html.escape(title)} '
            f'<span class="muted">· {scores}</span></h2>'
            f'<div class="grid">{cards}</div>{_pairs_table(c)}</section>')


def _chip(c: CloneClass) -> str:
    return (f'<a href="#class-{c.id}">#{c.id} <b>{html.escape(c.units[0].qualname.rsplit(".", 1)[-1])}</b> '
            f'· {len(c.units)} · {html.escape("/".join(c.languages))}</a>')


def _stats_line(stats: CloneStats | None) -> str:
    if stats is None:
        return ""
    facts = [f"{stats.considered} of {stats.units} units considered ({stats.trivial} trivial skipped)",
             f"largest class {stats.largest_class} ({stats.largest_share:.1%})",
             f"median class size {stats.median_class_size:g}", f"{stats.pairs_per_unit:.2f} pairs per unit"]
    return f"<p>{html.escape(' · '.join(facts))}</p>"


def render_html(classes: list[CloneClass], title: str = "conba clone report", index: str | None = None,
                model: str | None = None, threshold: float | None = None,
                cross_language_only: bool | None = None, stats: CloneStats | None = None) -> str:
    """The whole report as one HTML string (``stats``: a second header line with the class sizes)."""
    n_pairs = sum(len(c.pairs) for c in classes)
    when = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    facts = [f"{len(classes)} clone classes", f"{n_pairs} clone pairs"]
    if cross_language_only:
        facts.append("cross-language pairs only")
    if threshold is not None:
        facts.append(f"threshold {threshold:.3f}")
    if index:
        facts.append(f"index {index}")
    if model:
        facts.append(f"model {model}")
    facts.append(f"generated {when}")
    shown = classes[:MAX_CLASSES]
    nav = "".join(_chip(c) for c in shown)
    body = "".join(_section(c) for c in shown) or "<p>No clones found at this threshold.</p>"
    if len(classes) > MAX_CLASSES:
        body += (f'<p class="note">... {len(classes) - MAX_CLASSES} more clone classes in the JSONL / CSV '
                 "output (or raise --threshold)</p>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>{CSS}{_style_css()}</style></head><body>"
            f"<header><h1>{html.escape(title)}</h1><p>{html.escape(' · '.join(facts))}</p>{_stats_line(stats)}"
            "</header>"
            f"<main><nav>{nav}</nav>{body}</main></body></html>\n")
