"""One-line notes on stderr for waits a person would otherwise sit through in silence ("loading model
default ..."). Shown when stderr is a terminal, like the progress bars; ``CONBA_STATUS=1`` shows them
anywhere (logs), ``CONBA_STATUS=0`` never."""

from __future__ import annotations

import os
import sys

STATUS_ENV = "CONBA_STATUS"


def shown() -> bool:
    """Whether :func:`note` prints."""
    value = os.environ.get(STATUS_ENV, "").strip()
    if value in ("0", "1"):
        return value == "1"
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def note(message: str) -> None:
    """Print ``conba: MESSAGE`` on stderr (see the module docstring)."""
    if shown():
        print(f"conba: {message}", file=sys.stderr, flush=True)
