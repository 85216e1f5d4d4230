"""The tool bodies that need no port map: ``search_code``, ``compare`` and ``index_status``.

Each runs on the index reader's thread with a :class:`conba.mcp.context.ToolContext` and returns the answer's
JSON text (:mod:`conba.mcp.compact`); a bad argument raises a :class:`conba.errors.ConbaError` whose one-line
message becomes the tool error.
"""

from __future__ import annotations

import os
import time
from typing import Any

from conba.clones.display import display_path
from conba.errors import ConfigError
from conba.mcp.compact import brief, check_budget, check_code_lines, fit
from conba.mcp.context import ToolContext, check_range, language
from conba.mcp.locate import split_location

MAX_K = 100
STALE_CHECK_FILES = 20_000  # index_status stats at most this many indexed files for changes on disk


def search_code(ctx: ToolContext, code: str | None = None, file: str | None = None, function: str | None = None,
                line: int | None = None, query_language: str | None = None, language_filter: str | None = None,
                k: int = 10, code_lines: int = 3, max_tokens: int = 2000) -> str:
    """The ``k`` indexed functions most similar to a snippet, a whole file, or one indexed function."""
    check_range(k, 1, MAX_K, "k")
    check_code_lines(code_lines)
    check_budget(max_tokens)
    qlang = language(query_language, "query_language")
    rlang = language(language_filter, "language")
    if (code is None) == (file is None):
        raise ConfigError("give either code (a snippet) or file (a path; with function or line: one function)")
    query: dict[str, Any] = {}
    skip_id = None
    if file is not None:
        path, line = split_location(file, line)
        if function or line is not None:  # one indexed function: its stored code, no file read
            unit = ctx.unit(path, function, line)
            code, qlang, skip_id = unit.code, qlang or unit.language, unit.id
            query = brief(unit)
        else:  # a whole file, read only inside the roots (as `conba search FILE`)
            from conba.clones.compare import read_code_file

            code, qlang = read_code_file(ctx.inside(path), qlang, require_language=False,
                                         language_option="query_language")
            query = {"file": display_path(os.path.abspath(path)), "lang": qlang}
    assert code is not None
    if not code.strip():
        raise ConfigError("code: the query is empty")
    hits = ctx.index.search(code, k=k + (skip_id is not None), language=rlang, query_language=qlang)
    hits = [h for h in hits if h.unit.id != skip_id][:k]
    body: dict[str, Any] = {"query": query or {"lang": qlang, "chars": len(code)},
                            "hits": [brief(h.unit, h.score, code_lines) for h in hits]}
    if not hits and rlang:
        held = sorted(ctx.index.stats()["languages"])
        body["note"] = f"the index holds no {rlang} functions (it has {', '.join(held)})"
    return fit(body, "hits", max_tokens, "lower k or code_lines, or raise max_tokens")


def _side(ctx: ToolContext, name: str, code: str | None, file: str | None, function: str | None,
          line: int | None, lang: str | None) -> tuple[str, str | None, Any, int]:
    """(code, language, indexed unit or None, first line) of one side of ``compare``."""
    if (code is None) == (file is None):
        raise ConfigError(f"give either {name} (a snippet) or file_{name} (an indexed function)")
    if file is not None:
        unit = ctx.unit(file, function, line, what=f"file_{name}")
        return unit.code, unit.language, unit, unit.start_line
    assert code is not None
    if not code.strip():
        raise ConfigError(f"{name}: the snippet is empty")
    return code, language(lang, f"language_{name}"), None, 1


def compare(ctx: ToolContext, a: str | None = None, b: str | None = None, language_a: str | None = None,
            language_b: str | None = None, file_a: str | None = None, function_a: str | None = None,
            line_a: int | None = None, file_b: str | None = None, function_b: str | None = None,
            line_b: int | None = None, threshold: str = "auto", align: bool = True, max_tokens: int = 2000) -> str:
    """Score of two snippets or indexed functions, the threshold, clone or not, and their aligned lines."""
    from conba.clones.threshold import resolve_threshold
    from conba.mapping.align import align_code

    check_budget(max_tokens)
    code_a, lang_a, unit_a, first_a = _side(ctx, "a", a, file_a, function_a, line_a, language_a)
    code_b, lang_b, unit_b, first_b = _side(ctx, "b", b, file_b, function_b, line_b, language_b)
    try:
        t = resolve_threshold(threshold, ctx.index.threshold)
    except ValueError as exc:
        raise ConfigError(f"threshold: {exc}") from None
    if unit_a is not None and unit_b is not None:  # two indexed functions: the index's score, as map and clones
        score = float(ctx.index.score_matrix([unit_a.id], [unit_b.id])[0, 0])
        scored = "index"
    else:
        from conba.clones.compare import compare as compare_code

        result = compare_code(code_a, code_b, model=ctx.index.model, languages=(lang_a, lang_b), threshold=t,
                              lexical_weight=ctx.index.lexical_weight)
        score, scored = result.score, "encoded"
    body: dict[str, Any] = {"score": round(score, 3), "threshold": round(t, 3), "clone": score >= t,
                            "scored": scored, "languages": [lang_a, lang_b]}
    for key, unit in (("a", unit_a), ("b", unit_b)):
        if unit is not None:
            body[key] = brief(unit)
    if align:
        body["lines"] = align_code(code_a, code_b, source_first=first_a, target_first=first_b,
                                   languages=(lang_a, lang_b)).to_list()
    return fit(body, "lines" if align else None, max_tokens)


def _stale(store: Any) -> tuple[int, int, list[str]]:
    """(files checked, changed or deleted on disk since indexed, a few of them)."""
    from conba.index.storage.store import fs_path, shown_path

    states = store.file_states()
    changed: list[str] = []
    for n, (stored, (size, mtime_ns)) in enumerate(states.items()):
        if n >= STALE_CHECK_FILES:
            return n, len(changed), changed[:5]
        try:
            st = os.stat(fs_path(stored))
        except OSError:
            changed.append(display_path(shown_path(stored)))
            continue
        if (st.st_size, st.st_mtime_ns) != (size, mtime_ns):
            changed.append(display_path(shown_path(stored)))
    return len(states), len(changed), changed[:5]


def index_status(ctx: ToolContext) -> str:
    """What is indexed (files, functions per language), with which model, and how fresh it is."""
    from conba.index.storage.lock import holder

    idx = ctx.index
    stats = idx.stats()
    manifest = idx.manifest()
    updated = os.stat(idx.path / "manifest.json").st_mtime
    checked, stale, examples = _stale(idx.store)  # not cached: files change between re-indexes
    body: dict[str, Any] = {
        "index": display_path(str(idx.path)), "files": stats["files"], "functions": stats["functions"],
        "languages": stats["languages"], "model": stats["model"], "engine": stats["engine"],
        "threshold": None if stats["threshold"] is None else round(stats["threshold"], 3),
        "lexical_weight": round(idx.lexical_weight, 3), "vectors": manifest.get("kind"),
        "roots": [display_path(r) for r in ctx.roots],
        "updated": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(updated)),
        "age_s": round(time.time() - updated, 1), "generation": ctx.generation,
        "stale_files": stale, "stale_checked": checked,
    }
    if examples:
        body["stale_examples"] = examples
    pid = holder(idx.path)
    if pid is not None:
        body["writer"] = f"`conba index` (pid {pid}) is updating the index; answers use the previous one"
    body["watching"] = ctx.watcher.status() if ctx.watcher is not None else False
    return fit(body, None, 20_000)
