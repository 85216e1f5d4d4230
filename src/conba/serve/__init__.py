"""``conba serve``: the model and an index held in memory behind a small HTTP API (FastAPI + uvicorn).

Optional: ``pip install 'conba[serve]'``. ``create_app`` builds the app, :mod:`conba.serve.server`
runs it; ``conba.Client`` talks to it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def create_app(*args: Any, **kwargs: Any) -> Any:
    """See :func:`conba.serve.app.create_app`."""
    from conba.serve.app import create_app as _create

    return _create(*args, **kwargs)
