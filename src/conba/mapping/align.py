"""Line alignment of two functions: which source lines correspond to which target lines.

A port keeps most of its identifiers, literals and control words line by line, so a line's words are anchors:

* each line is a bag of **terms**: the words of its identifiers (``diff_main`` and ``diffMain`` both give
  ``diff``, ``main`` and ``diffmain``, :func:`conba.text.code_tokens`), its numbers, and a few keywords
  folded across languages (``None`` / ``null`` / ``nil``, ``self`` / ``this``, ``elif`` = ``else if``,
  ``&&`` = ``and``); lines without terms (``}``, blank lines) are never aligned;
* a line's vector is its sublinear term frequencies times the terms' IDF over the lines of *both* functions
  (a word on every line, ``return`` in a function of returns, weighs little), L2-normalised; two lines score
  the cosine of their vectors;
* the alignment is the **monotone** set of line pairs (both sides in order, each line used once) with the
  largest summed score among pairs scoring at least ``min_score``: a weighted longest common subsequence,
  dynamic programming over the lines (Needleman-Wunsch without gap costs), vectorised per row.

Aligned pairs whose lines follow each other (only term-less lines between them on either side) form
**blocks**: a source line range and a target line range, what the JSONL of ``conba map`` lists and the HTML
report colours alike. :func:`align_code` is the entry point (``conba compare --align``, ``conba map``).

Glossary: n source lines, m target lines.
"""

from __future__ import annotations

import functools
import itertools
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse

from conba.text import code_tokens

MIN_SCORE = 0.3          # a line pair scores at least this to be aligned
MAX_CELLS = 4_000_000    # n x m above this: align the first lines only (a 2000-line function on each side)
DENSE_CELLS = 200_000    # n x k x m up to this: line scores in numpy, above it as sparse products

# keywords and operators that say the same thing in different languages, folded to one term
_FOLD = {"none": "null", "nil": "null", "nullptr": "null", "undefined": "null", "self": "this",
         "&&": "and", "||": "or", "!": "not", "===": "==", "!==": "!=", "elif": "else if",
         "fn": "function", "def": "function", "func": "function", "len": "length", "size": "length"}
_KEEP_OPERATORS = {"==", "!=", "<=", ">=", "+=", "-=", "<<", ">>", "and", "or", "not"}


def line_terms(line: str) -> list[str]:
    """The alignment terms of one line: identifier words (>= 2 letters), numbers, folded keywords and
    comparison / shift operators."""
    return list(_line_terms(line.strip()))


_TOKEN_TERMS: dict[str, tuple[str, ...]] = {}  # token -> its terms (none, one, or two for "elif")


@functools.lru_cache(maxsize=1 << 16)
def _line_terms(line: str) -> tuple[str, ...]:
    out: list[str] = []
    known = _TOKEN_TERMS.get
    for tok in code_tokens(line):
        terms = known(tok)
        if terms is None:
            if len(_TOKEN_TERMS) >= 1 << 17:
                _TOKEN_TERMS.clear()
            terms = _TOKEN_TERMS[tok] = _token_terms(tok)
        out += terms
    return tuple(out)


def _token_terms(tok: str) -> tuple[str, ...]:
    tok = _FOLD.get(tok, tok)
    if tok[0].isalpha() and (len(tok) >= 2 or tok in _KEEP_OPERATORS):
        return tuple(tok.split())
    if tok[0].isdigit() or tok in _KEEP_OPERATORS:
        return (tok,)
    return ()


_HASH_COMMENTS = {"python", "ruby", "shell", "bash", "r", "perl", "yaml", "toml"}


