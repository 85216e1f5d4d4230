"""Shared CLI helpers: model and view options, error handling, output."""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

import click

MODEL_ENV = "CONBA_MODEL"
VIEW_NAMES = ("raw", "code", "code+docs")  # conba.syntax.view.VIEWS (not imported here: CLI start-up stays light)


def model_option(f: Callable) -> Callable:
    return click.option(
        "-m", "--model", "model", default=None, metavar="M",
        help=f"Model: 'default' (shipped), 'zero-shot', a conba model folder or an HF encoder. "
             f"Env: {MODEL_ENV}.",
    )(f)


def view_option(f: Callable) -> Callable:
    return click.option(
        "--view", "view", type=click.Choice(VIEW_NAMES), default=None,
        help="Input view: raw (text as is), code (no imports, license header, comments, docstrings or "
             "helpers a main never reaches), code+docs (code, keeping comments and docstrings). "
             "Default: the model's view (an existing index used without --model: the view it was built with).",
    )(f)


def resolve_model_name(name: str | None) -> str:
    return name or os.environ.get(MODEL_ENV) or "default"


def load(name: str | None, view: str | None = None):
    """The model ``name`` (or $CONBA_MODEL, or the default); ``view`` overrides its input view."""
    from conba.model import load_model

    model = load_model(resolve_model_name(name))
    if view is not None:
        model.view = view
    return model


def friendly_errors(f: Callable) -> Callable:
    """Turn expected failures into one-line errors (exit 1) instead of tracebacks."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from conba.data import DataError
        from conba.encoder.backbone import BackboneError
        from conba.model import ModelError

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("default")
                return f(*args, **kwargs)
        except (DataError, ModelError, BackboneError, FileNotFoundError, ValueError, RuntimeError) as exc:
            raise click.ClickException(str(exc)) from None

    return wrapper


def show_progress() -> bool:
    return sys.stderr.isatty()
