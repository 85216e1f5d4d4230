"""Re-export of :mod:`conba.syntax.languages` (the grammar registry moved there; old imports keep working)."""

from conba.syntax.languages import (
    EXTENSIONS,
    GRAMMARS,
    Grammar,
    detect_language,
    get_parser,
    grammar_key,
    supported_languages,
)

__all__ = ["EXTENSIONS", "GRAMMARS", "Grammar", "detect_language", "get_parser", "grammar_key",
           "supported_languages"]
