"""The HTML clone report: one self-contained file (inline CSS, no scripts or external assets).

Each clone class shows its functions side by side (each next to what it is most similar to),
syntax-highlighted with pygments, with file:line links and the scores of its clone pairs (the best
few shown, the rest folded in a ``<details>``). Very large outputs are capped (functions per
class, classes per report) with a note pointing to the complete JSONL / CSV outputs. The page is
the jinja2 template ``templates/clone_report.html`` (autoescaped; pygments output is marked safe).
"""

from __future__ import annotations

import datetime as _dt
import functools
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from conba.clones.display import display_path
from conba.clones.stats import CloneStats
from conba.source.records import CloneClass, Unit
from conba.syntax.language_table import TABLE

MAX_CODE_LINES = 120
MAX_PAIR_ROWS = 60     # per class; the JSONL/CSV outputs list every pair
SHOWN_PAIR_ROWS = 6    # pairs shown before the "N more pairs" fold
MAX_CARDS = 24         # functions shown per class
MAX_CLASSES = 300      # classes in one report



def _lexer(language: str):
    from pygments.lexers import TextLexer, get_lexer_by_name
    from pygments.util import ClassNotFound

    entry = TABLE.get(language)
    name = entry.highlight if entry is not None else None
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
    """Code as highlighted HTML (pygments)."""
    from pygments import highlight as _hl
    from pygments.formatters import HtmlFormatter

    fmt = HtmlFormatter(cssclass="hl", linenos="inline", linenostart=first_line)
    return _hl(_clip(code), _lexer(language), fmt)


def style_css() -> str:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(style="default").get_style_defs(".hl")


def score_level(score: float) -> str:
    """The bar colour of a score: green >= 0.95, amber >= 0.85, else orange."""
    return "s-hi" if score >= 0.95 else "s-mid" if score >= 0.85 else "s-lo"


def score_width(score: float) -> int:
    """The bar length in pixels: 2 up to a score of 0.5, then up to 60 at 1.0."""
    return max(2, round(60 * (score - 0.5) / 0.5)) if score > 0.5 else 2


def unit_href(unit: Unit) -> str:
    return Path(unit.file).absolute().as_uri() if Path(unit.file).is_absolute() else unit.file


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("conba.clones", "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.globals.update(score_level=score_level, score_width=score_width, href=unit_href, display_path=display_path,
                       highlight=lambda code, language, first: Markup(highlight(code, language, first)))
    return env


def _template() -> jinja2.Template:
    return _environment().get_template("clone_report.html")


def score_cell(score: float) -> str:
    """One score cell of a pairs table: the score and a bar whose length and colour follow it."""
    macros: Any = _environment().get_template("clone_report_macros.html").module  # the template's macros
    return str(macros.score(score))


def _stats_facts(stats: CloneStats | None) -> list[str]:
    if stats is None:
        return []
    return [f"{stats.considered} of {stats.units} units considered ({stats.trivial} trivial skipped)",
            f"largest class {stats.largest_class} ({stats.largest_share:.1%})",
            f"median class size {stats.median_class_size:g}", f"{stats.pairs_per_unit:.2f} pairs per unit"]


def render_html(classes: list[CloneClass], title: str = "conba clone report", index: str | None = None,
                model: str | None = None, threshold: float | None = None,
                cross_language_only: bool | None = None, stats: CloneStats | None = None) -> str:
    """The whole report as one HTML string (``stats``: a second header line with the class sizes)."""
    n_pairs = sum(len(c.pairs) for c in classes)
    facts = [f"{len(classes)} clone classes", f"{n_pairs} clone pairs"]
    if cross_language_only:
        facts.append("cross-language pairs only")
    if threshold is not None:
        facts.append(f"threshold {threshold:.3f}")
    if index:
        facts.append(f"index {index}")
    if model:
        facts.append(f"model {model}")
    facts.append(f"generated {_dt.datetime.now():%Y-%m-%d %H:%M}")
    return _template().render(
        title=title, facts=facts, stats_facts=_stats_facts(stats), classes=classes[:MAX_CLASSES],
        hidden_classes=max(0, len(classes) - MAX_CLASSES), pygments_css=style_css(), max_cards=MAX_CARDS,
        max_pair_rows=MAX_PAIR_ROWS, shown_pair_rows=SHOWN_PAIR_ROWS) + "\n"
