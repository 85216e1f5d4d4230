"""C and C++ headers behind macros, made parseable: the copy of a file that tree-sitter parses.

Real C code puts macros where the grammar expects a type or a name, and tree-sitter, which does not
expand them, then misreads the function or loses it in an error node (often with the rest of the file):

* export / storage macros: ``int ZEXPORT deflate(...)``, ``const char * ZEXPORT zError(err)``,
  ``void ZLIB_INTERNAL z_error(m)``, ``XXH_PUBLIC_API XXH_errorcode XXH32_update(...)``,
  ``LZ4_FORCE_INLINE int\\nLZ4_decompress(...)``, ``local int helper(a, b)`` (``#define local static``);
* prototype macros: ``ZEXTERN int ZEXPORT deflate OF((z_streamp strm, int flush));``;
* declaration macros alone on a line: ``FAKE_INIT(ARC4)`` (no ``;``) before a ``typedef`` or a function;
* contract / attribute macros between a header and its body: ``int f(int x)\n__contract__(...)\n{``.

:func:`parse_copy` returns the source with those macro words (and an ``OF(`` and its closing ``)``)
overwritten by spaces (newlines kept): the same length, so every byte offset and line of the parse is the
original's, and the units are cut from the original text. Which words are macros is told by the header alone: in a
function header (words, ``*`` and ``&`` up to ``name(``) only one word can be the return type, so any
other identifier there is a macro (all of them when the type is a keyword: ``int``, ``unsigned long``,
``struct s``). Headers that open with a statement keyword (``return f(x)``) or hold anything else
(``::``, templates, ``=``) are left alone. A regular expression, not a preprocessor, on purpose: the
macros' definitions are in headers conba is not given (or under ``#ifdef``s it cannot evaluate).
"""

from __future__ import annotations

import re

# words that may stand in a function header before its name and are never a macro
_TYPES = frozenset("void char short int long float double signed unsigned _Bool bool wchar_t auto".split())
_TAGS = frozenset({"struct", "union", "enum", "class"})
_QUALIFIERS = frozenset(
    "const volatile restrict __restrict static extern inline __inline __inline__ register _Noreturn typename "
    "virtual explicit constexpr consteval friend thread_local mutable".split())
# a header that holds one of these is a statement, not a declaration
_STATEMENT_KEYWORDS = frozenset(
    "return else case goto sizeof typedef throw new delete do while if for switch using namespace "
    "template operator co_return co_yield co_await default public private protected".split())
_CALL_LINE = re.compile(rb"^[^\n(]*\(", re.M)  # a line up to its first "(" (linear: no nested repeats)
_HEADER_TOKEN = re.compile(rb"[A-Za-z_]\w*|[*&]|[^\sA-Za-z_*&]")
_WORD = re.compile(rb"[A-Za-z_]\w*")
_POINTER_MACRO = re.compile(rb"\b([A-Za-z_]\w*)[ \t]+([A-Z][A-Z0-9_]*)[ \t]*(?=\*)")
_STATEMENT_MACRO = re.compile(rb"^([A-Za-z_]\w*)\(([^;{}()\n]*)\)[ \t]*$", re.M)
_CONTRACT_MACRO = re.compile(rb"^[ \t]*(?:__\w+__|[A-Z_][A-Z0-9_]*)[ \t]*\(", re.M)
_PROTOTYPE_MACRO = re.compile(rb"\b[A-Za-z_]\w*[ \t]+([A-Z_][A-Z0-9_]*)[ \t]*\((?=[ \t]*\()")


def parse_copy(src: bytes) -> bytes:
    """``src`` with the macros of function headers blanked (see the module doc); ``src`` itself when
    there are none."""
    out = src
    for find in (_statement_macros, _prototype_macros, _header_macros, _pointer_macros):  # each reads the last
        spans = list(find(out))
        if spans:
            copy = bytearray(out)
            for start, end in spans:  # newlines stay: every line keeps its number
                copy[start:end] = bytes(b if b == 0x0A else 0x20 for b in copy[start:end])
            out = bytes(copy)
    return out


