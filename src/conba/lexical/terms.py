"""The terms of the lexical channel: the words of a snippet's identifiers, comments and strings.

:func:`conba.text.code_tokens` gives every lexical token (identifier words, whole multi-word names
joined, numbers, operators, punctuation); the lexical channel keeps the *words*: tokens that start
with a letter and have at least ``min_length`` characters. Operators, brackets, numbers and
one-letter names (``i``, ``n``, ``x``) say little about what a function does and are left out.
"""

from __future__ import annotations

from conba.text import code_tokens

__all__ = ["lexical_terms", "MIN_TERM_LENGTH"]

MIN_TERM_LENGTH = 2


def lexical_terms(code: str, min_length: int = MIN_TERM_LENGTH) -> list[str]:
    """Lower-cased word terms of ``code``, in order, repeats kept (``getMaxValue(x)`` -> ``get``,
    ``max``, ``value``, ``getmaxvalue``)."""
    return [t for t in code_tokens(code) if len(t) >= min_length and t[0].isalpha()]
