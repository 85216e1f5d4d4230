"""The HTML port-coverage report of ``conba map``: one self-contained file in the clone report's style.

Per source file (least covered first): a coverage bar, the missing functions first (with their code and their
nearest targets), then the ambiguous ones (with their candidates and the best one aligned), then the matched
pairs side by side with their score, their lines aligned (:mod:`conba.mapping.align_html`). With a drift
(``--since``), its changed source functions come first. The page
is the jinja2 template ``templates/map_report.html`` (autoescaped; pygments output is marked safe); it reuses
the clone report's CSS and macros (:mod:`conba.clones.html_report`).
"""

from __future__ import annotations

import datetime as _dt
import functools
from typing import Any

import jinja2
from markupsafe import Markup

from conba.clones.display import display_path
from conba.clones.html_report import highlight, score_level, score_width, style_css, unit_href
from conba.mapping.align_html import align_css, aligned_card
from conba.mapping.assign import AMBIGUOUS, MATCHED, MISSING
from conba.mapping.records import PortMap

MAX_FILES = 200          # source files in one report
MAX_ROWS = 150           # functions of one status shown per file (JSONL / CSV list them all)


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    loader = jinja2.ChoiceLoader([jinja2.PackageLoader("conba.mapping", "templates"),
                                  jinja2.PackageLoader("conba.clones", "templates")])
    env = jinja2.Environment(loader=loader, autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.globals.update(score_level=score_level, score_width=score_width, href=unit_href, display_path=display_path,
                       highlight=lambda code, language, first: Markup(highlight(code, language, first)),
                       aligned_card=aligned_card)
    return env


def coverage_level(coverage: float) -> str:
    """The bar colour of a coverage: green from 90%, amber from 60%, else orange."""
    return "s-hi" if coverage >= 0.9 else "s-mid" if coverage >= 0.6 else "s-lo"


def render_map_html(port: PortMap, title: str = "conba port coverage", only: str | None = None,
                    drift: Any = None) -> str:
    """The whole report as one HTML string (``only``: show only functions of that status; ``drift``: a
    :class:`~conba.mapping.drift.Drift`, shown first)."""
    s = port.summary_dict()
    facts = [f"coverage {port.coverage:.1%}", f"{s[MATCHED]} matched", f"{s[AMBIGUOUS]} ambiguous",
             f"{s[MISSING]} missing", f"{s['files_mapped']} of {s['files']} files mapped",
             f"threshold {port.threshold:.3f}", f"margin {port.margin:g}"]
    where = [f"{k} {port.info[k]}" for k in ("source", "target", "index", "model") if port.info.get(k)]
    files = sorted(port.files, key=lambda f: (f.coverage, display_path(f.source)))
    sections = []
    for f in files[:MAX_FILES]:
        by = {st: [m for m in f.functions if m.status == st and (only is None or only == st)]
              for st in (MISSING, AMBIGUOUS, MATCHED)}
        sections.append({"file": f, "level": coverage_level(f.coverage), "rows": by})
    return _environment().get_template("map_report.html").render(
        title=title, facts=facts, where=where + [f"generated {_dt.datetime.now():%Y-%m-%d %H:%M}"],
        sections=sections, hidden_files=max(0, len(files) - MAX_FILES), max_rows=MAX_ROWS,
        pygments_css=style_css() + align_css(), drift=drift) + "\n"
