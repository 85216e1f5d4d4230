"""Compare two snippets or files: a similarity score and a clone / not-clone decision."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conba.clones.threshold import model_threshold
from conba.data.records import DataError
from conba.errors import SourceError
from conba.source.filters import DEFAULT_MAX_FILE_SIZE, Skip, read_source
from conba.syntax.languages import detect_language


@dataclass
class CompareResult:
    score: float
    threshold: float
    languages: tuple[str | None, str | None]

    @property
    def is_clone(self) -> bool:
        return self.score >= self.threshold

    def to_dict(self) -> dict[str, Any]:
        return {"score": round(self.score, 4), "threshold": round(self.threshold, 4),
                "clone": self.is_clone, "languages": list(self.languages)}


def _model(model: Any) -> Any:
    if model is None or isinstance(model, (str, os.PathLike)):
        from conba.model import load_model

        return load_model(str(model) if model is not None else "default")
    return model


def compare(a: str, b: str, model: Any = None, languages: tuple[str | None, str | None] = (None, None),
            threshold: str | float | None = "auto", lexical_weight: float | None = None) -> CompareResult:
    """The score of two snippets and whether it clears ``threshold`` (``auto``: the model's). The score is
    the fused one (:func:`fused_pair_score`) at ``lexical_weight`` (default: the model's)."""
    from conba.data.records import normalize_language

    for name, code in (("first", a), ("second", b)):
        if not code.strip():
            raise DataError(f"the {name} snippet is empty")
    m = _model(model)
    langs = tuple(normalize_language(x) if x else None for x in languages)
    emb = m.encode([a, b], languages=[langs[0] or "", langs[1] or ""], show_progress_bar=False)
    score = fused_pair_score(float(emb[0] @ emb[1]), a, b, pair_weight(m, lexical_weight))
    return CompareResult(score, model_threshold(threshold, m), (langs[0], langs[1]))


def pair_weight(model: Any, lexical_weight: float | None) -> float:
    """The lexical weight for scoring a pair with ``model``: the one given, else the model's."""
    from conba.lexical.fusion import check_weight

    return check_weight(getattr(model, "lexical_weight", 0.0) if lexical_weight is None else lexical_weight)


def fused_pair_score(dense: float, a: str, b: str, weight: float) -> float:
    """``(1 - weight) * dense + weight * lexical`` for two snippets, with no index around them: the
    lexical cosine uses the reference document frequencies shipped with conba
    (:func:`conba.lexical.vectorizer.reference_idf`). Used by ``conba compare`` and ``/compare`` alike."""
    if not weight:
        return dense
    from conba.lexical.vectorizer import pair_similarity

    return (1.0 - weight) * dense + weight * pair_similarity(a, b)


def read_code_file(path: str | os.PathLike, language: str | None = None,
                   max_file_size: int = DEFAULT_MAX_FILE_SIZE,
                   require_language: bool = True, language_option: str = "--language") -> tuple[str, str | None]:
    """(text, language) of a source file, or :class:`SourceError` naming it. The checks are the
    index's (:func:`read_source`: unreadable, binary, not UTF-8, too large, generated, empty).
    ``require_language=False``: a file of an unknown language gives language None instead of an error;
    ``language_option`` is the option the error advises (the calling command's)."""
    p = Path(path)
    if not os.path.lexists(p):
        raise SourceError(f"{path}: no such file")
    if p.is_dir():
        raise SourceError(f"{path}: is a directory, expected a source file")
    lang = language or detect_language(p)
    if lang is None and require_language:
        raise SourceError(f"{path}: unsupported language (extension '{p.suffix or '(none)'}'); "
                          f"name it with {language_option}")
    try:
        return read_source(p, max_file_size), lang
    except Skip as exc:
        raise SourceError(str(exc)) from None


def compare_files(path_a: str | os.PathLike, path_b: str | os.PathLike, model: Any = None,
                  threshold: str | float | None = "auto", lexical_weight: float | None = None) -> CompareResult:
    a, lang_a = read_code_file(path_a)
    b, lang_b = read_code_file(path_b)
    return compare(a, b, model=model, languages=(lang_a, lang_b), threshold=threshold,
                   lexical_weight=lexical_weight)
