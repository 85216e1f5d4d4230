"""The tool bodies over port maps and clone classes: ``find_counterpart``, ``port_status`` and ``clones_of``.

A port map (:func:`conba.mapping.map_index`, the one ``conba map`` draws) is computed once per snapshot and
pair of sides, without line alignment, and kept in the snapshot's cache; ``find_counterpart`` then aligns
only the pair it answers (:func:`conba.mapping.align.align_units`). Clone classes are cached the same way.
"""

from __future__ import annotations

from typing import Any

from conba.clones.display import display_path
from conba.errors import ConfigError
from conba.mcp.compact import brief, check_budget, check_code_lines, fit
from conba.mcp.context import ToolContext, check_range, language
from conba.mcp.locate import split_location, stored_name

ONLY = ("missing", "ambiguous", "matched", "all")
MAX_PAGE = 500
FILES_SHOWN = 20  # port_status lists the least covered source files first, this many


def port_map(ctx: ToolContext, source_path: str | None, target_path: str | None, source_language: str | None,
             target_language: str | None, keep_trivial: bool) -> Any:
    """The :class:`conba.mapping.PortMap` of one side onto the other (paths inside the roots), cached."""
    from conba.mapping import MapConfig, map_index

    sources = [ctx.inside(source_path, "source_path")] if source_path else None
    targets = [ctx.inside(target_path, "target_path")] if target_path else None
    if not (sources or source_language) or not (targets or target_language):
        raise ConfigError("give the two sides: source_path or source_language, and target_path or target_language")
    key = ("map", tuple(sources or ()), tuple(targets or ()), source_language, target_language, keep_trivial)
    config = MapConfig(keep_trivial=keep_trivial, align=False)
    return ctx.cached(key, lambda: map_index(ctx.index, sources, targets, source_language, target_language, config))


def _trivial_note(unit: Any) -> str | None:
    from conba.clones.trivial import trivial_reason

    reason = trivial_reason(unit)
    return None if reason is None else f"{unit.qualname} is trivial ({reason}): skipped unless keep_trivial is true"


def find_counterpart(ctx: ToolContext, file: str, function: str | None = None, line: int | None = None,
                     target_language: str | None = None, target_path: str | None = None,
                     source_path: str | None = None, keep_trivial: bool = False, code_lines: int = 8,
                     max_tokens: int = 2000) -> str:
    """The counterpart of one function in another language or tree, its status as `conba map` gives it, and
    the aligned lines of the pair."""
    from conba.mapping.align import align_units

    check_code_lines(code_lines)
    check_budget(max_tokens)
    tlang = language(target_language, "target_language")
    if tlang is None and not target_path:
        raise ConfigError("give target_language or target_path: where to look for the counterpart")
    unit = ctx.unit(file, function, line)
    port = port_map(ctx, source_path, target_path, unit.language, tlang, keep_trivial)
    match = next((f for f in port.functions if f.source.id == unit.id), None)
    if match is None:
        why = _trivial_note(unit) if not keep_trivial else None
        raise ConfigError(why or f"{file}: {unit.qualname} is not among the source functions of this map "
                                 "(source_path leaves it out)")
    body: dict[str, Any] = {"function": brief(unit), "status": match.status, "threshold": round(port.threshold, 3)}
    if match.reason:
        body["reason"] = match.reason
    if match.target is not None:
        key = "best" if match.status == "missing" else "counterpart"
        body[key] = brief(match.target, match.score, code_lines)
        if match.status != "missing":
            body["lines"] = align_units(unit, match.target).to_list()
    others = [(u, s) for u, s in (match.nearest or match.candidates) if match.target is None or u.id != match.target.id]
    if others:
        body["others"] = [brief(u, s) for u, s in others]
    return fit(body, "lines", max_tokens)


