"""Long queries: retrieval scored over the snippets longer than one backbone window only.

Glossary: n snippets.

A snippet is *long* when, after the model's input view, its tokens do not fit one window of the
backbone (512 tokens for the default): that is where truncation loses code and a window head
(:mod:`conba.heads.window_head`) acts. :func:`long_query_map` scores only those snippets as queries,
each against every candidate of the other language (short and long), so the numbers of two models
on the same data compare directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from conba.eval.metrics import map_at_r


def long_mask(model: Any, codes: Sequence[str], languages: Sequence[str]) -> np.ndarray | None:
    """(n,) bool: True where a snippet takes more than one backbone window after ``model``'s view;
    None for a model without a conba backbone (no window to compare with)."""
    backbone = getattr(model, "backbone", None)
    if backbone is None or not hasattr(backbone, "tokenizer"):
        return None
    from conba.engine.windows import window_ids
    from conba.syntax.view import apply_views, check_view

    codes = list(codes)
    view = check_view(getattr(model, "view", "raw"))
    if view != "raw":
        codes, _ = apply_views(codes, list(languages), view)
    cut = window_ids(backbone, codes, None, prompt=backbone.prompt())
    return np.bincount(np.asarray(cut.owner, dtype=np.int64), minlength=len(codes)) > 1


def long_query_map(sim: np.ndarray, groups: Sequence[str], languages: Sequence[str],
                   queries: np.ndarray) -> dict:
    """Mean over ordered language pairs of MAP@R with only ``queries`` (n,) bool as queries and every
    record of the other language as a candidate (queries without a relevant candidate skipped).

    Returns ``{"map_at_r": mean over the pairs with a query (NaN: none), "queries": count scored}``."""
    langs = np.asarray([str(x) for x in languages])
    _, gid = np.unique(np.asarray([str(g) for g in groups]), return_inverse=True)
    queries = np.asarray(queries, dtype=bool)
    per_pair: list[float] = []
    scored = 0
    present = sorted(set(langs.tolist()))
    for q in present:
        rows = np.flatnonzero(queries & (langs == q))
        for c in present:
            if c == q or not rows.size:
                continue
            cand = np.flatnonzero(langs == c)
            scores = [map_at_r(sim[i, cand], gid[cand] == gid[i]) for i in rows if (gid[cand] == gid[i]).any()]
            if scores:
                per_pair.append(float(np.mean(scores)))
                scored += len(scores)
    return {"map_at_r": float(np.mean(per_pair)) if per_pair else float("nan"), "queries": scored}


def long_breakdown(model: Any, codes: Sequence[str], groups: Sequence[str], languages: Sequence[str],
                   sims: dict[str, np.ndarray]) -> dict | None:
    """MAP@R of the long queries for each named (n, n) similarity in ``sims`` (e.g. conba, dense), or
    None when the model has no backbone or no snippet is long."""
    mask = long_mask(model, codes, languages)
    if mask is None or not mask.any():
        return None
    out: dict = {"snippets": int(mask.sum()),
                 "definition": "queries longer than one backbone window after the input view, "
                               "ranked against every candidate of the other language"}
    for name, sim in sims.items():
        out[name] = long_query_map(sim, groups, languages, mask)
    return out
