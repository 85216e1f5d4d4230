"""The result of :func:`conba.eval.repo.evaluate_repo` as plain text for people."""

from __future__ import annotations

from typing import Any

__all__ = ["format_repo_report"]


def _num(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{float(value):.{digits}f}"


def _table(header: list[str], rows: list[list[str]], rule_before_last: bool = True) -> list[str]:
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    rule = "-" * len(line(header))
    body = [line(r) for r in rows]
    if rule_before_last and body:
        body.insert(len(body) - 1, rule)
    return [line(header), rule, *body]


def _retrieval_lines(result: dict, key: str = "retrieval", title: str | None = None) -> list[str]:
    retrieval = result[key]
    methods = [m for m in result["methods"] if m in retrieval]
    if not methods:
        return []
    pairs = list(retrieval[methods[0]]["pairs"])
    header = ["pair", "queries"] + [f"{m} {k}" for m in methods for k in ("MAP@R", "R@1")]
    rows = []
    for p in pairs:
        own = retrieval[methods[0]]["pairs"][p]
        row = [p, str(own["queries"])]
        for m in methods:
            got = retrieval[m]["pairs"].get(p, {})
            row += [_num(got.get("map_at_r")), _num(got.get("recall_at_1"))]
        rows.append(row)
    total = sum(v["queries"] for v in retrieval[methods[0]]["pairs"].values())
    mean = ["mean", str(total)]
    for m in methods:
        mean += [_num(retrieval[m]["mean"].get("map_at_r")), _num(retrieval[m]["mean"].get("recall_at_1"))]
    rows.append(mean)
    title = title or f"File-level cross-language retrieval ({result['aggregate']} of function similarities)"
    return [title, *_table(header, rows)]


def _weight(model: dict) -> str:
    w = model.get("lexical_weight")
    return f"   lexical weight {w:g}" if w else ""


def _function_report(result: dict) -> str:
    c, model = result["counts"], result["model"]
    lines = [f"model: {model['name'] or '(given object)'} (fingerprint {model['fingerprint']}){_weight(model)}"
             f"   index: {result['index']}",
             f"function level: {c['members_found']} of {c['members']} grouped functions found "
             f"({c['groups_found']} groups), {c['units']} functions ranked"
             f"{', overloads scored as one' if result.get('overloads') else ''}", ""]
    lines += _retrieval_lines(result, "retrieval", "Function-level cross-language retrieval (project:pair)")
    if result.get("blind"):
        lines += ["", *_retrieval_lines(result, "blind", "Name-blind (the query's own name replaced by f)")]
    lines += ["", f"time: {result['timings']['total_s']:.1f} s"]
    return "\n".join(lines)


def _clone_lines(clones: dict) -> list[str]:
    if not clones:
        return []
    header = ["clones", "threshold", "classes", "largest", "pairs/unit", "file P", "file R", "file F1"]
    rows = []
    for key, c in clones.items():
        fp = c["file_pairs"]
        rows.append([key, _num(c["threshold"]), str(c["classes"]),
                     f"{c['largest_class']} ({_num(100 * (c['largest_share'] or 0), 1)}%)",
                     _num(c["pairs_per_unit"]), _num(fp["precision"]), _num(fp["recall"]), _num(fp["f1"])])
    first = next(iter(clones.values()))["file_pairs"]
    note = (f"(file pairs: cross-language pairs of grouped files with a clone pair between them; "
            f"{first['true']} true pairs)")
    return ["", "Clone classes at the model's auto threshold", *_table(header, rows, False), note]


def format_repo_report(result: dict) -> str:
    """Header (model, index, counts), the retrieval table, clone statistics and timings."""
    if result.get("level") == "function":
        return _function_report(result)
    c = result["counts"]
    model = result["model"]
    langs = ", ".join(f"{lang} {v['files']}/{v['units']}" for lang, v in c["languages"].items())
    lines = [
        f"model: {model['name'] or '(given object)'} (fingerprint {model['fingerprint']}){_weight(model)}"
        f"   index: {result['index']}",
        f"indexed: {c['files']} files, {c['units']} functions (files/functions: {langs})",
        f"groups: {c['groups']} ({c['groups_usable']} with files in 2+ languages), grouped files "
        f"{c['grouped_files_found']} found, {c['grouped_files_missing']} skipped",
    ]
    for m in result["missing"][:5]:
        lines.append(f"  skipped {m['file']} ({m['group']}): {m['reason']}")
    if len(result["missing"]) > 5:
        lines.append(f"  ... and {len(result['missing']) - 5} more (see the JSON)")
    lines += ["", *_retrieval_lines(result), *_clone_lines(result["clones"])]
    t = result["timings"]
    parts = [f"index {t.get('index_s', 0):.1f} s"]
    if "zero_shot_s" in t:
        parts.append(f"zero-shot {t['zero_shot_s']:.1f} s")
    parts += [f"ranking {sum(t['retrieval_s'].values()):.1f} s"]
    if "clones_s" in t:
        parts.append(f"clones {t['clones_s']:.1f} s")
    lines += ["", f"time: {', '.join(parts)}; total {t['total_s']:.1f} s"]
    return "\n".join(lines)