def port_status(ctx: ToolContext, source_path: str | None = None, target_path: str | None = None,
                source_language: str | None = None, target_language: str | None = None, only: str = "missing",
                offset: int = 0, limit: int = 50, since: str | None = None, target_since: str | None = None,
                keep_trivial: bool = False, max_tokens: int = 2000) -> str:
    """Coverage of one tree or language by another, counts, the least covered files, and the functions with
    status ``only`` a page at a time; with ``since`` the drift since a git revision instead."""
    if only not in ONLY:
        raise ConfigError(f"only must be one of {', '.join(ONLY)}, got {only!r}")
    check_range(offset, 0, 10**9, "offset")
    check_range(limit, 1, MAX_PAGE, "limit")
    check_budget(max_tokens)
    slang = language(source_language, "source_language")
    tlang = language(target_language, "target_language")
    if target_since is not None and since is None:
        raise ConfigError("target_since goes with since")
    if since is not None and not source_path:
        raise ConfigError("since needs source_path (a folder in a git working tree)")
    port = port_map(ctx, source_path, target_path, slang, tlang, keep_trivial)
    summary = {k: v for k, v in port.summary_dict().items() if k not in ("type", "index", "model", "margin")}
    files = sorted(port.files, key=lambda f: (f.coverage, f.source))[:FILES_SHOWN]
    body: dict[str, Any] = {"summary": summary, "files": [
        {"file": display_path(f.source), "to": display_path(f.target) if f.target else None,
         "coverage": round(f.coverage, 3), "missing": f.counts["missing"], "functions": f.total} for f in files]}
    if len(port.files) > FILES_SHOWN:
        body["files_more"] = len(port.files) - FILES_SHOWN
    if since is not None:
        from conba.mapping.drift import map_drift

        drift = map_drift(port, ctx.inside(source_path or "", "source_path"), since, ctx.index, target_since)
        body["drift"] = {k: v for k, v in drift.summary_dict().items() if k != "type"}
        rows = [{"change": r.change, "status": r.status, "function": brief(r.source),
                 **({"counterpart": brief(r.counterpart, r.score)} if r.counterpart is not None else {})}
                for r in drift.records]
        key = "changes"
    else:
        chosen = [f for f in port.functions if only == "all" or f.status == only]
        rows = []
        for f in chosen:
            row: dict[str, Any] = {**brief(f.source), "status": f.status}
            if f.target is not None:
                row["best" if f.status == "missing" else "counterpart"] = brief(f.target, f.score)
            rows.append(row)
        key = "functions"
    body["total"], body["offset"] = len(rows), offset
    body[key] = rows[offset:offset + limit]
    if offset + limit < len(rows):
        body["next_offset"] = offset + limit
    return fit(body, key, max_tokens, "page with offset and limit, or raise max_tokens")


def clones_of(ctx: ToolContext, file: str, function: str | None = None, line: int | None = None,
              files: bool = False, threshold: str = "auto", cross_language_only: bool = False,
              keep_trivial: bool = False, code_lines: int = 3, max_tokens: int = 2000) -> str:
    """The clone class of one function (as `conba clones`) or of one whole file (as `conba clones --files`)."""
    from conba.clones.threshold import resolve_threshold

    check_code_lines(code_lines)
    check_budget(max_tokens)
    try:
        t = resolve_threshold(threshold, ctx.index.threshold)
    except ValueError as exc:
        raise ConfigError(f"threshold: {exc}") from None
    if files:
        if function or line is not None or split_location(file, None)[1] is not None:
            raise ConfigError("files=true takes a whole file: no function or line")
        return _file_clones(ctx, file, t, cross_language_only, max_tokens)
    unit = ctx.unit(file, function, line)
    report = ctx.cached(("clones", t, cross_language_only, keep_trivial),
                        lambda: ctx.index.clone_report(t, cross_language_only=cross_language_only,
                                                       keep_trivial=keep_trivial))
    body: dict[str, Any] = {"function": brief(unit), "threshold": round(t, 3)}
    found = next((c for c in report.classes if any(u.id == unit.id for u in c.units)), None)
    if found is None:
        body["clones"] = []
        note = None if keep_trivial else _trivial_note(unit)
        body["note"] = note or f"no clone class holds it at threshold {t:.3f}"
        return fit(body, None, max_tokens)
    others = [u for u in found.units if u.id != unit.id]
    scores = ctx.index.score_matrix([unit.id], [u.id for u in others])[0]
    ranked = sorted(zip(others, scores.tolist()), key=lambda p: -p[1])
    body["class_size"] = len(found.units)
    body["clones"] = [brief(u, s, code_lines) for u, s in ranked]
    return fit(body, "clones", max_tokens, "lower code_lines or raise max_tokens")


def _file_clones(ctx: ToolContext, file: str, t: float, cross_language_only: bool, max_tokens: int) -> str:
    from conba.index.files.clones import clone_files

    name = stored_name(ctx.inside(file))
    if name not in ctx.units_by_file():
        raise ConfigError(f"{file}: not a file of the index (index it, or check the path)")
    report = ctx.cached(("file-clones", t, cross_language_only),
                        lambda: clone_files(ctx.index, t, cross_language_only=cross_language_only))
    body: dict[str, Any] = {"file": display_path(name), "threshold": round(t, 3)}
    found = next((c for c in report.classes if any(u.file == name for u in c.units)), None)
    if found is None:
        body["clones"], body["note"] = [], f"no file clone class holds it at threshold {t:.3f}"
        return fit(body, None, max_tokens)
    me = next(u.id for u in found.units if u.file == name)
    direct = {(p.b.id if p.a.id == me else p.a.id): p.score for p in found.pairs if me in (p.a.id, p.b.id)}
    rows = [{"file": display_path(u.file), "lang": u.language, "lines": u.end_line,
             **({"score": round(direct[u.id], 3)} if u.id in direct else {})}
            for u in found.units if u.id != me]
    body["class_size"] = len(found.units)
    body["clones"] = sorted(rows, key=lambda r: -r.get("score", -2.0))
    return fit(body, "clones", max_tokens)
