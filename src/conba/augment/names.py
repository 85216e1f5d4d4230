"""New identifier names for renaming ("synonyms") and for the variables of inserted dead statements.

A name is only ever used when it is not a keyword or builtin of any supported language and does not
occur as a word anywhere in the snippet, so a rename can neither capture nor shadow another name.
"""

from __future__ import annotations

import builtins
import random
import re

# common identifier -> plausible synonyms (what a different programmer might have written)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "ans": ("result", "answer", "res"), "answer": ("ans", "result", "output"), "res": ("result", "ans", "out"),
    "result": ("res", "ans", "outcome"), "cnt": ("count", "total", "tally"), "count": ("cnt", "num", "tally"),
    "total": ("acc", "amount", "tot"), "sum": ("total", "acc", "tot"), "s": ("text", "line", "str1"),
    "str": ("text", "word", "line"), "n": ("size", "length", "num"), "m": ("rows", "width", "num2"),
    "k": ("kk", "key", "steps"), "i": ("idx", "ii", "pos"), "j": ("jj", "col", "jdx"), "x": ("val", "xx", "item"),
    "y": ("yy", "val2", "other"), "a": ("arr", "values", "nums"), "b": ("other", "second", "arr2"),
    "c": ("ch", "third", "cc"), "d": ("dist", "diff", "dd"), "t": ("tmp", "cur", "tt"), "tmp": ("temp", "aux", "buf"),
    "temp": ("tmp", "aux", "scratch"), "num": ("number", "value", "n1"), "nums": ("numbers", "values", "items"),
    "arr": ("array", "values", "data"), "array": ("arr", "items", "elems"), "lst": ("items", "seq", "elems"),
    "list1": ("items", "seq", "first_list"), "dp": ("table", "memo", "best"), "memo": ("cache", "table", "dp"),
    "mx": ("best", "highest", "top"), "mn": ("lowest", "least", "bottom"), "flag": ("found", "ok", "done"),
    "ok": ("valid", "good", "flag"), "l": ("left", "lo", "start"), "r": ("right", "hi", "end_"),
    "left": ("lo", "l", "start"), "right": ("hi", "r", "stop"), "idx": ("index", "pos", "i"),
    "index": ("idx", "pos", "position"), "val": ("value", "v", "item"), "value": ("val", "v", "amount"),
    "w": ("weight", "width", "ww"), "h": ("height", "hh", "rows"), "q": ("queue", "queries", "qq"),
    "g": ("graph", "adj", "gg"), "v": ("vec", "vertex", "vv"), "e": ("edge", "exc", "ee"), "p": ("point", "pp", "prev"),
}

# fallback pool: neutral words
POOL: tuple[str, ...] = (
    "item", "elem", "node", "entry", "token", "piece", "part", "unit", "cell", "slot", "bucket", "record",
    "alpha", "beta", "gamma", "delta_", "omega", "sigma", "theta", "kappa", "foo", "bar", "baz", "qux",
    "quux", "data", "info", "state", "store", "holder", "box", "acc", "aux", "work", "cur", "nxt", "prv",
    "step", "mark", "probe", "cursor", "seed", "level", "depth", "span", "limit", "bound", "edge", "vert",
)

KEYWORDS: frozenset[str] = frozenset("""
abstract and as assert async auto await base bool boolean break byte case catch char checked class const
constexpr continue data decimal def default defer del delegate do double dynamic elif else end ensure enum
event except explicit extends extern false final finally fixed float fn for foreach friend from fun func
function global go goto if impl implements import in include inline instanceof int interface internal is
lambda let lock long loop match mod module mut namespace native new nil none nonlocal not null object
operator or out override package pass private protected public raise readonly ref register rescue return
sbyte sealed self short signed sizeof stackalloc static string struct super switch synchronized template
then this throw throws trait transient true try type typedef typeof uint ulong unchecked union unless
unsafe unsigned until use ushort using val value var virtual void volatile when where while with yield
std cin cout endl printf scanf main args it print input len range list dict set map vector string
""".split())

RESERVED: frozenset[str] = KEYWORDS | frozenset(n.lower() for n in dir(builtins))

_CASE_SPLIT = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _styled(base: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return base.upper()
    if like[:1].isupper():
        return base[:1].upper() + base[1:]
    return base


def fresh_name(like: str, taken: set[str], rng: random.Random, prefer: tuple[str, ...] = ()) -> str:
    """A new name for ``like`` (its synonyms first, then the pool, then numbered), not in ``taken``.

    The result is added to ``taken``.
    """
    key = like.lower().strip("_$")
    candidates = list(prefer) + list(SYNONYMS.get(key, ()))
    parts = [p.lower() for p in _CASE_SPLIT.findall(like)]
    for part in parts:
        candidates += list(SYNONYMS.get(part, ()))
    rng.shuffle(candidates)
    pool = list(POOL)
    rng.shuffle(pool)
    for base in candidates + pool:
        name = _styled(base, like)
        if _usable(name, taken):
            taken.add(name)
            return name
    i = 2
    while True:
        name = _styled(f"{pool[0]}{i}", like)
        if _usable(name, taken):
            taken.add(name)
            return name
        i += 1


def _usable(name: str, taken: set[str]) -> bool:
    return name not in taken and name.lower() not in RESERVED and name.strip("_").lower() not in RESERVED
