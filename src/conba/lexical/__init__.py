"""The lexical channel: identifier sub-word vectors of code, and their fusion with the dense score.

Real code carries much of its meaning in its words (ported names, identifiers, docs) that a dense
vector of the body partly ignores. This package turns a snippet into a sparse TF-IDF vector over its
identifier words (:mod:`conba.lexical.terms`, :mod:`conba.lexical.vectorizer`) and fuses the two
cosines into one score (:mod:`conba.lexical.fusion`)::

    score = (1 - w) * dense + w * lexical        (w = --lexical-weight; 0: dense only)

Glossary: n snippets, V the hashed vocabulary (2**20 columns).
"""

from conba.lexical.fusion import LexicalConfig, fuse
from conba.lexical.terms import lexical_terms
from conba.lexical.vectorizer import LexicalVectorizer

__all__ = ["LexicalConfig", "LexicalVectorizer", "fuse", "lexical_terms"]
