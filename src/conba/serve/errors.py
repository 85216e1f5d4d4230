"""Error bodies of ``conba serve`` in the client's terms: short, and naming request fields, not CLI flags.

Library messages are written for the command line: they echo the bad value (``got 'xxxx…'``) and name
options (``--source-lang``). :func:`http_detail` makes one fit an HTTP answer: every quoted value longer than
:data:`MAX_VALUE` characters is cut (with its length said), the whole detail is capped at :data:`MAX_DETAIL`,
and each flag with a request field (:data:`FIELDS`) is named by that field.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

__all__ = ["MAX_VALUE", "MAX_DETAIL", "FIELDS", "http_detail", "add_http_error_handler"]

MAX_VALUE = 200    # characters of an echoed value
MAX_DETAIL = 1000  # characters of a whole detail
# CLI flag -> the request field that means the same (POST /map, /search, /compare, /clones)
FIELDS = {"--source-lang": "source_language", "--target-lang": "target_language", "--language": "language",
          "--result-language": "language", "--query-language": "query_language", "--language-a": "language_a",
          "--language-b": "language_b", "--threshold": "threshold", "-t": "threshold", "--margin": "margin",
          "--keep-trivial": "keep_trivial", "--neighbors": "k", "-k": "k", "--min-lines": "min_lines",
          "--cross-language-only": "cross_language_only", "--only": "only"}
_LONG = "{" + str(MAX_VALUE + 1) + ",}"
_QUOTED = re.compile(rf"'[^'\n]{_LONG}'|\"[^\"\n]{_LONG}\"")
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-z])(?![\w-])")


def _cut(match: re.Match) -> str:
    text = match.group(0)
    quote, inner = text[0], text[1:-1]
    return f"{quote}{inner[:MAX_VALUE]}{quote}... ({len(inner)} characters)"


def http_detail(detail: Any) -> Any:
    """``detail`` (a message) with long quoted values cut, the length capped and CLI flags named as fields;
    anything that is not a string is returned as is."""
    if not isinstance(detail, str):
        return detail
    text = _QUOTED.sub(_cut, detail)
    text = _FLAG.sub(lambda m: FIELDS.get(m.group(1), m.group(1)), text)
    if len(text) > MAX_DETAIL:
        text = text[:MAX_DETAIL] + f"... ({len(text)} characters)"
    return text


def add_http_error_handler(app: FastAPI) -> None:
    """Answer every ``HTTPException`` (4xx, 5xx) with :func:`http_detail` of its detail."""

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse({"detail": http_detail(exc.detail)}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))
