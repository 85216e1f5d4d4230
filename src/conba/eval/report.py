"""Plain-text tables of evaluation results, for people (logs, terminal, README snippets)."""

from __future__ import annotations

import math
import numbers

__all__ = ["format_retrieval_table", "format_classification"]


def _num(value: object, digits: int = 3) -> str:
    if value is None:
        return "-"
    value = float(value)  # type: ignore[arg-type]
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def format_retrieval_table(results: dict[str, dict]) -> str:
    """A fixed-width table comparing methods on cross-language retrieval.

    ``results`` maps a method name (e.g. ``"conba"``, ``"tfidf"``) to the dict returned by
    :func:`conba.eval.metrics.cross_language_retrieval`. One row per language pair (in the order of
    the first method, then pairs only other methods have) and a final ``mean`` row; one MAP@R column
    per method, then MRR, R@1 and the query count of the first method. ``-`` marks a pair a method
    has no result for, ``n/a`` an undefined metric.
    """
    if not results:
        raise ValueError("no results to format")
    for name, res in results.items():
        if not isinstance(res, dict) or "pairs" not in res or "mean" not in res:
            raise ValueError(f"results[{name!r}] is not a cross_language_retrieval result")
    methods = list(results)
    first = methods[0]
    pair_names: list[str] = []
    for res in results.values():
        pair_names += [p for p in res["pairs"] if p not in pair_names]

    header = ["pair", *methods, f"MRR({first})", f"R@1({first})", "queries"]
    rows: list[list[str]] = []
    for pair in pair_names:
        row = [pair] + [_num(results[m]["pairs"].get(pair, {}).get("map_at_r")) for m in methods]
        own = results[first]["pairs"].get(pair, {})
        queries = own.get("queries")
        rows.append(row + [_num(own.get("mrr")), _num(own.get("recall_at_1")),
                           "-" if queries is None else str(queries)])
    mean_row = ["mean"] + [_num(results[m]["mean"].get("map_at_r")) for m in methods]
    first_mean = results[first]["mean"]
    total = sum(int(v.get("queries", 0)) for v in results[first]["pairs"].values())
    rows.append(mean_row + [_num(first_mean.get("mrr")), _num(first_mean.get("recall_at_1")), str(total)])

    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]

    def line(cells: list[str]) -> str:
        padded = [cell.ljust(w) if c == 0 else cell.rjust(w)
                  for c, (cell, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(padded).rstrip()

    rule = "-" * len(line(header))
    body = [line(r) for r in rows]
    title = "Cross-language retrieval: MAP@R per method"
    return "\n".join([title, line(header), rule, *body[:-1], rule, body[-1]])


def format_classification(metrics: dict) -> str:
    """The dict of :func:`conba.eval.pairs.classification_metrics` as aligned ``name  value`` lines."""
    if not metrics:
        raise ValueError("no metrics to format")
    order = ["precision", "recall", "f1", "accuracy", "roc_auc", "threshold", "n_pairs"]
    keys = [k for k in order if k in metrics] + [k for k in metrics if k not in order]
    width = max(len(k) for k in keys)
    lines = ["Clone classification"]
    for key in keys:
        value = metrics[key]
        if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
            text = _num(value, 4)
        else:
            text = str(value)
        lines.append(f"  {key.ljust(width)}  {text}")
    return "\n".join(lines)
