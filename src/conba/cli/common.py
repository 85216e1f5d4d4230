"""Shared CLI helpers: model loading, error handling, output (the shared options: conba.cli.options)."""

from __future__ import annotations

import errno
import functools
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

import click

from conba.cli.options import MODEL_ENV, model_option, view_option

__all__ = ["MODEL_ENV", "model_option", "view_option", "load", "resolve_model_name", "friendly_errors",
           "expected_error", "show_progress"]
DEBUG_ENV = "CONBA_DEBUG"  # 1: show the traceback of every error, also the expected ones
# OS errors about a path the user gave, or about their disk: reported in one line, not as a bug
PATH_OS_ERRORS = (FileNotFoundError, FileExistsError, PermissionError, IsADirectoryError, NotADirectoryError)
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.ELOOP, errno.ENAMETOOLONG})


def resolve_model_name(name: str | None) -> str:
    return name or os.environ.get(MODEL_ENV) or "default"


def load(name: str | None, view: str | None = None):
    """The model ``name`` (or $CONBA_MODEL, or the default); ``view`` overrides its input view."""
    from conba.model import load_model

    model = load_model(resolve_model_name(name))
    if view is not None:
        model.view = view
    return model


def expected_error(exc: BaseException) -> str | None:
    """The one-line message of an error conba expects (a :class:`ConbaError`, or an OS error about a
    user's path or disk), or None for anything else: a bug, which keeps its traceback."""
    from conba.errors import ConbaError

    if isinstance(exc, ConbaError):
        return str(exc)
    if isinstance(exc, PATH_OS_ERRORS) or (isinstance(exc, OSError) and exc.errno in DISK_ERRNOS):
        if exc.filename is not None and exc.strerror:
            return f"{os.fsdecode(exc.filename)}: {exc.strerror}"
        return str(exc)
    return None


def debug_mode() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def friendly_errors(f: Callable) -> Callable:
    """Turn expected failures (see :func:`expected_error`) into one-line errors (exit 1); every
    other exception keeps its traceback. ``CONBA_DEBUG=1`` shows the traceback of any error."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("default")
                return f(*args, **kwargs)
        except click.ClickException:
            raise
        except Exception as exc:
            message = expected_error(exc)
            if message is None or debug_mode():
                raise
            raise click.ClickException(message) from None

    return wrapper


def show_progress() -> bool:
    return sys.stderr.isatty()
