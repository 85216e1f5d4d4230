"""The search page at ``GET /``: one HTML file, one script, one stylesheet; no build step.

The page posts to ``/search`` with ``highlight: true``: the server highlights the query and the
hits with pygments (the same highlighter as the HTML clone report), so the page needs no
JavaScript libraries. The template and static files are package data of ``conba.serve``.
"""

from __future__ import annotations

import functools

import jinja2
from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles


def highlight(code: str, language: str, first_line: int = 1) -> str:
    """Highlighted HTML of ``code`` (pygments, line numbers from ``first_line``; long code is clipped)."""
    from conba.clones.html_report import highlight as _highlight

    return _highlight(code, language, first_line)


@functools.lru_cache(maxsize=1)
def render_page() -> str:
    """The page's HTML: the jinja2 template (autoescaped) with the language list and the pygments styles."""
    from markupsafe import Markup
    from pygments.formatters import HtmlFormatter

    from conba.serve.limits import known_languages

    env = jinja2.Environment(loader=jinja2.PackageLoader("conba.serve", "templates"), autoescape=True,
                             keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    css = Markup(HtmlFormatter(style="default").get_style_defs(".hl"))  # pygments' own CSS, not user input
    return env.get_template("page.html").render(languages=known_languages(), pygments_css=css)


def mount_page(app: FastAPI) -> None:
    """``GET /`` (the page) and ``/static`` (its script and stylesheet); neither needs the token."""

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(render_page())

    app.mount("/static", StaticFiles(packages=[("conba.serve", "static")]), name="static")
