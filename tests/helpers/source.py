"""Python source parsed once per test session: the checks that walk the repository's syntax trees (layering,
advice, writes, environment variables, tools) read the same few hundred files, and each parse costs about as
much as the check itself. Trees are shared: walk them, never change them."""

from __future__ import annotations

import ast
from functools import cache


@cache
def _parse(text: str) -> ast.Module:
    return ast.parse(text)


def parse(text: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(text, filename)``, remembered by the text (a syntax error names ``filename``)."""
    try:
        return _parse(text)
    except SyntaxError:
        return ast.parse(text, filename)
