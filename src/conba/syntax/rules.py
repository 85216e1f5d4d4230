"""Per-language node types the input view works with (tree-sitter grammar names).

One :class:`Rules` per grammar key: which nodes are comments, imports, functions, classes, C/C++
macros and type aliases, which nodes the definition walk passes through, and the ``family`` whose
special cases the view's code applies. The rules are declared with their language in
:mod:`conba.syntax.language_table`; ``RULES`` here is the view derived from that table.
"""

from __future__ import annotations

from conba.syntax.language_table import RULES, Rules

__all__ = ["RULES", "Rules"]