def comment_lines(lines: list[str], language: str | None = None) -> list[bool]:
    """Whether each line is a comment line (``//``, ``/*``, ``*``, ``--``; ``#`` in the languages that
    comment with it, and when ``language`` is unknown unless it looks like a C directive) or inside a block comment or a
    docstring (a line that opens with triple quotes)."""
    lang = (language or "").lower()
    out, block, quote = [], False, None
    for line in lines:
        t = line.strip()
        if quote is not None:
            out.append(True)
            if quote in t:
                quote = None
            continue
        if block:
            out.append(True)
            block = "*/" not in t
            continue
        if t[:3] in ('"""', "'''"):
            out.append(True)
            quote = None if t.count(t[:3]) >= 2 else t[:3]
            continue
        if t.startswith("/*"):
            out.append(True)
            block = "*/" not in t[2:]
            continue
        hash_comment = t.startswith("#") and (lang in _HASH_COMMENTS or (
            not lang and not t.startswith(("#include", "#define", "#if", "#endif", "#else", "#undef", "#pragma",
                                           "#[", "#elif"))))
        out.append(t.startswith(("//", "*", "--")) or hash_comment)
    return out


def _weights(lines: Sequence[Sequence[str]], vocab: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The term counts of each line as canonical CSR entries of a (len(lines), len(vocab)) matrix: ``rows``,
    ``cols`` (int64, sorted by row, then column) and ``counts`` (float64)."""
    size = len(vocab)
    rows = np.repeat(np.arange(len(lines), dtype=np.int64), [len(terms) for terms in lines])
    cols = np.fromiter(map(vocab.__getitem__, itertools.chain.from_iterable(lines)), dtype=np.int64,
                       count=len(rows))
    keys, counts = np.unique(rows * size + cols, return_counts=True)
    return keys // size, keys % size, counts.astype(np.float64)


def _weigh(rows: np.ndarray, cols: np.ndarray, counts: np.ndarray, idf: np.ndarray, n: int) -> np.ndarray:
    """The L2-normalised sublinear TF-IDF weight of each entry (the same order)."""
    data = (1.0 + np.log(counts)) * idf[cols]
    norm = np.sqrt(np.bincount(rows, weights=data ** 2, minlength=n))
    return data / norm[rows]  # every stored row has a term: its norm is > 0


def line_scores(a: Sequence[Sequence[str]], b: Sequence[Sequence[str]]) -> np.ndarray:
    """float32 (n, m): the TF-IDF cosine of every source line's terms with every target line's (sublinear
    term frequencies; IDF over the lines of both sides).

    Each cosine is summed term by term in vocabulary order (terms numbered as they first occur in ``a``,
    then ``b``), as a sparse product sums it: small pairs (``n * k * m <= DENSE_CELLS``, k terms on both
    sides) in numpy (the products of the shared terms, accumulated), larger ones as sparse products; both
    give the same bits. No BLAS threads, which cost more than they bring on matrices this small."""
    vocab = {t: i for i, t in enumerate(dict.fromkeys(itertools.chain.from_iterable((*a, *b))))}
    n, m = len(a), len(b)
    ra, ca, na = _weights(a, vocab)
    rb, cb, nb = _weights(b, vocab)
    docs = np.bincount(np.r_[ca, cb], minlength=len(vocab))  # (V,) lines holding each term
    n_docs = sum(1 for t in (*a, *b) if t)
    idf = np.log((1.0 + n_docs) / (1.0 + docs)) + 1.0
    wa, wb = _weigh(ra, ca, na, idf, n), _weigh(rb, cb, nb, idf, m)
    shared = np.flatnonzero(np.bincount(ca, minlength=len(vocab)) * np.bincount(cb, minlength=len(vocab)))
    if not len(shared):
        return np.zeros((n, m), dtype=np.float32)
    if n * len(shared) * m <= DENSE_CELLS:
        at = np.full(len(vocab), -1)
        at[shared] = np.arange(len(shared))  # vocabulary id -> column among the shared terms
        da, db = np.zeros((n, len(shared))), np.zeros((len(shared), m))
        keep_a, keep_b = at[ca] >= 0, at[cb] >= 0
        da[ra[keep_a], at[ca[keep_a]]] = wa[keep_a]
        db[at[cb[keep_b]], rb[keep_b]] = wb[keep_b]
        # (n, k, m) products summed over k in order, one term after another (accumulate never reorders)
        out = np.add.accumulate(da[:, :, None] * db[None, :, :], axis=1)[:, -1, :]
    else:
        sa = sparse.csr_matrix((wa, (ra, ca)), shape=(n, len(vocab)))
        sb = sparse.csr_matrix((wb, (rb, cb)), shape=(m, len(vocab)))
        out = (sa @ sb.T).toarray()
    return np.asarray(out, dtype=np.float32)


def monotone_pairs(scores: np.ndarray, min_score: float = MIN_SCORE) -> list[tuple[int, int]]:
    """The (row, column) pairs, both increasing, with the largest summed score among cells ``>= min_score``
    of ``scores`` (float (n, m)): a weighted longest common subsequence."""
    keep = scores >= min_score
    # a row or column without such a cell is never in a pair, and leaving it out changes no other cell's
    # value nor the path the backtracking takes (it only ever steps over one): the DP runs without them
    rows, cols = np.flatnonzero(keep.any(axis=1)), np.flatnonzero(keep.any(axis=0))
    w = np.where(keep, scores, 0.0)[np.ix_(rows, cols)].astype(np.float64)
    n, m = w.shape
    h = np.zeros((n + 1, m + 1), dtype=np.float64)
    for i in range(1, n + 1):
        cand = np.maximum(h[i - 1, 1:], h[i - 1, :-1] + w[i - 1])
        h[i, 1:] = np.maximum.accumulate(cand)
    pairs = []
    i, j = n, m
    while i > 0 and j > 0:
        if h[i, j] == h[i - 1, j]:
            i -= 1
        elif h[i, j] == h[i, j - 1]:
            j -= 1
        else:  # h[i, j] = h[i-1, j-1] + w: a taken pair
            pairs.append((int(rows[i - 1]), int(cols[j - 1])))
            i, j = i - 1, j - 1
    return pairs[::-1]


@dataclass(frozen=True)
class LineBlock:
    """Consecutive aligned lines: source lines ``source[0]..source[1]`` correspond to target lines
    ``target[0]..target[1]`` (1-based, inclusive, as in the files); ``score``: the mean of its line pairs'."""

    source: tuple[int, int]
    target: tuple[int, int]
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"source": list(self.source), "target": list(self.target), "score": round(self.score, 3)}


