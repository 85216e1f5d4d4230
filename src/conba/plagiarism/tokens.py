"""A submission as a language-neutral token stream: what survives translation and renaming.

A copy translated into another language and renamed keeps the *shape* of the original: which statements,
loops and branches come in which order, the operators, the numbers and strings. Each file is lexed with
pygments (the lexer the HTML reports already highlight with; robust to code that does not parse, which
copies made by hand or by a tool often is) and every token is mapped to a class that reads the same in every
language:

* control words become one class each: ``for`` / ``while`` / ``loop`` -> ``LOOP``, ``if`` -> ``IF``,
  ``else`` (``elif`` -> ``ELSE IF``), ``return``, ``break``, ``continue``, function definitions -> ``DEF``;
* identifiers become ``ID``, an identifier called (followed by ``(``) ``CALL``: names carry no weight here,
  so renaming changes nothing;
* operators are folded to one spelling (``and`` = ``&&``, ``not`` = ``!``, ``===`` = ``==``, ``//`` = ``/``);
* numbers keep their value (``N:17``; ``0x11`` = ``17``, ``1e5`` = ``100000``), strings their text (``S:...``);
* declarations, types, punctuation except ``[`` when it indexes (not a list literal or destructuring pattern)
  and comments are dropped: they are how a language spells things, not what the program does.

Each token keeps its 1-based line, so matched fingerprints can be shown as lines of the file.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from pygments.token import Comment, Keyword, Literal, Name, Operator, Punctuation, String, Text, Token

OPERATOR_WORD = Token.Operator.Word  # `and`, `not`, `in`...: words, not operator symbols

LOOP, IF, ELSE, RETURN, BREAK, CONTINUE, DEF, ID, CALL, INDEX = (
    "LOOP", "IF", "ELSE", "RET", "BRK", "CNT", "DEF", "ID", "CALL", "[")
_WORDS = {
    "for": (LOOP,), "while": (LOOP,), "loop": (LOOP,), "foreach": (LOOP,), "do": (LOOP,),
    "if": (IF,), "else": (ELSE,), "elif": (ELSE, IF), "elsif": (ELSE, IF), "elseif": (ELSE, IF),
    "return": (RETURN,), "break": (BREAK,), "continue": (CONTINUE,),
    "def": (DEF,), "fn": (DEF,), "func": (DEF,), "function": (DEF,), "fun": (DEF,),
    "and": ("&&",), "or": ("||",), "not": ("!",),
    "true": ("N:1",), "false": ("N:0",), "none": ("NULL",), "null": ("NULL",), "nil": ("NULL",),
    "nullptr": ("NULL",), "undefined": ("NULL",),
}
_OPERATORS = {"===": "==", "!==": "!=", "//": "/", ":=": "=", "//=": "/=", "**": "POW", "**=": "POW=",
              "and": "&&", "or": "||", "not": "!"}
_DROP_OPERATORS = {".", "..", "...", "..=", "::", "->", "=>", "?", ":", "?.", "!!", "&", "*", "@"}
# declaration words, receivers and the names of console I/O and of Python built-ins that translators (people and
# tools) carry over or spell per language: how a language says it, not what this program does
_DROP_NAMES = {"self", "this", "let", "var", "val", "const", "mut", "auto", "pub", "static", "final",
                     "in", "is", "of", "new", "import", "from", "use", "package", "export", "as", "extern",
                     "crate", "pass", "struct", "class", "public", "private", "impl", "where", "ref",
                     "lambda", "global", "nonlocal", "std", "fmt", "println", "print", "printf", "cout", "cin",
                     "endl", "console", "log", "main", "input", "range", "len", "int", "str", "float", "list"}


@dataclass(frozen=True)
class Token_:
    """One language-neutral token: its class (``LOOP``, ``ID``, ``N:17``, ``==`` ...) and its 1-based line."""

    kind: str
    line: int


def _number(text: str) -> str:
    t = text.lower().replace("_", "").rstrip("lufi").removesuffix("us").removesuffix("sz")
    for suffix in ("i64", "i32", "u64", "u32", "usize", "isize", "f64", "f32", "ll", "u8", "i8"):
        t = t.removesuffix(suffix)
    try:
        value = int(t, 0)
    except ValueError:
        try:
            f = float(t)
        except ValueError:
            return "N:" + text
        return "N:" + (str(int(f)) if f.is_integer() and abs(f) < 1e18 else repr(f))
    return "N:" + str(value)


@functools.lru_cache(maxsize=64)
def _lexer(language: str):
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    from conba.syntax.languages import TABLE

    entry = TABLE.get(language)
    name = entry.highlight if entry is not None else None
    if not name:
        return None
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def has_lexer(language: str) -> bool:
    """Whether ``language`` can be tokenised (pygments has a lexer for it)."""
    return _lexer(language) is not None


def _raw(code: str, language: str) -> list[tuple[object, str, int]]:
    """(pygments type, text, line) of every token; adjacent operator tokens merged (``<`` ``=`` -> ``<=``),
    string pieces merged into one string."""
    lexer = _lexer(language)
    out: list[tuple[object, str, int]] = []
    line = 1
    prev_type = None
    for ttype, value in lexer.get_tokens(code):
        start = line
        line += value.count("\n")
        if ttype in Comment or ttype in Text or not value.strip():
            prev_type = None
            continue
        if ttype in String:
            if ttype in String.Doc:
                prev_type = None
                continue
            if prev_type is String and out:
                out[-1] = (String, out[-1][1] + value, out[-1][2])
            else:
                out.append((String, value, start))
            prev_type = String
            continue
        if ttype in Operator and prev_type is Operator and out and ttype not in OPERATOR_WORD:
            out[-1] = (Operator, out[-1][1] + value, out[-1][2])
        else:
            out.append((Operator if ttype in Operator and ttype not in OPERATOR_WORD else ttype, value, start))
        prev_type = Operator if ttype in Operator and ttype not in OPERATOR_WORD else None
    return out


def _subscripts(prev: tuple[object, str, int]) -> bool:
    """Whether a ``[`` after ``prev`` indexes (after a name, ``)`` or ``]``), rather than opening a list
    literal or a destructuring pattern, which languages spell with and without brackets."""
    ttype, text, _ = prev
    return text in (")", "]") or (ttype in Name and text.lower() not in _WORDS)


def _string(text: str) -> str:
    body = text
    for prefix in ("b", "r", "f", "u", "rb", "br", "fr", "rf"):
        if body[:len(prefix)].lower() == prefix and body[len(prefix):len(prefix) + 1] in "'\"`":
            body = body[len(prefix):]
            break
    body = body.strip("'\"`").replace("${", "{")  # interpolation: f"{x}" = `${x}` (the pieces around names)
    return "S:" + body


@dataclass
class Lexed:
    """What one file gives the score: its neutral token ``stream``, the identifiers as written (``names``:
    kept across a translation that does not rename) and their lower-cased words (``words``)."""

    stream: list[Token_]
    names: list[str]
    words: list[str]


def tokenize(code: str, language: str) -> list[Token_]:
    """The language-neutral token stream of ``code`` (empty when no lexer knows ``language``)."""
    return lex(code, language).stream


def lex(code: str, language: str) -> Lexed:
    """:class:`Lexed` of ``code`` (all empty when no lexer knows ``language``)."""
    from conba.text import code_tokens

    if _lexer(language) is None:
        return Lexed([], [], [])
    raw = _raw(code, language)
    out: list[Token_] = []
    names: list[str] = []
    words: list[str] = []
    for i, (ttype, text, line) in enumerate(raw):
        low = text.lower()
        if ttype is String:
            out.append(Token_(_string(text), line))
            words += [w for w in code_tokens(text) if len(w) > 1 and w[0].isalpha()]
        elif ttype in Literal.Number:
            out.append(Token_(_number(text), line))
        elif ttype is Operator or ttype in Operator.Word:
            op = _OPERATORS.get(low, low)
            if op in ("in", "is"):
                continue
            if op not in _DROP_OPERATORS:
                out.append(Token_(op, line))
        elif ttype in Keyword or ttype in Name or ttype in Token.Error or ttype in Token.Other:
            if low in _WORDS:
                out.extend(Token_(k, line) for k in _WORDS[low])
            elif ttype in Keyword.Type or (ttype in Keyword and low not in _WORDS) or low in _DROP_NAMES:
                continue
            elif ttype in Name.Builtin.Pseudo:
                continue
            else:
                nxt = raw[i + 1][1] if i + 1 < len(raw) else ""
                out.append(Token_(CALL if nxt in ("(", "!") else ID, line))
                names.append(text)
                words += [w for w in code_tokens(text) if len(w) > 1 and w not in _DROP_NAMES]
        elif ttype in Punctuation and text == "[" and i > 0 and _subscripts(raw[i - 1]):
            out.append(Token_(INDEX, line))
    return Lexed(out, names, words)
