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

from conba.cli.options import MODEL_ENV, bare_model_settings, model_option, view_option

__all__ = ["MODEL_ENV", "model_option", "view_option", "load", "resolve_model_name", "friendly_errors",
           "expected_error", "show_progress", "read_stdin", "place", "code_argument", "language_option_value"]
DEBUG_ENV = "CONBA_DEBUG"  # 1: show the traceback of every error, also the expected ones
# OS errors about a path the user gave, or about their disk: reported in one line, not as a bug
PATH_OS_ERRORS = (FileNotFoundError, FileExistsError, PermissionError, IsADirectoryError, NotADirectoryError)
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.ELOOP, errno.ENAMETOOLONG})


def resolve_model_name(name: str | None) -> str:
    return name or os.environ.get(MODEL_ENV) or "default"


def load(name: str | None, view: str | None = None, device: str | None = None, dtype: str | None = None,
         engine: str = "torch"):
    """The model ``name`` (or $CONBA_MODEL, or the default); ``view`` overrides its input view;
    ``device`` / ``dtype`` (``--device``, ``--dtype``) place it for ``engine`` (None: CPU, float32)."""
    from conba.model import load_model

    model = load_model(resolve_model_name(name), **bare_model_settings())  # --pooling, --trust-remote-code
    if view is not None:
        model.view = view
    return place(model, device, dtype, engine)


def index_model(name: str | None) -> dict[str, Any]:
    """What an index command hands ``Index(**...)``: ``model``, the model name (None: the index's own), and
    ``model_options``, the --pooling / --trust-remote-code of a bare model (recorded with a new index;
    the index's own model is reloaded with its recorded ones)."""
    from conba.cli.options import resolve_model

    return {"model": resolve_model(name), "model_options": bare_model_settings()}


def place(model, device: str | None, dtype: str | None, engine: str | None = "torch"):
    """``model`` moved to ``--device`` in ``--dtype`` for ``engine`` (one rule with the index's own
    placement: :func:`conba.index.model.placement.apply_placement`); None for both leaves it as it is."""
    from conba.index.model.placement import apply_placement

    return apply_placement(model, (device, dtype), engine or "torch")


def expected_error(exc: BaseException) -> str | None:
    """The one-line message of an error conba expects (a :class:`ConbaError`, or an OS error about a
    user's path or disk), or None for anything else: a bug, which keeps its traceback."""
    from conba.errors import ConbaError

    if isinstance(exc, ConbaError):
        return one_line(str(exc))
    if isinstance(exc, PATH_OS_ERRORS) or (isinstance(exc, OSError) and exc.errno in DISK_ERRNOS):
        if exc.filename is not None and exc.strerror:
            return one_line(f"{os.fsdecode(exc.filename)}: {exc.strerror}")
        return one_line(str(exc))
    return None


def one_line(message: str) -> str:
    """``message`` on one line: a newline or carriage return it carries (a file name, a revision) escaped."""
    return message.replace("\r", "\\r").replace("\n", "\\n")


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
                if not debug_mode():  # a warning is one line for people, as an error is
                    warnings.showwarning = _warning_line
                return f(*args, **kwargs)
        except click.ClickException as exc:
            # a name with a newline in it stays on the error's line (setattr: click types message as Final)
            setattr(exc, "message", one_line(exc.message))  # noqa: B010
            raise
        except Exception as exc:
            message = expected_error(exc)
            if message is None or debug_mode():
                raise
            raise click.ClickException(message) from None

    return wrapper


def _warning_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """``Warning: MESSAGE`` on stderr, without the source file and line of Python's own format."""
    click.echo(f"Warning: {message}", err=True)


def show_progress(progress: bool | None = None) -> bool:
    """``--progress/--no-progress`` when given, else whether stderr is a terminal."""
    return sys.stderr.isatty() if progress is None else progress


def read_stdin() -> str:
    """All of stdin as text; a one-line error (not a traceback) when it is not UTF-8."""
    from conba.text import decode_text

    stream = getattr(sys.stdin, "buffer", None)  # the bytes, undecoded
    return decode_text(stream.read() if stream is not None else sys.stdin.read(), "stdin")


def code_argument(text: str, what: str) -> str:
    """Code given on the command line (``--code``): a one-line error when its bytes are not UTF-8."""
    from conba.text import decode_text

    return decode_text(text, what)


_CODE_MARKS = frozenset("\n(){};=")


def read_code_path(path: str, language: str | None, hint: str, require_language: bool = True,
                   language_option: str = "--language") -> tuple[str, str | None]:
    """(text, language) of the source file ``path`` (:func:`conba.clones.compare.read_code_file`'s checks);
    when no file of that name exists and the argument reads like code (a line break, brackets, ``;``,
    ``=``), the one-line error ends with ``hint``, the way to pass code itself to this command."""
    from conba.clones.compare import read_code_file
    from conba.errors import SourceError

    try:
        return read_code_file(path, language=language, require_language=require_language,
                              language_option=language_option)
    except SourceError as exc:
        if not os.path.lexists(path) and _CODE_MARKS.intersection(path):
            raise SourceError(f"{exc}; it reads like code: {hint}") from None
        raise


def language_option_value(name: str | None, option: str) -> str | None:
    """The normalised language of ``option`` (None when not given); an unknown one is an error, as
    the server's 422, instead of silently matching nothing."""
    from conba.source.languages import check_language

    return check_language(name, option)