@dataclass
class Alignment:
    """The aligned line pairs ``(source line, target line, score)`` (file line numbers) and their blocks."""

    pairs: list[tuple[int, int, float]] = field(default_factory=list)
    blocks: list[LineBlock] = field(default_factory=list)
    source_lines: int = 0
    target_lines: int = 0

    def coverage(self) -> tuple[float, float]:
        """Share of the source lines and of the target lines in a block."""
        s = sum(b.source[1] - b.source[0] + 1 for b in self.blocks)
        t = sum(b.target[1] - b.target[0] + 1 for b in self.blocks)
        return (s / self.source_lines if self.source_lines else 0.0,
                t / self.target_lines if self.target_lines else 0.0)

    def to_list(self) -> list[dict[str, Any]]:
        return [b.to_dict() for b in self.blocks]


def _blocks(pairs: list[tuple[int, int, float]], empty_a: list[bool], empty_b: list[bool]) -> list[LineBlock]:
    """Group index pairs (0-based) whose in-between lines on both sides are all term-less."""
    out: list[list[tuple[int, int, float]]] = []
    for p in pairs:
        if out:
            i, j, _ = out[-1][-1]
            if all(empty_a[i + 1:p[0]]) and all(empty_b[j + 1:p[1]]):
                out[-1].append(p)
                continue
        out.append([p])
    return [LineBlock((g[0][0], g[-1][0]), (g[0][1], g[-1][1]), sum(s for *_, s in g) / len(g)) for g in out]


def _align_subset(a: Sequence[Sequence[str]], b: Sequence[Sequence[str]], rows: list[int], cols: list[int],
                  min_score: float) -> list[tuple[int, int, float]]:
    """Aligned (row, column, score) among the lines ``rows`` of ``a`` and ``cols`` of ``b`` (0-based)."""
    if not rows or not cols:
        return []
    scores = line_scores([a[i] for i in rows], [b[j] for j in cols])
    return [(rows[i], cols[j], float(scores[i, j])) for i, j in monotone_pairs(scores, min_score)]


