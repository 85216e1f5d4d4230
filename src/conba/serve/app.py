"""The ``conba serve`` FastAPI app: the model and the index held in memory, answering over HTTP.

>>> from conba.serve import create_app
>>> app = create_app(".conba-index")          # the model the index was built with
>>> # uvicorn.run(app, host="127.0.0.1", port=8000)

Endpoints (OpenAPI docs at ``/docs``, schema at ``/openapi.json``): ``POST /search``,
``POST /search/files``, ``POST /compare``, ``POST /encode``, ``GET /clones``, ``GET /clones/files``,
``GET /report`` (HTML clone report), ``POST /map``, ``POST /plagiarism``, ``GET /health``, and the search page at
``/``.
With a token, every endpoint but the page, its static files and the docs needs ``Authorization: Bearer TOKEN``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from conba.engine.query_encoder import QueryEncoder
from conba.serve.batching import EncodeBatcher
from conba.serve.errors import add_http_error_handler, http_detail
from conba.serve.limits import BodyLimitMiddleware, Limits
from conba.serve.reload import IndexHolder, NoIndex

TOKEN_ENV = "CONBA_TOKEN"


@dataclass
class ServeState:
    """Everything the endpoints share."""

    model: Any
    model_name: str
    fingerprint: str
    holder: IndexHolder
    batcher: EncodeBatcher
    limits: Limits
    token: str | None
    threads: int                     # torch intra-op threads per encoding worker
    reload_interval: float
    engine: str = "torch"            # the index's inference engine: queries are encoded with it
    started: float = field(default_factory=time.time)

    @property
    def view(self) -> str:
        return getattr(self.model, "view", "raw")


def _stored_engine(index_dir: Path) -> str:
    """The engine an existing index was built with ("torch" when there is no index yet)."""
    if not (index_dir / "index.sqlite").exists():
        return "torch"
    from conba.index import Index

    with Index(index_dir, create=False) as idx:
        return idx.engine


def resolve_model(index_dir: Path, model: Any, options: dict | None = None, fast: bool = False) -> tuple[Any, str]:
    """(model, its name): a given ConbaModel, a given name, the index's model (with the load options it
    was recorded with; with ``fast``, its ONNX query encoder when it has one: :mod:`conba.index.model.query`),
    or the shipped default; ``options``: load_model's pooling / trust_remote_code."""
    if model is not None and not isinstance(model, (str, os.PathLike)):
        return model, getattr(model, "name", None) or "(in memory)"
    if model is None and (index_dir / "index.sqlite").exists():
        from conba.index import Index
        from conba.index.model.query import query_model

        with Index(index_dir, create=False, model_options=options) as idx:  # the index's model, view, options
            return query_model(idx) if fast else idx.model, idx.model_name or "default"
    from conba.model import load_model

    name = str(model) if model is not None else "default"
    return load_model(name, **(options or {})), name


