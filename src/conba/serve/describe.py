"""The ``conba serve`` app's routes and OpenAPI schema without a model or an index.

``conba serve --help`` lists the endpoints and the user guide's HTTP page is generated from the schema; both
read them here, from the same routers ``create_app`` mounts, so no list of endpoints is kept by hand.
tests/test_serve_describe.py checks that this app and ``create_app``'s have the same routes.

>>> [f"{method} {path}" for method, path, _ in endpoints()][:2]
['GET /', 'POST /search']
"""

from __future__ import annotations

import functools
from typing import Any

TITLE = "conba"
DESCRIPTION = "Search code by example and find functionally equivalent code across languages."
# what the routes FastAPI adds itself and the page's mount are, in one line each
BUILT_IN = {"/": "the search page", "/docs": "the API docs (Swagger UI)", "/redoc": "the API docs (ReDoc)",
            "/openapi.json": "the OpenAPI schema", "/static": "the search page's script and stylesheet"}


class _NoModel:
    """What the routers read while they are built: the token, the limits and the index holder (never used)."""

    token = None
    holder = None

    def __init__(self) -> None:
        from conba.serve.limits import Limits

        self.limits = Limits()


def schema_app() -> Any:
    """A FastAPI app with the served routes (and the page) but no model, index or lifespan: for its schema."""
    from fastapi import FastAPI

    from conba import __version__
    from conba.serve.page import mount_page
    from conba.serve.routes import router

    app = FastAPI(title=TITLE, version=__version__, description=DESCRIPTION)
    app.include_router(router(_NoModel()))  # type: ignore[arg-type]
    mount_page(app)
    return app


def _summary(description: str) -> str:
    """The first sentence of a route's docstring, without reST markup."""
    text = " ".join((description or "").split()).replace("``", "").replace("`", "")
    for end in (". ", "; ", ": "):
        text = text.split(end)[0]
    return text.rstrip(".")


@functools.lru_cache(maxsize=1)
def endpoints() -> list[tuple[str, str, str]]:
    """(method, path, what it does) of every route of the served app: the search page first, then the API as its
    OpenAPI schema lists it (the routers' order), then the docs and the schema FastAPI adds."""
    app = schema_app()
    api = [(method.upper(), path, _summary(op.get("description", "")))
           for path, ops in app.openapi()["paths"].items() for method, op in ops.items()]
    built_in: list[tuple[str, str, str]] = []
    for route in app.routes:
        path = getattr(route, "path", None)
        if path in BUILT_IN:
            methods = sorted((getattr(route, "methods", None) or {"GET"}) - {"HEAD", "OPTIONS"})
            built_in.extend((m, path, BUILT_IN[path]) for m in methods)
    page = [e for e in built_in if e[1] == "/"]
    return page + api + [e for e in built_in if e[1] != "/"]


def endpoints_help() -> str:
    """The endpoints as a block of ``conba serve --help`` (click's ``\\b``: lines kept as they are)."""
    try:
        rows = endpoints()
    except ImportError as exc:
        return f"Endpoints: install FastAPI to list them ({exc.name} is missing): pip install 'conba[serve]'"
    width = max(len(f"{m} {p}") for m, p, _ in rows)
    lines = [f"  {f'{m} {p}':<{width}}  {what}" for m, p, what in rows]
    return "\b\nEndpoints (each documented with its fields at /docs):\n" + "\n".join(lines)