def _statement_macros(src: bytes):
    """``FAKE_INIT(ARC4)`` alone on a line at the top level, without a ``;``: a macro that expands to a
    declaration (tree-sitter would read it and what follows as one function, named after the macro or
    the next keyword). Not a K&R header (``main(argc, argv)`` then ``int argc;`` or ``{``)."""
    for found in _CONTRACT_MACRO.finditer(src):  # f(args)\n__contract__(...)\n{: between header and body
        before = src[:found.start()].rstrip()
        close = _matching(src, found.end() - 1)
        if before.endswith(b")") and close is not None and src[close + 1:close + 64].lstrip()[:1] == b"{":
            yield found.start(), close + 1
    for found in _STATEMENT_MACRO.finditer(src):
        rest = src[found.end():found.end() + 512].lstrip()
        params = set(_WORD.findall(found.group(2)))
        declared = _WORD.findall(rest.split(b";", 1)[0])[-1:] if b";" in rest[:200] else []
        if not rest or rest[:1] == b"{" or (params and params.intersection(declared)):
            continue
        yield found.start(), found.end()


def _pointer_macros(src: bytes):
    """``unsigned char FAR *buf``, ``struct state FAR *s``: an upper-case word between a type and ``*``."""
    for found in _POINTER_MACRO.finditer(src):
        first = found.group(1).decode("ascii", "replace")
        if first not in _STATEMENT_KEYWORDS and first not in _QUALIFIERS:  # `const BYTE*`: BYTE is the type
            yield found.start(2), found.end(2)


def _header_macros(src: bytes):
    """(start, end) of each macro word in a function header: ``words name(`` on one line, or
    ``words`` on the line before ``name(`` (GNU style)."""
    for line in _CALL_LINE.finditer(src):
        words = _header_words(src, line.start(), line.end() - 1)
        if words is None or not words:
            continue
        if len(words) == 1:  # only the name: the type may be on the line before
            before = src.rfind(b"\n", 0, max(line.start() - 1, 0)) + 1 if line.start() else 0
            above = _header_words(src, before, max(line.start() - 1, before)) if line.start() else None
            if not above:
                continue
            words = above + words
        names = [src[a:b].decode("ascii", "replace") for a, b in words]
        if _STATEMENT_KEYWORDS.intersection(names):
            continue
        names, words = names[:-1], words[:-1]  # the last word is the function's name
        others = [w for w, name, prev in zip(words, names, ["", *names])
                  if name not in _TYPES and name not in _TAGS and name not in _QUALIFIERS and prev not in _TAGS]
        typed = not _TYPES.isdisjoint(names) or not _TAGS.isdisjoint(names)
        yield from others if typed else others[:-1]  # no keyword type: the last word is the type


def _header_words(src: bytes, start: int, end: int) -> list[tuple[int, int]] | None:
    """The (start, end) of the words of ``src[start:end]`` when it holds only words, ``*`` and ``&``;
    else None."""
    words = []
    for token in _HEADER_TOKEN.finditer(src, start, end):
        if token.group()[:1] in b"*&":
            continue
        if not (token.group()[:1].isalpha() or token.group()[:1] == b"_"):
            return None
        words.append((token.start(), token.end()))
    return words


def _prototype_macros(src: bytes):
    """``name OF((args))``: the macro word, its ``(`` and the matching ``)``."""
    for found in _PROTOTYPE_MACRO.finditer(src):
        open_at = src.index(b"(", found.end(1))
        close = _matching(src, open_at)
        if close is None:
            continue
        yield found.start(1), open_at + 1
        yield close, close + 1


def _matching(src: bytes, open_at: int) -> int | None:
    """The offset of the ``)`` closing the ``(`` at ``open_at`` (within 4 KB), else None."""
    depth = 0
    for i in range(open_at, min(len(src), open_at + 4096)):
        c = src[i]
        if c == 0x28:
            depth += 1
        elif c == 0x29:
            depth -= 1
            if depth == 0:
                return i
    return None
