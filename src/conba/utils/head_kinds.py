"""Head kinds: the product's own, and those other installed distributions add (entry-point group ``conba.heads``).

The product's kinds are ``conba.constants.HEAD_KINDS`` ("linear", "none"), built in (a source checkout
needs no installed metadata for them). A distribution adds a kind by declaring an entry point whose object
is a :class:`conba.heads.base.Head` subclass built from a ``HeadConfig``:

    [project.entry-points."conba.heads"]
    conba = "conba_research.heads.seed_layer:ConbaLayer"

The research suite (``pip install -e research/``) adds the ConbaLayer heads ("conba", "conba-scan") this
way. A product kind keeps its name: a plug-in of the same name is ignored (as ``conba.commands`` does,
conba.cli.plugins). Looking a kind up reads the metadata only; nothing is imported until a head of that
kind is built. Torch-free: the CLI and the configs check kinds with it.
"""

from __future__ import annotations

import functools
import importlib.metadata

from conba.constants import HEAD_KINDS
from conba.errors import ConfigError

ENTRY_POINT_GROUP = "conba.heads"
# named in the pointer when a saved model or a config asks for a kind that is not installed
RESEARCH_KINDS: tuple[str, ...] = ("conba", "conba-scan")
RESEARCH_INSTALL = "pip install -e research/"


@functools.cache
def entry_points() -> tuple[importlib.metadata.EntryPoint, ...]:
    """The installed entry points of the ``conba.heads`` group (read once; tests replace this function)."""
    return tuple(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def plugin_kinds() -> dict[str, importlib.metadata.EntryPoint]:
    """Kind name -> entry point, for the installed kinds the product does not define itself."""
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for point in entry_points():
        if point.name not in HEAD_KINDS:
            found.setdefault(point.name, point)
    return found


def head_kinds() -> tuple[str, ...]:
    """Every kind a head can be built as here: the product's, then the installed plug-ins' (sorted)."""
    return (*HEAD_KINDS, *sorted(plugin_kinds()))


def missing_kind_message(kind: str) -> str:
    """One line: ``kind`` is not installed, which kinds are, and how to get the research heads."""
    return (f"head kind {kind!r} is not installed (the research heads {', '.join(RESEARCH_KINDS)} come with the "
            f"research suite: {RESEARCH_INSTALL}; installed: {', '.join(head_kinds())})")


def check_kind(kind: str) -> str:
    """``kind`` when a head of it can be built here; else a one-line ConfigError (:func:`missing_kind_message`)."""
    if kind in HEAD_KINDS or kind in plugin_kinds():
        return kind
    if kind in RESEARCH_KINDS:
        raise ConfigError(missing_kind_message(kind))
    raise ConfigError(f"HeadConfig.kind must be one of {list(head_kinds())}, got {kind!r}")