def default_workers(cores: int | None = None) -> int:
    """One encoding worker per two physical cores (torch's default thread count), at least one.

    Each worker then encodes with two torch threads: on the 2-core dev machine a lone search took
    66 ms (p50) with two one-thread workers and 49 ms with one two-thread worker, while 50 concurrent
    clients got 12.9 vs 11.4 requests/s (docs/BENCHMARKS.md, "Serve load test"): requests that
    arrive together are batched anyway, so the lone query's latency is the better trade."""
    if not cores:
        import torch

        cores = torch.get_num_threads()
    return max(1, cores // 2)


def create_app(index_dir: str | os.PathLike | None = None, model: Any = None, *, token: str | None = None,
               limits: Limits | None = None, workers: int | None = None, reload_interval: float = 1.0,
               max_batch: int = 64, engine: str | None = None, device: str | None = None,
               dtype: str | None = None, model_options: dict | None = None) -> FastAPI:
    """Build the app. ``model``: a ConbaModel, a name/folder, or None for the one the index was built
    with. Queries (and ``/encode``, ``/compare``) use ``engine``, by default the one the index records
    (torch without an index), so query and index vectors come from the same engine; an index built with
    another engine is refused as one built with another model is (``/health`` says why). ``workers``
    encoding threads (default: half the physical cores; one on a GPU), each using ``cores // workers`` torch
    threads; requests that arrive together are encoded in one batch of up to ``max_batch``. ``device`` /
    ``dtype`` (:mod:`conba.engine.device`; None: the model as given) place the model once, for good: with
    ``cuda`` it stays on the GPU between requests. ``model_options``: ``load_model``'s pooling /
    trust_remote_code for a bare model (``--pooling``, ``--trust-remote-code``)."""
    from conba.index.defaults import default_index_dir

    folder = Path(default_index_dir(index_dir))
    if (folder / "shards.json").is_file():  # never "build an index" for one that exists: one line at start
        from conba.index.errors import CodeIndexError

        raise CodeIndexError(f"{folder}: a sharded index (`conba index --shards`): conba serve reads one index; "
                             f"serve one shard (--index {folder / 'shard-0'} ...), or search it whole with "
                             "`conba search`")
    from conba.index.vectors.ivf import check_env

    check_env()  # a bad CONBA_IVF_NPROBE: one line now, not a traceback at start-up
    limits = limits or Limits()
    from conba.index.model.query import CPU_PLACES, FLOAT32

    fast = engine in (None, "torch") and device in CPU_PLACES and dtype in FLOAT32  # else torch, as asked
    the_model, name = resolve_model(folder, model, model_options, fast)
    on_torch = not isinstance(the_model, QueryEncoder)  # else ONNX Runtime, and torch is never imported
    if on_torch:
        import torch

        the_model.eval()
    cores = max(1, torch.get_num_threads() if on_torch else (os.cpu_count() or 1))
    if engine is None:
        engine = _stored_engine(folder)
    else:
        from conba.index.model.identity import check_engine, require_engine

        require_engine(the_model, check_engine(engine))  # one line now, not at the first request
    if on_torch and (device is not None or dtype is not None):
        from conba.engine.device import place_model

        place_model(the_model, device or "auto", dtype or "auto", engine)
    workers = workers or (1 if serving_device(the_model) != "cpu" else default_workers(cores))

    def encode(codes: list[str], languages: list[str]) -> Any:  # batches planned for the model's device
        return the_model.encode(codes, languages=languages, show_progress_bar=False, engine=engine)

    def encode_query(codes: list[str], languages: list[str]) -> Any:  # search queries: the model's query prompt
        return the_model.encode_query(codes, languages=languages, show_progress_bar=False, engine=engine)

    backbone = getattr(the_model, "backbone", None)
    has_query_prompt = backbone is not None and backbone.query_prompt_name() is not None

    state = ServeState(model=the_model, model_name=name, fingerprint=the_model.embedding_fingerprint(),
                       holder=IndexHolder(folder, the_model, engine),
                       batcher=EncodeBatcher(encode, workers, max_batch, encode_query if has_query_prompt else None),
                       limits=limits, token=token or None,
                       threads=max(1, cores // workers), reload_interval=reload_interval, engine=engine)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # torch's intra-op threads per worker (CONBA_THREADS, when set, still wins inside encode())
        with _torch_threads(state.threads) if on_torch else contextlib.nullcontext():
            state.holder.start()
            await state.batcher.start()
            poll = None
            try:
                await state.batcher.encode(["def warm_up(x):\n    return x + 1\n"], ["python"])
                await state.holder.call(state.holder.refresh)
                if reload_interval > 0:
                    poll = asyncio.create_task(state.holder.poll(reload_interval))
                yield
            finally:
                if poll is not None:
                    poll.cancel()
                    await asyncio.gather(poll, return_exceptions=True)
                await state.batcher.stop()
                await state.holder.close()

    from conba import __version__

    app = FastAPI(title="conba", version=__version__, lifespan=lifespan,
                  description="Search code by example and find functionally equivalent code across languages.")
    app.state.conba = state
    app.add_middleware(BodyLimitMiddleware, max_bytes=limits.max_body_bytes)
    _error_handlers(app)

    from conba.serve.page import mount_page
    from conba.serve.routes import router

    app.include_router(router(state))
    mount_page(app)
    return app


def serving_device(model: Any) -> str:
    """Where ``model`` encodes: its torch device, or ``cpu`` for the ONNX query encoder."""
    device = getattr(model, "device", None)
    return "cpu" if device is None or isinstance(model, QueryEncoder) else str(getattr(device, "type", device))


def _torch_threads(n: int) -> Any:
    from conba.settings import torch_threads

    return torch_threads(n)


def _denied(request: Request) -> JSONResponse | None:
    """The 401 answer for a request without the server's token, or None (no token, or the right one)."""
    import secrets

    token = request.app.state.conba.token
    if token is None:
        return None
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and secrets.compare_digest(given.strip().encode(), token.encode()):
        return None
    return JSONResponse({"detail": "missing or wrong bearer token: send 'Authorization: Bearer TOKEN'"},
                        status_code=401, headers={"WWW-Authenticate": "Bearer"})


def _error_handlers(app: FastAPI) -> None:
    add_http_error_handler(app)  # HTTPException details: values cut, fields instead of CLI flags
    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # the body is parsed before the token dependency runs: a bad token is still answered first
        denied = _denied(request)
        if denied is not None:
            return denied
        errors = exc.errors()
        bad_json = [e for e in errors if e.get("type") == "json_invalid"]
        if bad_json:
            ctx = bad_json[0].get("ctx") or {}
            return JSONResponse({"detail": f"invalid JSON: {ctx.get('error', 'could not parse the body')}"},
                                status_code=400)
        if any(tuple(e.get("loc", ())) == ("body",) for e in errors):
            return JSONResponse({"detail": "the body must be a JSON object (Content-Type: application/json)"},
                                status_code=422)
        parts = []
        for e in errors[:5]:
            loc = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
            parts.append(f"{loc}: {e.get('msg', 'invalid')}")
        return JSONResponse({"detail": http_detail("; ".join(parts))}, status_code=422)

    @app.exception_handler(NoIndex)
    async def no_index(request: Request, exc: NoIndex) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=503)
