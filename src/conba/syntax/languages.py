"""Languages: detection by file extension and the tree-sitter grammar behind each one.

The languages themselves are declared in :mod:`conba.syntax.language_table` (one entry each);
``EXTENSIONS`` and ``GRAMMARS`` here are views derived from it. Languages with a grammar get
function-level extraction in the index and an input view (:mod:`conba.syntax.view`); the others
(``GRAMMARS`` has no entry) are indexed whole-file or in line windows and always go to the model as
they are.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from typing import Any

from conba.syntax.language_table import EXTENSION_GRAMMARS, EXTENSIONS, GRAMMARS, TABLE, Grammar, Language

__all__ = ["EXTENSIONS", "GRAMMARS", "TABLE", "Grammar", "Language", "detect_language", "get_parser",
           "grammar_key", "supported_languages"]


def detect_language(path: str | Path) -> str | None:
    """The language of a file from its extension, or None when unsupported."""
    return EXTENSIONS.get(Path(path).suffix.lower())


def grammar_key(path: str | Path, language: str) -> str:
    """Which grammar parses this file: the language's own unless its entry names another for the
    extension (``.tsx``: the TSX grammar; ``.h`` headers: C++, a superset for function definitions,
    since they are often C++)."""
    return EXTENSION_GRAMMARS.get(Path(str(path)).suffix.lower(), language)


def supported_languages() -> list[str]:
    """Every language name some extension maps to, sorted."""
    return sorted(set(EXTENSIONS.values()))


@functools.cache
def get_parser(key: str) -> Any | None:
    """A tree-sitter parser for ``key``, or None when the grammar package is not installed."""
    spec = GRAMMARS.get(key)
    if spec is None:
        return None
    try:
        from tree_sitter import Language as TSLanguage
        from tree_sitter import Parser

        lang = TSLanguage(getattr(importlib.import_module(spec.module), spec.attr)())
        return Parser(lang)
    except (ImportError, AttributeError, ValueError, TypeError):
        return None
