"""The JSON endpoints of ``conba serve``: search, compare, encode, clones, report, map, health (and file search,
:mod:`conba.serve.file_routes`)."""

from __future__ import annotations

import asyncio
import secrets
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Response
from fastapi.responses import HTMLResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from conba.clones.compare import fused_pair_score, pair_weight
from conba.serve.deprecations import renamed_value
from conba.serve.limits import check_language
from conba.serve.schemas import (
    ClonesResponse,
    CompareRequest,
    CompareResponse,
    CrossLanguageQuery,
    EncodeRequest,
    EncodeResponse,
    IncludeCodeQuery,
    LimitQuery,
    MapRequest,
    MapResponse,
    MinLinesQuery,
    OffsetQuery,
    SearchRequest,
    SearchResponse,
    ThresholdQuery,
)

if TYPE_CHECKING:
    from conba.serve.app import ServeState
    from conba.serve.reload import Snapshot

_bearer = HTTPBearer(auto_error=False, description="The server's --token / CONBA_TOKEN, when it has one.")


def token_check(token: str | None) -> Any:
    async def check(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> None:
        if token is None:
            return
        given = credentials.credentials if credentials is not None else ""
        if not secrets.compare_digest(given.encode(), token.encode()):
            raise HTTPException(401, "missing or wrong bearer token: send 'Authorization: Bearer TOKEN'",
                                headers={"WWW-Authenticate": "Bearer"})

    return check


def _threshold(value: float | str, model_threshold: float | None) -> float:
    from conba.clones.threshold import resolve_threshold

    try:
        return resolve_threshold(value, model_threshold)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None


def _model_threshold(value: float | str, model: Any) -> float:
    """The threshold ``conba compare`` would use with this model (calibrated clone threshold first)."""
    from conba.clones.threshold import model_threshold

    try:
        return model_threshold(value, model)
    except ValueError as exc:
        raise HTTPException(422, f"threshold: {exc}") from None


def _unit_dict(unit: Any, code: bool) -> dict[str, Any]:
    from conba.clones.display import relative_unit_dict

    return relative_unit_dict(unit, code=code)


def _search(snap: Snapshot, query: Any, k: int, language: str | None, code: str) -> tuple[list, int]:
    return snap.index.search_vectors(query, k=k, language=language, codes=[code])[0], snap.generation


def _clones(snap: Snapshot, threshold: str, cross_language_only: bool, min_lines: int) -> tuple[float, list, int]:
    t = _threshold(threshold, snap.index.threshold)
    key = ("clones", t, cross_language_only, min_lines)
    if key not in snap.cache:
        if len(snap.cache) >= 8:
            snap.cache.clear()
        snap.cache[key] = snap.index.clones(t, cross_language_only=cross_language_only, min_lines=min_lines)
    return t, snap.cache[key], snap.generation


def _map(snap: Snapshot, req: MapRequest, source: str, target: str, limits: Any) -> tuple[Any, int]:
    from conba.data.records import DataError
    from conba.mapping import MapConfig, map_index

    counts = snap.facts.get("languages") or {}
    limits.check_map(int(counts.get(source, 0)), int(counts.get(target, 0)))
    auto = isinstance(req.threshold, str) and req.threshold.strip().lower() == "auto"
    config = MapConfig(threshold=None if auto else _threshold(req.threshold, None), margin=req.margin,
                       keep_trivial=req.keep_trivial)
    try:
        return map_index(snap.index, source_language=source, target_language=target, config=config), snap.generation
    except DataError as exc:
        raise HTTPException(422, str(exc)) from None


def _health(snap: Snapshot) -> dict[str, Any]:
    m = snap.manifest
    return {**snap.facts, "vectors": m.get("count"), "kind": m.get("kind"), "generation": snap.generation,
            "loaded_at": snap.loaded_at}


def router(state: ServeState) -> APIRouter:
    api = APIRouter(dependencies=[Depends(token_check(state.token))])
    limits, holder = state.limits, state.holder

    @api.post("/search", response_model=SearchResponse, response_model_exclude_none=True, tags=["search"])
    async def search(req: SearchRequest, response: Response) -> dict[str, Any]:
        """The ``k`` indexed functions most similar to ``code`` (only those in ``result_language`` when given)."""
        limits.check_code(req.code, "code")
        limits.check_k(req.k)
        warnings: list[str] = []
        language = check_language(renamed_value(req, "language", response, warnings, "POST /search"),
                                  "result_language" if req.language is None else "language")
        qlang = check_language(req.query_language, "query_language")
        query = await state.batcher.encode([req.code], [qlang or ""], query=True)  # the model's query prompt
        hits, generation = await holder.with_snapshot(_search, query, req.k, language, req.code)
        out = [{"rank": r, "score": round(h.score, 4), **_unit_dict(h.unit, req.include_code)}
               for r, h in enumerate(hits, 1)]
        body: dict[str, Any] = {"hits": out, "generation": generation, "warnings": warnings or None}
        if req.highlight:
            from conba.serve.page import highlight

            def paint() -> None:
                body["query_html"] = highlight(req.code, qlang or "")
                for d, h in zip(out, hits):
                    d["html"] = highlight(h.unit.code, h.unit.language, h.unit.start_line)

            await asyncio.to_thread(paint)
        return body

    @api.post("/compare", response_model=CompareResponse, tags=["search"])
    async def compare(req: CompareRequest) -> dict[str, Any]:
        """Cosine similarity of two snippets and whether it clears the clone threshold."""
        limits.check_code(req.a, "a")
        limits.check_code(req.b, "b")
        la = check_language(req.language_a, "language_a")
        lb = check_language(req.language_b, "language_b")
        t = _model_threshold(req.threshold, state.model)
        vectors = await state.batcher.encode([req.a, req.b], [la or "", lb or ""])
        score = fused_pair_score(float(vectors[0] @ vectors[1]), req.a, req.b, pair_weight(state.model, None))
        return {"score": round(score, 4), "threshold": round(t, 4), "clone": score >= t, "languages": [la, lb]}

    @api.post("/encode", response_model=EncodeResponse, tags=["encode"])
    async def encode(req: EncodeRequest) -> dict[str, Any]:
        """Embeddings of up to ``max_snippets`` snippets (float32, L2-normalised)."""
        limits.check_snippets(req.snippets)
        given = req.languages
        if given is None or isinstance(given, str):
            given = [given] * len(req.snippets)
        if len(given) != len(req.snippets):
            raise HTTPException(422, f"languages: {len(given)} given for {len(req.snippets)} snippets")
        langs = [check_language(x, f"languages[{i}]") or "" for i, x in enumerate(given)]
        vectors = await state.batcher.encode(req.snippets, langs)
        return {"dim": int(vectors.shape[1]), "fingerprint": state.fingerprint, "engine": state.engine,
                "vectors": vectors.tolist()}

    @api.get("/clones", response_model=ClonesResponse, response_model_exclude_none=True, tags=["clones"])
    async def clones(threshold: ThresholdQuery = "auto", cross_language_only: CrossLanguageQuery = False,
                     min_lines: MinLinesQuery = 1, offset: OffsetQuery = 0, limit: LimitQuery = 50,
                     include_code: IncludeCodeQuery = False) -> dict[str, Any]:
        """Clone classes of the index, largest first, a page at a time (``offset``, ``limit``)."""
        if limit > limits.max_page:
            raise HTTPException(422, f"limit: at most {limits.max_page} classes per page, got {limit}")
        t, classes, generation = await holder.with_snapshot(_clones, threshold, cross_language_only, min_lines)
        page = []
        for c in classes[offset:offset + limit]:
            d = c.to_dict(code=include_code)
            d["members"] = [_unit_dict(u, include_code) for u in c.units]
            page.append(d)
        return {"threshold": round(t, 4), "cross_language_only": cross_language_only, "total": len(classes),
                "offset": offset, "limit": limit, "classes": page, "generation": generation}

    @api.get("/report", response_class=HTMLResponse, tags=["clones"])
    async def report(threshold: ThresholdQuery = "auto", cross_language_only: CrossLanguageQuery = False,
                     min_lines: MinLinesQuery = 1) -> HTMLResponse:
        """The HTML clone report (as `conba clones -f html` writes it) of the served index."""
        from conba.clones.html_report import render_html

        t, classes, _ = await holder.with_snapshot(_clones, threshold, cross_language_only, min_lines)
        page = await asyncio.to_thread(render_html, classes, index=str(holder.path), model=state.model_name,
                                       threshold=t, cross_language_only=cross_language_only)
        return HTMLResponse(page)

    @api.post("/map", response_model=MapResponse, tags=["clones"])
    async def map_(req: MapRequest) -> dict[str, Any]:
        """Port coverage (as `conba map`): each source-language function's counterpart in the target language
        (matched / ambiguous / missing), each source file's target file, and the summary."""
        source = check_language(req.source_language, "source_language")
        target = check_language(req.target_language, "target_language")
        if source is None or target is None:
            raise HTTPException(422, "source_language and target_language are both needed")
        port, generation = await holder.with_snapshot(_map, req, source, target, limits)
        functions = [f.to_dict(code=req.include_code) for f in port.functions if req.only in (None, f.status)]
        return {"summary": port.summary_dict(), "functions": functions,
                "files": [f.to_dict() for f in port.files], "generation": generation}

    @api.get("/health", tags=["health"])
    async def health() -> dict[str, Any]:
        """Model fingerprint, view and engine, index size and snapshot, limits, batching counters."""
        from conba import __version__

        try:
            index: dict[str, Any] = await holder.with_snapshot(_health)
        except Exception as exc:  # no index yet, or unreadable: still healthy enough to say so
            index = {"path": str(holder.path), "functions": 0}
            index["error"] = str(exc)
        if holder.error and "error" not in index:
            index["note"] = holder.error
        m = state.model
        return {"status": "ok", "version": __version__,
                "model": {"name": state.model_name, "fingerprint": state.fingerprint, "view": state.view,
                          "engine": state.engine, "dim": int(m.dim), "threshold": m.threshold},
                "index": index, "limits": limits.to_dict(), "workers": state.batcher.workers,
                "threads_per_worker": state.threads, "batching": state.batcher.stats.to_dict()}

    from conba.serve.file_routes import add_file_routes

    add_file_routes(api, state)  # POST /search/files
    from conba.serve.plagiarism_routes import add_plagiarism_routes

    add_plagiarism_routes(api, state)  # POST /plagiarism
    return api
