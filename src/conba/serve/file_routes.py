"""``POST /search/files`` and ``GET /clones/files`` of ``conba serve``: whole files as results.

``/search/files``: the served index's files most similar to a whole file.

The query is either ``code`` (a whole file's text, with ``query_language`` or a ``name`` whose extension
tells it), whose functions are extracted and encoded as the index's are, or ``file``: a file of the served
index, named as the index or a hit lists it (its stored vectors are used; nothing is read from disk).
Scores as ``conba search --files`` (:mod:`conba.index.files.search`). ``/clones/files``: pairs and classes of
the index's files, a page at a time, as ``conba clones --files`` (:mod:`conba.index.files.clones`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, HTTPException, Response
from pydantic import BaseModel, Field

from conba.serve.deprecations import renamed_value
from conba.serve.limits import check_language
from conba.serve.schemas import (
    DEPRECATED,
    ClonesResponse,
    CrossLanguageQuery,
    IncludeCodeQuery,
    LimitQuery,
    MinLinesQuery,
    OffsetQuery,
    Text,
    ThresholdQuery,
    _Request,
)

if TYPE_CHECKING:
    from conba.serve.app import ServeState
    from conba.serve.reload import Snapshot


class FileSearchRequest(_Request):
    code: Text | None = Field(None, description="The query file's whole text (or give `file`).",
                              examples=["def to_roman(number):\n    ...\n\n\ndef from_roman(text):\n    ...\n"])
    file: Text | None = Field(None, description="A file of the served index, as a hit or the index names it "
                                                "(its stored vectors are used; nothing is read from disk).",
                              examples=["python/roman.py"])
    name: Text | None = Field(None, description="The query file's name: its extension gives the language.",
                              examples=["roman.py"])
    query_language: Text | None = Field(None, description="Language of `code` (default: from `name`).",
                                        examples=["python"])
    result_language: Text | None = Field(
        None, description="Only return files in this language (as `conba search --files --result-language`).",
        examples=["java"])
    language: Text | None = Field(None, description="Deprecated: the old name of `result_language`.",
                                  examples=["java"], json_schema_extra=DEPRECATED)
    same_language: bool = Field(False, description="Include files in the query's language.", examples=[False])
    k: int = Field(10, description="Number of files.", examples=[3])


class FileHitOut(BaseModel):
    rank: int
    score: float = Field(description="Mean of each side's best function matches (the file score).")
    vector_score: float = Field(description="Cosine of the two file vectors (the first stage).")
    file: str
    language: str
    functions: int


class FileSearchResponse(BaseModel):
    query: dict[str, Any] = Field(description="The query file: language, functions, and file when indexed.")
    hits: list[FileHitOut]
    generation: int
    warnings: list[str] | None = Field(None, description="Deprecated fields the request used, and what to send.")


def _scorer(snap: Snapshot) -> Any:
    from conba.index.files.search import FileScorer

    if ("files",) not in snap.cache:
        snap.cache[("files",)] = FileScorer(snap.index)
    return snap.cache[("files",)]


def _indexed_row(scorer: Any, name: str) -> int | None:
    from conba.clones.display import display_path
    from conba.index.storage.store import shown_path

    row = scorer.row_of.get(name)
    if row is None:
        row = next((k for k, p in enumerate(scorer.files.paths) if display_path(shown_path(p)) == name), None)
    return row


def _rank(snap: Snapshot, req: FileSearchRequest, query: Any, language: str | None) -> tuple[Any, list, int]:
    from conba.index.files.search import rank_files

    scorer = _scorer(snap)
    if query is None:
        row = _indexed_row(scorer, req.file or "")
        if row is None:
            raise HTTPException(404, f"file: {req.file} is not a file of the served index (or has no function)")
        query = scorer.query_of(row)
    elif callable(query):
        query = query(scorer)
    return query, rank_files(scorer, query, req.k, same_language=req.same_language, language=language), \
        snap.generation


def _file_clones(snap: Snapshot, threshold: str, cross_language_only: bool, min_lines: int,
                 code: bool) -> tuple[float, list, int]:
    from conba.clones.threshold import resolve_threshold
    from conba.index.files.clones import clone_files

    try:
        t = resolve_threshold(threshold, snap.index.threshold)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
    key = ("file-clones", t, cross_language_only, min_lines, code)
    if key not in snap.cache:
        if len(snap.cache) >= 8:
            snap.cache.clear()
        snap.cache[key] = clone_files(snap.index, t, cross_language_only=cross_language_only, min_lines=min_lines,
                                      code=code).classes
    return t, snap.cache[key], snap.generation


def add_file_routes(api: APIRouter, state: ServeState) -> None:
    limits, holder = state.limits, state.holder

    @api.post("/search/files", response_model=FileSearchResponse, response_model_exclude_none=True,
              tags=["search"])
    async def search_files(req: FileSearchRequest, response: Response) -> dict[str, Any]:
        """The ``k`` files of the index most similar to a whole file (other languages unless ``same_language``)."""
        from conba.errors import ConbaError
        from conba.index.files.search import code_units, make_query

        limits.check_k(req.k)
        warnings: list[str] = []
        language = check_language(renamed_value(req, "language", response, warnings, "POST /search/files"),
                                  "result_language" if req.language is None else "language")
        if (req.code is None) == (req.file is None):
            raise HTTPException(422, "give either code (a whole file's text) or file (a file of the index)")
        query: Any = None
        if req.code is not None:
            if len(req.code) > limits.max_chars * limits.max_snippets:
                raise HTTPException(413, f"code: {len(req.code)} characters, the limit for a whole file is "
                                         f"{limits.max_chars * limits.max_snippets}")
            qlang = check_language(req.query_language, "query_language")
            if qlang is None and req.name:
                from conba.syntax.languages import detect_language

                qlang = detect_language(req.name)
            if qlang is None:
                raise HTTPException(422, "query_language: needed for code (or a name with a known extension)")
            try:
                units = code_units(req.code, qlang, req.name or "query")
            except ConbaError as exc:
                raise HTTPException(422, f"code: {exc}") from None
            limits.check_functions([u.code for u in units], "code")  # the per-request work cap of /encode
            vectors = await state.batcher.encode([u.code for u in units], [qlang] * len(units))
            name = req.name or "query"
            query = lambda scorer: make_query(scorer, name, qlang, units, vectors)  # noqa: E731
        try:
            q, hits, generation = await holder.with_snapshot(_rank, req, query, language)
        except ConbaError as exc:  # an index without file vectors: one line, what to run
            raise HTTPException(409, str(exc)) from None
        from conba.clones.display import display_path
        from conba.index.storage.store import shown_path

        info: dict[str, Any] = {"language": q.language, "functions": int(len(q.vectors))}
        if q.stored is not None:
            info["file"] = display_path(shown_path(q.stored))
        return {"query": info, "hits": [h.to_dict(r) for r, h in enumerate(hits, 1)], "generation": generation,
                "warnings": warnings or None}

    @api.get("/clones/files", response_model=ClonesResponse, response_model_exclude_none=True, tags=["clones"])
    async def clones_files(threshold: ThresholdQuery = "auto", cross_language_only: CrossLanguageQuery = False,
                           min_lines: MinLinesQuery = 1, offset: OffsetQuery = 0, limit: LimitQuery = 50,
                           include_code: IncludeCodeQuery = False) -> dict[str, Any]:
        """Classes of whole files (as `conba clones --files`), largest first, a page at a time; each member is a
        file (kind "file"), its code with ``include_code`` its functions' code."""
        from conba.clones.display import relative_unit_dict
        from conba.errors import ConbaError

        if limit > limits.max_page:
            raise HTTPException(422, f"limit: at most {limits.max_page} classes per page, got {limit}")
        try:
            t, classes, generation = await holder.with_snapshot(_file_clones, threshold, cross_language_only,
                                                                min_lines, include_code)
        except ConbaError as exc:
            raise HTTPException(409, str(exc)) from None
        page = []
        for c in classes[offset:offset + limit]:
            d = c.to_dict(code=include_code)
            d["members"] = [relative_unit_dict(u, code=include_code) for u in c.units]
            page.append(d)
        return {"threshold": round(t, 4), "cross_language_only": cross_language_only, "total": len(classes),
                "offset": offset, "limit": limit, "classes": page, "generation": generation}