def align_code(source: str, target: str, source_first: int = 1, target_first: int = 1,
               min_score: float = MIN_SCORE, languages: tuple[str | None, str | None] = (None, None)) -> Alignment:
    """The line alignment of two snippets; line numbers start at ``source_first`` / ``target_first``. Code
    lines align with code lines and comment lines with comment lines, each in order: a Javadoc above a
    signature and a docstring below it both align with their own kind."""
    src_lines, tgt_lines = source.splitlines(), target.splitlines()
    alignment = Alignment(source_lines=len(src_lines), target_lines=len(tgt_lines))
    if len(src_lines) * len(tgt_lines) > MAX_CELLS:
        keep = int(math.sqrt(MAX_CELLS))
        src_lines, tgt_lines = src_lines[:keep], tgt_lines[:keep]
    a, b = [_line_terms(x.strip()) for x in src_lines], [_line_terms(x.strip()) for x in tgt_lines]
    ca, cb = comment_lines(src_lines, languages[0]), comment_lines(tgt_lines, languages[1])
    idx: list[tuple[int, int, float]] = []
    for kind in (False, True):
        rows = [i for i, t in enumerate(a) if t and ca[i] == kind]
        cols = [j for j, t in enumerate(b) if t and cb[j] == kind]
        idx += _align_subset(a, b, rows, cols, min_score)
    idx.sort()
    alignment.pairs = [(i + source_first, j + target_first, s) for i, j, s in idx]
    empty_a, empty_b = [not t for t in a], [not t for t in b]
    blocks = (_blocks([p for p in idx if not ca[p[0]]], empty_a, empty_b)
              + _blocks([p for p in idx if ca[p[0]]], empty_a, empty_b))
    alignment.blocks = sorted((LineBlock((x.source[0] + source_first, x.source[1] + source_first),
                                         (x.target[0] + target_first, x.target[1] + target_first), x.score)
                               for x in blocks), key=lambda x: (x.source, x.target))
    return alignment


def unit_text(unit: Any) -> str:
    """The code of a :class:`~conba.source.records.Unit` line for line as in its file: its ``code`` when that
    has one line per file line, else (a parent whose nested functions were elided) the file's lines
    ``start_line..end_line`` when the file is still there and that long, else ``code``."""
    code = unit.code
    if len(code.splitlines()) == unit.end_line - unit.start_line + 1:
        return code
    try:
        with open(unit.file, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return code
    if len(lines) < unit.end_line:
        return code
    return textwrap.dedent("\n".join(lines[unit.start_line - 1:unit.end_line])) + "\n"


def align_units(source: Any, target: Any, min_score: float = MIN_SCORE) -> Alignment:
    """:func:`align_code` of two :class:`~conba.source.records.Unit` (line numbers as in their files)."""
    return align_code(unit_text(source), unit_text(target), source.start_line, target.start_line, min_score,
                      (source.language, target.language))


def side_by_side(alignment: Alignment, source: str, target: str, source_first: int = 1, target_first: int = 1,
                 width: int = 56) -> str:
    """The aligned line pairs as text for people: per block a header, then ``line | code  ||  line | code``
    rows, each side cut to ``width`` characters (``conba compare --align``)."""
    a, b = source.splitlines(), target.splitlines()
    at = {s: t for s, t, _ in alignment.pairs}

    def cut(text: str) -> str:
        text = text.rstrip().expandtabs(4)
        return text if len(text) <= width else text[:width - 1] + "~"

    out = []
    for block in alignment.blocks:
        out.append(f"-- lines {block.source[0]}-{block.source[1]} <-> {block.target[0]}-{block.target[1]} "
                   f"(score {block.score:.2f})")
        for s in range(block.source[0], block.source[1] + 1):
            t = at.get(s)
            left = cut(a[s - source_first]) if 0 <= s - source_first < len(a) else ""
            right = cut(b[t - target_first]) if t is not None and 0 <= t - target_first < len(b) else ""
            out.append(f"{s:>5} | {left:<{width}} || {'' if t is None else t:>5} | {right}")
    return "\n".join(out)
