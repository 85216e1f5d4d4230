"""The input view: what of a snippet goes into the embedding model.

The shipped model was trained on cleaned contest snippets (comments and docstrings removed), while
code as it is found carries license headers, imports, comments, unused helpers and ``main`` drivers.
A view turns found code into something closer to the training data:

* ``raw``: the text unchanged.
* ``code``: without import / include / package / ``use`` directives (:mod:`conba.syntax.imports`),
  license headers, comments and docstrings (a Python body left empty gets ``pass``), and, when the
  snippet has an entry point, without the helpers it never reaches (:mod:`conba.syntax.callgraph`);
  tidied like the training data (:mod:`conba.syntax.render`).
* ``code+docs``: the same, but comments and docstrings are kept (the license header still goes).

A snippet the view cannot handle goes to the model raw and is counted in :class:`ViewStats`: no
language or no grammar for it, no usable parse tree, or nothing left after the view (only imports).

>>> apply_view("import os\\n# add\\ndef add(a, b):\\n    return a + b\\n", "python")
'def add(a, b):\\n    return a + b\\n'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from conba.constants import VIEWS
from conba.errors import ConfigError
from conba.syntax.callgraph import DeadCode, dead_definitions
from conba.syntax.docs import comment_nodes, docstring_nodes, license_nodes
from conba.syntax.imports import import_nodes
from conba.syntax.parse import Parsed, parse
from conba.syntax.render import cut, removal_span

_BLANK = bytes(10 if i == 10 else 32 for i in range(256))  # bytes.translate table: all but \n -> space
FALLBACK_REASONS = ("language", "parse_error", "empty")


@dataclass
class ViewStats:
    """What a view did to a batch of snippets."""

    view: str = "raw"
    snippets: int = 0          # snippets viewed
    fallbacks: int = 0         # of them, sent raw (reasons in ``fallback_reasons``)
    fallback_reasons: dict[str, int] = field(default_factory=dict)
    helpers_dropped: int = 0   # unreached functions, methods, classes
    macros_dropped: int = 0    # unused C/C++ macros and type aliases
    chars_before: int = 0
    chars_after: int = 0

    def merge(self, other: ViewStats) -> ViewStats:
        """Add ``other``'s counts to these (in place); returns self."""
        self.snippets += other.snippets
        self.fallbacks += other.fallbacks
        for reason, n in other.fallback_reasons.items():
            self.fallback_reasons[reason] = self.fallback_reasons.get(reason, 0) + n
        self.helpers_dropped += other.helpers_dropped
        self.macros_dropped += other.macros_dropped
        self.chars_before += other.chars_before
        self.chars_after += other.chars_after
        return self

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_view(view: str) -> str:
    """``view`` when it is a known view name, else ValueError naming the valid ones."""
    if view not in VIEWS:
        raise ConfigError(f"unknown view {view!r}; valid views: {', '.join(VIEWS)}")
    return view


def apply_view(code: str, language: str, view: str = "code") -> str:
    """``code`` (in conba language ``language``, aliases accepted) as the model should see it."""
    return _view_one(code, language, check_view(view), ViewStats(view))


def apply_views(codes: Sequence[str], languages: Sequence[str | None] | str | None,
                view: str) -> tuple[list[str], ViewStats]:
    """Every snippet through ``view`` (one language, or one per snippet), with the batch's counts."""
    check_view(view)
    codes = list(codes)
    if languages is None or isinstance(languages, str):
        languages = [languages or ""] * len(codes)
    if len(languages) != len(codes):
        raise ConfigError(f"got {len(codes)} codes but {len(languages)} languages")
    stats = ViewStats(view)
    return [_view_one(c, lang or "", view, stats) for c, lang in zip(codes, languages)], stats


def _view_one(code: str, language: str, view: str, stats: ViewStats) -> str:
    stats.snippets += 1
    stats.chars_before += len(code)
    out = code
    if view != "raw":
        from conba.data.records import normalize_language

        result = _apply(code, normalize_language(language) if language else "", view)
        if isinstance(result, str):
            stats.fallbacks += 1
            stats.fallback_reasons[result] = stats.fallback_reasons.get(result, 0) + 1
        else:
            out, dead = result
            stats.helpers_dropped += dead.helpers
            stats.macros_dropped += dead.macros
    stats.chars_after += len(out)
    return out


def _apply(code: str, language: str, view: str) -> tuple[str, DeadCode] | str:
    """(viewed text, what the dead-helper pass dropped), or the reason to fall back to raw."""
    if not language:
        return "language"
    text = code.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:  # NUL is the renderer's cut marker; such text is not source code anyway
        return "parse_error"
    parsed = parse(text, language)
    if isinstance(parsed, str):
        return parsed
    comments, docstrings = comment_nodes(parsed), docstring_nodes(parsed)
    imports = import_nodes(parsed)
    header = license_nodes(parsed)
    dead = dead_definitions(parsed, _masked(parsed.src, comments + docstrings + imports))
    rules = parsed.rules.comments
    dropped = imports + header + ((comments + docstrings) if view == "code" else [])
    passes = _python_pass(dead.nodes + imports + (docstrings if view == "code" else header), parsed)
    spans = [removal_span(n, parsed.src, rules, replacement=passes.get(_key(n), b"")) for n in dropped]
    spans += [removal_span(n, parsed.src, rules, leading_comments=True, replacement=passes.get(_key(n), b""))
              for n in dead.nodes]
    out = cut(parsed.src, spans)
    if not out.strip():
        return "empty"
    return out, dead


def _masked(src: bytes, nodes: list[Any]) -> bytes:
    """``src`` with the nodes' bytes blanked (spaces; line breaks kept), for name look-ups."""
    buf = bytearray(src)
    for n in nodes:
        buf[n.start_byte:n.end_byte] = src[n.start_byte:n.end_byte].translate(_BLANK)
    return bytes(buf)


def _key(node: Any) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def _python_pass(removed: list[Any], parsed: Parsed) -> dict[tuple[int, int], bytes]:
    """Python: ``pass`` replaces the first removed statement of each block whose statements all go
    (keyed by node span)."""
    if parsed.family != "python":
        return {}
    gone = {_key(n) for n in removed}
    seen: set[tuple[int, int]] = set()
    out: dict[tuple[int, int], bytes] = {}
    for node in sorted(removed, key=lambda n: n.start_byte):
        block = node.parent
        if block is None or block.type != "block" or _key(block) in seen:
            continue
        seen.add(_key(block))
        statements = [c for c in block.named_children if c.type != "comment"]
        if all(_key(c) in gone for c in statements):
            out[_key(statements[0])] = b"pass"
    return out
