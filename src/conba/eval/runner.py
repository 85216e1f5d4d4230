"""One evaluation run: a model and the TF-IDF baseline on the same data, plus clone classification."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import numpy as np

from conba.data import CodeRecord
from conba.data.records import DataError
from conba.eval.metrics import cross_language_retrieval, embedding_similarity
from conba.eval.pairs import balanced_pairs, calibrate_threshold, classification_metrics, require_clone_pairs
from conba.eval.tfidf import tfidf_similarity


def _lexical(records: list[CodeRecord]) -> Any:
    """(n, V) unit-length lexical vectors of the records, with their own document frequencies (as an index's)."""
    from conba.lexical import LexicalVectorizer

    return LexicalVectorizer().vectors([r.code for r in records])


def _pair_scores(emb: np.ndarray, records: list[CodeRecord], seed: int, weight: float = 0.0,
                 lexical: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Scores and labels of the balanced pairs: the dense cosine, fused at ``weight`` with the lexical
    cosine (``lexical``: the records' rows, computed here when not given)."""
    i, j, labels = balanced_pairs([r.group for r in records], [r.language for r in records], seed=seed)
    scores = np.sum(emb[i] * emb[j], axis=1)
    if weight:
        from conba.lexical import fuse

        lex = _lexical(records) if lexical is None else lexical
        scores = fuse(scores, np.asarray(lex[i].multiply(lex[j]).sum(axis=1)).ravel(), weight)
    return scores, labels


def evaluate(records: list[CodeRecord], model: Any, *, tfidf: bool = True,
             calibration: list[CodeRecord] | None = None, batch_size: int | None = None,
             progress: bool | None = None, seed: int = 0, lexical_weight: float | None = None,
             where: str = "evaluation data", calibration_where: str = "calibration data") -> dict:
    """Evaluate ``model`` (anything with ``encode(codes, languages=...)``) on grouped records (``where`` and
    ``calibration_where`` name them in errors).

    ``lexical_weight`` (default: the model's): above 0, ``conba`` is the fused score (retrieval and
    clone pairs; lexical document frequencies counted over the records) and ``dense`` the cosine alone."""
    from conba.lexical.fusion import check_weight

    weight = check_weight(getattr(model, "lexical_weight", 0.0) if lexical_weight is None else lexical_weight)
    if len({r.language for r in records}) < 2:
        raise DataError(f"{where}: evaluation needs records in at least 2 languages")
    codes = [r.code for r in records]
    groups = [r.group for r in records]
    langs = [r.language for r in records]
    require_clone_pairs(groups, langs, where)  # before encoding: the clone metrics need such pairs
    if calibration:
        require_clone_pairs([r.group for r in calibration], [r.language for r in calibration], calibration_where)
    t0 = time.time()
    emb = model.encode(codes, languages=langs, batch_size=batch_size, show_progress_bar=progress)
    encode_s = time.time() - t0
    dense = embedding_similarity(emb)
    lexical = _lexical(records) if weight else None
    if weight:
        from conba.lexical import fuse

        assert lexical is not None  # computed above when weight is set
        fused = fuse(dense, (lexical @ lexical.T).toarray(), weight)
        retrieval = {"conba": cross_language_retrieval(fused, groups, langs),
                     "dense": cross_language_retrieval(dense, groups, langs)}
    else:
        retrieval = {"conba": cross_language_retrieval(dense, groups, langs)}
    if tfidf:
        retrieval["tfidf"] = cross_language_retrieval(tfidf_similarity(codes), groups, langs)
    from conba.eval.long_inputs import long_breakdown

    long = long_breakdown(model, codes, groups, langs, {"conba": fused, "dense": dense} if weight else {"conba": dense})

    if calibration:
        same = [(r.id, r.group, r.language, r.code) for r in calibration] == list(
            zip((r.id for r in records), groups, langs, codes))
        if same:  # calibrating on the evaluated records (the F1 threshold of a dev set): encode them once
            cemb = emb
        else:
            cemb = model.encode([r.code for r in calibration], languages=[r.language for r in calibration],
                                batch_size=batch_size, show_progress_bar=progress)
        threshold = float(calibrate_threshold(*_pair_scores(cemb, calibration, seed, weight,
                                                            lexical if same else None)))
        threshold_source = "calibration file"
    elif getattr(model, "threshold", None) is not None:
        threshold, threshold_source = float(model.threshold), "stored with the model"
    else:
        threshold, threshold_source = None, None
    scores, labels = _pair_scores(emb, records, seed, weight, lexical)
    if threshold is None:
        # No calibration available: fall back to the best threshold on this data, and say so.
        threshold, threshold_source = float(calibrate_threshold(scores, labels)), "oracle (tuned on eval data)"
    classification = classification_metrics(scores, labels, threshold)
    classification["threshold_source"] = threshold_source
    result = {
        "n_records": len(records),
        "lexical_weight": weight,
        "n_groups": len(set(groups)),
        "languages": dict(Counter(langs)),
        "encode_seconds": round(encode_s, 2),
        "snippets_per_second": round(len(records) / max(encode_s, 1e-9), 2),
        "retrieval": retrieval,
        "classification": classification,
    }
    if long is not None:
        result["long"] = long
    if tfidf:
        base = retrieval["tfidf"]["mean"]["map_at_r"]
        result["ratio_to_tfidf"] = retrieval["conba"]["mean"]["map_at_r"] / base if base else None
    return result

